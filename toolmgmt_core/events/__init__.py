"""What happened: the events the core emits and the hub that hands them to listeners.

Pass listeners to the manager (``ToolManager(catalog, listeners=[...])``); each gets every
event of every session the manager makes (:mod:`toolmgmt_core.events.types`).
"""

from __future__ import annotations

from toolmgmt_core.events.hub import EventHub, Listener
from toolmgmt_core.events.types import (
    ApprovalAnswered,
    ApprovalAsked,
    BudgetExhausted,
    CallFinished,
    CallStarted,
    Event,
    PolicyDenied,
    ResultTruncated,
    SearchDone,
    ToolsLoaded,
)

__all__ = [
    "ApprovalAnswered",
    "ApprovalAsked",
    "BudgetExhausted",
    "CallFinished",
    "CallStarted",
    "Event",
    "EventHub",
    "Listener",
    "PolicyDenied",
    "ResultTruncated",
    "SearchDone",
    "ToolsLoaded",
]
