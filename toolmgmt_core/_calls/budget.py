"""Token budgets: for one result, for all results of a session, and for tool definitions.

- :class:`ResultBudget` is the configuration a manager holds: the default budget of one result
  (a tool's own ``max_result_tokens`` wins), an optional budget for all results of one session
  or agent loop, and how much harder results are cut once that is spent.
- :class:`SessionBudget` is one session's account: what each result took, the budget of the
  next one, and which earlier results could be cleared from the context to get back under the
  session budget (largest first, then oldest). It serialises to plain JSON with the session.
- :func:`plan_definitions` decides which tool definitions to defer so the listed ones stay
  within a definitions budget.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolmgmt_core._calls.records import (
    FOLD_AT,
    MAX_RESTORED_RECORDS,
    Account,
    FoldedRecords,
    ResultRecord,
    fold_records,
    new_record_id,
    read_account,
)
from toolmgmt_core._calls.sync import run_sync
from toolmgmt_core._calls.truncation import (
    MIN_RESULT_TOKENS,
    STRATEGIES,
    TruncationResult,
    summarize_result,
    truncate_result,
)
from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._model.tokens import DEFAULT_ENCODING
from toolmgmt_core._model.tool import Tool

__all__ = [
    "DEFAULT_MAX_RESULT_TOKENS",
    "MAX_RESTORED_RECORDS",
    "DefinitionPlan",
    "ResultBudget",
    "ResultRecord",
    "SessionBudget",
    "plan_definitions",
]

DEFAULT_MAX_RESULT_TOKENS = 4_000
"""Budget of one tool result when neither the tool nor the manager sets one."""


def _check_tokens(name: str, value: Any, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < MIN_RESULT_TOKENS:
        raise ConfigError(
            f"{name} must be a whole number of tokens of at least {MIN_RESULT_TOKENS}"
            f"{' or None' if optional else ''}, got {value!r}."
        )


@dataclass(frozen=True)
class ResultBudget:
    """How large tool results may be: per result, and for all results of one session.

    Usage::

        budget = ResultBudget(max_result_tokens=2_000, session_tokens=20_000)
        account = budget.start()                 # one per session
        limit = account.budget_for(tool)         # cut the result to this
        account.record(tokens, tool_name=tool.name, call_id=call_id)
        account.clearable()                      # what could leave the context
    """

    max_result_tokens: int = DEFAULT_MAX_RESULT_TOKENS
    """Budget of one result when the tool sets none (``Tool.max_result_tokens`` wins)."""
    session_tokens: int | None = None
    """Budget of all results of one session or loop; None for no session budget."""
    over_budget_factor: float = 0.5
    """Once the session budget is spent, each result gets this share of its usual budget."""
    strategy: str = "smart"
    """Default truncation strategy (``Tool.truncation`` wins)."""
    summarizer: Callable[..., Any] | None = field(default=None, compare=False)
    """Sync or async ``(text, *, tool_name, goal) -> str`` for results over the threshold."""
    summarize_threshold: int | None = None
    """Summarise results over this many tokens; None: those over their own budget."""
    summary_timeout: float | None = 30.0
    """Seconds the summariser may take before truncation is used instead."""
    encoding: str = DEFAULT_ENCODING
    """The tokenizer results are measured in."""

    def __post_init__(self) -> None:
        _check_tokens("max_result_tokens", self.max_result_tokens)
        _check_tokens("session_tokens", self.session_tokens, optional=True)
        if not 0 < self.over_budget_factor <= 1:
            raise ConfigError(
                f"over_budget_factor must be a share in (0, 1], got {self.over_budget_factor!r}."
            )
        _check_tokens("summarize_threshold", self.summarize_threshold, optional=True)
        if self.summarizer is not None and not callable(self.summarizer):
            raise ConfigError(
                "summarizer must be a callable (text, *, tool_name, goal) -> str, sync or async; "
                f"got {type(self.summarizer).__name__}."
            )
        if self.strategy not in STRATEGIES:
            raise ConfigError(
                f"Unknown truncation strategy {self.strategy!r}; use 'head', 'tail' or 'smart'."
            )

    def per_result(self, tool: Tool | None = None) -> int:
        """The usual budget of one result of ``tool`` (at least the minimum a cut needs)."""
        own = tool.max_result_tokens if tool is not None else None
        return max(own or self.max_result_tokens, MIN_RESULT_TOKENS)

    def strategy_for(self, tool: Tool | None = None) -> str:
        """The truncation strategy for ``tool``: its own, else the default."""
        return (tool.truncation if tool is not None else None) or self.strategy

    def start(self, state: Mapping[str, Any] | None = None) -> SessionBudget:
        """A session's account under this budget, new or restored from ``to_json()`` state."""
        account = SessionBudget(self)
        if state is not None:
            account.restore(state)
        return account


class SessionBudget:
    """One session's account of result tokens (thread-safe)."""

    def __init__(self, budget: ResultBudget | None = None) -> None:
        self.budget = budget or ResultBudget()
        self._records: list[ResultRecord] = []
        self._cleared: set[str] = set()
        self._folded = FoldedRecords()
        self._counter = itertools.count()
        self._lock = threading.Lock()

    @property
    def used(self) -> int:
        """Tokens of the results still in the context (recorded, not cleared; folded ones
        included)."""
        kept = sum(r.tokens for r in self._records if r.id not in self._cleared)
        return self._folded.tokens + kept

    @property
    def exceeded(self) -> bool:
        """Whether the session budget is spent."""
        limit = self.budget.session_tokens
        return limit is not None and self.used >= limit

    @property
    def remaining(self) -> int | None:
        """Tokens left in the session budget (None without one)."""
        limit = self.budget.session_tokens
        return None if limit is None else max(limit - self.used, 0)

    def records(self) -> list[ResultRecord]:
        """The results kept one by one, oldest first (cleared ones included): every result,
        or once there were more than :data:`~toolmgmt_core._calls.records.FOLD_AT`, the newest
        (:attr:`folded` totals the rest)."""
        return list(self._records)

    @property
    def folded(self) -> FoldedRecords:
        """The results no longer kept one by one, as one total
        (:mod:`toolmgmt_core._calls.records`)."""
        return self._folded

    def budget_for(self, tool: Tool | None = None) -> int:
        """The budget of the next result of ``tool``.

        The tool's ``max_result_tokens`` (else the default). Once the session budget is spent,
        that times ``over_budget_factor``; before, no more than what is left of the session
        budget, but never less than the over-budget figure either.
        """
        usual = self.budget.per_result(tool)
        harder = max(int(usual * self.budget.over_budget_factor), MIN_RESULT_TOKENS)
        remaining = self.remaining
        if remaining is None:
            return usual
        if remaining == 0:
            return harder
        return max(min(usual, remaining), harder)

    def record(
        self,
        tokens: int,
        *,
        tool_name: str,
        original_tokens: int | None = None,
        truncated: bool = False,
        call_id: str | None = None,
    ) -> ResultRecord:
        """Account for a result sent to the model; returns its record."""
        record_id = new_record_id()
        with self._lock:
            order = next(self._counter)
            record = ResultRecord(
                id=record_id,
                # Unique, not ``call_<n>``: another replica serving the same conversation
                # numbers its calls too, and clearing by call id must name one of them.
                call_id=call_id or f"call_{record_id}",
                tool_name=tool_name,
                tokens=int(tokens),
                original_tokens=int(tokens if original_tokens is None else original_tokens),
                truncated=truncated,
                order=order,
            )
            self._records.append(record)
            if len(self._records) > FOLD_AT:  # older results become one total
                self._adopt(fold_records(Account(self._records, self._cleared, self._folded)))
        return record

    def shape_sync(
        self,
        value: Any,
        tool: Tool | None = None,
        *,
        tool_name: str | None = None,
        goal: str | None = None,
        call_id: str | None = None,
    ) -> TruncationResult:
        """Cut (or summarise) one result to its budget and record it.

        With a summariser configured this blocks while it runs (:meth:`shape` through
        :func:`~toolmgmt_core._calls.sync.run_sync`); async code uses :meth:`shape`.
        """
        if self.budget.summarizer is None:
            return self._truncated(value, tool, tool_name, goal, call_id)
        shaped = self.shape(value, tool, tool_name=tool_name, goal=goal, call_id=call_id)
        return run_sync(shaped)

    async def shape(
        self,
        value: Any,
        tool: Tool | None = None,
        *,
        tool_name: str | None = None,
        goal: str | None = None,
        call_id: str | None = None,
    ) -> TruncationResult:
        """Cut (or summarise) one result to its budget and record it; an async summariser is
        awaited, not bridged (:meth:`shape_sync` for sync code)."""
        if self.budget.summarizer is None:
            return self._truncated(value, tool, tool_name, goal, call_id)
        name, limit, options = self._plan(tool, tool_name, goal)
        result = await summarize_result(value, self.budget.summarizer, limit, **options)
        return self._recorded(result, name, call_id)

    def _truncated(
        self,
        value: Any,
        tool: Tool | None,
        tool_name: str | None,
        goal: str | None,
        call_id: str | None,
    ) -> TruncationResult:
        name, limit, options = self._plan(tool, tool_name, goal)
        return self._recorded(truncate_result(value, limit, **_truncation(options)), name, call_id)

    def _plan(
        self, tool: Tool | None, tool_name: str | None, goal: str | None
    ) -> tuple[str, int, dict[str, Any]]:
        """(the tool's name, its budget now, the summary/truncation options) for one result."""
        name = tool_name or (tool.name if tool is not None else "tool")
        options = {
            "tool_name": name,
            "goal": goal,
            "threshold": self.budget.summarize_threshold,
            "timeout": self.budget.summary_timeout,
            "strategy": self.budget.strategy_for(tool),
            "encoding": self.budget.encoding,
        }
        return name, self.budget_for(tool), options

    def _recorded(
        self, result: TruncationResult, name: str, call_id: str | None
    ) -> TruncationResult:
        self.record(
            result.tokens,
            tool_name=name,
            original_tokens=result.original_tokens,
            truncated=result.truncated,
            call_id=call_id,
        )
        return result

    def clearable(self, *, keep_last: int = 1, target: int | None = None) -> list[ResultRecord]:
        """Earlier results that could be cleared from the context, largest first, then oldest.

        Args:
            keep_last: the most recent results are never proposed (the model is reading them).
            target: propose just enough results to bring the tokens in context down to this;
                None uses the session budget, and without one every candidate is listed.
        """
        with self._lock:
            live = [r for r in self._records if r.id not in self._cleared]
        candidates = live[: max(len(live) - max(keep_last, 0), 0)]
        candidates.sort(key=lambda r: (-r.tokens, r.order))
        goal = self.budget.session_tokens if target is None else target
        if goal is None:
            return candidates
        excess = sum(r.tokens for r in live) - goal
        chosen: list[ResultRecord] = []
        for record in candidates:
            if excess <= 0:
                break
            chosen.append(record)
            excess -= record.tokens
        return chosen

    def mark_cleared(self, call_ids: Iterable[str]) -> int:
        """Record that these results (by call id, or by record id) left the context; returns
        the tokens freed. What is kept are the ids of the records named now: a record another
        replica adds later under the same call id is not cleared by this."""
        ids = set(call_ids)
        with self._lock:
            named = {r.id for r in self._records if r.call_id in ids or r.id in ids}
            fresh = named - self._cleared
            self._cleared |= fresh
            return sum(r.tokens for r in self._records if r.id in fresh)

    def to_json(self) -> dict[str, Any]:
        """The account as plain JSON (kept with the session's state)."""
        with self._lock:
            return Account(self._records, self._cleared, self._folded).to_json()

    def restore(self, state: Mapping[str, Any]) -> None:
        """Replace the account with ``to_json()`` output (also state written before records
        had ids: :mod:`toolmgmt_core._calls.records`).

        Raises:
            ConfigError: ``state`` is not an account's state.
        """
        account = read_account(state)
        with self._lock:
            self._adopt(account)
            # Kept records all come after the fold (read_account drops the ones it covers).
            last = max((r.order for r in account.records), default=account.folded.upto)
            self._counter = itertools.count(last + 1)

    def _adopt(self, account: Account) -> None:
        self._records = list(account.records)
        self._cleared = set(account.cleared)
        self._folded = account.folded


@dataclass(frozen=True)
class DefinitionPlan:
    """Which tool definitions to list and which to defer under a definitions budget."""

    listed: list[str]
    """Names to list, in the given order (always-on tools first)."""
    deferred: list[str]
    """Names to defer (found through search or loaded on demand)."""
    tokens: int
    """Definition tokens of the listed tools."""
    budget: int
    """The budget planned for."""
    over_budget: bool = False
    """Whether the always-on tools alone exceed the budget (they are listed anyway)."""
    sizes: Mapping[str, int] = field(default_factory=dict, repr=False)
    """Tokens of each definition, as given."""


def _truncation(options: Mapping[str, Any]) -> dict[str, Any]:
    """The truncation options among a summary's (what both kinds of shaping share)."""
    return {"strategy": options["strategy"], "encoding": options["encoding"]}


def plan_definitions(
    sizes: Mapping[str, int] | Sequence[tuple[str, int]],
    budget: int,
    *,
    always_on: Iterable[str] = (),
) -> DefinitionPlan:
    """List tools in the given order while their definitions fit ``budget``; defer the rest.

    Always-on tools are listed first whatever their size. Then each tool, in order, is listed
    when it still fits (a large tool that does not fit does not stop smaller ones after it).

    Args:
        sizes: definition tokens per tool name, in priority order.
        budget: the definitions budget in tokens.
        always_on: names listed whatever the budget.

    Raises:
        ConfigError: a negative budget or size, or an always-on name without a size.
    """
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise ConfigError(f"budget must be a whole number of tokens >= 0, got {budget!r}.")
    items = list(sizes.items()) if isinstance(sizes, Mapping) else list(sizes)
    table = dict(items)
    for name, size in items:
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ConfigError(f"Definition size of {name!r} must be tokens >= 0, got {size!r}.")
    pinned = list(dict.fromkeys(always_on))
    missing = [n for n in pinned if n not in table]
    if missing:
        raise ConfigError(f"always_on names without a definition size: {', '.join(missing)}.")
    listed = list(pinned)
    used = sum(table[n] for n in pinned)
    over = used > budget
    deferred: list[str] = []
    for name, size in items:
        if name in pinned:
            continue
        if used + size <= budget:
            listed.append(name)
            used += size
        else:
            deferred.append(name)
    return DefinitionPlan(listed, deferred, used, budget, over, table)
