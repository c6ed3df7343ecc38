"""``ToolSession``: one conversation's loaded tools, its tool list and its calls.

What the model sees now is decided here, in one place (:meth:`ToolSession._layout`):

    meta-tools (by mode)  ->  always-on tools  ->  listed tools  ->  loaded tools, in load order

Loading only ever appends, so the serialised list before a load is a prefix of the list after it
and a provider's prompt cache keeps holding. Every call goes through the same choke points:
:meth:`~ToolSession._resolve` (which name was meant), :meth:`~ToolSession._execute` (policy,
validation, approval, handler) and :meth:`~ToolSession._shape_result` (the result the model
gets); policy fills :meth:`~ToolSession._visible` and :meth:`~ToolSession._present`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolmgmt_core import meta_tools as meta
from toolmgmt_core.budget import ResultRecord, SessionBudget
from toolmgmt_core.catalog import SearchHit, ToolEntry, normalize_name
from toolmgmt_core.control import check_approval, reraise_control_flow
from toolmgmt_core.errors import (
    ConfigError,
    InvalidArgumentsError,
    SearchError,
    ToolCallError,
    ToolNotFoundError,
    ToolNotLoadedError,
    ToolNotPermittedError,
    ToolTimeoutError,
    ToolUnavailableError,
)
from toolmgmt_core.execution import (
    MAX_REPORTED_ERRORS,
    ToolResult,
    check_arguments,
    clip,
    dumps_compact,
    is_small,
    off_loop,
    run_handler,
    run_sync,
    to_jsonable,
)
from toolmgmt_core.policy import Explanation, PolicyView
from toolmgmt_core.profiles import Profile
from toolmgmt_core.tokens import count_tokens
from toolmgmt_core.tool import Tool
from toolmgmt_core.truncation import MIN_RESULT_TOKENS, TruncationResult, truncate_result

if TYPE_CHECKING:
    from toolmgmt_core.manager import ToolManager

__all__ = [
    "MAX_STATE_CHARS",
    "MAX_STATE_LOADED",
    "MAX_STATE_NAME_CHARS",
    "STATE_VERSION",
    "ToolSession",
    "Usage",
]

STATE_VERSION = 1
"""Version of the JSON state written by :meth:`ToolSession.to_json`."""

MAX_STATE_CHARS = 4_000_000
"""Longest session state :meth:`ToolSession.from_json` reads as JSON text."""

MAX_STATE_LOADED = 10_000
"""Most loaded tool names a restored session state may hold."""

MAX_STATE_NAME_CHARS = 1_000
"""Longest tool name a restored session state may hold."""

_STATE_KEYS = ("version", "mode", "loaded", "profile", "results")

MIN_SHAPE_SECONDS = 2.0
"""Seconds shaping a result may always take, even when the handler used the whole timeout."""

logger = logging.getLogger("toolmgmt")

_CALL_ID: ContextVar[str | None] = ContextVar("toolmgmt_call_id", default=None)
"""The provider's id of the call being run (set by ``call``; names results in the budget)."""


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


@dataclass
class _Layout:
    """The tool list of one step, by section."""

    mode: str
    """Effective mode: search, gateway, lazy, or flat (``auto`` below its threshold)."""
    meta: list[Tool] = field(default_factory=list)
    pinned: list[Tool] = field(default_factory=list)
    listed: list[Tool] = field(default_factory=list)
    appended: list[Tool] = field(default_factory=list)

    @property
    def tools(self) -> list[Tool]:
        return [*self.meta, *self.pinned, *self.listed, *self.appended]

    @property
    def names(self) -> set[str]:
        return {t.name for t in self.tools}


class ToolSession:
    """One conversation's discovery state over a :class:`~toolmgmt_core.manager.ToolManager`.

    Usage::

        session = manager.session()
        tools = session.tools()                      # send these to the model
        result = await session.call(name, arguments) # for each tool call it makes
        message = result.to_message()
        state = session.to_json()                    # keep it; manager.session(state) restores

    A session is cheap; make one per conversation. Its methods are safe to call from several
    threads or tasks (parallel tool calls), and sessions never share state.
    """

    def __init__(self, manager: ToolManager, *, loaded: Iterable[str] = ()) -> None:
        self.manager = manager
        self._loaded: list[str] = list(dict.fromkeys(loaded))
        self._lock = threading.RLock()
        self._results: SessionBudget = manager.result_budget.start()
        self._native_deferred: set[str] = set()
        self.goal: str | None = None
        """The user's goal when known; passed to the manager's summariser."""

    # -- policy choke points: every listing, search, schema and call asks these ------------

    _profile_view: PolicyView | None = None
    """The view after :meth:`set_profile`; None uses the manager's."""

    @property
    def policy(self) -> PolicyView:
        """The policy view in force: the manager's, or the one :meth:`set_profile` chose."""
        return self._profile_view or self.manager.policy

    def _visible(self, tool: Tool) -> bool:
        """Whether this session may see and run ``tool`` (the policy view)."""
        return self.policy.allows(tool)

    def _present(self, tool: Tool) -> Tool:
        """``tool`` as this session shows it (description overrides applied)."""
        return self.policy.present(tool)

    async def _approve(self, tool: Tool, arguments: Mapping[str, Any]) -> None:
        """Raise :class:`~toolmgmt_core.errors.ApprovalDeniedError` to refuse this call."""
        await check_approval(self.policy, self._present(tool), arguments)

    @property
    def profile(self) -> str:
        """The name of the profile in force."""
        return self.policy.profile.name

    def set_profile(self, profile: str | Profile) -> None:
        """Switch this session to another profile; the next :meth:`tools` and every later call
        use it (other sessions keep theirs). The choice is kept in :meth:`to_json` state.

        This is for the deployer's code, which may widen what the agent sees. Restoring state
        never widens: a profile named in state applies within the manager's configured one, so
        call ``set_profile`` again after :meth:`from_json` to restore a wider choice.

        Raises:
            ConfigError: an unknown profile name; the message lists the known ones.
        """
        view = self.manager.policy.with_profile(profile)
        with self._lock:
            self._profile_view = None if view is self.manager.policy else view

    def explain(self, name: str) -> Explanation:
        """Why ``name`` is visible to this session or not, and which policy step decided it."""
        meta_tool = self._meta_tool(name)
        if meta_tool is not None:
            return Explanation(
                meta_tool.name,
                True,
                None,
                f"{meta_tool.name!r} is a meta-tool; policies never remove meta-tools.",
            )
        return self.policy.explain(name)

    # -- what the model sees --------------------------------------------------------------

    def _can_see(self, tool: Tool) -> bool:
        """Visible, and not shadowed by a meta-tool of the same name."""
        return tool.name not in self.manager._shadowed and self._visible(tool)

    def _visible_raw(self) -> dict[str, Tool]:
        shadowed = self.manager._shadowed
        return {
            t.name: t for t in self.manager.catalog if t.name not in shadowed and self._visible(t)
        }

    def _lookup(self, name: str) -> Tool | None:
        """The catalog tool named exactly ``name``, when this session can see it."""
        tool = self.manager.catalog.find(name)
        if tool is None or tool.name != name or not self._can_see(tool):
            return None
        return tool

    def _layout(self) -> _Layout:
        manager = self.manager
        mode: str = manager.mode
        if mode in ("search", "gateway"):
            # Only the pinned and loaded tools matter: never scan a 100k-tool catalog per call.
            pinned_names = manager._pinned_names()
            visible = {n: t for n in pinned_names if (t := self._lookup(n)) is not None}
            if mode == "search":
                for name in self.loaded():
                    if name not in visible and (tool := self._lookup(name)) is not None:
                        visible[name] = tool
        else:
            visible = self._visible_raw()
        pinned_names = [n for n in manager.always_on if n in visible]
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
            if manager.definitions_budget is not None:
                fits = set(manager._auto_listed(candidates, pinned_names))
                budgeted = [t for t in rest if t.name in fits]
                mode = "flat" if len(budgeted) == len(rest) else "search"
            else:
                mode = "search" if manager._auto_defers(candidates) else "flat"
        layout = _Layout(mode=mode)
        layout.pinned = [self._present(visible[n]) for n in pinned_names]
        if mode == "search" and budgeted:
            layout.listed = [self._present(t) for t in budgeted]
        if mode == "flat":
            layout.listed = [self._present(t) for t in rest]
            if any(t.defer_loading is True for t in visible.values()):
                layout.meta = manager.meta_tools("search")
        else:
            layout.meta = manager.meta_tools(mode)
        if mode == "lazy":
            layout.listed = [manager._stub(self._present(t)) for t in rest]
        if mode != "gateway":
            taken = pinned_set | {t.name for t in layout.listed}
            layout.appended = [
                self._present(visible[n]) for n in self.loaded() if n in visible and n not in taken
            ]
        return layout

    @property
    def mode(self) -> str:
        """The effective mode now: search, gateway, lazy, or flat (``auto`` below threshold)."""
        return self._layout().mode

    @property
    def instructions(self) -> str:
        """A short system-prompt text teaching this mode's workflow (empty for flat)."""
        layout = self._layout()
        if layout.mode == "flat":
            return meta.INSTRUCTIONS["search"] if layout.meta else ""
        return meta.INSTRUCTIONS[layout.mode]

    def tools(self) -> list[Tool]:
        """The definitions to send to the model now: meta-tools, always-on, then loaded tools."""
        return self._layout().tools

    def visible_tools(self) -> list[Tool]:
        """Every catalog tool this session may see, fully defined (for native deferred loading)."""
        return [self._present(t) for t in self._visible_raw().values()]

    def loaded(self) -> list[str]:
        """Names loaded by searches and schema requests, in load order."""
        with self._lock:
            return list(self._loaded)

    def note_native_deferred(self, names: Iterable[str]) -> None:
        """Record tools sent with the provider's own deferred loading (``format_tools(...,
        native=True)`` calls this): the provider's tool search loads them, so a direct call of
        one runs without a ``tool_search`` first, and the tool list stays as it is."""
        with self._lock:
            self._native_deferred.update(names)

    def is_deferred(self, name: str) -> bool:
        """Whether ``name`` is a visible tool that is not in :meth:`tools` now."""
        return self._lookup(name) is not None and name not in self._layout().names

    def usage(self) -> Usage:
        """Definition tokens now against the whole visible catalog flat."""
        tools = self.tools()
        visible = self.visible_tools()
        return Usage(
            definition_tokens=self.manager.definition_tokens(tools),
            flat_tokens=self.manager.definition_tokens(visible),
            listed_tools=len(tools),
            visible_tools=len(visible),
            loaded_tools=len(self.loaded()),
        )

    # -- result budget ----------------------------------------------------------------------

    @property
    def result_budget(self) -> SessionBudget:
        """This session's account of result tokens (budgets, records, what was cleared)."""
        return self._results

    def clearable_results(self, *, keep_last: int = 1) -> list[ResultRecord]:
        """Earlier results that could leave the context to get back under the session result
        budget, largest first then oldest (every earlier one without a session budget)."""
        return self._results.clearable(keep_last=keep_last)

    def mark_results_cleared(self, call_ids: Iterable[str]) -> int:
        """Record that these results (by call id) left the context; returns tokens freed."""
        return self._results.mark_cleared(call_ids)

    # -- state ----------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The session's state as plain JSON (store it in a framework's state or checkpoint)."""
        state: dict[str, Any] = {
            "version": STATE_VERSION,
            "mode": self.manager.mode,
            "loaded": self.loaded(),
        }
        view = self._profile_view
        if view is not None:
            # The name only: restoring looks it up among the manager's profiles (an inline
            # profile in state could say anything, so it is never read back).
            state["profile"] = view.profile.name
        if self._results.records():
            state["results"] = self._results.to_json()
        return state

    @classmethod
    def from_json(cls, manager: ToolManager, data: Mapping[str, Any] | str) -> ToolSession:
        """A session restored from :meth:`to_json` output (a dict, or its JSON text).

        Loaded names no longer in the catalog are kept (they reappear if the tool comes back)
        but never listed. State is untrusted (it may come from an agent's input or a
        checkpoint store), so it can narrow what the manager's configuration allows and never
        widen it: a ``"profile"`` must be the exact name of one of the manager's profiles and
        is applied within the configured one (see :meth:`PolicyView.narrowed`); inline
        profiles, look-alike names and anything else are refused. Loads beyond the manager's
        ``max_active`` cap are dropped, as a search would have refused them.

        Raises:
            ConfigError: ``data`` is not a session state this manager accepts; the message says
                what is wrong.
        """
        if isinstance(data, str):
            if len(data) > MAX_STATE_CHARS:
                raise ConfigError(
                    f"Session state is {len(data):,} characters, over the limit of "
                    f"{MAX_STATE_CHARS:,}."
                )
            try:
                data = json.loads(data)
            except (ValueError, RecursionError) as exc:
                raise ConfigError(f"Session state is not valid JSON: {exc}.") from exc
        if not isinstance(data, Mapping):
            raise ConfigError(
                f"Session state must be a JSON object from ToolSession.to_json(), got "
                f"{type(data).__name__}."
            )
        unknown = sorted(str(k) for k in data if k not in _STATE_KEYS)
        if unknown:
            raise ConfigError(
                f"Session state has unknown key {clip(unknown[0])!r}; valid keys: "
                f"{', '.join(_STATE_KEYS)}."
            )
        version = data.get("version", STATE_VERSION)
        if version != STATE_VERSION:
            raise ConfigError(
                f"Session state version {clip(repr(version))} is not supported; expected "
                f"{STATE_VERSION}."
            )
        loaded = data.get("loaded", [])
        if not isinstance(loaded, list) or not all(
            isinstance(n, str) and len(n) <= MAX_STATE_NAME_CHARS for n in loaded
        ):
            raise ConfigError(
                f'Session state "loaded" must be a list of tool names (each at most '
                f"{MAX_STATE_NAME_CHARS} characters)."
            )
        if len(loaded) > MAX_STATE_LOADED:
            raise ConfigError(
                f'Session state "loaded" holds {len(loaded):,} names, over the limit of '
                f"{MAX_STATE_LOADED:,}."
            )
        session = cls(manager)
        profile = data.get("profile")
        if profile is not None:
            view = manager.policy.narrowed(profile)
            session._profile_view = None if view is manager.policy else view
        dropped = session._load(loaded)[1]
        if dropped:
            logger.warning(
                "toolmgmt: restored state loads %d tools over max_active=%s; dropped: %s",
                len(dropped),
                manager.max_active,
                ", ".join(clip(n) for n in dropped[:MAX_REPORTED_ERRORS]),
            )
        if data.get("results") is not None:
            session._results = manager.result_budget.start(data["results"])
        return session

    # -- loading --------------------------------------------------------------------------

    def _load(self, names: Sequence[str]) -> tuple[list[str], list[str]]:
        """Record ``names`` as loaded, appending to the list where the mode lists loads.

        Returns:
            (newly loaded, refused because the ``max_active`` cap is reached).
        """
        added: list[str] = []
        refused: list[str] = []
        cap = self.manager.max_active
        with self._lock:  # the layout and the loads under one lock: the cap holds on threads
            layout = self._layout()
            listed = layout.names
            appended = len(layout.appended)
            for name in names:
                if name in self._loaded:
                    continue
                if layout.mode in ("search", "flat") and name in listed:
                    continue  # already in the list (always-on)
                appends = layout.mode != "gateway" and name not in listed
                if appends and cap is not None and appended >= cap:
                    refused.append(name)
                    continue
                self._loaded.append(name)
                added.append(name)
                appended += appends
        return added, refused

    def _cap_message(self, refused: Sequence[str]) -> str:
        return (
            f"The active tool limit ({self.manager.max_active}) is reached, so "
            f"{meta.names_hint(refused)} could not be added. Use the tools already in your list."
        )

    # -- calls ----------------------------------------------------------------------------

    async def call(
        self, name: str, arguments: Any = None, *, call_id: str | None = None
    ) -> ToolResult:
        """Run a meta-tool or a tool as the model asked; never raises for the model's mistakes.

        Args:
            name: the tool name the model used (forgiving case, look-alikes and provider forms).
            arguments: the arguments object (a dict, a JSON string of one, or None).
            call_id: the provider's tool-call id, used to name the result in
                :meth:`clearable_results` (default ``call_<n>``).

        Returns:
            The result; on failure ``is_error`` is set and ``error.kind`` says whether it was the
            gateway ("gateway") or the tool ("tool").
        """
        _CALL_ID.set(call_id)
        try:
            meta_tool = self._meta_tool(name)
            if meta_tool is not None:
                return await self._call_meta(meta_tool, arguments)
            tool = self._resolve(name)
            self._ensure_listed(tool)
            return await self._execute(tool, arguments)
        except ToolCallError as exc:
            return self._error_result(exc.tool_name or str(name), exc)
        except Exception as exc:  # a bug must not crash the agent's loop; log it loudly
            reraise_control_flow(exc)
            logger.exception("toolmgmt: internal error while calling %r", name)
            error = ToolUnavailableError(
                f"Tool {_quoted(name)} could not be run because of an internal error "
                f"({type(exc).__name__}); try another tool.",
                tool_name=str(name),
            )
            return self._error_result(str(name), error)

    def call_sync(
        self, name: str, arguments: Any = None, *, call_id: str | None = None
    ) -> ToolResult:
        """:meth:`call` for sync code (also works when an event loop is already running)."""
        return run_sync(self.call(name, arguments, call_id=call_id))

    def _meta_tool(self, name: Any) -> Tool | None:
        if not isinstance(name, str):
            return None
        folded = normalize_name(name)
        metas = self._layout().meta if self.manager.mode == "auto" else self.manager.meta_tools()
        for tool in metas:
            if tool.name == name or tool.name == folded:
                return tool
        return None

    def _find_hint(self) -> str:
        mode = self.manager.mode
        if mode == "auto":  # flat below its threshold: tool_search is listed only if needed
            mode = "search" if self._layout().meta else "lazy"
        return {
            "search": " Use tool_search to find tools.",
            "gateway": " Use discover_tools to find tools.",
            "lazy": " Pick a name from your tool list.",
        }[mode]

    def _resolve(self, name: str) -> Tool:
        """The visible tool ``name`` stands for: exact, folded, then provider-shortened.

        Raises:
            ToolNotPermittedError: ``name`` (exactly or folded) is a catalog tool the policy
                hides here; suggestions are visible tools only.
            ToolNotFoundError: with the closest visible names (hidden tools are never named).
        """
        catalog = self.manager.catalog
        if not isinstance(name, str) or not name.strip():
            raise ToolNotFoundError(
                f"A tool name is required, got {_quoted(name)}.{self._find_hint()}",
                tool_name=str(name),
            )
        tool = catalog.find(name)
        if tool is not None and self._can_see(tool):
            return tool
        if tool is not None:
            # The model named a real tool it may not use: say so, so it stops looking for it;
            # only visible tools are suggested, and no hidden tool it did not name is revealed.
            suggestions = catalog.suggest(name, where=self._can_see)
            closest = (
                f" Allowed tools with close names: {', '.join(suggestions)}." if suggestions else ""
            )
            raise ToolNotPermittedError(
                f"Tool {_quoted(name)} is not permitted here; use another tool.{closest}"
                f"{self._find_hint()}",
                tool_name=tool.name,
                suggestions=suggestions,
            )
        try:
            from toolmgmt_core.providers.names import resolve_provider_name
        except ImportError:  # providers land separately; resolution still works without them
            resolve_provider_name = None  # type: ignore[assignment]
        if resolve_provider_name is not None:
            candidates = [t.name for t in catalog if self._can_see(t)]
            real = resolve_provider_name(name, candidates)
            if real is not None and real in catalog:
                return catalog.get(real)
        suggestions = catalog.suggest(name, where=self._can_see)
        closest = f" Closest: {', '.join(suggestions)}." if suggestions else ""
        raise ToolNotFoundError(
            f"Unknown tool {_quoted(name)}.{closest}{self._find_hint()}",
            tool_name=name,
            suggestions=suggestions,
        )

    def _ensure_listed(self, tool: Tool) -> None:
        """Apply ``call_unloaded`` to a direct call of a tool not in the list now."""
        if self.manager.mode == "lazy" and tool.defer_loading is not True:
            return  # every such visible tool is listed (by name) in lazy mode
        layout = self._layout()
        if tool.name in layout.names:
            return
        name = tool.name
        if name in self._native_deferred:
            return  # the provider's tool search loaded it on its side
        if self.manager.call_unloaded == "load":
            if layout.mode == "gateway":
                return  # runs as through execute_tool; the list stays the three meta-tools
            _, refused = self._load([name])
            if refused:
                raise ToolNotLoadedError(self._cap_message(refused), tool_name=name)
            return
        if layout.mode == "gateway":
            message = (
                f"Tool {name!r} cannot be called directly: use execute_tool(tool_name={name!r}, "
                "arguments={...}); get_tool_schema gives its parameters."
            )
        elif (cap := self.manager.max_active) is not None and len(layout.appended) >= cap:
            message = self._cap_message([name])  # searching again would not help
        elif layout.mode == "lazy":
            message = (
                f"Tool {name!r} is not loaded yet: call load_tool_schema(tool_names=[{name!r}]) "
                "first, then call it."
            )
        else:
            message = (
                f"Tool {name!r} is not loaded yet: call tool_search(query={name!r}) first; it "
                "is then added to your tools."
            )
        raise ToolNotLoadedError(message, tool_name=name)

    def _schema_hint(self, tool: Tool, mode: str) -> str:
        if mode == "gateway":
            return f" Call get_tool_schema(tool_name={tool.name!r}) for its parameters."
        if mode == "lazy" and tool.name not in self.manager._pinned_names():
            return f" Call load_tool_schema(tool_names=[{tool.name!r}]) for its parameters."
        return ""

    async def _execute(self, tool: Tool, arguments: Any) -> ToolResult:
        """Policy check, validation, approval, handler and result shaping for one call.

        The tool's timeout covers validation, the handler and shaping the result (not the time
        an approver takes). Once the handler has run, nothing turns the call into a failure:
        a result that cannot be shaped is reported done, with a short note in its place.
        """
        timeout = tool.timeout if tool.timeout is not None else self.manager.default_timeout
        clock = _Clock(timeout)
        try:
            if not self._can_see(tool):
                self._resolve(tool.name)  # raises what a lookup of the name would
            mode = self.manager.mode if self.manager.mode != "auto" else "search"
            hint = self._schema_hint(tool, mode)
            checked = await check_arguments(tool, arguments, hint=hint, time_limit=clock.left())
            with clock.paused():
                await self._approve(tool, checked)
            left = clock.left()
            if left is not None and left <= 0:
                raise ToolTimeoutError(
                    f"Tool {tool.name!r} did not start within {timeout:g}s (checking its "
                    "arguments took the time) and did not run. Try simpler arguments.",
                    tool_name=tool.name,
                )
            value = await run_handler(tool, checked, left, stated=timeout)
        except ToolCallError as exc:
            return self._error_result(tool.name, exc)
        return await self._shape_result(tool, value, clock.left())

    async def _shape_result(self, tool: Tool, value: Any, seconds: float | None) -> ToolResult:
        """The model-facing result of a call that ran, cut to its budget and accounted.

        A large result is shaped off the event loop; shaping gets what is left of the call's
        timeout, and at least :data:`MIN_SHAPE_SECONDS`. A result that cannot be shaped in
        that time, or at all (nested too deeply, a value that fails to convert), is replaced
        by a note saying the call succeeded: the handler ran and its effect happened, so the
        model must not be invited to run it again.
        """
        call_id = _CALL_ID.get()
        limit = None if seconds is None else max(seconds, MIN_SHAPE_SECONDS)
        small = is_small(value)
        try:
            if self.manager.result_budget.summarizer is not None:
                jsonable = (
                    to_jsonable(value) if small else await off_loop(lambda: to_jsonable(value))
                )
                # Awaited here: the sync shape would block the loop on the summariser.
                shaped = await asyncio.wait_for(
                    self._results.ashape(jsonable, tool, goal=self.goal, call_id=call_id), limit
                )
            elif small:
                shaped = self._results.shape(
                    to_jsonable(value), tool, goal=self.goal, call_id=call_id
                )
            else:

                def shape() -> TruncationResult:
                    jsonable = to_jsonable(value)
                    return self._results.shape(jsonable, tool, goal=self.goal, call_id=call_id)

                # Out of time, the worker may still finish and record its result too: the
                # session's account then counts the call twice, never not at all.
                shaped = await asyncio.wait_for(off_loop(shape), limit)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # RecursionError, a failing __str__, a timeout...
            reraise_control_flow(exc)  # a summariser's framework signal passes
            return self._unshown_result(tool, exc)
        return self._budgeted_result(tool, shaped)

    def _unshown_result(self, tool: Tool, exc: Exception) -> ToolResult:
        if isinstance(exc, asyncio.TimeoutError | TimeoutError):
            reason = "preparing it took too long"
        elif isinstance(exc, RecursionError):
            reason = "it is nested too deeply"
        else:
            reason = f"it could not be converted ({type(exc).__name__})"
        logger.warning("toolmgmt: %s ran but its result could not be shown: %r", tool.name, exc)
        value = {
            "status": "done",
            "note": f"{tool.name} ran and finished, but its result cannot be shown ({reason}). "
            "The call succeeded: do not call it again to see the result.",
        }
        content = dumps_compact(value)
        tokens = count_tokens(content, self.manager.encoding)
        self._results.record(tokens, tool_name=tool.name, call_id=_CALL_ID.get())
        return ToolResult(
            content=content,
            value=value,
            tool_name=tool.name,
            tokens=tokens,
            original_tokens=tokens,
            note=f"ResultNotShown: {type(exc).__name__}",
        )

    def _budgeted_result(self, tool: Tool, shaped: TruncationResult) -> ToolResult:
        if shaped.note:
            logger.warning("toolmgmt: %s: %s", tool.name, shaped.note)
        return ToolResult(
            content=shaped.text,
            value=shaped.value,
            tool_name=tool.name,
            truncated=shaped.truncated,
            tokens=shaped.tokens,
            original_tokens=shaped.original_tokens,
            note=shaped.note,
        )

    def _meta_result(self, name: str, value: Any) -> ToolResult:
        content = dumps_compact(value)
        tokens = count_tokens(content, self.manager.encoding)
        return ToolResult(
            content=content, value=value, tool_name=name, tokens=tokens, original_tokens=tokens
        )

    def _error_result(self, name: str, error: ToolCallError) -> ToolResult:
        value = error.to_dict()
        content = dumps_compact(value)
        tokens = count_tokens(content, self.manager.encoding)
        tool = self._lookup(name)
        limit = self._results.budget.per_result(tool)
        if tokens > limit:  # a handler's message (a stack dump, an error page) is a result too
            wrapper = count_tokens(dumps_compact({**value, "message": ""}), self.manager.encoding)
            room = max(limit - wrapper, MIN_RESULT_TOKENS)
            value["message"] = truncate_result(
                error.message, room, "smart", encoding=self.manager.encoding
            ).value
            content = dumps_compact(value)
            tokens = count_tokens(content, self.manager.encoding)
        return ToolResult(
            content=content,
            value=value,
            is_error=True,
            error=error,
            tool_name=name,
            tokens=tokens,
            original_tokens=tokens,
        )

    # -- meta-tools -----------------------------------------------------------------------

    async def _call_meta(self, tool: Tool, arguments: Any) -> ToolResult:
        try:
            arguments = _forgive_meta_arguments(tool.name, arguments)
            args = await check_arguments(tool, arguments)
            if tool.name == meta.EXECUTE_TOOL:
                return await self._execute_tool(args)
            handlers: dict[str, Callable[[dict[str, Any]], Any]] = {
                meta.TOOL_SEARCH: self._tool_search,
                meta.DISCOVER_TOOLS: self._discover_tools,
                meta.GET_TOOL_SCHEMA: self._get_tool_schema,
                meta.LOAD_TOOL_SCHEMA: self._load_tool_schema,
            }
            return self._meta_result(tool.name, handlers[tool.name](args))
        except ToolCallError as exc:
            return self._error_result(tool.name, exc)

    def _summary(self, name: str) -> str:
        return self._present(self.manager.catalog.get(name)).summary

    def _search(
        self,
        queries: list[str],
        method: str,
        *,
        domain: str | None = None,
        group: str | None = None,
        caller: str,
    ) -> list[SearchHit]:
        catalog = self.manager.catalog
        limit = self.manager.max_results * len(queries)
        try:
            if method == "regex":
                hits: dict[str, SearchHit] = {}
                for pattern in queries:
                    for hit in catalog.search_regex(
                        pattern,
                        self.manager.max_results,
                        domain=domain,
                        group=group,
                        where=self._can_see,
                    ):
                        hits.setdefault(hit.name, hit)
                found = list(hits.values())
            else:
                found = catalog.search(
                    queries, limit, domain=domain, group=group, where=self._can_see
                )
        except SearchError as exc:
            raise InvalidArgumentsError(str(exc), tool_name=caller) from exc
        return [h for h in found if h.score >= self.manager.min_score]

    def _domains_note(self) -> str:
        domains = [d.name for d in self.manager.catalog.domains(where=self._can_see)]
        return f" Domains: {meta.names_hint(domains)}." if domains else ""

    def _tool_search(self, args: dict[str, Any]) -> dict[str, Any]:
        queries = [q for q in [args.get("query"), *(args.get("queries") or [])] if q]
        queries = [q for q in queries if isinstance(q, str) and q.strip()]
        if not queries:
            raise InvalidArgumentsError(
                'tool_search needs "query": a few words describing the tool you need (or '
                '"queries": a list of them).',
                tool_name=meta.TOOL_SEARCH,
            )
        if len(queries) > meta.MAX_QUERIES:
            raise InvalidArgumentsError(
                f"tool_search takes at most {meta.MAX_QUERIES} queries at once, got "
                f"{len(queries)}: search the needs of this step first.",
                tool_name=meta.TOOL_SEARCH,
            )
        hits = self._search(queries, args.get("method") or "keyword", caller=meta.TOOL_SEARCH)
        if not hits:
            return {
                "found": {},
                "note": f"No tool matched {_quoted(' / '.join(queries))}. Try other words or "
                f'method "regex".{self._domains_note()}',
            }
        added, refused = self._load([h.name for h in hits])
        response: dict[str, Any] = {"found": {h.name: self._summary(h.name) for h in hits}}
        if added:
            response["added"] = added
        if refused:
            response["not_added"] = refused
            response["note"] = self._cap_message(refused)
        else:
            response["note"] = "These tools are in your tool list now; call them directly."
        return response

    def _scope(self, domain: str | None, group: str | None) -> tuple[str | None, str | None]:
        """``domain``/``group`` checked against what this session sees (forgiving case)."""
        summaries = self.manager.catalog.domains(where=self._can_see)
        if domain is not None:
            by_fold = {normalize_name(d.name): d.name for d in summaries}
            real = domain if domain in by_fold.values() else by_fold.get(normalize_name(domain))
            if real is None:
                valid = meta.names_hint([d.name for d in summaries], 30) or "(none)"
                raise InvalidArgumentsError(
                    f"Unknown domain {_quoted(domain)}. Valid domains: {valid}.",
                    tool_name=meta.DISCOVER_TOOLS,
                )
            domain = real
        if group is not None:
            groups = sorted(
                {g for d in summaries if domain is None or d.name == domain for g in d.groups}
            )
            by_fold = {normalize_name(g): g for g in groups}
            real = group if group in groups else by_fold.get(normalize_name(group))
            if real is None:
                where = f" in domain {domain!r}" if domain else ""
                raise InvalidArgumentsError(
                    f"Unknown group {_quoted(group)}{where}. Valid groups: "
                    f"{meta.names_hint(groups, 30) or '(none)'}.",
                    tool_name=meta.DISCOVER_TOOLS,
                )
            group = real
        return domain, group

    def _discover_tools(self, args: dict[str, Any]) -> dict[str, Any]:
        catalog = self.manager.catalog
        domain = args.get("domain") or None
        group = args.get("group") or None
        query = args.get("query") or None
        domain, group = self._scope(domain, group)
        if query:
            hits = self._search(
                [query], "keyword", domain=domain, group=group, caller=meta.DISCOVER_TOOLS
            )
            response: dict[str, Any] = {"tools": {h.name: self._summary(h.name) for h in hits}}
            if not hits:
                response["note"] = (
                    "Nothing matched; try other words, or discover_tools() to browse domains."
                )
            return response
        if domain is None and group is None:
            return {
                "domains": {
                    d.name: {"tools": d.tool_count, "groups": list(d.groups)}
                    for d in catalog.domains(where=self._can_see)
                }
            }
        listing = catalog.browse(domain, group, where=self._can_see)
        entries = [e for e in listing if isinstance(e, ToolEntry)]
        limit = self.manager.browse_limit
        head: dict[str, Any] = {}
        if domain is not None:
            head["domain"] = domain
        if group is not None:
            head["group"] = group
        if group is None and len(entries) > limit:
            counts: dict[str, int] = {}
            for entry in entries:
                counts[entry.group] = counts.get(entry.group, 0) + 1
            return {
                **head,
                "groups": counts,
                "note": f"{len(entries)} tools: pass a group, or a query, to list them.",
            }
        if group is None:
            grouped: dict[str, dict[str, str]] = {}
            for entry in entries:
                grouped.setdefault(entry.group, {})[entry.name] = self._summary(entry.name)
            return {**head, "groups": grouped}
        response = {**head, "tools": {e.name: self._summary(e.name) for e in entries[:limit]}}
        if len(entries) > limit:
            response["note"] = f"First {limit} of {len(entries)}; pass a query to narrow."
        return response

    def _schemas(self, names: Sequence[str], caller: str) -> dict[str, Any]:
        entries: list[dict[str, Any]] = []
        errors: dict[str, str] = {}
        found: list[str] = []
        suggestions: list[str] = []
        unknown = 0
        all_hidden = True
        for name in dict.fromkeys(names):
            try:
                tool = self._resolve(name)
            except ToolNotFoundError as exc:
                all_hidden = all_hidden and isinstance(exc, ToolNotPermittedError)
                unknown += 1
                if unknown <= MAX_REPORTED_ERRORS:  # each one echoes what the model sent
                    errors[clip(str(name))] = exc.message
                    suggestions.extend(exc.suggestions)
                continue
            if tool.name not in found:
                found.append(tool.name)
                entries.append(meta.schema_entry(self._present(tool)))
        if unknown > MAX_REPORTED_ERRORS:
            errors["…"] = f"{unknown - MAX_REPORTED_ERRORS} more unknown names left out."
        if not entries:
            refusal = ToolNotPermittedError if all_hidden else ToolNotFoundError
            raise refusal(" ".join(errors.values()), suggestions=suggestions)
        _, refused = self._load(found)
        response: dict[str, Any] = {"tools": entries}
        if errors:
            response["errors"] = errors
        if refused:
            response["note"] = self._cap_message(refused)
        return response

    def _get_tool_schema(self, args: dict[str, Any]) -> dict[str, Any]:
        names = [n for n in [args.get("tool_name"), *(args.get("tool_names") or [])] if n]
        if not names:
            raise InvalidArgumentsError(
                'get_tool_schema needs "tool_name" (or "tool_names", a list); find names with '
                "discover_tools.",
                tool_name=meta.GET_TOOL_SCHEMA,
            )
        response = self._schemas(names, meta.GET_TOOL_SCHEMA)
        if len(response["tools"]) == 1 and len(response) == 1:
            return dict(response["tools"][0])
        return response

    def _load_tool_schema(self, args: dict[str, Any]) -> dict[str, Any]:
        return self._schemas(args["tool_names"], meta.LOAD_TOOL_SCHEMA)

    async def _execute_tool(self, args: dict[str, Any]) -> ToolResult:
        name = args["tool_name"]
        arguments = args.get("arguments")
        if arguments is None:
            # A common slip: the tool's arguments beside tool_name instead of inside arguments.
            arguments = {k: v for k, v in args.items() if k != "tool_name"}
        inner = self._meta_tool(name)
        if inner is not None:
            if inner.name == meta.EXECUTE_TOOL:
                raise InvalidArgumentsError(
                    "execute_tool runs a tool found with discover_tools; give that tool's name.",
                    tool_name=meta.EXECUTE_TOOL,
                )
            return await self._call_meta(inner, arguments)
        return await self._execute(self._resolve(name), arguments)


class _Clock:
    """What is left of one call's timeout, not counting time spent waiting for approval."""

    def __init__(self, timeout: float | None) -> None:
        self.deadline = None if timeout is None else time.monotonic() + timeout

    def left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.monotonic()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        start = time.monotonic()
        try:
            yield
        finally:
            if self.deadline is not None:
                self.deadline += time.monotonic() - start


def _quoted(value: Any) -> str:
    """``repr(value)`` for an error message, clipped: a model's input is echoed, not resent."""
    return clip(repr(value))


def _forgive_meta_arguments(name: str, arguments: Any) -> Any:
    """Fix the slips models make with meta-tool arguments before validating them."""
    if isinstance(arguments, str):
        text = arguments.strip()
        try:
            arguments = json.loads(text) if text else {}
        except ValueError:
            return arguments  # validation reports it
    if not isinstance(arguments, Mapping):
        return arguments
    arguments = dict(arguments)
    for key in ("tool_names", "queries"):
        value = arguments.get(key)
        if isinstance(value, str):
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = None
            if not isinstance(parsed, list):
                arguments[key] = [value]  # a single name where a list is wanted
    if name == meta.LOAD_TOOL_SCHEMA and arguments.get("tool_names") == []:
        raise InvalidArgumentsError(
            'load_tool_schema got an empty "tool_names": name the tools whose parameters you '
            'need, for example {"tool_names": ["first_tool", "second_tool"]}.',
            tool_name=name,
        )
    if name == meta.GET_TOOL_SCHEMA and isinstance(arguments.get("tool_name"), list):
        names = arguments.pop("tool_name")  # several names under the singular key
        arguments["tool_names"] = [*names, *(arguments.get("tool_names") or [])]
    if name in (meta.EXECUTE_TOOL, meta.GET_TOOL_SCHEMA) and "tool_name" not in arguments:
        if isinstance(arguments.get("name"), str) and "tool_names" not in arguments:
            arguments["tool_name"] = arguments.pop("name")
    if name == meta.LOAD_TOOL_SCHEMA and "tool_names" not in arguments:
        for alias in ("tool_name", "names", "name"):
            if isinstance(arguments.get(alias), str):
                arguments["tool_names"] = [arguments.pop(alias)]
                break
    return arguments
