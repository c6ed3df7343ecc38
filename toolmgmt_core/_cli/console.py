"""What every command shares: its usage error, the ``--catalog`` and ``--json`` options, and
printing (aligned tables, JSON, progress bars for long work)."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from toolmgmt_core._model.errors import ToolmgmtError

__all__ = [
    "PROGRESS_THRESHOLD",
    "CliError",
    "add_catalog_argument",
    "add_json_argument",
    "emit_json",
    "positive_int",
    "print_table",
    "progress",
    "stage_bar",
    "warn",
]

PROGRESS_THRESHOLD = 2000
"""Catalogs with more tools than this show a progress bar (on a terminal) while working."""


class CliError(ToolmgmtError):
    """Bad usage or input; ``main`` prints the message and exits with code 2."""


def add_catalog_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--catalog FILE|module:attribute`` to a command's parser."""
    parser.add_argument(
        "--catalog",
        metavar="FILE|MODULE:ATTR",
        help='a JSON file of tool schemas (a list, or {"tools": [...]}), a gateway config '
        "(TOML, its upstreams' tools) or a Python module:attribute naming a ToolCatalog; "
        "default: the embedded demo catalog",
    )


def add_json_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--json`` (machine-readable output) to a command's parser."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def positive_int(value: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def emit_json(data: Any, out: TextIO | None = None) -> None:
    """Print ``data`` as indented JSON."""
    out = out or sys.stdout
    json.dump(data, out, indent=2, ensure_ascii=False, default=str)
    out.write("\n")


def warn(message: str) -> None:
    """A ``warning:`` line on stderr (stdout stays the command's output)."""
    print(f"warning: {message}", file=sys.stderr)


def _show_progress(count: int) -> bool:
    return count > PROGRESS_THRESHOLD and sys.stderr.isatty()


def progress(items: Sequence[Any], desc: str) -> Iterable[Any]:
    """``items``, wrapped in a tqdm bar on stderr when there are more than
    :data:`PROGRESS_THRESHOLD` and stderr is a terminal (for long work such as linting)."""
    if not _show_progress(len(items)):
        return items
    from tqdm import tqdm

    return tqdm(items, desc=desc, unit="tool", file=sys.stderr, leave=False)


class _NoBar:
    n = 0

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def stage_bar(count: int, stages: int, desc: str) -> Any:
    """A tqdm bar over ``stages`` steps of work on ``count`` tools (a no-op when small or not
    on a terminal)."""
    if not _show_progress(count):
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=stages, desc=desc, unit="step", file=sys.stderr, leave=False)


def _width() -> int:
    return max(60, shutil.get_terminal_size((120, 24)).columns)


def _wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken between words (a word longer
    than a line is broken inside): nothing is cut off."""
    if len(text) <= width:
        return [text]
    return textwrap.wrap(text, width, break_on_hyphens=False) or [""]


def print_table(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    out: TextIO | None = None,
    align: Sequence[str] | None = None,
) -> None:
    """Print an aligned plain-text table; the last column is wrapped to the terminal width
    (its further lines start under it), never cut.

    Args:
        columns: header names.
        rows: one sequence of cells per row (numbers are formatted with thousands separators).
        align: per column ``"<"`` or ``">"``; numbers default to right, text to left.
    """
    out = out or sys.stdout
    raw = [list(row) for row in rows]
    body = [[_cell(value) for value in row] for row in raw]
    numeric = [
        any(_is_number(row[i]) for row in raw)
        and all(_is_number(row[i]) or row[i] is None for row in raw)
        for i in range(len(columns))
    ]
    widths = [len(name) for name in columns]
    for row in body:
        for i, cell in enumerate(row[:-1]):
            widths[i] = max(widths[i], len(cell))
    used = sum(widths[:-1]) + 2 * (len(columns) - 1)
    last = max(len(columns[-1]), min(max((len(r[-1]) for r in body), default=0), _width() - used))
    widths[-1] = max(last, min(len(columns[-1]), 10), 1)
    sides = list(align) if align else [">" if numeric[i] else "<" for i in range(len(columns))]

    def line(cells: Sequence[str]) -> str:
        sided = zip(cells, widths, sides, strict=False)
        parts = [c.rjust(w) if side == ">" else c.ljust(w) for c, w, side in sided]
        lines = _wrap(cells[-1], widths[-1])
        if len(lines) == 1:
            return "  ".join(parts).rstrip()
        indent = " " * (sum(widths[:-1]) + 2 * (len(widths) - 1))
        head = "  ".join([*parts[:-1], lines[0]])
        return "\n".join([head, *(indent + more for more in lines[1:])])

    print(line(list(columns)), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for row in body:
        print(line(row), file=out)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _cell(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".") if abs(value) < 100 else f"{value:,.0f}"
    return str(value)
