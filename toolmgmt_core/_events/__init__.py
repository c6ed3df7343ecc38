"""What happened: the events the core emits, the hub that hands them to listeners, and the
listeners that ship with it.

Pass listeners to the manager (``ToolManager(catalog, listeners=[...])``); each gets every
event of every session the manager makes (:mod:`toolmgmt_core._events.types`). Every manager has
an :class:`OtelListener` too (spans and metrics, a no-op until an OpenTelemetry SDK is
configured; :mod:`toolmgmt_core._events.otel`); :class:`JsonlListener` writes a usage log for
``toolmgmt usage`` (:mod:`toolmgmt_core._events.jsonl`). Neither lets argument, result or query
text leave the process unless told to (:mod:`toolmgmt_core._events.content`).
"""

from __future__ import annotations

from toolmgmt_core._events.content import ContentCapture
from toolmgmt_core._events.hub import EventHub, Listener
from toolmgmt_core._events.jsonl import JsonlListener, read_jsonl
from toolmgmt_core._events.otel import OtelListener, default_listeners
from toolmgmt_core._events.records import event_record
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
    "ApprovalAnswered",
    "ApprovalAsked",
    "BudgetExhausted",
    "CallFinished",
    "CallStarted",
    "ContentCapture",
    "Event",
    "EventHub",
    "JsonlListener",
    "Listener",
    "OtelListener",
    "PolicyDenied",
    "ProgramFinished",
    "ProgramStarted",
    "ResultTruncated",
    "SearchDone",
    "ToolsListed",
    "ToolsLoaded",
    "default_listeners",
    "event_record",
    "read_jsonl",
]
