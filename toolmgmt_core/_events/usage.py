"""What a usage log says: searches, which of them led to a call, the tools never found, calls and
errors per tool, and the tokens discovery and truncation saved (``toolmgmt usage``).

:func:`usage_report` reads records (:mod:`toolmgmt_core._events.records`: a JSONL file, a shared
store) in any order and groups them by conversation. A search *led to a call* when a tool it
found was called later in the same conversation; a search that found nothing, or whose tools
were never called, is one the agent's developer wants to read (with content capture on, its
query is in the record).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_LISTED", "ToolUsage", "UsageReport", "usage_report"]

MAX_LISTED = 200
"""Searches that led to no call kept in a report at most (the count is always whole)."""


@dataclass
class ToolUsage:
    """One tool's calls."""

    calls: int = 0
    """Calls that reached it (every outcome)."""
    errors: int = 0
    """Calls whose outcome was not ``success`` (``retry``, ``denied``, ``failed``)."""
    codes: dict[str, int] = field(default_factory=dict)
    """Those errors by code."""
    seconds: float = 0.0
    """Seconds its calls took together."""
    meta: bool = False
    """Whether it is a meta-tool."""

    def to_dict(self) -> dict[str, Any]:
        """The figures as JSON."""
        return {
            "calls": self.calls,
            "errors": self.errors,
            "error_codes": dict(sorted(self.codes.items())),
            "mean_seconds": round(self.seconds / self.calls, 6) if self.calls else 0.0,
            "meta": self.meta,
        }


@dataclass
class UsageReport:
    """The figures of one usage log (see the module docstring)."""

    conversations: int = 0
    """Conversations with at least one record."""
    searches: int = 0
    """Searches the meta-tools ran."""
    searches_with_call: int = 0
    """Searches one of whose tools was called later in the same conversation."""
    unanswered: list[dict[str, Any]] = field(default_factory=list)
    """Searches that led to no call (at most :data:`MAX_LISTED`): conversation, time, tools
    found, and the queries when they were recorded."""
    unanswered_count: int = 0
    """How many searches led to no call."""
    never_found: list[str] | None = None
    """Catalog tools no search found, in catalog order (None: no catalog given)."""
    catalog_tools: int | None = None
    """Tools in the catalog (None: no catalog given)."""
    tools: dict[str, ToolUsage] = field(default_factory=dict)
    """Calls and errors by tool."""
    listings: int = 0
    """Tool lists handed out (one per model request)."""
    saved_by_discovery: int = 0
    """Definition tokens those lists did not send, against every visible tool flat."""
    truncations: int = 0
    """Results cut to their budget."""
    saved_by_truncation: int = 0
    """Result tokens those cuts removed."""
    denials: int = 0
    """Calls the policy refused."""
    approvals: dict[str, int] = field(default_factory=dict)
    """Approvers' answers by verdict (``asked``: requests)."""
    programs: int = 0
    """Code mode's programs that ended (a pause and its resume count once)."""
    program_calls: int = 0
    """Tool calls those programs made."""
    saved_by_code: int = 0
    """Result tokens their calls returned that never entered the context."""

    @property
    def search_call_share(self) -> float:
        """The share of searches that led to a call (0.0 without searches)."""
        return self.searches_with_call / self.searches if self.searches else 0.0

    @property
    def calls(self) -> int:
        """Calls of every tool, meta-tools included."""
        return sum(t.calls for t in self.tools.values())

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON (what ``toolmgmt usage --json`` prints)."""
        return {
            "conversations": self.conversations,
            "searches": self.searches,
            "searches_with_call": self.searches_with_call,
            "search_call_share": round(self.search_call_share, 4),
            "searches_without_call": self.unanswered_count,
            "unanswered_searches": self.unanswered,
            "tools_never_found": self.never_found,
            "catalog_tools": self.catalog_tools,
            "calls": self.calls,
            "tools": {name: usage.to_dict() for name, usage in sorted(self.tools.items())},
            "tokens_saved": {
                "discovery": self.saved_by_discovery,
                "truncation": self.saved_by_truncation,
                "listings": self.listings,
                "truncations": self.truncations,
            },
            "policy_denials": self.denials,
            "approvals": dict(sorted(self.approvals.items())),
            "programs": {
                "programs": self.programs,
                "calls": self.program_calls,
                "tokens_kept_out": self.saved_by_code,
            },
        }


def usage_report(
    records: Iterable[Mapping[str, Any]], catalog_tools: Iterable[str] | None = None
) -> UsageReport:
    """The report of ``records`` (a usage log's, in any order).

    Args:
        records: the log's records.
        catalog_tools: the catalog's tool names, for the tools no search found (None: not
            reported).
    """
    report = UsageReport()
    by_conversation: dict[Any, list[Mapping[str, Any]]] = {}
    for record in records:
        by_conversation.setdefault(record.get("conversation"), []).append(record)
    report.conversations = len(by_conversation)
    found: set[str] = set()
    for items in by_conversation.values():
        items.sort(key=lambda r: _number(r.get("time")))
        _conversation(report, items, found)
    if catalog_tools is not None:
        names = list(catalog_tools)
        report.catalog_tools = len(names)
        report.never_found = [name for name in names if name not in found]
    return report


class _Reading:
    """One conversation's records read in time order into ``report``: each record kind has its
    method (:data:`_KINDS`); searches wait in ``pending`` until a call of a tool they found."""

    def __init__(self, report: UsageReport, found: set[str]) -> None:
        self.report = report
        self.found = found
        self.pending: list[tuple[Mapping[str, Any], set[str]]] = []

    def search(self, record: Mapping[str, Any]) -> None:
        hits = {h for h in record.get("hits") or () if isinstance(h, str)}
        self.found |= hits
        self.report.searches += 1
        self.pending.append((record, hits))

    def call(self, record: Mapping[str, Any]) -> None:
        _call(self.report, record)
        tool = record.get("tool")
        for search in [p for p in self.pending if tool in p[1]]:
            self.pending.remove(search)
            self.report.searches_with_call += 1

    def listing(self, record: Mapping[str, Any]) -> None:
        self.report.listings += 1
        self.report.saved_by_discovery += max(
            0, _count(record.get("flat_tokens")) - _count(record.get("definition_tokens"))
        )

    def truncation(self, record: Mapping[str, Any]) -> None:
        self.report.truncations += 1
        self.report.saved_by_truncation += max(
            0, _count(record.get("tokens_before")) - _count(record.get("tokens_after"))
        )

    def denial(self, record: Mapping[str, Any]) -> None:
        self.report.denials += 1

    def approval(self, record: Mapping[str, Any]) -> None:
        verdict = "asked" if record.get("event") == "approval_asked" else str(record.get("verdict"))
        self.report.approvals[verdict] = self.report.approvals.get(verdict, 0) + 1

    def program(self, record: Mapping[str, Any]) -> None:
        if record.get("outcome") != "paused":
            self.report.programs += 1
        self.report.program_calls += _count(record.get("calls"))
        self.report.saved_by_code += max(
            0, _count(record.get("inner_tokens")) - _count(record.get("result_tokens"))
        )

    def finish(self) -> None:
        """The searches no call followed."""
        for record, hits in self.pending:
            self.report.unanswered_count += 1
            if len(self.report.unanswered) < MAX_LISTED:
                entry = {
                    "conversation": record.get("conversation"),
                    "time": record.get("time"),
                    "found": sorted(hits),
                }
                if isinstance(record.get("queries"), list):
                    entry["queries"] = record["queries"]
                self.report.unanswered.append(entry)


_KINDS: dict[str, Callable[[_Reading, Mapping[str, Any]], None]] = {
    "search": _Reading.search,
    "call": _Reading.call,
    "list": _Reading.listing,
    "truncated": _Reading.truncation,
    "denied": _Reading.denial,
    "approval_asked": _Reading.approval,
    "approval_answered": _Reading.approval,
    "program": _Reading.program,
}
"""What each record kind adds to a report (other kinds add nothing)."""


def _conversation(report: UsageReport, items: list[Mapping[str, Any]], found: set[str]) -> None:
    """Add one conversation's records (in time order) to ``report``."""
    reading = _Reading(report, found)
    for record in items:
        read = _KINDS.get(str(record.get("event")))
        if read is not None:
            read(reading, record)
    reading.finish()


def _call(report: UsageReport, record: Mapping[str, Any]) -> None:
    name = record.get("tool")
    if not isinstance(name, str) or record.get("outcome") == "interrupted":
        return
    usage = report.tools.setdefault(name, ToolUsage())
    usage.calls += 1
    usage.seconds += _number(record.get("duration"))
    usage.meta = usage.meta or bool(record.get("meta")) and record.get("asked") == name
    if record.get("outcome") != "success":
        usage.errors += 1
        code = str(record.get("error_code") or record.get("outcome"))
        usage.codes[code] = usage.codes.get(code, 0) + 1


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _count(value: Any) -> int:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else 0
