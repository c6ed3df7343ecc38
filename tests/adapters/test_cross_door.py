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
BEGIN, END = "<!-- doors:begin -->", "<!-- doors:end -->"


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
    Door("mcp-2025", "MCP gateway, 2025-11-25", "gateway", "GatewayDoor", "mcp", (("modern", False),)),
    Door("mcp-2026", "MCP gateway, 2026-07-28", "gateway", "GatewayDoor", "mcp", (("modern", True),)),
]

ROWS: list[tuple[str, str]] = [
    ("success", "success"),
    ("invalid_arguments", "retry: invalid arguments, repeated"),
    ("unknown_tool", "retry: unknown tool"),
    ("denied_tool", "denied: the policy refuses the tool"),
    ("failed", "failed: the tool raises"),
    ("truncated", "success, over the result budget"),
    ("approval_pause", "approval: pause"),
    ("approval_approve", "approval: approve"),
    ("approval_deny", "approval: deny"),
    ("approval_edit", "approval: edit"),
    ("restore", "restore in a fresh instance"),
    ("control_pause", "signal: a tool pauses for its user"),
    ("control_retry", "signal: a tool asks the model to retry"),
    ("cancellation", "signal: cancellation"),
]

EXPECTED: dict[str, dict[str, str]] = {}


def cell(row: str, door: str) -> str:
    return EXPECTED.get(row, {}).get(door, "?")


def _door(door: Door) -> Any:
    pytest.importorskip(door.needs)
    module = importlib.import_module(f"support.doors.{door.module}")
    return getattr(module, door.cls)(**dict(door.options))


async def observe(row: str, door: Door) -> str:
    """What ``door`` gives in scenario ``row`` (its cell)."""
    instance = _door(door)
    run = getattr(instance, row, None)
    expected = cell(row, door.id)
    if expected.startswith("n/a:"):
        assert run is None, f"{door.id} can run {row}: the table must say what it gives"
        return expected
    assert run is not None, f"{door.id} has no way to run {row}"
    async with _entered(instance):
        return await run()


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
    for row, _ in ROWS:
        for door in DOORS:
            yield pytest.param(row, door, id=f"{row}-{door.id}")


@pytest.mark.anyio
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("row", "door"), list(_cases()))
async def test_every_door_gives_its_cell(row: str, door: Door) -> None:
    assert await observe(row, door) == cell(row, door.id)


# -- the page ----------------------------------------------------------------------------------


def render(cells: dict[str, dict[str, str]]) -> str:
    """The outcome table as markdown: a row per scenario, a column per door."""
    head = "| scenario | " + " | ".join(d.label for d in DOORS) + " |"
    rows = [head, "|---" * (len(DOORS) + 1) + "|"]
    for row, label in ROWS:
        texts = [cells.get(row, {}).get(d.id, "?").replace("|", "\\|") for d in DOORS]
        rows.append(f"| {label} | " + " | ".join(texts) + " |")
    return "\n".join(rows)


def documented() -> str:
    """The table as the page has it."""
    text = PAGE.read_text(encoding="utf-8")
    return text.split(BEGIN, 1)[1].split(END, 1)[0].strip()


def test_the_page_shows_the_table() -> None:
    assert documented() == render(EXPECTED)


def test_every_cell_is_filled() -> None:
    missing = [(r, d.id) for r, _ in ROWS for d in DOORS if cell(r, d.id) == "?"]
    assert not missing


def main() -> None:
    import anyio

    chosen = [a for a in sys.argv[1:] if not a.startswith("--")]
    seen: dict[str, dict[str, str]] = {}
    for row, _ in ROWS:
        for door in DOORS:
            if chosen and door.id not in chosen:
                continue
            try:
                got = anyio.run(observe, row, door)
            except BaseException as exc:  # the table says what broke
                if isinstance(exc, KeyboardInterrupt):
                    raise
                got = f"FAILS: {type(exc).__name__}: {str(exc)[:160]}"
            seen.setdefault(row, {})[door.id] = got
            mark = "" if got == cell(row, door.id) else "   <-- differs"
            print(f"{row} | {door.id}: {got}{mark}", file=sys.stderr, flush=True)
    if "--write" in sys.argv:
        text = PAGE.read_text(encoding="utf-8")
        head, rest = text.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        PAGE.write_text(f"{head}{BEGIN}\n{render(EXPECTED)}\n{END}{tail}", encoding="utf-8")
    print(render(seen))


if __name__ == "__main__":
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    main()
