"""``ToolSession``: one conversation's loaded tools, its tool list and its calls.

What the model sees now is planned in one place, the manager's
:class:`~toolmgmt_core.session.layout.LayoutPlanner`, from this session's policy view and loads:

    meta-tools (by mode)  ->  always-on tools  ->  listed tools  ->  loaded tools, in load order

Loading only ever appends, so the serialised list before a load is a prefix of the list after it
and a provider's prompt cache keeps holding. Every call goes through the same choke points:
:meth:`~ToolSession._resolve` (which name was meant), :meth:`~ToolSession._execute` (policy,
validation, approval, handler) and :func:`~toolmgmt_core.calls.results.shape_result` (the result the
model gets); policy fills :meth:`~ToolSession._visible` and :meth:`~ToolSession._present`. The
meta-tools' answers are :mod:`toolmgmt_core.session.meta_calls`', which name was meant
:mod:`toolmgmt_core.calls.resolution`'s, and the state (JSON, a session store)
:mod:`toolmgmt_core.session.conversation`'s.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from contextvars import ContextVar
from typing import Any

import toolmgmt_core.session.meta_tools as meta
from toolmgmt_core.calls.budget import ResultRecord, SessionBudget
from toolmgmt_core.calls.control import reraise_control_flow
from toolmgmt_core.calls.execution import CallClock, ToolResult, run_handler
from toolmgmt_core.calls.resolution import (
    cap_message,
    find_hint,
    quoted,
    resolve_tool,
    unloaded_message,
)
from toolmgmt_core.calls.results import edited_result, error_result, shape_result
from toolmgmt_core.calls.sync import run_sync
from toolmgmt_core.calls.validation import check_arguments
from toolmgmt_core.catalog.tool_catalog import normalize_name
from toolmgmt_core.model.errors import (
    ToolCallError,
    ToolNotLoadedError,
    ToolTimeoutError,
    ToolUnavailableError,
)
from toolmgmt_core.model.tool import Tool
from toolmgmt_core.policy.profiles import Profile
from toolmgmt_core.policy.steps import ApprovalEdit, ApprovalResponse
from toolmgmt_core.policy.view import Explanation, PolicyView, check_approval
from toolmgmt_core.session.conversation import StoredConversation
from toolmgmt_core.session.layout import Layout, Usage
from toolmgmt_core.session.meta_calls import MetaToolCalls
from toolmgmt_core.session.settings import SessionSettings
from toolmgmt_core.session.state import SessionState
from toolmgmt_core.stores.base import StoredSession

__all__ = ["ToolSession", "Usage"]

logger = logging.getLogger("toolmgmt")

_CALL_ID: ContextVar[str | None] = ContextVar("toolmgmt_call_id", default=None)
"""The provider's id of the call being run (set by ``call``; names results in the budget)."""


class ToolSession(StoredConversation):
    """One conversation's discovery state over a :class:`~toolmgmt_core.ToolManager`.

    Usage::

        session = manager.session()
        tools = session.tools()                      # send these to the model
        result = await session.call(name, arguments) # for each tool call it makes
        message = result.to_message()
        state = session.to_json()                    # keep it; manager.session(state) restores

    A session is cheap; make one per conversation. Its methods are safe to call from several
    threads or tasks (parallel tool calls), and sessions never share state.
    """

    manager: SessionSettings
    """The manager this session belongs to (its configuration)."""

    def __init__(self, manager: SessionSettings, *, loaded: Iterable[str] = ()) -> None:
        self.manager = manager
        self.session_id: str | None = None
        """The conversation's id in the manager's session store (None: this object only)."""
        self._stored: StoredSession | None = None
        """The conversation as last loaded from or saved to the store (None: not there yet)."""
        self._saved: SessionState | None = None
        self._loaded: list[str] = list(dict.fromkeys(loaded))
        self._lock = threading.RLock()
        self._results: SessionBudget = manager.result_budget.start()
        self._native_deferred: set[str] = set()
        self._meta_calls = MetaToolCalls(self)
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

    async def _approve(
        self, tool: Tool, arguments: Mapping[str, Any]
    ) -> ApprovalEdit | ApprovalResponse | None:
        """Raise :class:`~toolmgmt_core.ApprovalDeniedError` to refuse this call; return
        the approver's edit or answer, if it gave one."""
        return await check_approval(self.policy, self._present(tool), arguments)

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
        self.save_sync()

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
        return tool.name not in self.manager.planner.shadowed and self._visible(tool)

    def _visible_raw(self) -> dict[str, Tool]:
        return {t.name: t for t in self.manager.catalog if self._can_see(t)}

    def _lookup(self, name: str) -> Tool | None:
        """The catalog tool named exactly ``name``, when this session can see it."""
        tool = self.manager.catalog.find(name)
        if tool is None or tool.name != name or not self._can_see(tool):
            return None
        return tool

    def _layout(self) -> Layout:
        return self.manager.planner.plan(self._can_see, self._present, self.loaded())

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
        freed = self._results.mark_cleared(call_ids)
        self.save_sync()
        return freed

    # -- loading --------------------------------------------------------------------------

    def load(self, names: Iterable[str]) -> tuple[list[str], list[str]]:
        """Load tools into this session's list as a search would: appended in order, once each,
        within ``max_active``. Names this session cannot see are left out.

        Returns:
            (newly loaded, refused because the ``max_active`` cap is reached).
        """
        done = self._load([n for n in dict.fromkeys(names) if self._lookup(n) is not None])
        self.save_sync()
        return done

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
        return cap_message(self.manager.max_active, refused)

    # -- calls ----------------------------------------------------------------------------

    async def call(
        self, name: str, arguments: Any = None, *, call_id: str | None = None
    ) -> ToolResult:
        """Run a meta-tool or a tool as the model asked; never raises for the model's mistakes.

        Args:
            name: the tool name the model used (forgiving case, look-alikes and provider forms).
            arguments: the arguments object (a dict, a JSON string of one, or None).
            call_id: the provider's tool-call id, used to name the result in
                :meth:`clearable_results` (default ``call_<a unique id>``).

        Returns:
            The result; on failure ``is_error`` is set and ``error.kind`` says whether it was the
            gateway ("gateway") or the tool ("tool"). With a session store that is down or
            slower than its deadlines, a call that ran still returns its result, with
            ``saved`` False and a ``NotSaved`` note (the record is saved with the next change).
        """
        result = await self._call(name, arguments, call_id)
        unsaved = await self.save()
        if unsaved is not None:  # the call ran: its result stands, and says so
            note = f"NotSaved: the call's record could not be saved ({unsaved})"
            result.saved = False
            result.note = f"{result.note}; {note}" if result.note else note
        return result

    async def _call(self, name: str, arguments: Any, call_id: str | None) -> ToolResult:
        _CALL_ID.set(call_id)
        try:
            meta_tool = self._meta_tool(name)
            if meta_tool is not None:
                return await self._meta_calls.call(meta_tool, arguments)
            tool = self._resolve(name)
            self._ensure_listed(tool)
            return await self._execute(tool, arguments)
        except ToolCallError as exc:
            return self._error_result(exc.tool_name or str(name), exc)
        except Exception as exc:  # a bug must not crash the agent's loop; log it loudly
            reraise_control_flow(exc)
            logger.exception("toolmgmt: internal error while calling %r", name)
            error = ToolUnavailableError(
                f"Tool {quoted(name)} could not be run because of an internal error "
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
        return find_hint(mode)

    def _resolve(self, name: str) -> Tool:
        """The visible tool ``name`` stands for
        (:func:`~toolmgmt_core.calls.resolution.resolve_tool`).

        Raises:
            ToolNotPermittedError: a catalog tool the policy hides here.
            ToolNotFoundError: with the closest visible names.
        """
        return resolve_tool(self.manager.catalog, name, self._can_see, self._find_hint())

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
        cap = self.manager.max_active
        if layout.mode != "gateway" and cap is not None and len(layout.appended) >= cap:
            message = self._cap_message([name])  # searching again would not help
        else:
            message = unloaded_message(name, layout.mode)
        raise ToolNotLoadedError(message, tool_name=name)

    def _schema_hint(self, tool: Tool, mode: str) -> str:
        if mode == "gateway":
            return f" Call get_tool_schema(tool_name={tool.name!r}) for its parameters."
        if mode == "lazy" and tool.name not in self.manager.planner.pinned_names():
            return f" Call load_tool_schema(tool_names=[{tool.name!r}]) for its parameters."
        return ""

    async def _execute(self, tool: Tool, arguments: Any) -> ToolResult:
        """Policy check, validation, approval, handler and result shaping for one call.

        The tool's timeout covers validation, the handler and shaping the result (not the time
        an approver takes). Once the handler has run, nothing turns the call into a failure:
        a result that cannot be shaped is reported done, with a short note in its place.
        """
        timeout = tool.timeout if tool.timeout is not None else self.manager.default_timeout
        clock = CallClock(timeout)
        edited: ApprovalEdit | None = None
        try:
            if not self._can_see(tool):
                self._resolve(tool.name)  # raises what a lookup of the name would
            mode = self.manager.mode if self.manager.mode != "auto" else "search"
            hint = self._schema_hint(tool, mode)
            checked = await check_arguments(tool, arguments, hint=hint, time_limit=clock.left())
            with clock.paused():
                verdict = await self._approve(tool, checked)
            if verdict is not None and not self._can_see(tool):
                self._resolve(tool.name)  # the policy may have changed while a human looked
            if isinstance(verdict, ApprovalResponse):  # answered in the tool's place
                return await self._shape_result(tool, verdict.message, clock.left())
            if isinstance(verdict, ApprovalEdit):
                edited = verdict
                checked = await check_arguments(
                    tool, verdict.arguments, hint=hint, time_limit=clock.left()
                )
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
        result = await self._shape_result(tool, value, clock.left())
        return result if edited is None else edited_result(result, checked, self.manager.encoding)

    async def _shape_result(self, tool: Tool, value: Any, seconds: float | None) -> ToolResult:
        """The result of a call that ran (:func:`~toolmgmt_core.calls.results.shape_result`)."""
        return await shape_result(
            self._results, tool, value, seconds, goal=self.goal, call_id=_CALL_ID.get()
        )

    def _error_result(self, name: str, error: ToolCallError) -> ToolResult:
        limit = self._results.budget.per_result(self._lookup(name))
        return error_result(name, error, limit=limit, encoding=self.manager.encoding)
