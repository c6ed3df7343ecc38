"""Framework adapters: tool tokens on the wire and time per step, managed against flat.

The same conversation (search, call, search, call, a refused call, the answer; flat: the same
without the searches) runs on the demo catalog through each framework twice, with a fake model
(LangChain, PydanticAI) or a faked HTTP edge (LiteLLM):

- managed: the adapter (``ToolManagerMiddleware``, ``ManagedToolset``, ``ToolManagerCallback``)
  with a search-mode manager;
- flat (the reference): the catalog's tools registered with the framework directly (the 128
  that OpenAI accepts at most, those the conversation calls among them).

Printed per framework: tokens of the tool definitions the model received, summed over the
requests of the conversation (compact JSON of name, description and parameters, o200k_base), and
the wall time per step (median of ``--repeat`` runs, fake model time included).

``--json OUT`` writes (under ``figures``, see ``bench/_results.py``)::

    {"catalog_tools": int, "steps_managed": 6, "steps_flat": 4, "repeat": int,
     "frameworks": [{"framework": "langchain" | "pydantic_ai" | "litellm",
                     "tokens_flat": int, "tokens_managed": int, "share": managed / flat,
                     "ms_per_step_flat": float, "ms_per_step_managed": float}, ...]}

Run: ``python bench/adapters.py [--repeat 5] [--json bench/results/adapters.json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # support.*: the tests'

from _results import write_results  # noqa: E402
from support.demo import demo_manager, demo_tools  # noqa: E402

from toolmgmt_core import ToolManager, count_tokens  # noqa: E402
from toolmgmt_core._calls.execution import dumps_compact  # noqa: E402

STEPS: list[list[tuple[str, dict[str, Any]]] | str] = [
    [("tool_search", {"query": "search crm contacts by name"})],
    [
        (
            "call_tool",
            {"tool_name": "crm_search_contacts", "arguments": {"query": "patel", "limit": 2}},
        )
    ],
    [("tool_search", {"query": "upcoming calendar events"})],
    [("call_tool", {"tool_name": "calendar_list_events", "arguments": {}})],
    [("crm_delete_contact", {"contact_id": "con_0001"})],
    "Done.",
]
"""The search mode's list never changes: found tools run through ``call_tool``."""


def _direct(step: list[tuple[str, dict[str, Any]]] | str) -> list[tuple[str, dict[str, Any]]] | str:
    """``step`` with ``call_tool`` calls made directly (every tool listed)."""
    if isinstance(step, str):
        return step
    return [(a["tool_name"], a["arguments"]) if n == "call_tool" else (n, a) for n, a in step]


FLAT_STEPS = [_direct(s) for s in STEPS if isinstance(s, str) or s[0][0] != "tool_search"]
"""With every tool listed the model needs no search."""
DEMO = demo_tools()


FLAT_LIMIT = 128


def _flat(manager: ToolManager) -> list[Any]:
    """The flat reference's tools: what the conversation calls first, up to OpenAI's limit."""
    called = {n for s in FLAT_STEPS if not isinstance(s, str) for n, _ in s}
    visible = manager.session().visible_tools()
    ordered = [t for t in visible if t.name in called] + [
        t for t in visible if t.name not in called
    ]
    return ordered[:FLAT_LIMIT]


def _tokens(definitions: list[dict[str, Any]]) -> int:
    return count_tokens(dumps_compact(definitions)) if definitions else 0


def _plain(name: str, description: str | None, parameters: Any) -> dict[str, Any]:
    return {"name": name, "description": description or "", "parameters": parameters}


def _openai_tokens(tools: list[dict[str, Any]]) -> int:
    """:func:`_tokens` of tools in OpenAI's Chat form (``{"function": {...}}``)."""
    keys = ("name", "description", "parameters")
    return _tokens([_plain(**{k: t["function"].get(k) for k in keys}) for t in tools])


# -- LangChain ------------------------------------------------------------------------------


def run_langchain(managed: bool) -> tuple[int, float]:
    script = STEPS if managed else FLAT_STEPS
    from langchain.agents import create_agent
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
    from langchain_core.tools import StructuredTool
    from toolmgmt_langchain import ToolManagerMiddleware

    from toolmgmt_demo.models.langchain import ScriptedChatModel

    sent: list[int] = []

    def answer(messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
        sent.append(_openai_tokens(tools))
        step = script[len(sent) - 1]
        if isinstance(step, str):
            return AIMessage(content=step)
        calls = [{"name": n, "args": a, "id": f"c{len(sent)}_{i}"} for i, (n, a) in enumerate(step)]
        return AIMessage(content="", tool_calls=calls)

    manager = demo_manager()
    model = ScriptedChatModel(script=answer)
    if managed:
        agent = create_agent(model, middleware=[ToolManagerMiddleware(manager, instructions=False)])
    else:
        visible = _flat(manager)
        tools = [
            StructuredTool(
                name=t.name,
                description=t.description,
                args_schema=dict(t.parameters),
                func=(lambda h: lambda **kw: h(**kw))(t.handler),
            )
            for t in visible
        ]
        agent = create_agent(model, tools=tools)
    start = time.perf_counter()
    agent.invoke({"messages": [HumanMessage("go")]})
    return sum(sent), (time.perf_counter() - start) / len(script)


# -- PydanticAI -----------------------------------------------------------------------------


def run_pydantic_ai(managed: bool) -> tuple[int, float]:
    script = STEPS if managed else FLAT_STEPS
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.toolsets import FunctionToolset
    from toolmgmt_pydantic_ai import ManagedToolset

    sent: list[int] = []

    def model(messages: Any, info: Any) -> ModelResponse:
        sent.append(
            _tokens(
                [
                    _plain(t.name, t.description, t.parameters_json_schema)
                    for t in info.function_tools
                ]
            )
        )
        step = script[len(sent) - 1]
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        return ModelResponse(
            parts=[
                ToolCallPart(n, a, tool_call_id=f"c{len(sent)}_{i}")
                for i, (n, a) in enumerate(step)
            ]
        )

    manager = demo_manager()
    if managed:
        toolset: Any = ManagedToolset(manager, instructions=False)
    else:
        visible = _flat(manager)
        toolset = FunctionToolset(
            [
                Tool.from_schema(
                    (lambda h: lambda **kw: h(**kw))(t.handler),
                    name=t.name,
                    description=t.description,
                    json_schema=dict(t.parameters),
                )
                for t in visible
            ]
        )
    agent = Agent(FunctionModel(model), toolsets=[toolset])
    start = time.perf_counter()
    agent.run_sync("go")
    return sum(sent), (time.perf_counter() - start) / len(script)


# -- LiteLLM --------------------------------------------------------------------------------


def run_litellm(managed: bool) -> tuple[int, float]:
    script = STEPS if managed else FLAT_STEPS
    import litellm
    from support.openai_edge import async_client, tool_calls_message
    from toolmgmt_litellm import ToolManagerCallback, run_meta_tool_calls

    from toolmgmt_core import format_tools

    sent: list[int] = []

    def edge(body: dict[str, Any]) -> dict[str, Any]:
        sent.append(_openai_tokens(body.get("tools", [])))
        step = script[len(sent) - 1]
        if isinstance(step, str):
            return {"role": "assistant", "content": step}
        return tool_calls_message(step, prefix=f"c{len(sent)}")

    client = async_client(edge)
    manager = demo_manager()
    callback = ToolManagerCallback(manager)
    saved = list(litellm.callbacks)
    litellm.callbacks[:] = [callback] if managed else []
    flat = format_tools(_flat(manager), "openai")["tools"]

    async def loop(conversation: str) -> None:
        session = callback.session(conversation)
        messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
        for _ in script:
            metadata = {"toolmgmt_session": conversation}
            extra = {"metadata": metadata} if managed else {"tools": flat}
            response = await litellm.acompletion(
                model="openai/gpt-4o-mini", messages=messages, client=client, **extra
            )
            message = response.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return
            answers = await run_meta_tool_calls(session, response, all_tools=True)
            messages += answers

    try:
        asyncio.run(loop("warm-up"))  # LiteLLM's lazy imports outside the timing
        sent.clear()
        start = time.perf_counter()
        asyncio.run(loop("bench"))  # a fresh conversation
        return sum(sent), (time.perf_counter() - start) / len(script)
    finally:
        litellm.callbacks[:] = saved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    print(
        f"demo catalog: {len(DEMO)} tools; {len(STEPS)} steps managed, {len(FLAT_STEPS)} flat "
        f"(no searches); median of {args.repeat} runs\n"
    )
    print(
        f"{'framework':<12} {'tokens flat':>12} {'managed':>9} {'share':>7}"
        f" {'ms/step flat':>13} {'managed':>9}"
    )
    rows: list[dict[str, Any]] = []
    for name, run in (
        ("langchain", run_langchain),
        ("pydantic_ai", run_pydantic_ai),
        ("litellm", run_litellm),
    ):
        run(True), run(False)  # warm imports and caches
        results = {m: [run(m) for _ in range(args.repeat)] for m in (False, True)}
        tokens = {m: results[m][0][0] for m in results}
        ms = {m: statistics.median(r[1] for r in results[m]) * 1000 for m in results}
        print(
            f"{name:<12} {tokens[False]:>12,} {tokens[True]:>9,} "
            f"{tokens[True] / tokens[False]:>7.1%} {ms[False]:>13.1f} {ms[True]:>9.1f}"
        )
        rows.append(
            {
                "framework": name,
                "tokens_flat": tokens[False],
                "tokens_managed": tokens[True],
                "share": tokens[True] / tokens[False],
                "ms_per_step_flat": ms[False],
                "ms_per_step_managed": ms[True],
            }
        )
    if args.json:
        figures = {
            "catalog_tools": len(DEMO),
            "steps_managed": len(STEPS),
            "steps_flat": len(FLAT_STEPS),
            "repeat": args.repeat,
            "frameworks": rows,
        }
        write_results(args.json, "adapters", figures)


if __name__ == "__main__":
    main()
