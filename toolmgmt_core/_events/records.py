"""Events as plain JSON records: what a usage log keeps (a JSONL file, a shared store) and
``toolmgmt usage`` reads.

A record is a flat object with the event's name, a timestamp and the event's fields::

    {"event": "search", "time": 1767225600.123, "conversation": "conv-1", "method": "keyword",
     "engine": "bm25", "hits": ["crm_search_contacts"], "duration": 0.0012, "query_count": 1}

Argument, result and query text go in only when capture is on, bounded
(:class:`~toolmgmt_core._events.content.ContentCapture`). A call is one ``call`` record (from
:class:`~toolmgmt_core._events.types.CallFinished`, with the id and name its start had);
``CallStarted`` is not recorded.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from toolmgmt_core._events.content import ContentCapture
from toolmgmt_core._events.types import (
    ApprovalAnswered,
    ApprovalAsked,
    BudgetExhausted,
    CallFinished,
    CallStarted,
    Event,
    PolicyDenied,
    ProgramFinished,
    ProgramStarted,
    ResultTruncated,
    SearchDone,
    ToolsListed,
    ToolsLoaded,
)

__all__ = [
    "MAX_RECORD_CHARS",
    "RECORD_NAMES",
    "event_record",
    "parse_records",
    "read_lines",
    "record_line",
]

RECORD_NAMES: dict[type[Event], str] = {
    SearchDone: "search",
    ToolsLoaded: "load",
    ToolsListed: "list",
    CallFinished: "call",
    PolicyDenied: "denied",
    ApprovalAsked: "approval_asked",
    ApprovalAnswered: "approval_answered",
    ResultTruncated: "truncated",
    BudgetExhausted: "budget_exhausted",
    ProgramFinished: "program",
}
"""The record name of each recorded event type (``CallStarted`` has none: see the module)."""

MAX_RECORD_CHARS = 1_000_000
"""Longest record line read back; a longer one is skipped as malformed."""


def event_record(event: Event, content: ContentCapture | None = None) -> dict[str, Any] | None:
    """``event`` as a JSON-ready record, or None for an event that is not recorded.

    Args:
        event: what happened.
        content: whether argument, result and query text go in (default: not).
    """
    name = RECORD_NAMES.get(type(event))
    if name is None:
        return None
    capture = content or ContentCapture()
    record: dict[str, Any] = {"event": name, "time": round(time.time(), 3)}
    for item in dataclasses.fields(event):
        value = getattr(event, item.name)
        if item.name == "queries":
            record["query_count"] = len(value)
            if capture.enabled:
                record["queries"] = [capture.text(q) for q in value]
        elif item.name == "result":
            text = capture.text(value)
            if text is not None:
                record["result"] = text
        elif isinstance(value, ProgramStarted):
            record.update(call_id=value.call_id, resumed=value.resumed)
        elif isinstance(value, CallStarted):
            record.update(call_id=value.call_id, asked=value.tool, meta=value.meta)
            arguments = capture.text(value.arguments)
            if arguments is not None:
                record["arguments"] = arguments
        elif isinstance(value, float):
            record[item.name] = round(value, 6)
        elif isinstance(value, tuple):
            record[item.name] = list(value)
        else:
            record[item.name] = value
    return record


def parse_records(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    """The records among ``lines`` (JSON objects with an ``event`` name); blank, malformed or
    overlong lines are skipped (see :data:`MAX_RECORD_CHARS`)."""
    for line in lines:
        if not line.strip() or len(line) > MAX_RECORD_CHARS:
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict) and isinstance(record.get("event"), str):
            yield record


def record_line(record: dict[str, Any]) -> str:
    """One record as a JSONL line (no newline)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=str)


def read_lines(handle: TextIO) -> Iterator[str]:
    """The lines of an open text file, each read at most :data:`MAX_RECORD_CHARS` characters
    at a time: an overlong line is skipped whole without being held in memory."""
    limit = MAX_RECORD_CHARS + 1
    while line := handle.readline(limit):
        if len(line) == limit and not line.endswith("\n"):
            while (rest := handle.readline(limit)) and not rest.endswith("\n"):
                pass
            continue
        yield line
