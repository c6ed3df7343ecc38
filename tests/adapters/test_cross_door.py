"""Every door against one table: the same scenarios through LangChain, PydanticAI (wrapped and
catalog tools), LiteLLM and the MCP gateway (both protocols), each in its framework's own loop,
and what each door gave, in its framework's own terms.

The table below is the one fact: the test runs every scenario at every door and compares what
it saw with its cell, and the same table is the outcome table of ``docs/adapters.md`` (the test
fails when the page differs). A door that behaves differently fails its cell; a scenario a door
cannot express says why (``n/a: ...``) and the door has no way to run it::

    python tests/adapters/test_cross_door.py            # run every cell, print what was seen
    python tests/adapters/test_cross_door.py --write    # put the table in docs/adapters.md
    python tests/adapters/test_cross_door.py litellm    # one door's cells
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "adapters.md"
BEGIN, END = "<!-- outcomes:begin -->", "<!-- outcomes:end -->"


@dataclass(frozen=True)
class Door:
    """A column: the framework it needs and the class driving it."""

    id: str
    label: str
    module: str
    cls: str
    needs: str
    options: tuple[tuple[str, Any], ...] = ()


DOORS = [
    Door("langchain", "LangChain `create_agent`", "langchain", "LangChainDoor", "langchain"),
    Door(
        "pai-wrapped",
        "PydanticAI, wrapped toolset",
        "pydantic_ai",
        "PydanticAIDoor",
        "pydantic_ai",
        (("wrapped", True),),
    ),
    Door(
        "pai-catalog",
        "PydanticAI, catalog tools",
        "pydantic_ai",
        "PydanticAIDoor",
        "pydantic_ai",
        (("wrapped", False),),
    ),
    Door("litellm", "LiteLLM callback", "litellm", "LiteLLMDoor", "litellm"),
    Door(
        "mcp-2025", "MCP gateway, 2025-11-25", "gateway", "GatewayDoor", "mcp", (("modern", False),)
    ),
    Door(
        "mcp-2026", "MCP gateway, 2026-07-28", "gateway", "GatewayDoor", "mcp", (("modern", True),)
    ),
]


@dataclass(frozen=True)
class Row:
    """A scenario: its id (the doors' method), its label, and the core's outcome of its call
    (None where the call does not leave the pipeline with one: a pause, a signal)."""

    id: str
    label: str
    outcome: str | None


ROWS = [
    Row("success", "success", "success"),
    Row("invalid_arguments", "retry: invalid arguments, repeated", "retry"),
    Row("unknown_tool", "retry: unknown tool", "retry"),
    Row("denied_tool", "denied: the policy refuses the tool", "denied"),
    Row("failed", "failed: the tool raises", "failed"),
    Row("truncated", "success, over the result budget", "success"),
    Row("approval_pause", "approval: pause", None),
    Row("approval_approve", "approval: approve", "success"),
    Row("approval_deny", "approval: deny", "denied"),
    Row("approval_edit", "approval: edit", "success"),
    Row("restore", "restore in a fresh instance (the growing list, `Search(appends=True)`)", None),
    Row("control_pause", "signal: a tool pauses for its user", None),
    Row("control_retry", "signal: a tool asks the model to retry", None),
    Row("cancellation", "signal: cancellation", None),
    Row("code_success", "code mode: a program calls a tool (`run_code`)", "success"),
    Row("code_denied", "code mode: the program calls a tool the policy refuses", "denied"),
    Row("code_approval", "code mode: the program's call needs approval, approved", "success"),
]
DECIDED_WITHOUT_PAUSE = frozenset(
    ("success", "invalid_arguments", "unknown_tool", "denied_tool", "failed", "truncated")
)
"""Rows whose calls no framework signal interrupts (approval, a tool's own signal and
cancellation do)."""

EXPECTED: dict[str, dict[str, str]] = {
    "success": {
        "langchain": '`ToolMessage(status="success")`',
        "pai-wrapped": '`ToolReturnPart(outcome="success")`',
        "pai-catalog": '`ToolReturnPart(outcome="success")`',
        "litellm": '`{"role": "tool"}`',
        "mcp-2025": "`CallToolResult(isError=false)`",
        "mcp-2026": "`CallToolResult(isError=false)`",
    },
    "invalid_arguments": {
        "langchain": (
            '`ToolMessage(status="error")` `invalid_arguments` at every repeat (LangGraph\'s '
            "`recursion_limit` ends a loop)"
        ),
        "pai-wrapped": (
            '`ToolReturnPart(outcome="retried")` `invalid_arguments`; at the 2nd repeat '
            "`UnexpectedModelBehavior` (exceeded max retries count of 1)"
        ),
        "pai-catalog": (
            '`ToolReturnPart(outcome="retried")` `invalid_arguments`; at the 2nd repeat '
            "`UnexpectedModelBehavior` (exceeded max retries count of 1)"
        ),
        "litellm": (
            '`{"role": "tool"}` `invalid_arguments` at every repeat (the app\'s loop sets the '
            "limit)"
        ),
        "mcp-2025": (
            "`CallToolResult(isError=true)` `invalid_arguments` at every repeat (the client sets "
            "the limit)"
        ),
        "mcp-2026": (
            "`CallToolResult(isError=true)` `invalid_arguments` at every repeat (the client sets "
            "the limit)"
        ),
    },
    "unknown_tool": {
        "langchain": '`ToolMessage(status="error")` `unknown_tool`',
        "pai-wrapped": (
            '`ToolReturnPart(outcome="retried")`: PydanticAI\'s own `Unknown tool name` (it lists '
            "the tools)"
        ),
        "pai-catalog": (
            '`ToolReturnPart(outcome="retried")`: PydanticAI\'s own `Unknown tool name` (it lists '
            "the tools)"
        ),
        "litellm": '`{"role": "tool"}` `unknown_tool`',
        "mcp-2025": "`CallToolResult(isError=true)` `unknown_tool`",
        "mcp-2026": "`CallToolResult(isError=true)` `unknown_tool`",
    },
    "denied_tool": {
        "langchain": '`ToolMessage(status="error")` `not_permitted`',
        "pai-wrapped": (
            '`ToolReturnPart(outcome="retried")`: PydanticAI\'s own `Unknown tool name` (never '
            "listed)"
        ),
        "pai-catalog": (
            '`ToolReturnPart(outcome="retried")`: PydanticAI\'s own `Unknown tool name` (never '
            "listed)"
        ),
        "litellm": '`{"role": "tool"}` `not_permitted`',
        "mcp-2025": "`CallToolResult(isError=true)` `not_permitted`",
        "mcp-2026": "`CallToolResult(isError=true)` `not_permitted`",
    },
    "failed": {
        "langchain": '`ToolMessage(status="error")` `tool_error`',
        "pai-wrapped": '`ToolReturnPart(outcome="failed")` `tool_error`',
        "pai-catalog": '`ToolReturnPart(outcome="failed")` `tool_error`',
        "litellm": '`{"role": "tool"}` `tool_error`',
        "mcp-2025": "`CallToolResult(isError=true)` `tool_error`",
        "mcp-2026": "`CallToolResult(isError=true)` `tool_error`",
    },
    "truncated": {
        "langchain": '`ToolMessage(status="success")`, the core\'s cut',
        "pai-wrapped": '`ToolReturnPart(outcome="success")`, the core\'s cut',
        "pai-catalog": '`ToolReturnPart(outcome="success")`, the core\'s cut',
        "litellm": '`{"role": "tool"}`, the core\'s cut',
        "mcp-2025": "`CallToolResult(isError=false)`, the core's cut",
        "mcp-2026": "`CallToolResult(isError=false)`, the core's cut",
    },
    "approval_pause": {
        "langchain": '`__interrupt__` `{"type": "tool_approval"}` (HITL\'s per-call shape)',
        "pai-wrapped": "the run ends with `DeferredToolRequests.approvals`",
        "pai-catalog": "the run ends with `DeferredToolRequests.approvals`",
        "litellm": "the app's `approve=` is awaited with an `ApprovalRequest` (no run to pause)",
        "mcp-2025": (
            "`elicitation/create` to the client in the middle of the call: a form of its arguments"
        ),
        "mcp-2026": (
            "`InputRequiredResult`: an `elicitation/create` form of its arguments, sealed state"
        ),
    },
    "approval_approve": {
        "langchain": (
            '`Command(resume={"type": "approve"})`: `ToolMessage(status="success")`, ran once'
        ),
        "pai-wrapped": (
            '`DeferredToolResults(approvals={id: True})`: `ToolReturnPart(outcome="success")`, '
            "ran once"
        ),
        "pai-catalog": (
            '`DeferredToolResults(approvals={id: True})`: `ToolReturnPart(outcome="success")`, '
            "ran once"
        ),
        "litellm": '`approve=` answers True: `{"role": "tool"}`, ran once',
        "mcp-2025": '`ElicitResult(action="accept")`: `CallToolResult(isError=false)`, ran once',
        "mcp-2026": '`ElicitResult(action="accept")`: `CallToolResult(isError=false)`, ran once',
    },
    "approval_deny": {
        "langchain": (
            '`Command(resume={"type": "reject"})`: `ToolMessage(status="error")` '
            "`approval_denied`, ran 0 times"
        ),
        "pai-wrapped": '`ToolDenied`: `ToolReturnPart(outcome="denied")`, ran 0 times',
        "pai-catalog": '`ToolDenied`: `ToolReturnPart(outcome="denied")`, ran 0 times',
        "litellm": '`approve=` answers False: `{"role": "tool"}` `approval_denied`, ran 0 times',
        "mcp-2025": (
            '`ElicitResult(action="decline")`: `CallToolResult(isError=true)` `approval_denied`, '
            "ran 0 times"
        ),
        "mcp-2026": (
            '`ElicitResult(action="decline")`: `CallToolResult(isError=true)` `approval_denied`, '
            "ran 0 times"
        ),
    },
    "approval_edit": {
        "langchain": (
            '`Command(resume={"type": "edit"})`: `ToolMessage(status="success")`, ran once with '
            "them, the result says so"
        ),
        "pai-wrapped": (
            '`ToolApproved(override_args=...)`: `ToolReturnPart(outcome="success")`, ran once '
            "with them, the result says so"
        ),
        "pai-catalog": (
            '`ToolApproved(override_args=...)`: `ToolReturnPart(outcome="success")`, ran once '
            "with them, the result says so"
        ),
        "litellm": (
            '`approve=` answers `ApprovalEdit(args)`: `{"role": "tool"}`, ran once with them, the'
            " result says so"
        ),
        "mcp-2025": (
            "`accept` with a field changed: `CallToolResult(isError=false)`, ran once with it, "
            "the result says so"
        ),
        "mcp-2026": (
            "`accept` with a field changed: `CallToolResult(isError=false)`, ran once with it, "
            "the result says so"
        ),
    },
    "restore": {
        "langchain": "a fresh agent over the same checkpointer lists the tools the thread loaded",
        "pai-wrapped": "a fresh `ManagedToolset` given `message_history` lists the tools it loaded",
        "pai-catalog": "a fresh `ManagedToolset` given `message_history` lists the tools it loaded",
        "litellm": "a fresh callback over the same session store lists the tools it loaded",
        "mcp-2025": (
            "a fresh gateway over the same `[store] sessions` continues the conversation "
            "(`Mcp-Session-Id`) with what it loaded"
        ),
        "mcp-2026": (
            "a fresh gateway over the same `[store] sessions` takes the paused call's sealed "
            "`requestState`: ran once"
        ),
    },
    "control_pause": {
        "langchain": (
            "the tool's `interrupt()` pauses the graph; `Command(resume=...)` runs it again"
        ),
        "pai-wrapped": "the tool's `CallDeferred` ends the run with `DeferredToolRequests.calls`",
        "pai-catalog": "the tool's `CallDeferred` ends the run with `DeferredToolRequests.calls`",
        "litellm": (
            "n/a: LiteLLM runs no tools, so no tool raises its signals (the app's loop runs them)"
        ),
        "mcp-2025": (
            "the upstream's `elicitation/create` goes to the client in the middle of the call"
        ),
        "mcp-2026": (
            "the upstream's `InputRequiredResult` goes to the client (sealed state); its retry "
            "completes the call"
        ),
    },
    "control_retry": {
        "langchain": (
            "n/a: LangChain has no retry signal (a tool's exception is an error `ToolMessage`, as"
            " when it fails)"
        ),
        "pai-wrapped": (
            'the tool\'s `ModelRetry`: `ToolReturnPart(outcome="retried")`, its own retry count'
        ),
        "pai-catalog": (
            'the tool\'s `ModelRetry`: `ToolReturnPart(outcome="retried")`, its own retry count'
        ),
        "litellm": (
            "n/a: LiteLLM runs no tools, so no tool raises its signals (the app's loop runs them)"
        ),
        "mcp-2025": "n/a: MCP has no retry signal (a tool's error is `isError`, as when it fails)",
        "mcp-2026": "n/a: MCP has no retry signal (a tool's error is `isError`, as when it fails)",
    },
    "cancellation": {
        "langchain": "`CancelledError` reaches the caller; the tool is cancelled, no `ToolMessage`",
        "pai-wrapped": "`CancelledError` reaches the caller; the tool is cancelled",
        "pai-catalog": "`CancelledError` reaches the caller; the tool is cancelled",
        "litellm": "`CancelledError` reaches the app's loop; the tool is cancelled",
        "mcp-2025": "the client's `notifications/cancelled` cancels the upstream call",
        "mcp-2026": "the client's `notifications/cancelled` cancels the upstream call",
    },
    "code_success": {
        "langchain": '`ToolMessage(status="success")`: what the program printed',
        "pai-wrapped": '`ToolReturnPart(outcome="success")`: what the program printed',
        "pai-catalog": '`ToolReturnPart(outcome="success")`: what the program printed',
        "litellm": '`{"role": "tool"}`: what the program printed',
        "mcp-2025": "`CallToolResult(isError=false)`: what the program printed",
        "mcp-2026": "`CallToolResult(isError=false)`: what the program printed",
    },
    "code_denied": {
        "langchain": (
            '`ToolMessage(status="error")` `tool_error`: `PermissionError` raised inside the '
            "program"
        ),
        "pai-wrapped": (
            '`ToolReturnPart(outcome="failed")` `tool_error`: `PermissionError` raised inside the '
            "program"
        ),
        "pai-catalog": (
            '`ToolReturnPart(outcome="failed")` `tool_error`: `PermissionError` raised inside the '
            "program"
        ),
        "litellm": '`{"role": "tool"}` `tool_error`: `PermissionError` raised inside the program',
        "mcp-2025": (
            "`CallToolResult(isError=true)` `tool_error`: `PermissionError` raised inside the "
            "program"
        ),
        "mcp-2026": (
            "`CallToolResult(isError=true)` `tool_error`: `PermissionError` raised inside the "
            "program"
        ),
    },
    "code_approval": {
        "langchain": (
            "`__interrupt__` names the program's call; `Command(resume=...)`: "
            '`ToolMessage(status="success")`, ran once'
        ),
        "pai-wrapped": (
            "`DeferredToolRequests.approvals` (metadata names the program's call); approved: "
            '`ToolReturnPart(outcome="success")`, ran once'
        ),
        "pai-catalog": (
            "`DeferredToolRequests.approvals` (metadata names the program's call); approved: "
            '`ToolReturnPart(outcome="success")`, ran once'
        ),
        "litellm": (
            '`approve=` is asked about the program\'s call, answers True: `{"role": "tool"}`, '
            "ran once"
        ),
        "mcp-2025": (
            "`elicitation/create` mid-call asks about the program's call; accepted: "
            "`CallToolResult(isError=false)`, ran once"
        ),
        "mcp-2026": (
            "an input-required result asks about the program's call; accepted: "
            "`CallToolResult(isError=false)`, ran once"
        ),
    },
}


def cell(row: str, door: str) -> str:
    return EXPECTED.get(row, {}).get(door, "?")


def _door(door: Door) -> Any:
    pytest.importorskip(door.needs)
    module = importlib.import_module(f"support.doors.{door.module}")
    return getattr(module, door.cls)(**dict(door.options))


async def observe(row: Row, door: Door) -> str:
    """What ``door`` gives in scenario ``row`` (its cell); the core decided the row's outcome
    for every call it saw, whatever the door made of it."""
    instance = _door(door)
    run = getattr(instance, row.id, None)
    expected = cell(row.id, door.id)
    if expected.startswith("n/a:"):
        assert run is None, f"{door.id} can run {row.id}: the table must say what it gives"
        return expected
    assert run is not None, f"{door.id} has no way to run {row.id}"
    async with _entered(instance):
        seen = await run()
    if row.outcome is not None:
        assert set(instance.outcomes.seen) <= {row.outcome}, instance.outcomes.seen
    if row.id in DECIDED_WITHOUT_PAUSE:  # no signal passed through these calls
        assert instance.outcomes.interrupted == 0
    return seen


class _entered:
    """The door's own lifetime (the gateway's upstream), when it has one."""

    def __init__(self, door: Any) -> None:
        self.door = door

    async def __aenter__(self) -> None:
        enter = getattr(self.door, "__aenter__", None)
        if enter is not None:
            await enter()

    async def __aexit__(self, *exc: Any) -> None:
        leave = getattr(self.door, "__aexit__", None)
        if leave is not None:
            await leave(*exc)


def _cases() -> Iterator[Any]:
    for row in ROWS:
        for door in DOORS:
            yield pytest.param(row, door, id=f"{row.id}-{door.id}")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("row", "door"), list(_cases()))
async def test_every_door_gives_its_cell(row: Row, door: Door) -> None:
    assert await observe(row, door) == cell(row.id, door.id)


# -- the page ----------------------------------------------------------------------------------


def render(cells: dict[str, dict[str, str]]) -> str:
    """The outcome table as markdown: a row per scenario, a column per door."""
    from support.page_table import render_table

    return render_table("scenario", ROWS, DOORS, cells)


def documented() -> str:
    """The table as the page has it."""
    from support.page_table import documented as between_markers

    return between_markers(PAGE, BEGIN, END)


def test_the_page_shows_the_table() -> None:
    assert documented() == render(EXPECTED)


def test_every_cell_is_filled() -> None:
    missing = [(r.id, d.id) for r in ROWS for d in DOORS if cell(r.id, d.id) == "?"]
    assert not missing


def write() -> None:
    """Put the table in the page, between its markers."""
    from support.page_table import write_table

    write_table(PAGE, BEGIN, END, render(EXPECTED))


def main() -> None:
    """Run every cell (of the doors named on the command line, else all) and print what was
    seen, marking the cells that differ from the table; ``--write`` only writes the table."""
    import anyio

    if "--write" in sys.argv:
        write()
        print(f"wrote the table to {PAGE.relative_to(ROOT)}")
        return
    chosen = [a for a in sys.argv[1:] if not a.startswith("--")]
    seen: dict[str, dict[str, str]] = {}
    for row in ROWS:
        for door in DOORS:
            if chosen and door.id not in chosen:
                continue
            try:
                got = anyio.run(observe, row, door)
            except BaseException as exc:  # the table says what broke
                if isinstance(exc, KeyboardInterrupt):
                    raise
                got = f"FAILS: {type(exc).__name__}: {str(exc)[:160]}"
            seen.setdefault(row.id, {})[door.id] = got
            mark = "" if got == cell(row.id, door.id) else "   <-- differs"
            print(f"{row.id} | {door.id}: {got}{mark}", file=sys.stderr, flush=True)
    if "--seen" in sys.argv:  # the cells as Python, to review and paste into EXPECTED
        import pprint

        pprint.pprint(seen, width=100)
    print(render(seen))


if __name__ == "__main__":
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    main()
