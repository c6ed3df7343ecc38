"""What the model sees at one step: the tool list, planned in one place.

A list is laid out in sections, always in this order::

    meta-tools (by mode)  ->  pinned (always-on)  ->  listed  ->  loaded tools, in load order

Loading only ever appends, so the serialised list before a load is a prefix of the list after it
and a provider's prompt cache keeps holding. :class:`LayoutPlanner` makes the plan from the
manager's configuration (mode, always-on tools, ``auto``'s threshold or definitions budget,
lazy listings), a session's view of the catalog (what it may see, as it sees it) and the names
the session loaded. It caches what only depends on the catalog version (pinned names, ``auto``'s
decision, lazy stubs), so many sessions plan cheaply; sessions never share plans.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolmgmt_core.calls.budget import plan_definitions
from toolmgmt_core.catalog.tool_catalog import ToolCatalog
from toolmgmt_core.model.tokens import definition_tokens
from toolmgmt_core.model.tool import EMPTY_PARAMETERS, Tool

__all__ = ["Layout", "LayoutPlanner", "Usage"]

_CACHE_LIMIT = 256
_STUB_LIMIT = 65536


@dataclass
class Layout:
    """The tool list of one step, by section."""

    mode: str
    """Effective mode: search, gateway, lazy, or flat (``auto`` below its threshold)."""
    meta: list[Tool] = field(default_factory=list)
    """The meta-tools of the mode (``tool_search``... ; flat mode has them only for deferred
    tools)."""
    pinned: list[Tool] = field(default_factory=list)
    """Always-on tools, then tools whose ``defer_loading`` is False."""
    listed: list[Tool] = field(default_factory=list)
    """Tools listed up front: every visible one (flat), lazy stubs (lazy), or those that fit
    ``auto``'s definitions budget."""
    appended: list[Tool] = field(default_factory=list)
    """Loaded tools, in load order (never in gateway mode)."""

    @property
    def tools(self) -> list[Tool]:
        """The list sent to the model."""
        return [*self.meta, *self.pinned, *self.listed, *self.appended]

    @property
    def names(self) -> set[str]:
        """The names of :attr:`tools`."""
        return {t.name for t in self.tools}


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

        planner = LayoutPlanner(catalog, mode="search", meta_tools={"search": [...]})
        layout = planner.plan(can_see, present, loaded=["crm_search_contacts"])
        layout.tools                                  # what to send to the model now

    Args:
        catalog: the tools.
        mode: ``search``, ``gateway``, ``lazy`` or ``auto``.
        meta_tools: the meta-tools of each concrete mode (``search``, ``gateway``, ``lazy``).
        always_on: names listed first, in this order, in every mode.
        auto_threshold: ``auto`` defers when the listable definitions exceed this many tokens.
        definitions_budget: ``auto`` lists the tools that fit this many tokens and defers only
            the rest (None: all-or-nothing at ``auto_threshold``).
        lazy_descriptions: lazy listings show each tool's ``summary`` or ``full`` description.
        encoding: the tokenizer for definition sizes.
    """

    def __init__(
        self,
        catalog: ToolCatalog,
        *,
        mode: str,
        meta_tools: Mapping[str, Sequence[Tool]],
        always_on: Sequence[str] = (),
        auto_threshold: int = 0,
        definitions_budget: int | None = None,
        lazy_descriptions: Literal["summary", "full"] = "summary",
        encoding: str,
    ) -> None:
        self.catalog = catalog
        self.mode = mode
        self.always_on = tuple(always_on)
        self.auto_threshold = auto_threshold
        self.definitions_budget = definitions_budget
        self.lazy_descriptions = lazy_descriptions
        self.encoding = encoding
        self._meta = {m: list(tools) for m, tools in meta_tools.items()}
        self.shadowed: frozenset[str] = frozenset(t.name for t in self.meta_tools())
        """Names of this mode's meta-tools: a catalog tool named like one is never listed."""
        self._stubs: dict[int, tuple[Tool, Tool]] = {}
        self._auto: dict[tuple[Any, ...], Any] = {}
        self._pinned: tuple[int, list[str]] = (-1, [])
        self._lock = threading.Lock()

    def meta_tools(self, mode: str | None = None) -> list[Tool]:
        """The meta-tools of ``mode`` (default: the planner's; ``auto`` gives search's)."""
        mode = mode or self.mode
        return list(self._meta.get("search" if mode == "auto" else mode, []))

    def pinned_names(self) -> list[str]:
        """Names always listed (always-on, then ``defer_loading=False``), cached per catalog
        version."""
        version, names = self._pinned
        if version != self.catalog.version:
            version = self.catalog.version
            names = [n for n in self.always_on if n in self.catalog]
            names += [
                t.name for t in self.catalog if t.defer_loading is False and t.name not in names
            ]
            self._pinned = (version, names)
        return list(names)

    def plan(
        self,
        can_see: Callable[[Tool], bool],
        present: Callable[[Tool], Tool],
        loaded: Sequence[str],
    ) -> Layout:
        """The tool list of one step.

        Args:
            can_see: whether the session may see a catalog tool (its policy view, meta-tool
                names already left out).
            present: a tool as the session shows it (description overrides applied).
            loaded: the names the session loaded, in load order.
        """
        mode = self.mode
        visible: dict[str, Tool]
        if mode in ("search", "gateway"):
            # Only the pinned and loaded tools matter: never scan a 100k-tool catalog per call.
            visible = {}
            for name in [*self.pinned_names(), *(loaded if mode == "search" else ())]:
                if name not in visible and (tool := self._lookup(name, can_see)) is not None:
                    visible[name] = tool
        else:
            visible = {t.name: t for t in self.catalog if can_see(t)}
        pinned_names = [n for n in self.always_on if n in visible]
        pinned_names += [
            n for n, t in visible.items() if t.defer_loading is False and n not in pinned_names
        ]
        pinned_set = set(pinned_names)
        rest = [
            t for n, t in visible.items() if n not in pinned_set and t.defer_loading is not True
        ]
        budgeted: list[Tool] | None = None
        if mode == "auto":
            candidates = [visible[n] for n in pinned_names] + rest
            if self.definitions_budget is not None:
                fits = set(self._auto_listed(candidates, pinned_names))
                budgeted = [t for t in rest if t.name in fits]
                mode = "flat" if len(budgeted) == len(rest) else "search"
            else:
                mode = "search" if self._auto_defers(candidates) else "flat"
        layout = Layout(mode=mode)
        layout.pinned = [present(visible[n]) for n in pinned_names]
        if mode == "search" and budgeted:
            layout.listed = [present(t) for t in budgeted]
        if mode == "flat":
            layout.listed = [present(t) for t in rest]
            if any(t.defer_loading is True for t in visible.values()):
                layout.meta = self.meta_tools("search")
        else:
            layout.meta = self.meta_tools(mode)
        if mode == "lazy":
            layout.listed = [self.stub(present(t)) for t in rest]
        if mode != "gateway":
            taken = pinned_set | {t.name for t in layout.listed}
            layout.appended = [
                present(visible[n]) for n in loaded if n in visible and n not in taken
            ]
        return layout

    def _lookup(self, name: str, can_see: Callable[[Tool], bool]) -> Tool | None:
        tool = self.catalog.find(name)
        if tool is None or tool.name != name or not can_see(tool):
            return None
        return tool

    def _remember(self, key: tuple[Any, ...], value: Any) -> None:
        with self._lock:
            if len(self._auto) > _CACHE_LIMIT:
                self._auto.clear()
            self._auto[key] = value

    def _auto_defers(self, candidates: Sequence[Tool]) -> bool:
        """Whether ``auto`` mode defers these (listable) tools; cached per catalog version."""
        key = (self.catalog.version, tuple(t.name for t in candidates))
        cached = self._auto.get(key)
        if cached is None:
            cached = definition_tokens(candidates, self.encoding) > self.auto_threshold
            self._remember(key, cached)
        return bool(cached)

    def _auto_listed(self, candidates: Sequence[Tool], pinned: Sequence[str]) -> list[str]:
        """The names ``auto`` mode lists up front under the definitions budget."""
        assert self.definitions_budget is not None
        key = (self.catalog.version, tuple(t.name for t in candidates), "plan")
        cached = self._auto.get(key)
        if cached is None:
            sizes = [(t.name, definition_tokens([t], self.encoding)) for t in candidates]
            cached = list(plan_definitions(sizes, self.definitions_budget, always_on=pinned).listed)
            self._remember(key, cached)
        return list(cached)

    def stub(self, tool: Tool) -> Tool:
        """``tool`` with its description only and an empty schema (lazy mode's listing)."""
        cached = self._stubs.get(id(tool))
        if cached is not None and cached[0] is tool:  # the same (immutable) tool object
            return cached[1]
        description = tool.summary if self.lazy_descriptions == "summary" else tool.description
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
            self._stubs[id(tool)] = (tool, stub)
        return stub
