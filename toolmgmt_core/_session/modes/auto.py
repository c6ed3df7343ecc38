"""Auto mode: every tool flat while their definitions are small; search past a threshold."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._session.modes.base import CanSee, LaidOutMode, Layout, Planner, Present
from toolmgmt_core._session.modes.flat import Flat
from toolmgmt_core._session.modes.search import Search

__all__ = ["DEFAULT_CONTEXT_WINDOW", "Auto"]

DEFAULT_CONTEXT_WINDOW = 128_000
"""Context window assumed when none is given (a common current size)."""


@dataclass(frozen=True, repr=False)
class Auto(LaidOutMode):
    """Flat while the listable definitions fit, search beyond (decided per session view, cached
    per catalog version).

    Usage::

        ToolManager(catalog, mode=Auto(context_window=200_000))          # or mode="auto"
        ToolManager(catalog, mode=Auto(definitions_budget=8_000))       # list what fits

    Args:
        threshold_tokens: defer when definitions exceed this many tokens.
        context_window: the model's context window, for ``threshold_share`` (default
            :data:`DEFAULT_CONTEXT_WINDOW`).
        threshold_share: defer when definitions exceed this share of the context window; with
            a token threshold too, the lower one applies.
        definitions_budget: list tools in catalog order (always-on first) while they fit this
            many tokens and defer only the rest behind ``tool_search``; it replaces the
            threshold. None: all-or-nothing at the threshold.
        search: the search past the threshold: the cache-stable ``Search()`` by default (the
            list stays byte-identical), ``Search(appends=True)`` to grow it.
    """

    threshold_tokens: int | None = None
    context_window: int | None = None
    threshold_share: float = 0.10
    definitions_budget: int | None = None
    search: Search = field(default_factory=Search)

    name: ClassVar[str] = "auto"

    @property
    def instructions(self) -> str:
        return self.search.instructions

    @property
    def _flat(self) -> Flat:
        return Flat(search=self.search)

    def __post_init__(self) -> None:
        if not isinstance(self.search, Search):
            raise ConfigError(f"Auto(search=...) must be a Search(...), got {self.search!r}.")
        for label in ("threshold_tokens", "context_window", "definitions_budget"):
            value = getattr(self, label)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ConfigError(
                    f"Auto({label}=...) must be a positive whole number, got {value!r}."
                )
        share = self.threshold_share
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share <= 1:
            raise ConfigError(f"Auto(threshold_share=...) must be in (0, 1], got {share!r}.")

    @property
    def threshold(self) -> int:
        """Definition tokens above which the session searches instead of listing flat."""
        window = self.context_window or DEFAULT_CONTEXT_WINDOW
        by_share = int(window * self.threshold_share)
        if self.threshold_tokens is None:
            return by_share
        if self.context_window is None:
            return self.threshold_tokens
        return min(self.threshold_tokens, by_share)

    def meta_tools(self, max_results: int) -> list[Tool]:
        return self.search.meta_tools(max_results)

    def plan(
        self, planner: Planner, can_see: CanSee, present: Present, loaded: Sequence[str]
    ) -> Layout:
        visible = planner.visible(can_see)
        pinned, rest = planner.listing(visible)
        candidates = [visible[n] for n in pinned] + rest
        if self.definitions_budget is not None:
            fits = set(planner.fitting(candidates, pinned, self.definitions_budget))
            budgeted = [t for t in rest if t.name in fits]
            if len(budgeted) == len(rest):
                return self._flat.layout(planner, visible, present, loaded)
            searched = {n: visible[n] for n in [*pinned, *loaded] if n in visible}
            return self.search.layout(planner, searched, present, loaded, listed=budgeted)
        if planner.exceeds(candidates, self.threshold):
            searched = {n: visible[n] for n in [*pinned, *loaded] if n in visible}
            return self.search.layout(planner, searched, present, loaded)
        return self._flat.layout(planner, visible, present, loaded)

    def __repr__(self) -> str:
        search = "" if self.search == Search() else f", search={self.search!r}"
        return (
            f"Auto(threshold={self.threshold}, definitions_budget={self.definitions_budget}"
            f"{search})"
        )
