"""A recorded demo session: the demo agent (:func:`toolmgmt_demo.models.next_move`) working
through a few requests over the demo catalog, for ``toolmgmt usage`` to read.

Usage::

    from toolmgmt_demo.usage import record_demo_usage

    record_demo_usage("usage.jsonl")      # then: toolmgmt usage usage.jsonl --plot usage.png

Each request is a conversation of its own. Some find their tool at once, one reads a large log
(its result is cut to the budget), one fails (a charge that does not exist), and one asks for
something the catalog cannot do, so its search leads to no call. The demo user approves every
call that needs approval (refunds are annotated destructive).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

from toolmgmt_core import (
    Approval,
    ApprovalRequest,
    JsonlListener,
    Listener,
    ResultBudget,
    ToolManager,
    format_tools,
)
from toolmgmt_demo import demo_catalog
from toolmgmt_demo.models import ToolCall, called_name, next_move, openai_tools

__all__ = ["DEMO_REQUESTS", "record_demo_usage", "run_demo_session"]

DEMO_REQUESTS: tuple[str, ...] = (
    "Refund charge ch_0001 to the customer.",
    "Read the file /logs/app.log and show the errors.",
    "Find the contact Maya Patel in the CRM.",
    "Refund charge ch_9999 to the customer.",
    "Schedule a calendar event for the team offsite.",
    "Tune my guitar strings.",
    "Send an email to the team about the release.",
)
"""What the demo user asks, one conversation each."""


def run_demo_session(
    listeners: Iterable[Listener],
    requests: Sequence[str] = DEMO_REQUESTS,
    *,
    max_steps: int = 4,
    **manager_options: Any,
) -> list[str]:
    """Run the demo agent on each request (a conversation each, ``demo-1``, ``demo-2``...) with
    ``listeners`` on the manager; the agent's answers, in order.

    Args:
        listeners: the manager's listeners (a :class:`~toolmgmt_core._events.JsonlListener`...).
        requests: one per conversation.
        max_steps: model requests per conversation at most.
        manager_options: more :class:`~toolmgmt_core.ToolManager` options (default: search
            mode, results cut to 300 tokens, every approval granted).
    """
    manager_options.setdefault("results", ResultBudget(max_result_tokens=300))
    manager_options.setdefault("approval", Approval(_approve))
    manager = ToolManager(demo_catalog(), listeners=listeners, **manager_options)
    answers: list[str] = []
    for number, request in enumerate(requests, start=1):
        session = manager.session(f"demo-{number}")
        done: list[tuple[str, str]] = []
        answer = "(no answer within the steps allowed)"
        for step in range(max_steps):
            offered = openai_tools(format_tools(session, "openai")["tools"])
            move = next_move(request, done, offered)
            if not isinstance(move, ToolCall):
                answer = move
                break
            result = session.call_sync(move.name, move.arguments, call_id=f"call_{step + 1}")
            done.append((called_name(move.name, move.arguments), result.content))
        answers.append(answer)
    return answers


def _approve(request: ApprovalRequest) -> bool:
    """The demo user: yes to every call."""
    return True


def record_demo_usage(
    path: str | os.PathLike[str], requests: Sequence[str] = DEMO_REQUESTS, **options: Any
) -> list[str]:
    """Run the demo session with a :class:`~toolmgmt_core._events.JsonlListener` writing to
    ``path`` (appended); the agent's answers. ``options`` go to :func:`run_demo_session`."""
    with JsonlListener(path) as log:
        return run_demo_session([log], requests, **options)
