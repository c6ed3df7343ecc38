"""A program's call that needs approval from a framework that pauses: the program's snapshot is
kept with the conversation, and the resumed ``run_code`` call carries on from that call."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("pydantic_monty")

from toolmgmt_core import Access, Execution, Policy, ToolCatalog, ToolManager  # noqa: E402
from toolmgmt_core._calls.context import CallContext  # noqa: E402
from toolmgmt_core._policy.steps import ApprovalEdit, ApprovalRequest  # noqa: E402
from toolmgmt_core._runtime.control import passthrough  # noqa: E402
from toolmgmt_core._stores.base import InMemorySessionStore  # noqa: E402


class Paused(Exception):
    """A framework's pause (LangGraph's interrupt, PydanticAI's ApprovalRequired)."""


class Framework:
    """A framework that answers approvals by order, as LangGraph does: the n-th ask of a
    resumed call gets the n-th answer given; an ask past them pauses."""

    def __init__(self) -> None:
        self.answers: list[Any] = []
        self.asked: list[tuple[str, dict[str, Any]]] = []

    def approver(self) -> Any:
        index = 0

        def approve(request: ApprovalRequest) -> Any:
            nonlocal index
            if index < len(self.answers):
                index += 1
                return self.answers[index - 1]
            self.asked.append((request.tool.name, dict(request.arguments)))
            raise Paused(request.tool.name)

        def replay(count: int) -> None:
            nonlocal index
            index += count

        approve.replay = replay  # type: ignore[attr-defined]
        return approve


RAN: list[tuple[str, Any]] = []


def lookup(key: str) -> str:
    """Look a key up."""
    RAN.append(("lookup", key))
    return key.upper()


def delete_record(key: str) -> str:
    """Delete one record."""
    RAN.append(("delete_record", key))
    return f"deleted {key}"


PROGRAM = (
    "a = await lookup('a')\n"
    "print('before', a)\n"
    "d = await delete_record(key=a)\n"
    "b = await lookup('b')\n"
    "e = await delete_record(key=b)\n"
    "[d, e]"
)


def manager(store: InMemorySessionStore | None = None) -> ToolManager:
    catalog = ToolCatalog()
    catalog.add_function(lookup)
    catalog.add_function(delete_record)
    access = Access(policies=[Policy("global", require_approval=["delete_*"])])
    execution = Execution(run_key="the workers' shared key")
    return ToolManager(
        catalog, mode="code", access=access, session_store=store, execution=execution
    )


def run(session: Any, framework: Framework, code: str = PROGRAM) -> Any:
    async def go() -> Any:
        context = CallContext(approver=framework.approver())
        with passthrough(Paused):
            return await session.call("run_code", {"code": code}, call_id="c1", context=context)

    return asyncio.run(go())


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def test_approved_calls_resume_the_program_and_each_tool_runs_once() -> None:
    store = InMemorySessionStore()
    framework = Framework()
    with pytest.raises(Paused):
        run(manager(store).session("conv"), framework)
    assert RAN == [("lookup", "a")]
    assert framework.asked == [("delete_record", {"key": "A"})]
    framework.answers.append(True)
    # Resumed on another replica: the snapshot travelled with the conversation.
    with pytest.raises(Paused):
        run(manager(store).session("conv"), framework)
    assert RAN == [("lookup", "a"), ("delete_record", "A"), ("lookup", "b")]
    assert framework.asked[-1] == ("delete_record", {"key": "B"})
    framework.answers.append(True)
    result = run(manager(store).session("conv"), framework)
    assert result.outcome == "success"
    assert result.content == 'before A\n["deleted A","deleted B"]'
    assert RAN == [("lookup", "a"), ("delete_record", "A"), ("lookup", "b"), ("delete_record", "B")]
    # Nothing is left paused: only a mark that this call's program was resumed.
    marks = list(store.load("conv").state["programs"].values())  # type: ignore[union-attr]
    assert [mark[0] for mark in marks] == ["-"]  # what stays: a mark, until the run's expiry


def test_a_denied_call_raises_inside_the_program_and_never_runs() -> None:
    framework = Framework()
    session = manager().session()
    with pytest.raises(Paused):
        run(session, framework)
    framework.answers.append(False)
    result = run(session, framework)
    assert result.outcome == "failed"
    assert "PermissionError" in result.content and "refused by the approver" in result.content
    assert RAN == [("lookup", "a")]


def test_an_edited_call_runs_once_with_the_edit() -> None:
    framework = Framework()
    session = manager().session()
    with pytest.raises(Paused):
        run(session, framework)
    framework.answers.append(ApprovalEdit({"key": "edited"}))
    with pytest.raises(Paused):
        run(session, framework)
    framework.answers.append(False)
    result = run(session, framework)
    assert RAN == [("lookup", "a"), ("delete_record", "edited"), ("lookup", "b")]
    assert result.outcome == "failed"


def test_a_paused_program_in_restored_state_is_checked() -> None:
    session = manager().session()
    with pytest.raises(Paused):
        run(session, Framework())
    state = session.to_json()
    [(key, sealed)] = state["programs"].items()
    assert isinstance(sealed, str) and "snapshot" not in sealed  # sealed, compressed
    for broken in (sealed[:-1] + ("0" if sealed[-1] != "0" else "1"), "r1.e30." + "0" * 64):
        restored = manager().session({**state, "programs": {key: broken}})
        framework = Framework()
        framework.answers.append(True)
        result = run(restored, framework)
        assert result.outcome == "failed" and "could not be resumed" in result.content
        assert "Nothing ran" in result.content
    assert RAN == [("lookup", "a")]


def test_a_call_paused_among_gathered_ones_runs_alone_on_resuming() -> None:
    # The gathered lookups finish before the program is kept; on resuming only the paused
    # call runs, and the program gets every value.
    store = InMemorySessionStore()
    framework = Framework()
    code = (
        "import asyncio\n"
        "got = await asyncio.gather(lookup('a'), delete_record(key='X'), lookup('b'))\n"
        "got"
    )
    with pytest.raises(Paused):
        run(manager(store).session("conv"), framework, code)
    assert sorted(RAN) == [("lookup", "a"), ("lookup", "b")]
    assert framework.asked == [("delete_record", {"key": "X"})]
    framework.answers.append(True)
    result = run(manager(store).session("conv"), framework, code)
    assert result.outcome == "success", result.content
    assert result.content == '["A","deleted X","B"]'
    assert sorted(RAN) == [("delete_record", "X"), ("lookup", "a"), ("lookup", "b")]


def _until_done(store: InMemorySessionStore, framework: Framework, code: str) -> Any:
    """Run ``code`` to its end, answering yes to each pause (at most 8)."""
    for _ in range(8):
        try:
            return run(manager(store).session("conv"), framework, code)
        except Paused:
            framework.answers.append(True)
    raise AssertionError(f"still paused after 8 answers: {framework.asked}")


def test_gathered_calls_that_need_approval_are_each_asked_about_once() -> None:
    # Each call keeps its index across resumes: the yes given for delete_record('X') is used
    # by that call (it was asked about again, and 'W' and 'Y' twice, when the resumed calls were
    # numbered anew in the order they ran again). The same call twice needs two yeses.
    framework = Framework()
    code = (
        "import asyncio\n"
        "z = await lookup('z')\n"
        "got = await asyncio.gather(lookup('a'), delete_record(key='X'), lookup('b'),\n"
        "    delete_record(key='Y'), delete_record(key='W'), delete_record(key='X'))\n"
        "[z, got]"
    )
    result = _until_done(InMemorySessionStore(), framework, code)
    assert result.outcome == "success", result.content
    assert result.content == '["Z",["A","deleted X","B","deleted Y","deleted W","deleted X"]]'
    assert sorted(a["key"] for _, a in framework.asked) == ["W", "X", "X", "Y"]
    assert sorted(RAN) == sorted(
        [("lookup", "z"), ("lookup", "a"), ("lookup", "b")] + [("delete_record", k) for k in "XYWX"]
    )


def test_an_approved_call_that_pauses_inside_resumes() -> None:
    # A tool that asks its own question once it runs (LangGraph's interrupt() in a tool, an
    # upstream's question at the gateway) after its call was approved: the kept program has one
    # approval and no call settled, which its state's check refused ("cannot be read").
    asked = []

    def delete_record(key: str) -> str:
        """Delete one record."""
        RAN.append(("delete_record", key))
        if not asked:
            asked.append(key)
            raise Paused("which backup first?")
        return f"deleted {key}"

    catalog = ToolCatalog()
    catalog.add_function(delete_record)
    access = Access(policies=[Policy("global", require_approval=["delete_*"])])
    store = InMemorySessionStore()
    framework = Framework()

    def session() -> Any:
        execution = Execution(run_key="the workers' shared key")
        return ToolManager(
            catalog, mode="code", access=access, session_store=store, execution=execution
        ).session("conv")

    code = "await delete_record(key='X')"
    with pytest.raises(Paused):  # the approval
        run(session(), framework, code)
    framework.answers.append(True)
    with pytest.raises(Paused, match="which backup"):  # the tool's own question
        run(session(), framework, code)
    framework.answers.append(True)
    result = run(session(), framework, code)
    assert result.outcome == "success", result.content
    assert result.content == "deleted X"
    assert RAN == [("delete_record", "X"), ("delete_record", "X")]
