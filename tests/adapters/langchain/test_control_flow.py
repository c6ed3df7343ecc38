"""LangGraph's control flow through ``ToolManagerMiddleware``: interrupts, approval with
``interrupt()`` (HumanInTheLoopMiddleware's shape), and tools with injected arguments."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent  # noqa: E402
from langchain.agents.middleware import HumanInTheLoopMiddleware  # noqa: E402
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from langchain_core.tools import InjectedToolCallId, tool  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.prebuilt import InjectedState, ToolRuntime  # noqa: E402
from langgraph.types import Command, interrupt  # noqa: E402
from pydantic import ValidationError  # noqa: E402
from toolmgmt_langchain import (  # noqa: E402
    ToolManagerMiddleware,
    ToolManagerState,
    add_langchain_tools,
    run_tool_calls_sync,
)
from typing_extensions import NotRequired  # noqa: E402

from toolmgmt_core import (  # noqa: E402
    Access,
    Approval,
    ApprovalRequest,
    ConfigError,
    Discovery,
    Policy,
    ResultBudget,
    ToolAnnotations,
    ToolCatalog,
    ToolManager,
)
from toolmgmt_demo.models.langchain import ScriptedChatModel  # noqa: E402


def _call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def _results(state: dict[str, Any]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}


def _invoke(agent: Any, payload: Any, config: dict[str, Any], use_async: bool) -> Any:
    if use_async:
        return asyncio.run(agent.ainvoke(payload, config))
    return agent.invoke(payload, config)


def _catalog(runs: dict[str, int]) -> ToolCatalog:
    def ask_human(question: str) -> str:
        """Ask the user a question and wait for the answer."""
        runs["ask"] += 1
        return f"the user said: {interrupt({'question': question})}"

    def purge_archive(year: int) -> str:
        """Delete every archived record of a year."""
        runs["purge"] += 1
        return "purged record\n" * 400

    def archive_stats(year: int) -> dict[str, int]:
        """Count the archived records of a year."""
        return {"year": year, "records": 12}

    catalog = ToolCatalog()
    catalog.add_function(ask_human, domain="people")
    catalog.add_function(
        purge_archive, domain="archive", annotations=ToolAnnotations(destructive=True)
    )
    catalog.add_function(archive_stats, domain="archive")
    return catalog


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_catalog_tool_calling_interrupt_pauses_and_resumes(use_async: bool) -> None:
    runs = {"ask": 0, "purge": 0}
    manager = ToolManager(_catalog(runs), mode="search", always_on=["ask_human"])
    model = ScriptedChatModel(
        script=[_call("ask_human", {"question": "Which year?"}, "q1"), AIMessage(content="2019")]
    )
    agent = create_agent(
        model, middleware=[ToolManagerMiddleware(manager)], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}
    paused = _invoke(agent, {"messages": [HumanMessage("purge?")]}, config, use_async)
    assert [i.value for i in paused["__interrupt__"]] == [{"question": "Which year?"}]
    assert "q1" not in _results(paused)  # no tool error: the graph is paused
    resumed = _invoke(agent, Command(resume="2019"), config, use_async)
    assert _results(resumed)["q1"].content == "the user said: 2019"
    assert _results(resumed)["q1"].status == "success"
    assert resumed["messages"][-1].content == "2019"
    assert runs["ask"] == 2  # LangGraph re-runs the node on resume; interrupt() then answers


def _approval_agent(
    runs: dict[str, int], mode: str = "search", **options: Any
) -> tuple[Any, ScriptedChatModel]:
    manager = ToolManager(
        _catalog(runs),
        mode=mode,  # type: ignore[arg-type]
        always_on=[] if mode == "gateway" else ["purge_archive"],
        results=ResultBudget(max_result_tokens=100),
        **options,
    )
    if mode == "gateway":
        call = _call(
            "execute_tool", {"tool_name": "purge_archive", "arguments": {"year": 2019}}, "p1"
        )
    else:
        call = _call("purge_archive", {"year": 2019}, "p1")
    model = ScriptedChatModel(script=[call, AIMessage(content="done")])
    agent = create_agent(
        model, middleware=[ToolManagerMiddleware(manager)], checkpointer=InMemorySaver()
    )
    return agent, model


EDIT = {"type": "edit", "edited_action": {"name": "purge_archive", "args": {"year": 2020}}}
DECISIONS: dict[str, tuple[Any, Any]] = {
    "approve": ({"type": "approve"}, True),
    "batched-approve": ({"decisions": [{"type": "approve"}]}, True),
    "true": (True, True),
    "reject": ({"type": "reject"}, False),
    "reject-with-reason": ({"type": "reject", "message": "Keep 2019 for the audit."}, False),
    "reject-with-a-word": ({"type": "reject", "message": "no"}, False),
    "edit": (EDIT, "edit"),
    "respond": ({"type": "respond", "message": "Purged by hand: 12 records."}, "respond"),
}


@pytest.mark.parametrize("mode", ["search", "gateway"])
@pytest.mark.parametrize("decision", list(DECISIONS))
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_approval_pauses_with_interrupt_and_resumes(
    mode: str, decision: str, use_async: bool
) -> None:
    runs = {"ask": 0, "purge": 0}
    agent, _ = _approval_agent(runs, mode)
    config = {"configurable": {"thread_id": "t"}}
    paused = _invoke(agent, {"messages": [HumanMessage("purge 2019")]}, config, use_async)
    (request,) = [i.value for i in paused["__interrupt__"]]
    assert request["type"] == "tool_approval" and request["tool_call_id"] == "p1"
    assert request["name"] == "purge_archive" and request["args"] == {"year": 2019}
    assert "destructive" in request["description"]
    assert request["allowed_decisions"] == ["approve", "edit", "reject", "respond"]
    # HITL's per-call shape: a response schema a client can render, the edit pinned to the tool.
    schema = json.dumps(paused["__interrupt__"][0].response_schema)
    assert all(f'"{kind}"' in schema for kind in request["allowed_decisions"])
    assert '"purge_archive"' in schema and '"year"' in schema
    assert runs["purge"] == 0

    answer, approved = DECISIONS[decision]
    resumed = _invoke(agent, Command(resume=answer), config, use_async)
    message = _results(resumed)["p1"]
    if approved is True:
        assert runs["purge"] == 1  # once, through the session: cut to the budget
        assert message.status == "success" and message.content.startswith("purged record")
        assert len(message.content) < len("purged record\n" * 400)
    elif approved == "edit":  # ran once, with the reviewer's arguments, and the model is told
        assert runs["purge"] == 1 and message.status == "success"
        assert '{"year":2020}' in message.content.split("\n")[0]
    elif approved == "respond":  # the reviewer's answer is the result; the tool never ran
        assert runs["purge"] == 0 and message.status == "success"
        assert message.content == "Purged by hand: 12 records."
    else:
        assert runs["purge"] == 0 and message.status == "error"
        assert json.loads(message.content)["error"] == "approval_denied"
        said = json.loads(message.content)["message"]
        if decision == "reject-with-reason":
            assert 'The user said: "Keep 2019 for the audit.". Do not retry' in said
        if decision == "reject-with-a-word":  # the user's word, quoted, then the advice
            assert 'so it did not run. The user said: "no". Do not retry it' in said
    assert resumed["messages"][-1].content == "done"


def test_require_approval_step_an_unreadable_answer_and_approval_off() -> None:
    runs = {"ask": 0, "purge": 0}
    review = [Policy("review", require_approval=["archive_stats"])]
    manager = ToolManager(
        _catalog(runs), mode="search", always_on=["archive_stats"], access=Access(policies=review)
    )
    model = ScriptedChatModel(script=[_call("archive_stats", {"year": 1}, "a1"), AIMessage("ok")])
    agent = create_agent(
        model, middleware=[ToolManagerMiddleware(manager)], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}
    paused = agent.invoke({"messages": [HumanMessage("stats")]}, config)
    assert "review" in paused["__interrupt__"][0].value["description"]
    # An answer that is not a decision, or edits in bad arguments or another tool, is refused
    # before it is saved, naming what is wrong (as LangGraph does for HITL's): answer again.
    bad_args = {**EDIT, "edited_action": {"name": "archive_stats", "args": {"year": "x"}}}
    other_tool = {**EDIT, "edited_action": {"name": "purge_archive", "args": {"year": 1}}}
    for answer in ({"type": "edit"}, "yes", bad_args, other_tool, {"decisions": []}):
        with pytest.raises(ValidationError):
            agent.invoke(Command(resume=answer), config)
    assert agent.get_state(config).interrupts  # still paused on the same question
    resumed = agent.invoke(Command(resume={"type": "reject"}), config)
    assert json.loads(_results(resumed)["a1"].content)["error"] == "approval_denied"

    # approval=False: the manager alone decides; with no approver a destructive tool is
    # refused, as at every door, unless the manager opts out of approving destructive tools.
    for approval, ran, status in ((None, 0, "error"), (Approval(destructive=False), 1, "success")):
        runs = {"ask": 0, "purge": 0}
        manager = ToolManager(
            _catalog(runs), mode="search", always_on=["purge_archive"], approval=approval
        )
        script = [_call("purge_archive", {"year": 1}, "p1"), AIMessage("ok")]
        model = ScriptedChatModel(script=script)
        agent = create_agent(model, middleware=[ToolManagerMiddleware(manager, approval=False)])
        state = agent.invoke({"messages": [HumanMessage("purge")]})
        assert runs["purge"] == ran and _results(state)["p1"].status == status


def test_hand_written_loop_inside_a_node_pauses_too() -> None:
    runs = {"ask": 0, "purge": 0}
    session = ToolManager(_catalog(runs), mode="search", always_on=["ask_human"]).session()
    message = _call("ask_human", {"question": "ok?"}, "q1")

    from langgraph.graph import END, START, MessagesState, StateGraph

    def tools(state: MessagesState) -> dict[str, Any]:
        return {"messages": run_tool_calls_sync(session, message)}

    graph = StateGraph(MessagesState)
    graph.add_node("tools", tools)
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    assert app.invoke({"messages": []}, config)["__interrupt__"][0].value == {"question": "ok?"}
    done = app.invoke(Command(resume="yes"), config)
    assert done["messages"][-1].content == "the user said: yes"


# -- tools with injected arguments ------------------------------------------------------------


@tool
def whoami(greeting: str, runtime: ToolRuntime) -> str:
    """Greet the user by the name the agent knows."""
    return f"{greeting}, {runtime.context.user} (call {runtime.tool_call_id})"


@tool
def count_messages(state: Annotated[dict, InjectedState]) -> int:
    """Count the messages of the conversation so far."""
    return len(state["messages"])


@tool
def remember(fact: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Remember a fact for the rest of the conversation."""
    return Command(
        update={
            "remembered": fact,
            "messages": [ToolMessage(f"remembered {fact}", tool_call_id=tool_call_id)],
        }
    )


@dataclass
class Context:
    """The run's context, which ToolRuntime carries to tools."""

    user: str


class State(ToolManagerState):
    """The agent state with a field a tool's Command updates."""

    remembered: NotRequired[str]


# LangChain itself warns so when a ToolRuntime tool runs, with or without toolmgmt.
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_tools_with_injected_arguments_run_through_the_tool_node(use_async: bool) -> None:
    catalog = ToolCatalog()
    report = add_langchain_tools(catalog, [whoami, count_messages, remember], domain="me")
    assert report.added == ["whoami", "count_messages", "remember"]
    assert list(catalog.get("whoami").parameters["properties"]) == ["greeting"]
    manager = ToolManager(catalog, mode="search", discovery=Discovery(max_results=3))
    model = ScriptedChatModel(
        script=[
            _call("tool_search", {"query": "greet the user count messages remember"}, "s1"),
            AIMessage(
                content="",
                tool_calls=[
                    {"name": "whoami", "args": {"greeting": "Hi"}, "id": "w1"},
                    {"name": "count_messages", "args": {}, "id": "c1"},
                    {"name": "remember", "args": {"fact": "likes tea"}, "id": "r1"},
                ],
            ),
            AIMessage(content="ok"),
        ]
    )
    agent = create_agent(
        model,
        middleware=[ToolManagerMiddleware(manager)],
        state_schema=State,
        context_schema=Context,
    )
    payload = {"messages": [HumanMessage("hello")]}
    if use_async:
        state = asyncio.run(agent.ainvoke(payload, context=Context("Ada")))
    else:
        state = agent.invoke(payload, context=Context("Ada"))
    results = _results(state)
    assert results["w1"].content == "Hi, Ada (call w1)"
    assert int(results["c1"].content) >= 3
    assert results["r1"].content == "remembered likes tea" and results["r1"].status == "success"
    assert state["remembered"] == "likes tea"  # the tool's own Command updated the state
    assert sum(1 for m in state["messages"] if getattr(m, "tool_call_id", None) == "r1") == 1

    # Outside an agent the same tool cannot get its runtime: a clear tool error.
    outside = manager.session()
    outside.call_sync("tool_search", {"query": "greet the user"})
    result = outside.call_sync("whoami", {"greeting": "Hi"})
    assert result.is_error and "runtime" in result.content and "create_agent" in result.content


@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize("way", ["call_tool", "program"])
def test_a_tool_with_injected_arguments_reached_inside_another_call(way: str) -> None:
    # The ToolNode travels down with the call (its context), so a call made inside another
    # (the call_tool meta-tool's, a run_code program's) runs through it too.
    if way == "program":
        pytest.importorskip("pydantic_monty")
    catalog = ToolCatalog()
    add_langchain_tools(catalog, [whoami], domain="me")
    if way == "call_tool":
        manager = ToolManager(catalog, mode="search", always_on=["whoami"])
        call = ("call_tool", {"tool_name": "whoami", "arguments": {"greeting": "Hi"}})
    else:
        manager = ToolManager(catalog, mode="code")
        call = ("run_code", {"code": "print(await whoami(greeting='Hi'))"})
    model = ScriptedChatModel(script=[_call(*call, "k1"), AIMessage(content="ok")])
    agent = create_agent(model, middleware=[ToolManagerMiddleware(manager)], context_schema=Context)
    state = agent.invoke({"messages": [HumanMessage("hello")]}, context=Context("Ada"))
    assert "Hi, Ada (call k1)" in str(_results(state)["k1"].content)


# -- beside HumanInTheLoopMiddleware ------------------------------------------------------------


def _with_hitl(runs: dict[str, int], mode: str, approval: Any) -> tuple[Any, Any]:
    """purge_archive (destructive) reviewed by HITL; archive_stats needs approval by policy."""
    manager = ToolManager(
        _catalog(runs),
        mode="search",
        always_on=["purge_archive", "archive_stats"],
        access=Access(policies=[Policy("review", require_approval=["archive_stats"])]),
    )
    hitl = HumanInTheLoopMiddleware(interrupt_on={"purge_archive": True}, interrupt_mode=mode)
    calls = AIMessage(
        content="",
        tool_calls=[
            {"name": "purge_archive", "args": {"year": 2019}, "id": "p1"},
            {"name": "archive_stats", "args": {"year": 2019}, "id": "s1"},
        ],
    )
    model = ScriptedChatModel(script=[calls, AIMessage(content="done")])
    middleware = ToolManagerMiddleware(manager, approval=hitl if approval == "hitl" else approval)
    agent = create_agent(model, middleware=[hitl, middleware], checkpointer=InMemorySaver())
    return agent, hitl


def _answers(paused: dict[str, Any], decide: Any) -> dict[str, Any]:
    """An answer to each pending interrupt, by its id (HITL's batched request or per-call)."""
    answers = {}
    for pending in paused["__interrupt__"]:
        value = pending.value
        if "action_requests" in value:  # HITL, batched
            answers[pending.id] = {
                "decisions": [decide(a["name"]) for a in value["action_requests"]]
            }
        else:
            answers[pending.id] = decide(value["name"])
    return answers


@pytest.mark.parametrize("mode", ["batched", "per_call"])
@pytest.mark.parametrize("decision", ["approve", "reject", "edit"])
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_a_call_human_in_the_loop_reviewed_is_not_asked_about_again(
    mode: str, decision: str, use_async: bool
) -> None:
    runs = {"ask": 0, "purge": 0}
    agent, _ = _with_hitl(runs, mode, "hitl")
    config = {"configurable": {"thread_id": "t"}}
    answer = {"approve": {"type": "approve"}, "reject": {"type": "reject"}, "edit": EDIT}[decision]
    state = _invoke(agent, {"messages": [HumanMessage("purge 2019")]}, config, use_async)
    asked: list[str] = []
    while state.get("__interrupt__"):  # answer every question until the run ends
        names = [
            a["name"]
            for i in state["__interrupt__"]
            for a in i.value.get("action_requests", [i.value])
        ]
        asked += names
        decide = lambda name: answer if name == "purge_archive" else {"type": "approve"}  # noqa: E731
        state = _invoke(agent, Command(resume=_answers(state, decide)), config, use_async)
    # One question per call: HITL's for purge_archive, toolmgmt's for archive_stats.
    assert sorted(asked) == ["archive_stats", "purge_archive"]
    results = _results(state)
    assert results["s1"].status == "success"
    if decision == "reject":
        assert runs["purge"] == 0 and results["p1"].status == "error"
    else:
        assert runs["purge"] == 1 and results["p1"].status == "success"
    if decision == "edit":  # HITL's notice names what ran; the session validated it
        assert '"year": 2020' in str(results["p1"].content)
    assert state["messages"][-1].content == "done"


def test_an_unannounced_human_in_the_loop_stops_the_run_instead_of_asking_twice() -> None:
    runs = {"ask": 0, "purge": 0}
    agent, _ = _with_hitl(runs, "batched", True)
    config = {"configurable": {"thread_id": "t"}}
    paused = agent.invoke({"messages": [HumanMessage("purge 2019")]}, config)
    with pytest.raises(ConfigError, match=r"approval=hitl"):
        agent.invoke(Command(resume=_answers(paused, lambda name: {"type": "approve"})), config)
    assert runs["purge"] == 0
    with pytest.raises(TypeError, match="HumanInTheLoopMiddleware"):
        ToolManagerMiddleware(ToolManager(_catalog(runs)), approval="hitl")  # type: ignore[arg-type]


@pytest.mark.parametrize("answer", ["yes", "no"])
@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_the_managers_own_approval_callback_may_call_interrupt(
    answer: str, use_async: bool
) -> None:
    """The manager's callback, not the middleware, asks the human: its interrupt pauses the
    graph, and the resumed run asks it again, which then answers with the human's word."""
    runs = {"ask": 0, "purge": 0}
    asked: list[str] = []

    def approval(request: ApprovalRequest) -> bool:
        asked.append(request.tool.name)
        return interrupt({"approve": request.tool.name, "args": dict(request.arguments)}) == "yes"

    manager = ToolManager(
        _catalog(runs), mode="search", always_on=["purge_archive"], approval=approval
    )
    model = ScriptedChatModel(
        script=[_call("purge_archive", {"year": 2019}, "p1"), AIMessage("ok")]
    )
    agent = create_agent(
        model, middleware=[ToolManagerMiddleware(manager)], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}
    paused = _invoke(agent, {"messages": [HumanMessage("purge 2019")]}, config, use_async)
    assert [i.value for i in paused["__interrupt__"]] == [
        {"approve": "purge_archive", "args": {"year": 2019}}
    ]
    assert runs["purge"] == 0 and "p1" not in _results(paused)
    resumed = _invoke(agent, Command(resume=answer), config, use_async)
    assert not resumed.get("__interrupt__")  # asked once: the middleware did not ask too
    assert runs["purge"] == (1 if answer == "yes" else 0)
    message = _results(resumed)["p1"]
    assert message.status == ("success" if answer == "yes" else "error")
    assert asked == ["purge_archive", "purge_archive"]  # the pause, then the answer
