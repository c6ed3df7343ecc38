"""A code-mode run's identity and sealed state (issue 40, items 1-3): a new ``run_code`` call is a
fresh run; a paused run resumes only from its own sealed state, for its own conversation and
caller, once; forged, tampered, expired or evicted state fails closed before anything runs; an
approval is bound to one call of one run; an edit never swaps the tool."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest

pytest.importorskip("pydantic_monty")

from toolmgmt_core import (  # noqa: E402
    Access,
    ApprovalEdit,
    ApprovalRequest,
    Execution,
    Policy,
    ToolCatalog,
    ToolManager,
)
from toolmgmt_core._calls.context import CallContext  # noqa: E402
from toolmgmt_core._runtime.control import passthrough  # noqa: E402
from toolmgmt_core._stores.base import InMemorySessionStore  # noqa: E402

KEY = "the workers' shared key"


class Paused(Exception):
    """A framework's pause (LangGraph's interrupt, PydanticAI's deferred call)."""


class Bank:
    """Tools that count their runs: a balance that changes, and a transfer needing approval."""

    def __init__(self) -> None:
        self.amount = 100
        self.runs: Counter[str] = Counter()
        self.moved: list[int] = []

    def catalog(self) -> ToolCatalog:
        def balance() -> int:
            """The account's balance."""
            self.runs["balance"] += 1
            return self.amount

        def transfer(amount: int) -> str:
            """Move money out of the account.

            Args:
                amount: how much.
            """
            self.runs["transfer"] += 1
            self.moved.append(amount)
            return f"moved {amount}"

        def export_all() -> str:
            """Export every record."""
            self.runs["export_all"] += 1
            return "exported"

        catalog = ToolCatalog()
        for function in (balance, transfer, export_all):
            catalog.add_function(function)
        return catalog


PROGRAM = "b = await balance()\nprint('read', b)\nawait transfer(amount=b // 2)"


def manager(bank: Bank, **options: Any) -> ToolManager:
    access = Access(policies=[Policy("global", require_approval=["transfer", "export_all"])])
    options.setdefault("execution", Execution(run_key=KEY))
    options.setdefault("mode", "code")
    return ToolManager(bank.catalog(), access=access, **options)


class Human:
    """A framework's approver: pauses until given an answer, then answers once; keeps what it
    was asked (the request carries the run's sealed state)."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Any:
        self.asked.append(request)
        if self.answers:
            return self.answers.pop(0)
        raise Paused(request.tool.name)


def call(
    session: Any, human: Human, *, call_id: str = "c1", code: str = PROGRAM, **given: Any
) -> Any:
    async def go() -> Any:
        context = CallContext(approver=human, **given)
        with passthrough(Paused):
            try:
                return await session.call(
                    "run_code", {"code": code}, call_id=call_id, context=context
                )
            except Paused:
                return None

    return asyncio.run(go())


def paused_state(bank: Bank, **given: Any) -> tuple[Any, str]:
    """A session paused at the transfer; its sealed state (from the approval request)."""
    session, request = paused(bank, **given)
    assert isinstance(request.resume_state, str)
    return session, request.resume_state


def paused(bank: Bank, **given: Any) -> tuple[Any, ApprovalRequest]:
    """A session paused at the transfer, and the approval request it paused at."""
    session = manager(bank).session("conv")
    human = Human()
    assert call(session, human, **given) is None
    [request] = human.asked
    assert isinstance(request.run_id, str) and request.call_index == 2
    return session, request


def test_a_new_run_code_call_with_the_same_code_is_a_fresh_run() -> None:
    bank = Bank()
    session, first = paused(bank)
    bank.amount = 1000
    human = Human(True)
    result = call(session, human, call_id="c2")  # another call of the model: a fresh run
    assert result.outcome == "success" and "read 1000" in result.content, result.content
    assert bank.moved == [500] and bank.runs["balance"] == 2
    assert human.asked[0].run_id != first.run_id and human.asked[0].call_index == 2


def test_a_fresh_worker_resumes_from_the_sealed_state_without_running_settled_calls() -> None:
    bank = Bank()
    _, sealed = paused_state(bank, keeps_state=True)
    other = manager(bank).session("conv")  # another worker: same key, nothing in memory
    result = call(other, Human(True), resume_state=sealed, keeps_state=True)
    assert result.outcome == "success" and "read 100" in result.content
    assert bank.runs == Counter({"balance": 1, "transfer": 1}) and bank.moved == [50]
    # The same state again (a replayed resume) runs nothing.
    again = call(other, Human(True), resume_state=sealed, keeps_state=True)
    assert again.outcome == "failed" and "resumed already" in again.content
    assert bank.runs == Counter({"balance": 1, "transfer": 1})


def test_a_replayed_state_asked_about_again_never_runs_its_call_twice() -> None:
    # A replayed state whose approver pauses anew must not get a fresh sealing of a used run.
    bank = Bank()
    session, sealed = paused_state(bank, keeps_state=True)
    done = call(session, Human(True), resume_state=sealed, keeps_state=True)
    assert done.outcome == "success" and bank.moved == [50]
    asker = Human()
    again = call(session, asker, resume_state=sealed, keeps_state=True)
    fresh = [r.resume_state for r in asker.asked]
    if again is None:  # paused anew: its new state must be refused too
        again = call(session, Human(True), resume_state=fresh[-1], keeps_state=True)
    assert again.outcome == "failed" and "resumed already" in again.content
    assert bank.runs == Counter({"balance": 1, "transfer": 1}) and bank.moved == [50]


def test_the_managers_callback_is_asked_through_the_run_and_its_pause_keeps_the_program() -> None:
    # A manager's approval callback that pauses the framework (LangGraph's interrupt() in it)
    # was asked with no run state: the resume started over and read the balance again.
    from toolmgmt_core import Approval

    bank = Bank()
    human = Human()
    session = manager(bank, approval=Approval(callback=human)).session("conv")
    assert call(session, Human(), keeps_state=True) is None
    [request] = human.asked
    assert request.run_id is not None and request.call_index == 2
    assert isinstance(request.resume_state, str) and bank.runs == Counter({"balance": 1})
    human.answers.append(True)
    done = call(session, Human(), resume_state=request.resume_state, keeps_state=True)
    assert done.outcome == "success" and "read 100" in done.content
    assert bank.runs == Counter({"balance": 1, "transfer": 1}) and bank.moved == [50]


def test_a_sealed_state_shows_nothing_of_what_the_program_read() -> None:
    # The sealed state goes where the framework keeps its state and to whoever it shows it (an
    # interrupt's value, a message history, an MCP client's request state); it was only signed:
    # base64, zlib and JSON gave the program's variables back to anyone without the key.
    import base64
    import binascii
    import zlib

    bank = Bank()
    code = "b = await balance()\nnote = 'secret-' + str(b * 7)\nawait transfer(amount=1)"
    session, request = paused(bank, keeps_state=True, code=code)
    assert isinstance(request.resume_state, str)
    for part in request.resume_state.split("."):
        try:
            raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
        except (binascii.Error, ValueError):
            continue
        assert b"secret-700" not in raw
        with pytest.raises(zlib.error):
            zlib.decompress(raw)
    done = call(
        session, Human(True), code=code, resume_state=request.resume_state, keeps_state=True
    )
    assert done.outcome == "success" and bank.moved == [1]


def test_workers_over_one_store_resume_a_state_once_between_them() -> None:
    # Two managers (workers of one process) over one session store: a state one resumed is
    # resumed already for the other too, so replaying it there moves no money twice.
    bank = Bank()
    store = InMemorySessionStore()
    first, second = (manager(bank, session_store=store) for _ in range(2))
    human = Human()
    assert call(first.session("conv"), human, keeps_state=True) is None
    sealed = human.asked[0].resume_state
    done = call(second.session("conv"), Human(True), resume_state=sealed, keeps_state=True)
    again = call(first.session("conv"), Human(True), resume_state=sealed, keeps_state=True)
    assert done.outcome == "success" and "resumed already" in again.content
    assert bank.runs == Counter({"balance": 1, "transfer": 1})


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"principal": "mallory"}, "another caller"),
        ({"conversation": "other"}, "another conversation"),
        ({"code": "await export_all()"}, "another program"),
        ({"tamper": True}, "not one this server sealed"),
        ({"key": "another key"}, "not one this server sealed"),
    ],
)
def test_a_foreign_forged_or_tampered_state_is_refused_before_anything_runs(
    change: dict[str, Any], why: str
) -> None:
    bank = Bank()
    _, sealed = paused_state(bank, keeps_state=True, principal="ada")
    if change.get("tamper"):
        body, tag = sealed.rsplit(".", 1)
        sealed = f"{body[:-2]}{'A' if body[-2] != 'A' else 'B'}{body[-1]}.{tag}"
    execution = Execution(run_key=change.get("key", KEY))
    session = manager(bank, execution=execution).session(change.get("conversation", "conv"))
    human = Human(True, True)
    result = call(
        session,
        human,
        code=change.get("code", PROGRAM),
        resume_state=sealed,
        keeps_state=True,
        principal=change.get("principal", "ada"),
    )
    assert result.outcome == "failed" and why in result.content and "Nothing ran" in result.content
    assert bank.runs == Counter({"balance": 1}) and human.asked == []


def test_an_expired_state_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolmgmt_core._calls.code.runs as runs

    bank = Bank()
    session, sealed = paused_state(bank, keeps_state=True)
    later = runs.time.time() + runs.DEFAULT_RUN_TTL + 1
    monkeypatch.setattr(runs.time, "time", lambda: later)
    result = call(session, Human(True), resume_state=sealed, keeps_state=True)
    assert "The program expired; run it again." in result.content
    assert bank.runs == Counter({"balance": 1})


def test_an_evicted_program_fails_closed_instead_of_starting_over() -> None:
    bank = Bank()
    store = InMemorySessionStore()
    session = manager(bank, session_store=store).session("conv")
    for n in range(9):  # the conversation keeps 8 for a door that keeps none
        assert call(session, Human(), call_id=f"c{n}") is None
    before = Counter(bank.runs)
    result = call(manager(bank, session_store=store).session("conv"), Human(True), call_id="c0")
    assert result.outcome == "failed" and "no longer kept" in result.content
    assert bank.runs == before and bank.moved == []
    latest = call(manager(bank, session_store=store).session("conv"), Human(True), call_id="c8")
    assert (
        latest.outcome == "success"
        and bank.moved == [50]
        and bank.runs == before + Counter({"transfer": 1})
    )


def test_a_program_pushed_out_of_the_conversations_marks_never_starts_over() -> None:
    # The marks of dropped programs were bounded too (64): past them the first call's retry
    # found nothing and started over, reading the balance again under its old yes.
    from toolmgmt_core._session.state import MAX_STATE_PROGRAMS

    bank = Bank()
    session = manager(bank).session("conv")
    assert call(session, Human(), call_id="c0") is None
    refused = None
    for n in range(1, MAX_STATE_PROGRAMS + 1):
        result = call(session, Human(), call_id=f"c{n}")
        if result is not None:
            refused = result
            break
    assert refused is not None and refused.outcome == "failed", "the marks were dropped"
    assert "paused or resumed" in refused.content and bank.runs["balance"] == MAX_STATE_PROGRAMS
    result = call(session, Human(True), call_id="c0")
    assert result.outcome == "failed" and "no longer kept" in result.content
    assert bank.runs["balance"] == MAX_STATE_PROGRAMS and bank.moved == []


def test_an_approval_runs_one_call_and_a_later_call_of_the_tool_asks_again() -> None:
    bank = Bank()
    code = "await transfer(amount=1)\nawait transfer(amount=1)\nawait transfer(amount=2)"
    human = Human(True)  # one yes, then a pause
    session = manager(bank).session("conv")
    assert call(session, human, code=code) is None
    assert bank.moved == [1] and [r.call_index for r in human.asked] == [1, 2]
    # Same tool, same arguments, next call: its own approval, bound to its own place.
    assert human.asked[0].arguments_digest == human.asked[1].arguments_digest
    assert human.asked[0].resume_state != human.asked[1].resume_state


def test_an_edit_may_change_arguments_never_the_tool() -> None:
    bank = Bank()
    human = Human(ApprovalEdit({}, tool_name="export_all"))
    result = call(manager(bank).session(), human)
    assert result.outcome == "failed" and "never its tool" in result.content
    assert bank.runs == Counter({"balance": 1})
    direct = manager(bank, mode="search").session()

    async def swap() -> Any:
        context = CallContext(approver=Human(ApprovalEdit({"amount": 5}, tool_name="export_all")))
        arguments = {"tool_name": "transfer", "arguments": {"amount": 3}}
        return await direct.call("call_tool", arguments, context=context)

    refused = asyncio.run(swap())
    assert refused.outcome == "denied" and bank.runs == Counter({"balance": 1})


def test_a_cancelled_program_is_not_kept_and_its_retry_is_a_fresh_run() -> None:
    # A cancellation is no pause: resuming the program at the call that was running would
    # start from a snapshot nobody answered (the same call id must not resume it).
    import threading
    import time

    from toolmgmt_core import Execution, ToolCatalog, ToolManager

    ran: list[str] = []
    started = threading.Event()

    def balance() -> int:
        """The balance."""
        ran.append("balance")
        return 100

    def transfer(amount: int) -> str:
        """Move money."""
        started.set()
        time.sleep(0.3)
        ran.append("transfer")
        return f"moved {amount}"

    catalog = ToolCatalog()
    catalog.add_function(balance)
    catalog.add_function(transfer)
    from toolmgmt_core._events import ProgramFinished

    events: list[Any] = []
    manager = ToolManager(
        catalog, mode="code", execution=Execution(run_key="k"), listeners=[events.append]
    )
    code = "b = await balance()\nprint(b, await transfer(amount=5))"
    session = manager.session("conv")

    async def go() -> Any:
        call = session.call("run_code", {"code": code}, call_id="c1", context=CallContext())
        task = asyncio.ensure_future(call)
        while not started.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.5)  # the sync tool's thread finishes on its own
        assert not session.to_json().get("programs")  # nothing kept to resume
        return await session.call("run_code", {"code": code}, call_id="c1", context=CallContext())

    result = asyncio.run(go())
    assert result.outcome == "success", result.content
    assert "100 moved 5" in result.content
    # the retry ran from the start (balance twice): it did not resume the cancelled snapshot
    assert ran == ["balance", "transfer", "balance", "transfer"]
    finished = [e.outcome for e in events if isinstance(e, ProgramFinished)]
    assert finished == ["interrupted", "success"]  # the cancelled run is no pause
