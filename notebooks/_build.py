"""Writes the demo notebooks from the cells below: ``python notebooks/_build.py``.

The notebooks are generated so that a change is reviewed here, as plain Python, and the
``.ipynb`` files stay in step with it (``tests/notebooks/test_notebooks.py`` checks that they
do). They are written without outputs; run them in Jupyter, or let the test suite execute them.
"""

# The cells are notebook code, 8 columns less indented than here: lines may run a little long.
# ruff: noqa: E501

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

Cell = tuple[str, str]


def md(text: str) -> Cell:
    return ("markdown", textwrap.dedent(text).strip())


def code(text: str) -> Cell:
    return ("code", textwrap.dedent(text).strip())


# --------------------------------------------------------------------------------------------
# 01 quickstart

QUICKSTART = [
    md(
        """
        # toolmgmt quick start

        An agent with 150 tools pays for all 150 definitions on every model call, and picks the
        wrong one more often. toolmgmt keeps every tool in one **catalog** and lets the model
        discover what it needs. This notebook uses the embedded demo catalog (151 tools over
        8 domains, with in-memory backends) and needs no network and no API key.
        """
    ),
    code(
        """
        from toolmgmt_core import Discovery, ToolCatalog, ToolManager
        from toolmgmt_demo import demo_catalog

        catalog = demo_catalog()
        print(f"{len(catalog)} tools, {catalog.definition_tokens():,} definition tokens sent flat")
        for domain in catalog.browse():
            print(f"  {domain.name:<13} {domain.tool_count:>3} tools  groups: {', '.join(domain.groups)}")
        """
    ),
    md(
        """
        ## Search

        `catalog.search` ranks tools with BM25 over names, descriptions, parameters and keywords.
        """
    ),
    code(
        """
        for hit in catalog.search("refund a customer's payment", limit=3):
            print(f"{hit.score:5.2f}  {hit.name:<28} {hit.description}")
        """
    ),
    md(
        """
        A request that needs several tools is searched whole and clause by clause, and the
        rankings are merged so that each need gets a tool near the top:
        """
    ),
    code(
        """
        request = (
            "find the contact Maya Patel, then schedule a meeting with her next week "
            "and send her an email"
        )
        for hit in catalog.search(request, limit=6):
            print(f"{hit.domain:<9} {hit.name}")
        """
    ),
    md("## Browse\n\nThe catalog is a tree: domain, group, tool."),
    code(
        """
        for entry in catalog.browse("payments", "charges"):
            print(f"{entry.name:<26} {entry.description}")
        """
    ),
    md(
        """
        ## Sessions: what the model sees

        A `ToolManager` holds the configuration; each conversation gets a `ToolSession`, whose
        `tools()` is the list to send to the model now. The modes:

        - **search**: `tool_search` answers with the found tools' definitions and `call_tool`
          runs them, so the list never changes and a provider's prompt cache holds
          (`Search(appends=True)` makes found tools join the list instead).
        - **gateway**: only `discover_tools`, `get_tool_schema` and `execute_tool`: the list
          never changes.
        - **lazy**: every tool by name and first sentence, without parameters;
          `load_tool_schema` fetches them.
        - **auto**: every tool flat while that is cheap, else search.

        The demo marks three tools as always listed (`defer_loading=False`).
        """
    ),
    code(
        """
        for mode in ("search", "gateway", "lazy", "auto"):
            session = ToolManager(catalog, mode=mode).session()
            names = [tool.name for tool in session.tools()]
            usage = session.usage()
            shown = ", ".join(names[:6]) + (f", ... ({len(names)} in all)" if len(names) > 6 else "")
            print(f"{mode:<8} -> {session.mode:<7} {usage.definition_tokens:>6,} tokens "
                  f"({usage.share:.0%} of flat)  {shown}")
        """
    ),
    md(
        """
        `auto` switched to search because the 151 definitions take more than 10% of a
        128k context window. On a single small domain it lists everything flat:
        """
    ),
    code(
        """
        small = ToolCatalog(t for t in catalog if t.domain == "web_search")
        session = ToolManager(small, mode="auto").session()
        print(session.mode, len(session.tools()), "tools listed")
        """
    ),
    md(
        """
        ### A search session, step by step

        The model calls `tool_search`; the answer carries the best matches' definitions, and
        it runs one with `call_tool`. The tool list is the same before and after: a provider
        caches the whole prefix of the conversation, tools first, and a list that changed would
        be billed again from the change on. (`format_tools(session, "anthropic")` and
        `"openai-responses"` send the same session with the provider's own deferred loading
        instead: the answer loads the found tools and the model calls them directly.)
        """
    ),
    code(
        """
        manager = ToolManager(catalog, mode="search", discovery=Discovery(max_results=3))
        session = manager.session()
        before = [t.name for t in session.tools()]
        result = session.call_sync("tool_search", {"query": "refund a charge"})
        print(result.content[:400], "...")
        print("loaded:", session.loaded())
        print("tools before:", before)
        print("tools now:   ", [t.name for t in session.tools()])
        """
    ),
    code(
        """
        result = session.call_sync(
            "call_tool",
            {
                "tool_name": "payments_refund_charge",
                "arguments": {"charge_id": "ch_0002", "amount": 500, "reason": "duplicate"},
            },
        )
        print(result.content)
        print(session.usage())
        """
    ),
    md(
        """
        A tool that was not loaded, or that does not exist, gets an answer the model can act on:
        """
    ),
    code(
        """
        print(session.call_sync("crm_get_contact", {"contact_id": "con_0001"}).content)
        print(session.call_sync("payments_refund_chrage", {"charge_id": "ch_0002"}).content)
        """
    ),
    md("### Gateway and lazy sessions"),
    code(
        """
        gateway = ToolManager(catalog, mode="gateway").session()
        print(gateway.call_sync("discover_tools", {"query": "open a pull request"}).content)
        schema = gateway.call_sync("get_tool_schema", {"tool_name": "code_hosting_create_pull_request"})
        print(schema.content[:300], "...")
        print(gateway.call_sync(
            "execute_tool",
            {"tool_name": "crm_get_contact", "arguments": {"contact_id": "con_0001"}},
        ).content[:200])
        """
    ),
    code(
        """
        lazy = ToolManager(catalog, mode="lazy").session()
        stub = next(t for t in lazy.tools() if t.name == "calendar_create_event")
        print("listed as:", stub.description, stub.parameters)
        print(lazy.call_sync("load_tool_schema", {"tool_names": ["calendar_create_event"]}).content[:300])
        """
    ),
    md(
        """
        ## Token savings against catalog size

        Definition tokens sent on every model call, for growing slices of the demo catalog:
        flat (every definition), search (the meta-tools and always-on tools), gateway (three
        meta-tools) and lazy (names and first sentences).
        """
    ),
    code(
        """
        import io

        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from IPython.display import Image, display

        tools = list(catalog)
        sizes = [10, 25, 50, 75, 100, 125, len(tools)]
        series = {"flat": [], "search": [], "gateway": [], "lazy": []}
        for size in sizes:
            subset = ToolCatalog(tools[:size])
            series["flat"].append(subset.definition_tokens())
            for mode in ("search", "gateway", "lazy"):
                series[mode].append(ToolManager(subset, mode=mode).session().usage().definition_tokens)

        print(f"{'tools':>5} " + " ".join(f"{name:>8}" for name in series))
        for i, size in enumerate(sizes):
            print(f"{size:>5} " + " ".join(f"{series[name][i]:>8,}" for name in series))

        fig, ax = plt.subplots(figsize=(7, 4))
        labels = {"lazy": "lazy (no parameters)"}
        for name, values in series.items():
            ax.plot(sizes, values, marker="o", label=labels.get(name, name))
        ax.set_xlabel("tools in the catalog")
        ax.set_ylabel("definition tokens per model call")
        ax.set_title("Flat tool list against managed modes (demo catalog, o200k_base)")
        ax.grid(alpha=0.3)
        ax.legend()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
        plt.close(fig)
        display(Image(buffer.getvalue()))
        """
    ),
    md(
        """
        Flat grows with every tool. Search and gateway stay under 2,000 tokens whatever the
        catalog holds: they grow only with the always-on tools. Lazy grows too, at about a
        quarter of the rate. `toolmgmt report` prints the same comparison per provider for your
        own catalog (`--catalog tools.json`).

        ## What a conversation bills, prompt caching included

        Definitions of one request are not the bill. Providers bill every request of a
        conversation and cache its prefix (Anthropic: reads at 0.1x, writes at 1.25x; OpenAI:
        the longest common prefix). `bench/conversation.py` plays one task (ten calls, six with
        large results) through each mode and bills it; its figures are in
        `bench/results/conversation.json`, against sending every tool with results cut to
        2,000 tokens (flat + truncation = 1.0):
        """
    ),
    code(
        """
        import json
        from pathlib import Path

        figures = json.loads(Path("../bench/results/conversation.json").read_text())["figures"]
        designs = {
            "flat-raw": "flat, raw results",
            "flat": "flat + truncation",
            "search": "search (native deferral)",
            "search-listed": "search (native=False)",
            "search-append": "search, growing list",
            "gateway": "gateway",
            "lazy": "lazy",
        }
        rules = {"anthropic": "anthropic", "openai-responses": "openai-prefix"}
        rows = {
            (r["design"], r["size"], r["provider"]): r["vs_flat"][rules[r["provider"]]]
            for r in figures["rows"]
        }
        sizes = {"demo": "151 tools", "demo+bfcl": "1,124 tools"}
        print(f"{'design':<26}" + "".join(f"{s + ', ' + p[:9]:>24}" for s in sizes.values() for p in rules))
        for key, label in designs.items():
            cells = [rows[(key, size, p)] for size in sizes for p in rules]
            print(f"{label:<26}" + "".join(f"{c:>23.2f}x" for c in cells))

        fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=False)
        shown = [k for k in designs if k != "flat-raw"]
        for ax, (size, title) in zip(axes, sizes.items()):
            for offset, (provider, label) in enumerate((("anthropic", "Anthropic"), ("openai-responses", "OpenAI"))):
                values = [rows[(k, size, provider)] for k in shown]
                ax.bar([i + 0.4 * offset for i in range(len(shown))], values, width=0.4, label=label)
            ax.axhline(1.0, color="grey", linewidth=0.8)
            ax.set_xticks([i + 0.2 for i in range(len(shown))])
            ax.set_xticklabels([designs[k] for k in shown], rotation=35, ha="right", fontsize=8)
            ax.set_title(f"{title}: billed input, x flat + truncation")
            ax.legend()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
        plt.close(fig)
        display(Image(buffer.getvalue()))
        """
    ),
    md(
        """
        The growing list costs the most under caching: every search that finds something
        changes the tools, and the whole conversation after them is billed again. The search
        mode keeps one list, so everything before the last request is read from the cache;
        with the provider's native deferral (Anthropic, OpenAI Responses) found tools are
        called directly, elsewhere through `call_tool` for a little more. Truncation is the
        largest saving of all: compare flat with raw results.
        """
    ),
]

# --------------------------------------------------------------------------------------------
# 02 LangChain

LANGCHAIN = [
    md(
        """
        # LangChain: `create_agent` with `ToolManagerMiddleware`

        The middleware puts a toolmgmt session between the agent and its tools: each model
        call gets the session's tools, each tool call runs through the session (policy,
        validation, truncation), and the session's state lives in the agent state, so a
        checkpointer restores it. A scripted fake chat model stands in for the LLM, so the
        notebook runs offline; swap in `"openai:gpt-4.1"` or any chat model for real use.
        """
    ),
    code(
        """
        import json
        from typing import Any

        from langchain.agents import create_agent
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
        from langchain_core.utils.function_calling import convert_to_openai_tool
        from pydantic import Field

        from toolmgmt_core import Access, Discovery, ResultBudget, ToolManager, count_tokens
        from toolmgmt_demo import demo_catalog
        from toolmgmt_langchain import STATE_KEY, ToolManagerMiddleware
        """
    ),
    md(
        """
        The catalog is the demo's 151 tools. The manager runs in search mode, hides every CRM
        delete tool, and cuts results to 300 tokens (tools may set their own budget).
        """
    ),
    code(
        """
        manager = ToolManager(
            demo_catalog(),
            mode="search",
            discovery=Discovery(max_results=3),
            access=Access(policies=[{"label": "agent", "deny": ["crm_delete_*"]}]),
            results=ResultBudget(max_result_tokens=300),
        )
        """
    ),
    md(
        """
        A fake chat model: LangChain's `GenericFakeChatModel` answers from a script; this
        subclass also accepts `bind_tools` and records which tools it was offered at each step.
        """
    ),
    code(
        """
        class ScriptedChatModel(GenericFakeChatModel):
            offered: list[list[str]] = Field(default_factory=list)

            def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
                names = [convert_to_openai_tool(t)["function"]["name"] for t in tools]
                return self.bind(offered_now=names)

            def _generate(self, messages, stop=None, run_manager=None, offered_now=(), **kwargs):
                self.offered.append(list(offered_now))
                return super()._generate(messages, stop, run_manager, **kwargs)


        def call(name: str, args: dict[str, Any], n: int) -> AIMessage:
            return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{n}"}])


        script = [
            call("tool_search", {"query": "search crm contacts by name"}, 1),
            call("crm_search_contacts", {"query": "patel", "limit": 2}, 2),
            call("tool_search", {"query": "export all contacts csv backup"}, 3),
            call("crm_export_contacts", {"format": "csv"}, 4),
            call("crm_delete_contact", {"contact_id": "con_0001"}, 5),
            AIMessage(content="Found Patel and exported the contacts; deleting contacts is not allowed."),
        ]
        model = ScriptedChatModel(messages=iter(script))
        """
    ),
    code(
        """
        agent = create_agent(
            model,
            tools=[],  # the middleware supplies and runs the catalog's tools
            system_prompt="You help the sales team.",
            middleware=[ToolManagerMiddleware(manager)],
        )
        state = agent.invoke(
            {"messages": [HumanMessage("Find Patel, export all contacts, then delete con_0001.")]}
        )
        """
    ),
    md(
        """
        What the model was offered at each step: the list starts with `tool_search` and the
        always-on tools, and grows only by appending what searches found.
        """
    ),
    code(
        """
        for step, names in enumerate(model.offered, 1):
            print(f"step {step}: {len(names):>2} tools, last: {', '.join(names[-3:])}")
        """
    ),
    md("The conversation, tool results shortened for display:"),
    code(
        """
        for message in state["messages"]:
            if isinstance(message, ToolMessage):
                text = message.content
                shown = text[:150].replace("\\n", " | ") + (" ..." if len(text) > 150 else "")
                print(f"  tool {message.name} [{message.status}, {count_tokens(text)} tokens]: {shown}")
            elif isinstance(message, AIMessage) and message.tool_calls:
                for c in message.tool_calls:
                    print(f"model calls {c['name']}({json.dumps(c['args'])})")
            else:
                print(f"{type(message).__name__}: {message.content}")
        """
    ),
    md(
        """
        The export is far larger than its budget: the session cut it (head and tail of the
        CSV, with a marker saying how much was left out). The delete tool is hidden by the
        policy, so the model gets the same answer as for a tool that does not exist.
        """
    ),
    code(
        """
        results = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
        exporter = manager.catalog.get("crm_export_contacts")
        full = exporter.handler(format="csv")
        export = results["call_4"].content
        print(f"export: {count_tokens(full):,} tokens produced, {count_tokens(export):,} sent "
              f"(the tool's own budget is {exporter.max_result_tokens})")
        marker = export.find("omitted")
        print("marker:", export[max(marker - 60, 0): marker + 20].replace("\\n", " | "))
        print("delete:", json.loads(results["call_5"].content)["message"])
        """
    ),
    md("The session's state sits in the agent state under `toolmgmt`; it restores a session:"),
    code(
        """
        snapshot = state[STATE_KEY]["session"]
        restored = manager.session(snapshot)
        print("loaded:", restored.loaded())
        print(restored.usage())
        """
    ),
]

# --------------------------------------------------------------------------------------------
# 03 PydanticAI

PYDANTIC_AI = [
    md(
        """
        # PydanticAI: `ManagedToolset`

        `ManagedToolset` wraps your toolsets (and the catalog's own tools): on every step the
        agent's tools come from a toolmgmt session, and calls go through it (policy,
        validation, truncation) and back into the wrapped toolset. PydanticAI's
        `FunctionModel` plays the LLM, so this runs offline.
        """
    ),
    code(
        """
        from typing import Any

        from pydantic_ai import Agent, RunContext
        from pydantic_ai.messages import (
            ModelMessage,
            ModelRequest,
            ModelResponse,
            TextPart,
            ToolCallPart,
            ToolReturnPart,
        )
        from pydantic_ai.models.function import AgentInfo, FunctionModel
        from pydantic_ai.toolsets import FunctionToolset

        from toolmgmt_core import Access, Discovery, ResultBudget, ToolCatalog, ToolManager
        from toolmgmt_demo import demo_catalog
        from toolmgmt_pydantic_ai import ManagedToolset
        """
    ),
    md(
        """
        An ordinary PydanticAI toolset of our own; its tools join the catalog (under the
        toolset's id as domain) on the first step.
        """
    ),
    code(
        """
        weather = FunctionToolset(id="weather")


        @weather.tool
        def get_forecast(ctx: RunContext[str], city: str, days: int = 3) -> dict[str, Any]:
            \"\"\"Get the weather forecast for a city, day by day.\"\"\"
            return {"city": city, "unit": ctx.deps, "forecast": ["sun", "rain", "sun"][:days]}


        @weather.tool_plain
        def weather_alerts(region: str) -> list[str]:
            \"\"\"List active severe weather alerts for a region.\"\"\"
            return [f"storm warning in {region}"]


        manager = ToolManager(
            demo_catalog(),
            mode="search",
            discovery=Discovery(max_results=3),
            access=Access(policies=[{"label": "agent", "deny": ["crm_delete_*"]}]),
            results=ResultBudget(max_result_tokens=300),
        )
        managed = ManagedToolset(manager, toolsets=[weather])
        """
    ),
    md(
        """
        The scripted model searches, calls what it found (a demo tool and the wrapped
        `get_forecast`, in parallel), tries a denied tool, and answers. It records the tools
        it is offered at each step.
        """
    ),
    code(
        """
        def call(name: str, args: dict[str, Any], n: int) -> ToolCallPart:
            return ToolCallPart(name, args, tool_call_id=f"call_{n}")


        script = [
            [call("tool_search", {"queries": ["search crm contacts by name", "weather forecast"]}, 1)],
            [call("crm_search_contacts", {"query": "patel", "limit": 2}, 2),
             call("get_forecast", {"city": "Oslo", "days": 2}, 3)],
            [call("tool_search", {"query": "export all contacts csv"}, 4)],
            [call("crm_export_contacts", {"format": "csv"}, 5)],
            [call("crm_delete_contact", {"contact_id": "con_0001"}, 6)],
            "Patel found, Oslo forecast fetched, contacts exported; deleting is not allowed.",
        ]
        offered: list[list[str]] = []


        def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            offered.append([t.name for t in info.function_tools])
            step = script[len(offered) - 1]
            return ModelResponse(parts=[TextPart(step)] if isinstance(step, str) else step)


        agent = Agent(FunctionModel(scripted), toolsets=[managed], deps_type=str)
        result = await agent.run("Find Patel, get the Oslo forecast, export and delete con_0001.", deps="C")
        print(result.output)
        """
    ),
    code(
        """
        for step, names in enumerate(offered, 1):
            print(f"step {step}: {len(names):>2} tools, last: {', '.join(names[-4:])}")
        print("get_forecast joined the catalog in domain:", manager.catalog.get("get_forecast").domain)
        """
    ),
    md(
        """
        What each tool call returned. The denied delete was never listed, so PydanticAI itself
        answers that the tool is unknown (the session would have refused it as well); the
        export was cut to its budget.
        """
    ),
    code(
        """
        for message in result.all_messages():
            if isinstance(message, ModelRequest):
                for part in message.parts:
                    if isinstance(part, ToolReturnPart):
                        text = part.model_response_str()
                        shown = text[:150].replace("\\n", " | ") + (" ..." if len(text) > 150 else "")
                        print(f"{part.tool_name:<20} {shown}")
        """
    ),
    md(
        """
        Each run has its own session, kept by run id; its usage compares the tool definitions
        sent with the flat list of every visible tool.
        """
    ),
    code(
        """
        session = managed.session_for(result.run_id)
        print("loaded:", session.loaded())
        print(session.usage())
        for record in session.result_budget.records():
            print(f"result of {record.tool_name}: {record.original_tokens:,} -> {record.tokens:,} tokens")
        """
    ),
]

# --------------------------------------------------------------------------------------------
# 04 LiteLLM

LITELLM = [
    md(
        """
        # LiteLLM: `ToolManagerCallback`

        A LiteLLM callback replaces each request's tools with the session's, formatted for the
        target provider, and cuts oversized tool messages. LiteLLM's `mock_response` and
        `mock_tool_calls` stand in for the provider, so nothing leaves this machine.
        """
    ),
    code(
        """
        import os

        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # no download of the price list at import

        import json

        import litellm
        from litellm.integrations.custom_logger import CustomLogger

        from toolmgmt_core import Access, Discovery, ResultBudget, ToolManager, count_tokens
        from toolmgmt_demo import demo_catalog
        from toolmgmt_litellm import (
            ToolManagerCallback,
            run_meta_tool_calls,
            completion_with_tools,
            prepare_request,
        )
        """
    ),
    md(
        """
        The callback, plus a small logger that records which tools each request carried
        (`log_pre_api_call` sees the request as it goes to the provider).
        """
    ),
    code(
        """
        class RequestLog(CustomLogger):
            def __init__(self) -> None:
                super().__init__()
                self.tools: list[list[str]] = []

            def log_pre_api_call(self, model, messages, kwargs):
                tools = kwargs.get("optional_params", {}).get("tools") or []
                self.tools.append([t["function"]["name"] for t in tools])


        manager = ToolManager(
            demo_catalog(),
            mode="search",
            discovery=Discovery(max_results=3),
            results=ResultBudget(max_result_tokens=300),
        )
        callback = ToolManagerCallback(manager)
        log = RequestLog()
        litellm.callbacks = [callback, log]
        session = callback.session("conversation-1")
        """
    ),
    md(
        """
        The loop: each request names its session in `metadata`; the callback sets the tools.
        `run_meta_tool_calls(..., all_tools=True)` runs the model's calls through the session.
        The scripted tool calls play the model: it searches, then runs what it found with
        `call_tool`, so every request carries the same tools (a provider's prompt cache holds).
        """
    ),
    code(
        """
        def tool_call(name: str, args: dict, n: int) -> dict:
            function = {"name": name, "arguments": json.dumps(args)}
            return {"id": f"call_{n}", "type": "function", "function": function}


        script = [
            [tool_call("tool_search", {"query": "refund a charge"}, 1)],
            [tool_call("call_tool", {"tool_name": "payments_refund_charge",
                                     "arguments": {"charge_id": "ch_0002", "amount": 500}}, 2)],
            [tool_call("tool_search", {"query": "export analytics events"}, 3)],
            [tool_call("call_tool", {"tool_name": "analytics_export_events", "arguments": {}}, 4)],
            None,  # the final answer
        ]
        messages = [{"role": "user", "content": "Refund 5.00 of ch_0002, then export the events."}]
        for step in script:
            mock = {"mock_tool_calls": step} if step else {"mock_response": "Refunded; export done."}
            response = await litellm.acompletion(
                model="openai/gpt-4o-mini",
                messages=messages,
                metadata={"toolmgmt_session": "conversation-1"},
                **mock,
            )
            message = response.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            answers = await run_meta_tool_calls(session, response, all_tools=True)
            messages += answers
            for answer in answers:
                text = answer["content"]
                shown = text[:100] + (" ..." if len(text) > 100 else "")
                print(f"{answer['name']:<24} {count_tokens(text):>4} tokens: {shown}")
        print("final:", messages[-1]["content"])
        """
    ),
    code(
        """
        for n, names in enumerate(log.tools, 1):
            print(f"request {n}: {len(names)} tools: {', '.join(names)}")
        """
    ),
    md(
        """
        ## Provider shapes

        Anthropic models get Anthropic's own tool shape (`input_schema`), with native deferred
        loading (every other tool `defer_loading`, found tools loaded by `tool_reference`
        answers, which `run_meta_tool_calls` writes) and cache breakpoints; every other provider
        gets OpenAI function tools, which LiteLLM translates. `prepare_request` shows what a
        request becomes.
        """
    ),
    code(
        """
        anthropic = prepare_request(session, {"model": "anthropic/claude-sonnet-4-5", "messages": []})
        openai = prepare_request(session, {"model": "openai/gpt-4o-mini", "messages": []})
        print("anthropic:", sorted(anthropic["tools"][0]))
        print("anthropic deferred:", sum(1 for t in anthropic["tools"] if t.get("defer_loading")))
        print("openai:   ", sorted(openai["tools"][0]), sorted(openai["tools"][0]["function"]))
        """
    ),
    md(
        """
        Tool messages the app wrote itself are cut to the result budget in the request (the
        app's own message list is left as it was):
        """
    ),
    code(
        """
        log_text = "\\n".join(f"12:00:{i % 60:02d} worker-{i} request ok" for i in range(3000))
        history = [{"role": "tool", "tool_call_id": "x", "content": log_text}]
        cut = prepare_request(session, {"model": "openai/gpt-4o-mini", "messages": history})
        sent = cut["messages"][0]["content"]
        print(f"{count_tokens(log_text):,} tokens in the app's message, {count_tokens(sent)} in the request")
        """
    ),
    md(
        """
        LiteLLM runs no request hook on the sync path: use `completion_with_tools` there.
        """
    ),
    code(
        """
        response = completion_with_tools(
            session,
            model="openai/gpt-4o-mini",
            messages=[{"role": "user", "content": "hello"}],
            mock_response="Hello! How can I help?",
        )
        print(response.choices[0].message.content, "| tools sent:", len(log.tools[-1]))
        print(session.usage())
        """
    ),
]

# --------------------------------------------------------------------------------------------
# 05 MCP gateway

MCP = [
    md(
        """
        # MCP gateway: many MCP servers behind three tools

        The gateway is one MCP server exposing `discover_tools`, `get_tool_schema` and
        `execute_tool` over the tools of every upstream MCP server it connects to. Here two
        small upstream servers (`servers/tickets_server.py`, and the demo's weather server,
        `python -m toolmgmt_demo.weather_server`) run as stdio subprocesses on this machine; the gateway runs in this process and an
        `mcp.Client` talks to it. `toolmgmt serve --config gateway.toml` serves the same
        gateway over stdio or HTTP.
        """
    ),
    code(
        """
        import json
        import sys

        from mcp import Client
        from toolmgmt_gateway import Gateway, parse_config

        python = json.dumps(sys.executable)
        config = parse_config(f'''
        [gateway]
        max_result_tokens = 400

        [upstreams.tickets]
        command = {python}
        args = ["servers/tickets_server.py"]
        connect_timeout = 30
        timeout = 10
        groups = {{ read = ["search_*", "get_*"], write = ["create_*", "close_*", "delete_*"] }}

        [upstreams.weather]
        command = {python}
        args = ["-m", "toolmgmt_demo.weather_server"]
        connect_timeout = 30
        timeout = 10
        groups = {{ forecast = ["get_forecast", "get_alerts"], history = ["get_history"] }}

        [policy]
        deny = ["tickets_delete_*"]
        ''')
        print([(u.name, u.transport) for u in config.upstreams])


        async def call(client: Client, name: str, arguments: dict) -> object:
            \"\"\"Call a gateway tool and print its (JSON) answer, shortened.\"\"\"
            result = await client.call_tool(name, arguments)
            text = result.content[0].text
            flag = "ERROR " if result.is_error else ""
            shown = text[:300] + (" ..." if len(text) > 300 else "")
            print(f"{name}({json.dumps(arguments)}) -> {flag}{shown}")
            try:
                return json.loads(text)
            except ValueError:
                return text


        async def execute(client: Client, tool_name: str, **arguments: object) -> object:
            return await call(client, "execute_tool", {"tool_name": tool_name, "arguments": arguments})
        """
    ),
    md(
        """
        ## Discover, read a schema, execute

        Each upstream is a domain; its tools are named `<upstream>_<tool>`. The client sees
        three tools whatever the upstreams hold.
        """
    ),
    code(
        """
        async with Gateway(config) as gateway, Client(gateway.server) as client:
            print("status:", [(s.name, s.connected, len(s.tools)) for s in gateway.upstreams.status()])
            print("client sees:", [t.name for t in (await client.list_tools()).tools])
            print()
            await call(client, "discover_tools", {})
            await call(client, "discover_tools", {"domain": "tickets"})
            await call(client, "discover_tools", {"query": "is there a storm warning"})
            await call(client, "get_tool_schema", {"tool_name": "weather_get_alerts"})
            await execute(client, "weather_get_alerts", region="west")
            await execute(client, "tickets_search_tickets", text="refund")
            new_id = await execute(
                client, "tickets_create_ticket", title="Storm damage", customer="lena@example.com"
            )
            await execute(client, "tickets_get_ticket", ticket_id=new_id)
        """
    ),
    md(
        """
        ## Policy, errors and large results

        The gateway's policy hides `tickets_delete_*`: a denied tool the model names is refused
        as not permitted (and discovery never shows it). Arguments are validated against the upstream's schema before
        the call, an upstream's own error is reported as a tool error, and a large result is
        cut to the gateway's budget (400 tokens here).
        """
    ),
    code(
        """
        async with Gateway(config) as gateway, Client(gateway.server) as client:
            await execute(client, "tickets_delete_ticket", ticket_id="T-0001")  # denied
            await execute(client, "tickets_get_ticket", ticket="T-0001")  # wrong argument name
            await execute(client, "tickets_get_ticket", ticket_id="T-9999")  # the upstream's error
            history = await execute(client, "weather_get_history", city="Oslo")  # 8,760 readings
            print()
            print("readings kept:", len([r for r in history if isinstance(r, dict)]), "of", 24 * 365)
            print("marker:", [r for r in history if isinstance(r, str)])
        """
    ),
]

# --------------------------------------------------------------------------------------------
# 06 policies and truncation

POLICIES = [
    md(
        """
        # Policies, profiles and truncation

        Which tools an agent may see and run is decided in one place, the policy view: a
        **profile** first, then ordered **policy steps** (`global`, `agent`, `user`...), each
        able only to narrow. A hidden tool is invisible and uncallable through every door
        (listing, search, schema, call). Results are cut to token budgets, per result and per
        session.
        """
    ),
    code(
        """
        import json

        from toolmgmt_core import (
            Access, ApprovalRequest, Discovery, Policy, Profile, ResultBudget, ToolManager,
            truncate_result,
        )
        from toolmgmt_demo import demo_catalog

        catalog = demo_catalog()
        """
    ),
    md(
        """
        ## Profiles

        Built in: `full`, `readonly` and `minimal` (read-only tools that stay inside your own
        systems). Custom profiles name tools by patterns: `domain:crm`, `group:payments/charges`,
        globs such as `*_delete_*`, `readonly`, `destructive`, `openworld`.
        """
    ),
    code(
        """
        support = Profile("support", include=["domain:crm", "domain:email"], exclude=["crm_export_*"])
        for profile in ("full", "readonly", "minimal", support):
            manager = ToolManager(catalog, access=profile)
            name = profile if isinstance(profile, str) else profile.name
            print(f"{name:<9} {len(manager.session().visible_tools()):>3} visible tools")
        """
    ),
    md(
        """
        ## Policy steps, explain, overrides and approval

        The support profile, then a `global` step that denies every delete tool and wants
        approval for contact updates, then an `agent` step that rewrites a description.
        `explain` says why a tool is visible or not, and which step decided it.
        """
    ),
    code(
        """
        asked = []


        def approve(request: ApprovalRequest) -> bool:
            \"\"\"Ask a human; here: yes, except for contact con_0001.\"\"\"
            asked.append(f"{request.tool.name}({dict(request.arguments)}): {request.reason}")
            return request.arguments.get("contact_id") != "con_0001"


        manager = ToolManager(
            catalog,
            mode="search",
            access=Access(
                profile=support,
                policies=[
                    Policy("global", deny=["*_delete_*"], require_approval=["crm_update_*"]),
                    Policy("agent", description_overrides={
                        "crm_search_contacts": "Search CRM contacts. Only customers in the EU region.",
                    }),
                ],
            ),
            approval=approve,
        )
        session = manager.session()
        for name in ("crm_search_contacts", "crm_delete_contact", "crm_export_contacts",
                     "payments_refund_charge", "crm_update_contact", "tool_search", "no_such_tool"):
            explanation = session.explain(name)
            approval = " (needs approval)" if explanation.needs_approval else ""
            print(f"{'visible' if explanation else 'hidden ':<7}  {explanation}{approval}")
        """
    ),
    md(
        "The model sees the overridden description; a denied tool it names is refused as not permitted, and search never finds it:"
    ),
    code(
        """
        answer = session.call_sync("tool_search", {"query": "search contacts"}).content
        print("description:", json.loads(answer)["found"]["crm_search_contacts"]["description"])
        print("delete:", session.call_sync("crm_delete_contact", {"contact_id": "con_0001"}).content)
        found = session.call_sync("tool_search", {"query": "delete contact"}).content
        print("search for delete:", list(json.loads(found)["found"]))
        """
    ),
    md("Updates need approval; the callback refuses one and allows the other:"),
    code(
        """
        session.call_sync("tool_search", {"query": "update a contact"})
        refused = session.call_sync("crm_update_contact", {"contact_id": "con_0001", "title": "CTO"})
        allowed = session.call_sync("crm_update_contact", {"contact_id": "con_0002", "title": "CTO"})
        print("con_0001:", refused.is_error, refused.content)
        print("con_0002:", allowed.is_error, allowed.content[:120], "...")
        print("asked:", *asked, sep="\\n  ")
        """
    ),
    md("A session can switch profile (others keep theirs); the choice is saved in its state:"),
    code(
        """
        session.set_profile("readonly")
        print(session.profile, len(session.visible_tools()), "visible;",
              "crm_update_contact", "visible" if session.explain("crm_update_contact") else "hidden")
        print(session.explain("crm_update_contact"))
        """
    ),
    md(
        """
        ## Truncation

        `truncate_result` cuts any result to a token budget and keeps JSON valid: the `smart`
        strategy keeps every key, the first and last items of long arrays and the two ends of
        long strings, with markers saying what was left out. `head` and `tail` keep one end.
        """
    ),
    code(
        """
        orders = {
            "total": 5000,
            "orders": [
                {"id": f"ord_{i:05d}", "customer": f"cus_{i % 97:03d}", "amount": round(i * 1.37, 2),
                 "status": ["paid", "refunded", "open"][i % 3]}
                for i in range(5000)
            ],
            "log": "\\n".join(f"12:00:{i % 60:02d} sync ok" for i in range(2000)),
            "next_cursor": "c_5000",
        }
        for strategy in ("smart", "head", "tail"):
            cut = truncate_result(orders, 200, strategy)
            json.loads(cut.text)  # still valid JSON
            print(f"{strategy}: {cut.original_tokens:,} -> {cut.tokens} tokens")
            print("  ", cut.text)
        """
    ),
    md(
        """
        ## Budgets in a session

        `max_result_tokens` is the budget of one result (a tool's own `max_result_tokens` wins);
        `session_result_budget` caps all results of a session: once spent, results get half
        their usual budget, and `clearable_results()` names the results an app could drop from
        the context (all but the newest).
        """
    ),
    code(
        """
        manager = ToolManager(
            catalog,
            mode="search",
            discovery=Discovery(call_unloaded="load"),
            results=ResultBudget(max_result_tokens=400, session_tokens=1200),
        )
        session = manager.session()
        calls = [
            ("files_read_file", {"path": "/logs/app.log"}),
            ("code_hosting_list_commits", {"repository": "acme/api"}),
            ("web_search_fetch_page", {"url": "https://en.wikipedia.org/wiki/solar-power"}),
            ("code_hosting_get_workflow_logs", {"run_id": "run_0001"}),
        ]
        for name, arguments in calls:
            result = session.call_sync(name, arguments)
            account = session.result_budget
            print(f"{name:<31} {result.original_tokens:>7,} -> {result.tokens:>4} tokens  "
                  f"used {account.used:>5,}, left {account.remaining}")
        clearable = session.clearable_results()
        print("spent:", account.exceeded, "| next result's budget:", account.budget_for(None))
        print("clearable:", [(r.call_id, r.tool_name, r.tokens) for r in clearable])
        print("cleared:", session.mark_results_cleared([r.call_id for r in clearable]),
              "| used now:", session.result_budget.used)
        """
    ),
]

# --------------------------------------------------------------------------------------------
# 07 observability

OBSERVABILITY = [
    md(
        """
        # Seeing what toolmgmt did

        toolmgmt hides tools, ranks them, denies calls and cuts results. Its call pipeline, its
        meta-tools and its sessions emit events; an OpenTelemetry listener (on in every manager,
        free until an SDK is configured) turns them into spans and metrics, and a JSONL listener
        into a usage log that `toolmgmt usage` reports on. Offline, no API key.
        """
    ),
    code(
        """
        import asyncio

        from opentelemetry import trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from toolmgmt_core import Discovery, ResultBudget, ToolManager
        from toolmgmt_core import OtelListener
        from toolmgmt_demo import demo_catalog

        exporter = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
        reader = InMemoryMetricReader()
        listener = OtelListener(tracer_provider=tracer_provider,
                                meter_provider=MeterProvider(metric_readers=[reader]))
        manager = ToolManager(demo_catalog(), listeners=[listener],
                              discovery=Discovery(call_unloaded="load"),  # a tool called by name loads
                              results=ResultBudget(max_result_tokens=300))
        session = manager.session("support-1")
        app = tracer_provider.get_tracer("support-agent")


        async def step():
            with app.start_as_current_span("agent step"):
                await session.call("tool_search", {"query": "read a log file"}, call_id="call_1")
                await session.call("files_read_file", {"path": "/logs/app.log"}, call_id="call_2")
                await session.call("files_delete_file", {"path": "/logs/app.log"}, call_id="call_3")


        await step()
        spans = {s.context.span_id: s for s in exporter.get_finished_spans()}

        def depth(span):
            return 0 if span.parent is None else 1 + depth(spans[span.parent.span_id])

        for span in sorted(spans.values(), key=lambda s: s.start_time):
            print("  " * depth(span) + span.name, {k: v for k, v in span.attributes.items()
                  if k in ("error.type", "toolmgmt.call.outcome", "toolmgmt.search.hits")})
        """
    ),
    md(
        """
        The search is a `retrieval` span under the `tool_search` call; the log file's result was
        cut to its budget (an event and attributes on its span); the delete needed an approval no
        one could give, so it was refused (`error.type`). No argument or result text is on any
        span: that takes `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` or
        `OtelListener(capture_content=True)`, and is cut to `max_content_chars` even then.
        """
    ),
    code(
        """
        read = next(s for s in spans.values() if s.name == "execute_tool files_read_file")
        for event in read.events:
            print(event.name, dict(event.attributes))
        for metric in reader.get_metrics_data().resource_metrics[0].scope_metrics[0].metrics:
            points = metric.data.data_points
            total = sum(getattr(p, "count", None) or getattr(p, "value", 0) for p in points)
            print(f"{metric.name:<36} {total:>8,}")
        """
    ),
    md(
        """
        ## A usage report

        A `JsonlListener` writes one line per event; `toolmgmt usage` reads it back. Here the
        demo agent works through a few requests (one asks for something no tool does), and the
        report says how many searches led to a call, which found nothing useful, which tools no
        search ever found, the calls and errors per tool, and the tokens discovery and truncation
        saved.
        """
    ),
    code(
        """
        import tempfile
        from pathlib import Path

        from toolmgmt_demo.usage import DEMO_REQUESTS, record_demo_usage

        folder = Path(tempfile.mkdtemp(prefix="toolmgmt-usage-"))
        log = folder / "usage.jsonl"
        for request, answer in zip(DEMO_REQUESTS, record_demo_usage(log)):
            print(f"{request:<50} {answer[:60]}")
        """
    ),
    code(
        """
        import subprocess
        import sys

        from IPython.display import Image

        plot = folder / "usage.png"
        command = [sys.executable, "-m", "toolmgmt_core", "usage", str(log), "--plot", str(plot)]
        print(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
        Image(str(plot))
        """
    ),
]

# --------------------------------------------------------------------------------------------
# 08 code mode

CODE_MODE = [
    md(
        """
        # Code mode: one program instead of a call per result

        In code mode the model gets two meta-tools: `tool_search`, which answers with Python
        signatures, and `run_code`, which runs a short program in a sandbox (pydantic-monty).
        The program calls tools, reads their whole results and prints only what the answer
        needs: intermediate results never enter the context. Every call still goes through
        toolmgmt's pipeline (policy, validation, approval). Offline, with a scripted model.
        """
    ),
    code(
        """
        from toolmgmt_core import ToolManager
        from toolmgmt_core import ProgramFinished
        from toolmgmt_demo import demo_catalog

        programs = []
        manager = ToolManager(demo_catalog(), mode="code", listeners=[programs.append])
        session = manager.session()
        print([t.name for t in session.tools()], f"{manager.definition_tokens(session.tools())} definition tokens")
        found = session.call_sync("tool_search", {"queries": ["read a file", "export raw analytics events"]})
        print(found.value["found"])
        """
    ),
    md(
        """
        ## A program

        The log file and the analytics export are hundreds of thousands of tokens; the program
        reads both and prints a few lines.
        """
    ),
    code(
        """
        PROGRAM = '''
        log = await files_read_file(path="/logs/app.log")
        lines = log["content"].splitlines()
        errors = [line for line in lines if " ERROR " in line]
        events = await analytics_export_events()
        print(len(lines), "log lines,", len(errors), "errors; first:", errors[:2])
        print("exported:", sorted(events)[:5])
        '''
        result = session.call_sync("run_code", {"code": PROGRAM})
        print(result.content)
        done = [e for e in programs if isinstance(e, ProgramFinished)][-1]
        print(f"{done.calls} calls; {done.inner_tokens:,} result tokens stayed in the sandbox, {done.result_tokens} came back")
        """
    ),
    md(
        """
        ## In a LangChain agent

        The same through `create_agent` and `ToolManagerMiddleware`, with a scripted chat model
        (`toolmgmt_demo.models.langchain.ScriptedChatModel`) standing in for a real one: it
        searches, then writes one program. A call that needs approval (here the email, under a
        `require_approval` policy) pauses the program with LangGraph's `interrupt()`; resumed,
        the program carries on from that call, and the calls before it do not run again.
        """
    ),
    code(
        """
        from langchain.agents import create_agent
        from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.types import Command
        from toolmgmt_core import Access, Policy
        from toolmgmt_demo.models.langchain import ScriptedChatModel
        from toolmgmt_langchain import ToolManagerMiddleware

        EMAIL_PROGRAM = '''
        log = await files_read_file(path="/logs/app.log")
        errors = [line for line in log["content"].splitlines() if " ERROR " in line]
        sent = await email_send_email(to=["oncall@acme.example"], subject="errors", body=str(len(errors)) + " errors")
        print(len(errors), "errors; mailed:", sent)
        '''


        def step(name, args, call_id):
            return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


        model = ScriptedChatModel(script=[
            step("tool_search", {"queries": ["read a file", "send an email"]}, "c1"),
            step("run_code", {"code": EMAIL_PROGRAM}, "c2"),
            AIMessage(content="Mailed the on-call team the error count."),
        ])
        access = Access(policies=[Policy("global", require_approval=["email_*"])])
        agent_manager = ToolManager(demo_catalog(), mode="code", access=access)
        agent = create_agent(model, middleware=[ToolManagerMiddleware(agent_manager)], checkpointer=InMemorySaver())
        config = {"configurable": {"thread_id": "code-1"}}
        state = agent.invoke({"messages": [HumanMessage("Mail on-call the error count of app.log")]}, config)
        [paused] = state["__interrupt__"]
        print("paused:", paused.value["name"], paused.value["args"])
        state = agent.invoke(Command(resume={"type": "approve"}), config)
        for message in state["messages"]:
            if isinstance(message, ToolMessage):
                print(f"{message.name}: {message.content[:160]}")
        print(state["messages"][-1].content)
        """
    ),
    md(
        """
        `docs/code-mode.md` says when code mode pays (multi-step tasks, large intermediate
        results, large catalogs) and when it does not (one or two calls whose results the model
        must read anyway), and how the sandbox's limits are set.
        """
    ),
]

NOTEBOOKS = {
    "01_quickstart": QUICKSTART,
    "02_langchain_agent": LANGCHAIN,
    "03_pydantic_ai": PYDANTIC_AI,
    "04_litellm": LITELLM,
    "05_mcp_gateway": MCP,
    "06_policies_and_truncation": POLICIES,
    "07_observability": OBSERVABILITY,
    "08_code_mode": CODE_MODE,
}


def build(name: str) -> nbformat.NotebookNode:
    """The notebook ``name``, without outputs."""
    notebook = new_notebook(
        metadata={
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        }
    )
    for n, (kind, source) in enumerate(NOTEBOOKS[name]):
        cell = new_markdown_cell(source) if kind == "markdown" else new_code_cell(source)
        cell["id"] = f"{name[:2]}-{n:02d}"  # stable ids keep diffs small
        notebook.cells.append(cell)
    nbformat.validate(notebook)
    return notebook


def render(name: str) -> str:
    """The ``.ipynb`` text of notebook ``name``."""
    return nbformat.writes(build(name)) + "\n"


def main(argv: list[str]) -> None:
    for name in argv or list(NOTEBOOKS):
        (HERE / f"{name}.ipynb").write_text(render(name), encoding="utf-8")
        print(f"wrote notebooks/{name}.ipynb")


if __name__ == "__main__":
    main(sys.argv[1:])
