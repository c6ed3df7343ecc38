"""Every guard holds on the code path: a tool reached from a ``run_code`` program is denied,
hidden, approved (paused, denied, edited) and cut to the result budget as on a direct call.

The code path is one function, :func:`through_code` (a program calling the tool, with the
door's approver around it); each guard is one test over it, compared with the direct path
(:func:`direct`), so the path matrix can take ``through_code`` as one more way in.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

pytest.importorskip("pydantic_monty")

from toolmgmt_core import (  # noqa: E402
    Access,
    ApprovalEdit,
    Execution,
    Policy,
    ResultBudget,
    ToolAnnotations,
    ToolCatalog,
    ToolManager,
)
from toolmgmt_core._calls.context import CallContext  # noqa: E402
from toolmgmt_core._model.tokens import count_tokens  # noqa: E402
from toolmgmt_core._runtime.control import passthrough  # noqa: E402
from toolmgmt_core._session.modes import Code  # noqa: E402
from toolmgmt_core._stores.base import InMemorySessionStore  # noqa: E402

SECRET = "secret-sauce"


@dataclass
class World:
    """The tools and how often each ran."""

    runs: Counter[str] = field(default_factory=Counter)
    arguments: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def catalog(self) -> ToolCatalog:
        def read_note(name: str) -> str:
            """Read a note."""
            self.runs["read_note"] += 1
            return f"note {name}: " + "lorem ipsum " * 300

        def delete_note(name: str) -> str:
            """Delete a note for good."""
            self.runs["delete_note"] += 1
            self.arguments.append(("delete_note", {"name": name}))
            return f"deleted {name}"

        def admin_dump() -> str:
            """Dump every note with its owner."""
            self.runs["admin_dump"] += 1
            return SECRET

        catalog = ToolCatalog()
        catalog.add_function(read_note)
        catalog.add_function(delete_note, annotations=ToolAnnotations(destructive=True))
        catalog.add_function(admin_dump)
        return catalog


class Pause(Exception):
    """A framework's pause for approval."""


@dataclass
class Reached:
    """What one way in gave: the outcome, the text the model got, and whether it paused."""

    outcome: str | None
    text: str
    paused: bool = False


def _manager(world: World, store: InMemorySessionStore | None = None, **options: Any) -> Any:
    options.setdefault("access", Access(policies=[Policy("global", deny=["admin_*"])]))
    options.setdefault("mode", "code")
    # Replicas share the key sealing paused programs (a random one per manager otherwise).
    options.setdefault("execution", Execution(run_key="the replicas' key"))
    return ToolManager(world.catalog(), session_store=store, **options)


def through_code(
    session: Any, tool: str, arguments: dict[str, Any], approver: Callable[..., Any] | None
) -> Reached:
    """The code path: a ``run_code`` program calling ``tool`` (the door's approver around it)."""
    code = f"print(await call_tool({tool!r}, {arguments!r}))"
    return _reach(session, "run_code", {"code": code}, approver)


def direct(
    session: Any, tool: str, arguments: dict[str, Any], approver: Callable[..., Any] | None
) -> Reached:
    """The direct path, for comparison (``Code(direct=[...])`` lists the tool)."""
    return _reach(session, tool, arguments, approver)


def _reach(session: Any, name: str, arguments: Any, approver: Any) -> Reached:
    async def go() -> Reached:
        with passthrough(Pause):
            try:
                context = CallContext(approver=approver)
                result = await session.call(name, arguments, call_id="call-1", context=context)
            except Pause:
                return Reached(None, "", paused=True)
        return Reached(result.outcome, result.content)

    return asyncio.run(go())


def _message(text: str) -> str:
    return str(json.loads(text)["message"])


def test_a_denied_tool_raises_inside_the_program_with_the_same_text() -> None:
    world = World()
    session = _manager(world).session()
    code = through_code(session, "admin_dump", {}, None)
    plain = direct(session, "admin_dump", {}, None)
    assert code.outcome == "failed" and world.runs["admin_dump"] == 0
    assert f"PermissionError: {_message(plain.text)}" in _message(code.text)
    assert SECRET not in code.text


def test_a_hidden_tool_is_not_found_from_code() -> None:
    world = World()
    session = _manager(world).session()
    found = _reach(session, "run_code", {"code": "await search_tools('dump every note')"}, None)
    assert "admin_dump" not in found.text
    searched = _reach(session, "tool_search", {"query": "dump every note owner"}, None)
    assert "admin_dump" not in searched.text


def test_approval_pauses_the_program_and_an_approved_call_runs_once() -> None:
    world, store = World(), InMemorySessionStore()
    answers: list[Any] = []

    def approver(request: Any) -> Any:
        if answers:
            return answers.pop(0)
        raise Pause(request.tool.name)

    code = "await read_note('a')\nprint(await delete_note(name='a'))"
    first = _reach(_manager(world, store).session("c"), "run_code", {"code": code}, approver)
    assert first.paused and world.runs == Counter({"read_note": 1})
    answers.append(True)
    # Resumed through another manager over the same store: another replica.
    done = _reach(_manager(world, store).session("c"), "run_code", {"code": code}, approver)
    assert (done.outcome, done.text) == ("success", "deleted a")
    assert world.runs == Counter({"read_note": 1, "delete_note": 1})


def test_a_denied_approval_never_runs_the_call() -> None:
    world = World()
    session = _manager(world).session()
    asked: list[str] = []

    def refuse(request: Any) -> bool:
        asked.append(request.tool.name)
        return False

    reached = through_code(session, "delete_note", {"name": "a"}, refuse)
    assert asked == ["delete_note"] and world.runs["delete_note"] == 0
    assert reached.outcome == "failed" and "PermissionError" in reached.text


def test_an_edited_approval_runs_once_with_the_edit() -> None:
    world = World()
    session = _manager(world).session()
    reached = through_code(
        session, "delete_note", {"name": "a"}, lambda request: ApprovalEdit({"name": "b"})
    )
    assert world.arguments == [("delete_note", {"name": "b"})]
    assert reached.outcome == "success" and "deleted b" in reached.text


def test_the_programs_result_is_cut_to_the_budget_and_inner_values_are_whole() -> None:
    world = World()
    budget = ResultBudget(max_result_tokens=60)
    session = _manager(world, results=budget, mode=Code(direct=["read_note"])).session()
    whole = _reach(session, "run_code", {"code": "n = await read_note('a')\nlen(n)"}, None)
    assert whole.text == str(len("note a: " + "lorem ipsum " * 300))
    cut = through_code(session, "read_note", {"name": "a"}, None)
    plain = direct(session, "read_note", {"name": "a"}, None)
    assert cut.outcome == plain.outcome == "success"
    assert count_tokens(cut.text) <= 60 and count_tokens(plain.text) <= 60
