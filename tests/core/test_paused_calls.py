"""A call whose caller must answer first ends in the core as the outcome ``paused``: raised as
the core's own ``CallPaused`` by what the door handed down (a handler, an approver, a program's
call), never declared by the door, never a result, a record or a lesson."""

from __future__ import annotations

from typing import Any

import pytest

from toolmgmt_core import ToolAnnotations, ToolCatalog, ToolManager
from toolmgmt_core._calls.context import CallContext
from toolmgmt_core._events import ApprovalAnswered, ApprovalAsked, CallFinished, Event
from toolmgmt_core._policy.steps import ApprovalRequest
from toolmgmt_core._runtime.control import CallPaused


class Asked(CallPaused):
    """A door's pause: the question its caller answers on its next request."""

    def __init__(self, question: str) -> None:
        super().__init__(f"asked {question!r}")
        self.question = question


RAN: list[str] = []


def ask_user(question: str) -> str:
    """Ask the user something (the door relays it, so the call pauses).

    Args:
        question: what to ask.
    """
    try:
        raise Asked(question)
    except Exception:  # a tool's own broad except does not turn the pause into a failure
        raise


def wipe(target: str) -> str:
    """Wipe a target.

    Args:
        target: what to wipe.
    """
    RAN.append(target)
    return f"wiped {target}"


def _session(events: list[Event], mode: str = "search") -> Any:
    catalog = ToolCatalog()
    catalog.add_function(ask_user)
    catalog.add_function(wipe, annotations=ToolAnnotations(destructive=True))
    always_on = ["ask_user", "wipe"]
    manager = ToolManager(catalog, mode=mode, always_on=always_on, listeners=[events.append])
    return manager.session()


def _finished(events: list[Event]) -> list[CallFinished]:
    return [e for e in events if isinstance(e, CallFinished)]


def test_a_handler_that_pauses_ends_the_call_paused_with_no_result() -> None:
    events: list[Event] = []
    session = _session(events)
    result = session.call_sync("ask_user", {"question": "which order?"}, call_id="c1")
    assert result.outcome == "paused" and not result.is_error and result.error is None
    assert isinstance(result.paused, Asked) and result.paused.question == "which order?"
    assert not result.truncated and result.tokens == 0
    assert session.result_budget.records() == []  # nothing recorded, nothing to learn from
    [finished] = _finished(events)
    assert (finished.outcome, finished.signal) == ("interrupted", "Asked")  # as a signal's


def test_an_approver_that_pauses_ends_the_call_paused_before_the_tool_runs() -> None:
    events: list[Event] = []
    session = _session(events)

    def approver(request: ApprovalRequest) -> bool:
        raise Asked(f"may I wipe {request.arguments['target']}?")

    RAN.clear()
    context = CallContext(approver=approver)
    for name, arguments in (
        ("wipe", {"target": "x"}),
        ("call_tool", {"tool_name": "wipe", "arguments": {"target": "x"}}),
    ):
        result = session.call_sync(name, arguments, context=context)
        assert result.outcome == "paused", result.content
        assert isinstance(result.paused, Asked) and result.paused.question == "may I wipe x?"
    assert RAN == []
    assert [type(e) for e in events if isinstance(e, ApprovalAsked | ApprovalAnswered)] == [
        ApprovalAsked,
        ApprovalAsked,
    ]  # a pause is no answer yet
    assert [f.outcome for f in _finished(events)] == ["interrupted", "interrupted"]


def test_a_program_whose_call_pauses_is_kept_and_run_code_ends_paused() -> None:
    pytest.importorskip("pydantic_monty")
    events: list[Event] = []
    session = _session(events, mode="code")
    code = "print('before')\nanswer = await ask_user(question='which order?')\nprint(answer)"
    result = session.call_sync("run_code", {"code": code}, call_id="c1")
    assert result.outcome == "paused" and isinstance(result.paused, Asked)
    # The pause carries the run's sealed state (the gateway keeps it in its request state),
    # and the conversation keeps it too for a door that keeps none, under the call's id.
    sealed = result.paused.resume_state
    assert isinstance(sealed, str) and list(session.to_json()["programs"].values()) == [sealed]
