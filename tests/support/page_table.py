"""A generated markdown table kept in a docs page between two markers: the cross-door table
(docs/adapters.md) and the path matrix (docs/security.md) are each rendered from their test's
expectations, compared with the page, and written into it with ``--write``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["documented", "render_table", "write_table"]


def render_table(
    corner: str,
    rows: Sequence[Any],
    columns: Sequence[Any],
    cells: Mapping[str, Mapping[str, str]],
) -> str:
    """Markdown: a row per ``rows`` item, a column per ``columns`` item (each with ``id`` and
    ``label``), the cell text from ``cells[row.id][column.id]`` ("?" when missing)."""
    head = f"| {corner} | " + " | ".join(c.label for c in columns) + " |"
    lines = [head, "|---" * (len(columns) + 1) + "|"]
    for row in rows:
        texts = [cells.get(row.id, {}).get(c.id, "?").replace("|", "\\|") for c in columns]
        lines.append(f"| {row.label} | " + " | ".join(texts) + " |")
    return "\n".join(lines)


def documented(page: Path, begin: str, end: str) -> str:
    """The table as the page has it, between its markers."""
    text = page.read_text(encoding="utf-8")
    return text.split(begin, 1)[1].split(end, 1)[0].strip()


def write_table(page: Path, begin: str, end: str, table: str) -> None:
    """Put ``table`` in the page, between its markers."""
    text = page.read_text(encoding="utf-8")
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    page.write_text(f"{head}{begin}\n{table}\n{end}{tail}", encoding="utf-8")
