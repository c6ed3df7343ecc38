"""The doors of the cross-door suite (``tests/adapters/test_cross_door.py``): one class per
framework, each driving its framework's own loop over the same tools (:mod:`.shop`) and saying
what the model (or the caller) got, in that framework's own terms.

Each door has one async method per scenario it can express, named as the scenario; each
returns the cell of the outcome table it observed (and asserts what must hold on the way: how
often a tool ran, that a cut result is the core's cut). A scenario a door cannot express has no
method: the table says why. Import a door module after ``pytest.importorskip`` of its framework.
"""

from __future__ import annotations

from typing import Any

from support.doors.shop import ORDER, Shop, error_code, report_text, shop_manager
from toolmgmt_core._events import CallFinished, Event
from toolmgmt_core._session.meta_tools import META_TOOL_NAMES

__all__ = ["EDIT_NOTE", "Outcomes", "answered", "cut_reference", "error_code", "ran"]

EDIT_NOTE = "A human reviewer changed this call before it ran"
"""How the core's result of an edited call starts, at every door."""


def ran(count: int) -> str:
    """``ran 0 times``, ``ran once``, ``ran 2 times``."""
    return "ran once" if count == 1 else f"ran {count} times"


def answered(form: str, content: Any) -> str:
    """A native result's form, with the core's error code when it carries one."""
    code = error_code(content)
    return f"{form} `{code}`" if code else form


class Outcomes:
    """A manager's listener: the core's outcome of every tool call (meta-tools and the
    upstream's ``runs`` left out), whatever the door made of it. A call a framework's signal
    paused (LangGraph's ``interrupt()`` asking for approval) decided nothing: it is counted
    apart, in ``interrupted``, and its resumed run gives the outcome."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.interrupted = 0

    def __call__(self, event: Event) -> None:
        if not isinstance(event, CallFinished) or event.tool in (*META_TOOL_NAMES, "runs"):
            return
        if event.outcome == "interrupted":
            self.interrupted += 1
        else:
            self.seen.append(event.outcome)


def cut_reference() -> str:
    """``order_report``'s result as a plain session cuts it: what every door must send."""
    session = shop_manager(Shop().catalog()).session()
    result = session.call_sync("order_report", {"order_id": ORDER})
    assert result.truncated and result.content != report_text(ORDER)
    return result.content
