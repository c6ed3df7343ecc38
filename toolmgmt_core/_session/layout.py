"""What the model sees at one step: the tool list, planned in one place.

A list is laid out in sections, always in this order::

    meta-tools (by mode)  ->  pinned (always-on)  ->  listed  ->  loaded tools, in load order

:class:`LayoutPlanner` holds what the sessions of one manager share (the catalog, the mode, the
always-on tools) and the caches that depend only on the catalog version (pinned names, ``auto``'s
decisions, lazy stubs, the meta-tools, the plans of one policy view); the mode
(:mod:`toolmgmt_core._session.modes`) lays the list out from a session's view of the catalog and
the names it loaded. Sessions under the same view with the same loaded names share a plan (it
is the same list).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from toolmgmt_core._calls.budget import plan_definitions
from toolmgmt_core._catalog.tool_catalog import ToolCatalog
from toolmgmt_core._model.tokens import definition_tokens
from toolmgmt_core._model.tool import EMPTY_PARAMETERS, Tool
from toolmgmt_core._policy.callers import CallerChoice, Callers, annotated
from toolmgmt_core._session.modes import Layout, Mode
from toolmgmt_core._session.modes.base import CanSee, Present

__all__ = ["Layout", "LayoutPlanner", "Usage"]

_CACHE_LIMIT = 256
_STUB_LIMIT = 65536


@dataclass(frozen=True)
class Usage:
    """Definition tokens a session sends now, against sending every visible tool flat."""

    definition_tokens: int
    """Tokens of the definitions in ``session.tools()`` now."""
    flat_tokens: int
    """Tokens of every visible tool's full definition, as a flat tool list would send."""
    listed_tools: int
    """How many definitions ``session.tools()`` holds (meta-tools included)."""
    visible_tools: int
    """How many catalog tools the session may see."""
    loaded_tools: int
    """How many tools were loaded by search or schema requests."""

    @property
    def saved_tokens(self) -> int:
        """Tokens not sent compared with the flat list (negative when the session costs more)."""
        return self.flat_tokens - self.definition_tokens

    @property
    def share(self) -> float:
        """``definition_tokens`` as a share of ``flat_tokens`` (0.0 for an empty catalog)."""
        return self.definition_tokens / self.flat_tokens if self.flat_tokens else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The figures as a JSON object."""
        return {
            "definition_tokens": self.definition_tokens,
            "flat_tokens": self.flat_tokens,
            "saved_tokens": self.saved_tokens,
            "share": round(self.share, 4),
            "listed_tools": self.listed_tools,
            "visible_tools": self.visible_tools,
            "loaded_tools": self.loaded_tools,
        }


class LayoutPlanner:
    """Plans each step's tool list for the sessions of one manager.

    Usage::

        planner = LayoutPlanner(catalog, Search(), max_results=5)
        layout = planner.plan(can_see, present, loaded=["crm_search_contacts"])
        layout.tools                                  # what to send to the model now

    Args:
        catalog: the tools.
        mode: the manager's mode.
        max_results: tools one search returns (``tool_search`` says so in its description).
        always_on: names listed first, in this order, in every mode.
        encoding: the tokenizer for definition sizes.
    """

    def __init__(
        self,
        catalog: ToolCatalog,
        mode: Mode,
        *,
        max_results: int,
        always_on: Sequence[str] = (),
        encoding: str,
    ) -> None:
        self.catalog = catalog
        self.mode = mode
        self.max_results = max_results
        self.always_on = tuple(always_on)
        self.encoding = encoding
        self.shadowed: frozenset[str] = frozenset(t.name for t in self.meta_tools(mode))
        """Names of the mode's meta-tools: a catalog tool named like one is never listed."""
        self._stubs: dict[tuple[int, str], tuple[Tool, Tool]] = {}
        self._decisions: dict[tuple[Any, ...], Any] = {}
        self._plans: dict[tuple[Any, ...], tuple[object, Layout]] = {}
        self._pinned: tuple[int, list[str]] = (-1, [])
        self._lock = threading.Lock()

    def plan(
        self, can_see: CanSee, present: Present, loaded: Sequence[str], view: object = None
    ) -> Layout:
        """The tool list of one step (see :meth:`Mode.plan`).

        With ``view`` (the policy view ``can_see`` and ``present`` answer from), the plan is
        kept per catalog version, view and loaded names, so the steps and calls of every
        session under that view plan it once (a flat list checks every tool)."""
        if view is None:
            return self.mode.plan(self, can_see, present, loaded)
        key = (self.catalog.version, id(view), tuple(loaded))
        cached = self._plans.get(key)
        if cached is None or cached[0] is not view:
            cached = (view, self.mode.plan(self, can_see, present, loaded))
            with self._lock:  # its own cache: many conversations' plans never evict decisions
                if len(self._plans) > _CACHE_LIMIT:
                    self._plans.clear()
                self._plans[key] = cached
        return cached[1]

    def meta_tools(self, mode: Mode | None = None) -> list[Tool]:
        """The meta-tools of ``mode`` (default: the planner's)."""
        return list((mode or self.mode).meta_tools(self.max_results))

    # -- what the modes ask -----------------------------------------------------------------

    def lookup(self, name: str, can_see: CanSee) -> Tool | None:
        """The catalog tool named exactly ``name``, when the session can see it."""
        tool = self.catalog.find(name)
        if tool is None or tool.name != name or not can_see(tool):
            return None
        return tool

    def visible(self, can_see: CanSee) -> dict[str, Tool]:
        """Every catalog tool the session can see, by name, in catalog order."""
        return {t.name: t for t in self.catalog if can_see(t)}

    def pinned_names(self) -> list[str]:
        """Names always listed (always-on, then ``defer_loading=False``), cached per catalog
        version; always-on names not in the catalog (yet) are left out."""
        version, names = self._pinned
        if version != self.catalog.version:
            version = self.catalog.version
            names = [n for n in self.always_on if n in self.catalog]
            names += [
                t.name for t in self.catalog if t.defer_loading is False and t.name not in names
            ]
            self._pinned = (version, names)
        return list(names)

    def caller_choice(self, tool: Tool) -> CallerChoice:
        """Who may call ``tool``: the model directly, a program, or both (the mode's
        :class:`~toolmgmt_core.Callers`, the tool's annotation, the mode's default)."""
        return self.mode.caller_choice(tool, self.pinned_names())

    def named_by(self, callers: Callers) -> list[str]:
        """The catalog tools ``callers`` names or that declare their callers (an annotation),
        in catalog order; cached per catalog version (a listing looks at these alone)."""
        key = (self.catalog.version, "callers", callers)
        cached = self._decisions.get(key)
        if cached is None:
            cached = [t.name for t in self.catalog if annotated(t) or callers.names(t)]
            self._remember(key, cached)
        return list(cached)

    def pinned_of(self, visible: dict[str, Tool]) -> list[str]:
        """The pinned names among ``visible``, in order: always-on, then ``defer_loading=False``."""
        pinned = [n for n in self.always_on if n in visible]
        pinned += [n for n, t in visible.items() if t.defer_loading is False and n not in pinned]
        return pinned

    def listing(self, visible: dict[str, Tool]) -> tuple[list[str], list[Tool]]:
        """The pinned names among ``visible`` (:meth:`pinned_of`), and the visible tools a full
        listing holds besides them (not deferred)."""
        pinned = self.pinned_of(visible)
        taken = set(pinned)
        rest = [t for n, t in visible.items() if n not in taken and t.defer_loading is not True]
        return pinned, rest

    def exceeds(self, tools: Sequence[Tool], threshold: int) -> bool:
        """Whether ``tools``' definitions exceed ``threshold`` tokens; cached per catalog
        version."""
        key = (self.catalog.version, tuple(t.name for t in tools), threshold)
        cached = self._decisions.get(key)
        if cached is None:
            cached = definition_tokens(tools, self.encoding) > threshold
            self._remember(key, cached)
        return bool(cached)

    def fitting(self, tools: Sequence[Tool], pinned: Sequence[str], budget: int) -> list[str]:
        """The names of ``tools`` listed up front under a definitions ``budget``."""
        key = (self.catalog.version, tuple(t.name for t in tools), "plan", budget)
        cached = self._decisions.get(key)
        if cached is None:
            sizes = [(t.name, definition_tokens([t], self.encoding)) for t in tools]
            cached = list(plan_definitions(sizes, budget, always_on=pinned).listed)
            self._remember(key, cached)
        return list(cached)

    def flat_tokens(self, view: object, visible: Callable[[], Sequence[Tool]]) -> int:
        """Tokens of ``visible()`` (every tool a policy ``view`` shows, as it shows them) sent
        flat, cached per catalog version and view: what each listing is measured against."""
        key = (self.catalog.version, "flat", id(view))
        cached = self._decisions.get(key)
        if cached is None or cached[0] is not view:
            cached = (view, definition_tokens(visible(), self.encoding))
            self._remember(key, cached)
        return int(cached[1])

    def stub(self, tool: Tool, descriptions: str = "summary") -> Tool:
        """``tool`` with its description only and an empty schema (lazy mode's listing);
        ``descriptions`` is ``"summary"`` (the first sentence) or ``"full"``."""
        key = (id(tool), descriptions)
        cached = self._stubs.get(key)
        if cached is not None and cached[0] is tool:  # the same (immutable) tool object
            return cached[1]
        description = tool.summary if descriptions == "summary" else tool.description
        stub = Tool(
            name=tool.name,
            description=description,
            parameters=dict(EMPTY_PARAMETERS),
            domain=tool.domain,
            group=tool.group,
            annotations=tool.annotations,
            metadata={"lazy_stub": True},
        )
        with self._lock:
            if len(self._stubs) > _STUB_LIMIT:
                self._stubs.clear()
            self._stubs[key] = (tool, stub)
        return stub

    def _remember(self, key: tuple[Any, ...], value: Any) -> None:
        with self._lock:
            if len(self._decisions) > _CACHE_LIMIT:
                self._decisions.clear()
            self._decisions[key] = value
