"""The LangChain adapter driven by a real ``create_agent`` graph and a scripted fake chat model."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import pytest

pytest.importorskip("langchain")

import toolmgmt_langchain  # noqa: E402
from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import InjectedToolArg, StructuredTool, tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from support.demo import demo_manager, demo_tools  # noqa: E402
from toolmgmt_langchain import (  # noqa: E402
    STATE_KEY,
    ToolManagerMiddleware,
    add_langchain_tools,
    bind_session_tools,
    run_tool_calls,
    run_tool_calls_sync,
)

from toolmgmt_core import (  # noqa: E402
    ConfigError,
    ProviderError,
    ResultBudget,
    Search,  # noqa: E402
    ToolAnswerLostError,
    ToolCatalog,
    ToolManager,
    count_tokens,
)
from toolmgmt_demo.models.langchain import ScriptedChatModel  # noqa: E402


def _call(name: str, args: dict[str, Any], n: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{n}"}])


MAX_RESULT_TOKENS = 300


def _initial(manager: ToolManager) -> list[str]:
    """What a fresh session lists: meta-tools, then always-on tools (no CRM tool)."""
    return [t.name for t in manager.session().tools()]


def _manager(mode: Any = None, **extra: Any) -> ToolManager:
    # found tools join the list: what these tests follow (the stable list has its own tests)
    mode = Search(appends=True) if mode is None else mode
    # one catalog for every test: its search index is built once
    results = ResultBudget(max_result_tokens=MAX_RESULT_TOKENS)
    return demo_manager(mode, catalog=demo_tools(), results=results, **extra)


SCRIPT = [
    _call("tool_search", {"query": "search crm contacts by name"}, 1),
    _call("crm_search_contacts", {"query": "patel", "limit": 2}, 2),
    _call("tool_search", {"query": "export all contacts csv backup"}, 3),
    _call("crm_export_contacts", {"format": "csv"}, 4),
    _call("crm_delete_contact", {"contact_id": "con_0001"}, 5),
    AIMessage(content="Done: found the contacts and exported them; deleting is not allowed."),
]


def _run(agent: Any, use_async: bool, config: dict[str, Any] | None = None) -> dict[str, Any]:
    payload = {"messages": [HumanMessage("Find Patel, export contacts, delete con_0001.")]}
    if use_async:
        return asyncio.run(agent.ainvoke(payload, config))
    return agent.invoke(payload, config)


def _tool_messages(state: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_full_agent_loop(use_async: bool) -> None:
    manager = _manager()
    model = ScriptedChatModel(script=list(SCRIPT))
    agent = create_agent(model, tools=[], middleware=[ToolManagerMiddleware(manager)])
    state = _run(agent, use_async)

    # The same calls through a plain session give the tool list the model must see each step.
    reference = manager.session()
    expected: list[list[str]] = []
    for message in SCRIPT:
        expected.append([t.name for t in reference.tools()])
        for call in message.tool_calls:
            reference.call_sync(call["name"], call["args"])
    seen = [c["tools"] for c in model.calls]
    assert seen == expected
    assert seen[0][0] == "tool_search"
    assert not any(name.startswith("crm_") for name in seen[0])
    assert "crm_search_contacts" in seen[1] and "crm_export_contacts" not in seen[1]
    assert "crm_export_contacts" in seen[3]
    assert all(seen[i] == seen[i + 1][: len(seen[i])] for i in range(len(seen) - 1))
    assert not any("crm_delete_contact" in names for names in seen)

    results = _tool_messages(state)
    assert "crm_search_contacts" in results["call_1"].content
    found = json.loads(results["call_2"].content)
    assert results["call_2"].status == "success" and "patel" in json.dumps(found).lower()
    refused = results["call_5"]
    assert refused.status == "error"
    assert "crm_delete_contact" in refused.content
    assert json.loads(refused.content)["kind"] == "call"
    assert state["messages"][-1].content.startswith("Done")
    # The system prompt carries the mode's instructions.
    assert "tool_search" in model.calls[0]["messages"][0].content
    # The session snapshot sits in the agent state.
    snapshot = state[STATE_KEY]
    assert snapshot["rev"] == 5
    restored = manager.session(snapshot["session"])
    assert [t.name for t in restored.tools()] == expected[-1]
    # Results are accounted under the model's own tool-call ids (for clearing them later).
    records = {r.call_id: r for r in restored.result_budget.records()}
    assert {"call_2", "call_4"} <= set(records) and records["call_4"].truncated
    export = results["call_4"]
    exporter = manager.catalog.get("crm_export_contacts")
    budget = exporter.max_result_tokens or MAX_RESULT_TOKENS
    full = exporter.handler(format="csv")
    assert export.status == "success"
    assert count_tokens(full) > 2 * budget
    assert count_tokens(export.content) <= budget
    assert export.content[:40] == full[:40]


def test_checkpointer_restores_loaded_tools_across_invocations() -> None:
    manager = _manager()
    first = ScriptedChatModel(script=[SCRIPT[0], AIMessage(content="ok")])
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "t1"}}
    agent = create_agent(first, middleware=[ToolManagerMiddleware(manager)], checkpointer=saver)
    _run(agent, False, config)
    loaded = first.calls[1]["tools"]
    assert "crm_search_contacts" in loaded

    # A new agent (a new process, say) with the same checkpointer sees the loaded tools.
    second = ScriptedChatModel(
        script=[_call("crm_get_contact", {"contact_id": "con_0001"}, 9), AIMessage(content="bye")]
    )
    agent2 = create_agent(second, middleware=[ToolManagerMiddleware(manager)], checkpointer=saver)
    state = agent2.invoke({"messages": [HumanMessage("and con_0001?")]}, config)
    assert second.calls[0]["tools"] == loaded
    other = ScriptedChatModel(script=[AIMessage(content="fresh")])
    agent3 = create_agent(other, middleware=[ToolManagerMiddleware(manager)], checkpointer=saver)
    agent3.invoke({"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "t2"}})
    assert other.calls[0]["tools"] == _initial(manager)
    assert _tool_messages(state)["call_9"].status in ("success", "error")


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_parallel_searches_in_one_step_keep_every_load(use_async: bool) -> None:
    manager = _manager()
    both = AIMessage(
        content="",
        tool_calls=[
            {"name": "tool_search", "args": {"query": "search crm contacts"}, "id": "a"},
            {"name": "tool_search", "args": {"query": "calendar events"}, "id": "b"},
        ],
    )
    model = ScriptedChatModel(script=[both, AIMessage(content="ok")])
    agent = create_agent(model, middleware=[ToolManagerMiddleware(manager)])
    state = _run(agent, use_async)
    session = manager.session()
    session.call_sync("tool_search", {"query": "search crm contacts"})
    session.call_sync("tool_search", {"query": "calendar events"})
    assert set(model.calls[1]["tools"]) == {t.name for t in session.tools()}
    assert state[STATE_KEY]["rev"] == 2


def test_framework_tools_outside_the_catalog_stay_with_langchain() -> None:
    @tool
    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    model = ScriptedChatModel(script=[_call("shout", {"text": "hi"}, 1), AIMessage(content="ok")])
    manager = _manager()
    agent = create_agent(model, tools=[shout], middleware=[ToolManagerMiddleware(manager)])
    state = agent.invoke({"messages": [HumanMessage("go")]})
    assert model.calls[0]["tools"] == [*_initial(manager), "shout"]
    assert _tool_messages(state)["call_1"].content == "HI"


def test_lazy_mode_over_128_tools_needs_the_anthropic_shape() -> None:
    manager = _manager(mode="lazy")
    listed = [t.name for t in manager.session().tools()]
    assert len(listed) > 128
    model = ScriptedChatModel(script=[AIMessage(content="ok")])
    agent = create_agent(model, middleware=[ToolManagerMiddleware(manager, provider="anthropic")])
    agent.invoke({"messages": [HumanMessage("go")]})
    assert model.calls[0]["tools"] == listed
    openai = create_agent(model, middleware=[ToolManagerMiddleware(manager)])
    with pytest.raises(ProviderError, match="128"):
        openai.invoke({"messages": [HumanMessage("go")]})
    with pytest.raises(ConfigError, match="'openai' or 'anthropic'"):
        ToolManagerMiddleware(manager, provider="gemini")


def test_unknown_tool_gets_closest_names() -> None:
    model = ScriptedChatModel(
        script=[_call("crm_search_contact", {"query": "x"}, 1), AIMessage(content="ok")]
    )
    agent = create_agent(model, middleware=[ToolManagerMiddleware(_manager())])
    message = _tool_messages(agent.invoke({"messages": [HumanMessage("go")]}))["call_1"]
    assert message.status == "error"
    assert "crm_search_contacts" in message.content


def test_hand_written_bind_tools_loop() -> None:
    manager = _manager()
    session = manager.session()
    model = ScriptedChatModel(script=[SCRIPT[0], SCRIPT[1]])
    first = bind_session_tools(model, session).invoke([HumanMessage("find patel")])
    messages = run_tool_calls_sync(session, first)
    assert [m.tool_call_id for m in messages] == ["call_1"]
    second = bind_session_tools(model, session).invoke(
        [HumanMessage("find patel"), first, *messages]
    )
    assert model.calls[0]["tools"] == _initial(manager)
    assert "crm_search_contacts" in model.calls[1]["tools"]
    result = asyncio.run(run_tool_calls(session, second))
    assert result[0].status == "success" and "patel" in result[0].content.lower()


# -- ingestion -------------------------------------------------------------------------------


@pytest.mark.parametrize(("hints", "runs"), [({"readOnlyHint": True}, 2), ({}, 1)])
def test_a_langchain_tool_whose_answer_was_lost_gets_the_cores_resend_rule(
    hints: dict[str, Any], runs: int
) -> None:
    ran: list[str] = []

    async def _fetch(city: str) -> str:
        ran.append(city)
        if len(ran) == 1:  # as langchain-mcp-adapters' transport might report a lost answer
            raise ToolAnswerLostError("the answer was lost; the call may or may not have run")
        return f"sunny in {city}"

    fetch = StructuredTool(
        name="weather_fetch",
        description="Fetch the weather in a city.",
        args_schema={"type": "object", "properties": {"city": {"type": "string"}}},
        coroutine=_fetch,
        metadata=hints,
    )
    catalog = ToolCatalog()
    add_langchain_tools(catalog, [fetch])
    session = ToolManager(catalog, mode="flat").session()
    result = asyncio.run(session.call("weather_fetch", {"city": "Oslo"}))
    assert len(ran) == runs  # read-only: resent once by the core; unannotated: never
    assert result.outcome == ("success" if runs == 2 else "failed")


def test_add_langchain_tools_sync_async_and_mcp_shaped() -> None:
    @tool
    def add(a: int, b: int = 2) -> int:
        """Add two integers."""
        return a + b

    async def _lookup(city: str) -> tuple[str, dict[str, Any]]:
        return f"sunny in {city}", {"raw": True}

    # langchain-mcp-adapters builds exactly this: async-only, JSON Schema args, content+artifact.
    mcp_like = StructuredTool(
        name="weather_lookup",
        description="Look up the weather in a city.",
        args_schema={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        coroutine=_lookup,
        response_format="content_and_artifact",
        metadata={"readOnlyHint": True, "openWorldHint": True},
    )
    catalog = ToolCatalog()
    report = add_langchain_tools(catalog, [add, mcp_like], domain="misc")
    assert report.added == ["add", "weather_lookup"]
    added = catalog.get("add")
    assert added.domain == "misc" and added.required == ("a",)
    assert added.parameters["properties"]["b"]["default"] == 2
    weather = catalog.get("weather_lookup")
    assert weather.is_async and weather.annotations.read_only is True
    assert weather.metadata["langchain_tool"] is mcp_like

    session = ToolManager(
        catalog, mode=Search(appends=True), always_on=["add", "weather_lookup"]
    ).session()
    assert session.call_sync("add", {"a": 40}).content == "42"
    assert "sunny in Oslo" in asyncio.run(session.call("weather_lookup", {"city": "Oslo"})).content
    bad = session.call_sync("add", {"a": "forty"})
    assert bad.is_error and "a" in bad.content


def test_add_langchain_tools_refuses_injected_arguments_and_duplicates() -> None:
    @tool
    def needs_user(query: str, user_id: Annotated[str, InjectedToolArg]) -> str:
        """Search as a user."""
        return query

    @tool
    def echo(text: str) -> str:
        """Echo."""
        return text

    catalog = ToolCatalog()
    with pytest.raises(ValueError, match="plain InjectedToolArg"):
        add_langchain_tools(catalog, [echo, needs_user])
    assert len(catalog) == 0
    report = add_langchain_tools(catalog, [echo, needs_user, echo], on_error="skip")
    assert report.added == ["echo"]
    assert [name for name, _ in report.skipped] == ["needs_user", "echo"]
    with pytest.raises(ValueError, match="BaseTool"):
        add_langchain_tools(catalog, [lambda: 1])


def test_public_surface() -> None:
    # constants, then classes, then functions (the order every module's __all__ keeps)
    names = toolmgmt_langchain.__all__
    kinds = {n: 0 if n.isupper() else 1 if n[:1].isupper() else 2 for n in names}
    assert names == sorted(names, key=lambda n: (kinds[n], n))
    for name in toolmgmt_langchain.__all__:
        assert hasattr(toolmgmt_langchain, name)
    assert "Usage::" in (toolmgmt_langchain.__doc__ or "")
    with pytest.raises(TypeError, match="ToolManager"):
        ToolManagerMiddleware(ToolCatalog())  # type: ignore[arg-type]


def test_a_thread_keeps_its_session_across_tool_steps_and_restores_from_any_other_state() -> None:
    """Issue 42: the middleware keeps a thread's session from one tool step to the next while
    the checkpointed state is the one it wrote; another thread, an edited state or a state
    it did not write (a new middleware: another process) is restored from the state."""
    manager = _manager()
    made: list[Any] = []
    session = manager.session

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(args)
        return session(*args, **kwargs)

    manager.session = counted  # type: ignore[method-assign]
    steps = [SCRIPT[0], SCRIPT[1], SCRIPT[2], AIMessage(content="ok")]
    middleware = ToolManagerMiddleware(manager)
    saver = InMemorySaver()
    config = {"configurable": {"thread_id": "k1"}}
    agent = create_agent(
        ScriptedChatModel(script=steps), middleware=[middleware], checkpointer=saver
    )
    made.clear()
    state = _run(agent, False, config)
    tool_steps = len(made) - 4  # each of the 4 model steps lists from the state
    assert tool_steps == 1, made  # 3 tool steps, one session
    messages = _tool_messages(state)
    assert messages["call_2"].status == "success" and "patel" in messages["call_2"].content.lower()
    assert "crm_export_contacts" in json.dumps(state[STATE_KEY])  # the third step's load kept

    # The same thread resumed by another middleware (another process): restored, same state.
    made.clear()
    other = ScriptedChatModel(
        script=[_call("crm_export_contacts", {"format": "csv"}, 7), AIMessage(content="bye")]
    )
    again = create_agent(other, middleware=[ToolManagerMiddleware(manager)], checkpointer=saver)
    resumed = again.invoke({"messages": [HumanMessage("export")]}, config)
    assert _tool_messages(resumed)["call_7"].status == "success"
    assert len(made) == 3  # two model steps and one tool step, each from the state

    # A state the kept session did not write (edited: the loads dropped) is restored.
    fresh = {"configurable": {"thread_id": "k2"}}
    two = [SCRIPT[0], AIMessage(content="ok"), SCRIPT[1], AIMessage(content="ok")]
    agent3 = create_agent(
        ScriptedChatModel(script=two), middleware=[middleware], checkpointer=saver
    )
    agent3.invoke({"messages": [HumanMessage("find")]}, fresh)
    kept = agent3.get_state(fresh).values[STATE_KEY]
    edited = {"rev": kept["rev"] + 100, "session": {**kept["session"], "loaded": []}}
    agent3.update_state(fresh, {STATE_KEY: edited})
    made.clear()
    after = agent3.invoke({"messages": [HumanMessage("again")]}, fresh)
    assert len(made) == 3  # the tool step restored the edited state: nothing loaded in it
    assert after[STATE_KEY]["session"]["loaded"] != kept["session"]["loaded"]
