"""``ToolSession``: one conversation's loaded tools, its tool list and its calls.

What the model sees now is planned by the manager's mode (:mod:`toolmgmt_core._session.modes`),
through its :class:`~toolmgmt_core._session.layout.LayoutPlanner`, from this session's policy
view and loads. A call is resolved once, with the list planned once, into one immutable
request (:mod:`toolmgmt_core._session.routing`) that the manager's call pipeline
(:class:`~toolmgmt_core._calls.pipeline.CallPipeline`) runs without asking this session for more;
the meta-tools' answers are :mod:`toolmgmt_core._session.meta_calls`', and the state (JSON, a
session store) :mod:`toolmgmt_core._session.conversation`'s.
"""

from __future__ import annotations

import logging
import secrets
import threading
from collections.abc import Iterable, Sequence
from typing import Any

from toolmgmt_core._calls.budget import ResultRecord, SessionBudget
from toolmgmt_core._calls.context import NO_CONTEXT, CallContext
from toolmgmt_core._calls.execution import ToolResult
from toolmgmt_core._calls.pipeline import CallPipeline
from toolmgmt_core._calls.request import CallRequest
from toolmgmt_core._calls.sync import run_sync
from toolmgmt_core._events import ToolsListed, ToolsLoaded
from toolmgmt_core._model.errors import ConfigError, ToolNotListedError
from toolmgmt_core._model.tokens import definition_tokens
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._policy.profiles import Profile
from toolmgmt_core._policy.steps import Explanation
from toolmgmt_core._policy.view import PolicyView
from toolmgmt_core._session.conversation import StoredConversation
from toolmgmt_core._session.layout import Layout, Usage
from toolmgmt_core._session.meta_calls import MetaToolCalls
from toolmgmt_core._session.modes import Mode
from toolmgmt_core._session.routing import CallRouter
from toolmgmt_core._session.settings import SessionSettings
from toolmgmt_core._session.state import SessionState
from toolmgmt_core._stores.base import StoredSession

__all__ = ["ToolSession", "Usage"]

logger = logging.getLogger("toolmgmt")


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
        self._label: str | None = None
        self._stored: StoredSession | None = None
        """The conversation as last loaded from or saved to the store (None: not there yet)."""
        self._saved: SessionState | None = None
        self._loaded: list[str] = list(dict.fromkeys(loaded))
        self._lock = threading.RLock()
        self._results: SessionBudget = manager.result_budget.start()
        self._native_deferred: set[str] = set()
        self._programs: dict[str, Any] = {}
        self._programs_taken: set[str] = set()
        self._meta_calls = MetaToolCalls(self)
        self._router = CallRouter(self, self._meta_calls.answer)
        self.goal: str | None = None
        """The user's goal when known; passed to the manager's summariser."""

    @property
    def pipeline(self) -> CallPipeline:
        """The call pipeline every call of this session goes through (its manager's)."""
        return self.manager.pipeline

    @property
    def conversation(self) -> str:
        """What this session's events name its conversation: its id in the session store,
        else the one its adapter set (a LangGraph thread, which keeps it across the sessions a
        graph's steps restore), else an id made for this object (``local-<hex>``)."""
        if self.session_id is not None:
            return self.session_id
        if self._label is None:
            self._label = f"local-{secrets.token_hex(8)}"
        return self._label

    @conversation.setter
    def conversation(self, value: str) -> None:
        if not isinstance(value, str) or not value:
            raise ConfigError(f"A conversation is named by a non-empty string, got {value!r}.")
        self._label = value

    # -- policy choke points: every listing, search, schema and call asks these ------------

    _profile_view: PolicyView | None = None
    """The view after :meth:`set_profile`; None uses the manager's."""

    @property
    def policy(self) -> PolicyView:
        """The policy view in force: the manager's, or the one :meth:`set_profile` chose."""
        return self._profile_view or self.manager.policy

    def can_see(self, tool: Tool) -> bool:
        """Whether this session may see and run ``tool``: the policy view allows it and no
        meta-tool of the mode shadows its name."""
        return tool.name not in self.manager.planner.shadowed and self.policy.allows(tool)

    def present(self, tool: Tool) -> Tool:
        """``tool`` as this session shows it (description overrides applied)."""
        return self.policy.present(tool)

    @property
    def profile(self) -> str:
        """The name of the profile in force."""
        return self.policy.profile.name

    def set_profile(self, profile: str | Profile) -> None:
        """Switch this session to another profile; the next :meth:`tools` and every later call
        use it (other sessions keep theirs). The choice is kept in :meth:`to_json` state.

        The manager's profile is a ceiling: a session can narrow what its manager allows and
        never widen it (``set_profile("full")`` under a ``readonly`` manager stays read-only);
        build a manager with a wider profile to allow more.

        Raises:
            ConfigError: an unknown profile name; the message lists the known ones.
        """
        view = self.manager.policy.within(profile)
        with self._lock:
            self._profile_view = None if view is self.manager.policy else view
        self.save_sync()

    def explain(self, name: str) -> Explanation:
        """Why ``name`` is visible to this session or not, and which policy step decided it."""
        meta_tool = self.meta_tool(name)
        if meta_tool is not None:
            return Explanation(
                meta_tool.name,
                True,
                None,
                f"{meta_tool.name!r} is a meta-tool; policies never remove meta-tools.",
            )
        return self.policy.explain(name)

    # -- what the model sees --------------------------------------------------------------

    def _lookup(self, name: str) -> Tool | None:
        """The catalog tool named exactly ``name``, when this session can see it."""
        return self.manager.planner.lookup(name, self.can_see)

    def layout(self) -> Layout:
        """The tool list of this step, by section, and the mode it is in (planned once per
        catalog version, policy view and loaded names)."""
        return self.manager.planner.plan(self.can_see, self.present, self.loaded(), self.policy)

    @property
    def effective_mode(self) -> Mode:
        """The mode this session is in now (``auto`` is flat or search, by the catalog)."""
        return self.manager.mode.effective(self.layout)

    @property
    def mode(self) -> str:
        """The name of :attr:`effective_mode`: search, gateway, lazy, or flat."""
        return self.effective_mode.name

    @property
    def instructions(self) -> str:
        """A short system-prompt text teaching this mode's workflow (empty for flat)."""
        return self.effective_mode.instructions

    def tools(self) -> list[Tool]:
        """The definitions to send to the model now: meta-tools, always-on, then loaded tools.

        Each call is one listing for a model request: with listeners, it emits
        :class:`~toolmgmt_core._events.ToolsListed` (what the list costs against the whole
        visible catalog flat)."""
        tools = self.layout().tools
        events = self.manager.events
        if events:
            listed = self.manager.definition_tokens(tools)
            flat = self.manager.planner.flat_tokens(self.policy, self.visible_tools)
            events.emit(ToolsListed(self.conversation, len(tools), listed, flat))
        return tools

    def visible_tools(self) -> list[Tool]:
        """Every catalog tool this session may see, fully defined (for native deferred loading)."""
        return [self.present(t) for t in self.manager.catalog if self.can_see(t)]

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

    def is_native_deferred(self, name: str) -> bool:
        """Whether the provider's own deferred loading sent ``name`` (see
        :meth:`note_native_deferred`)."""
        return name in self._native_deferred

    def is_deferred(self, name: str) -> bool:
        """Whether ``name`` is a visible tool that is not in :meth:`tools` now."""
        return self._lookup(name) is not None and name not in self.layout().names

    def usage(self) -> Usage:
        """Definition tokens now against the whole visible catalog flat."""
        tools = self.layout().tools
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

    def load(self, names: Iterable[str], *, restored: bool = False) -> tuple[list[str], list[str]]:
        """Load tools into this session's list as a search would: appended in order, once each,
        within ``max_active``. Names this session cannot see are left out. ``restored``: the
        loads are rebuilt (from a transcript), not new: no event is emitted for them.

        Returns:
            (newly loaded, refused because the ``max_active`` cap is reached).
        """
        visible = [n for n in dict.fromkeys(names) if self._lookup(n) is not None]
        done = self.record_loads(visible, restored=restored)
        self.save_sync()
        return done

    def record_loads(
        self, names: Sequence[str], *, restored: bool = False
    ) -> tuple[list[str], list[str]]:
        """Record ``names`` (visible here) as loaded, appending to the list where the mode lists
        loads (``restored``: taken back from saved state, which loads nothing new: no event).

        Returns:
            (newly loaded, refused because the ``max_active`` cap is reached).
        """
        added: list[str] = []
        refused: list[str] = []
        cap = self.manager.discovery.max_active
        with self._lock:  # the layout and the loads under one lock: the cap holds on threads
            layout = self.layout()
            mode = layout.mode
            listed = layout.names
            appended = len(layout.appended)
            for name in names:
                if name in self._loaded:
                    continue
                if name in listed and not mode.keeps_listed_loads:
                    continue  # already in the list (always-on)
                appends = mode.appends_loads and name not in listed
                if appends and cap is not None and appended >= cap:
                    refused.append(name)
                    continue
                self._loaded.append(name)
                added.append(name)
                appended += appends
        events = self.manager.events
        if events and added and not restored:
            tools = [t for n in added if (t := self._lookup(n)) is not None]
            tokens = definition_tokens(tools, self.manager.encoding)
            events.emit(ToolsLoaded(self.conversation, tuple(added), tokens))
        return added, refused

    # -- calls ----------------------------------------------------------------------------

    async def call(
        self,
        name: str,
        arguments: Any = None,
        *,
        call_id: str | None = None,
        context: CallContext = NO_CONTEXT,
    ) -> ToolResult:
        """Run a meta-tool or a tool as the model asked; never raises for the model's mistakes.

        Args:
            name: the tool name the model used (forgiving case, look-alikes and provider forms).
            arguments: the arguments object (a dict, a JSON string of one, or None).
            call_id: the provider's tool-call id, used to name the result in
                :meth:`clearable_results` (default ``call_<a unique id>``); replaces
                ``context.call_id``.
            context: what the integration knows about this call (the framework's approver, the
                client, a handler's run: :class:`~toolmgmt_core._calls.context.CallContext`).

        Returns:
            The result; on failure ``is_error`` is set, ``error.kind`` says whether it was the
            gateway ("gateway") or the tool ("tool"), and ``outcome`` what the model can do.
            With a session store that is down or slower than its deadlines, a call that ran
            still returns its result, with ``saved`` False and a ``NotSaved`` note (the record
            is saved with the next change).
        """
        if call_id is not None and call_id != context.call_id:
            # Most calls carry nothing else: a new context is cheaper than a changed copy.
            is_bare = context is NO_CONTEXT
            context = CallContext(call_id=call_id) if is_bare else context.replace(call_id=call_id)
        try:
            request = self._router.request(name, arguments, context)
        except ToolNotListedError as refused:  # no events, records or save: nothing ran
            return self.error_result(str(name), refused)
        result = await self.manager.pipeline.run(request)
        unsaved = await self.save()
        if unsaved is not None:  # the call ran: its result stands, and says so
            note = f"NotSaved: the call's record could not be saved ({unsaved})"
            result.saved = False
            result.note = f"{result.note}; {note}" if result.note else note
        return result

    def call_sync(
        self,
        name: str,
        arguments: Any = None,
        *,
        call_id: str | None = None,
        context: CallContext = NO_CONTEXT,
    ) -> ToolResult:
        """:meth:`call` for sync code (also works when an event loop is already running)."""
        return run_sync(self.call(name, arguments, call_id=call_id, context=context))

    def error_result(self, name: str, error: Any) -> ToolResult:
        """``error`` (a :class:`~toolmgmt_core.ToolCallError` raised outside a call, such as
        an upstream that cannot be reached) as a call would have answered it."""
        return self.pipeline.error_result(name, error, self._router.view())

    # -- what a call of a name comes to (session/routing.py) ----------------------------------

    def meta_tool(self, name: Any) -> Tool | None:
        """The meta-tool ``name`` stands for (exactly or folded), when one may be called now."""
        return self._router.meta_tool(name)

    def resolve(self, name: Any) -> Tool:
        """The visible tool ``name`` stands for (exact, folded, provider-shortened: see
        :func:`~toolmgmt_core._calls.resolution.resolve_tool`).

        Raises:
            ToolNotPermittedError: a catalog tool the policy hides here.
            ToolNotFoundError: with the closest visible names.
        """
        return self._router.resolve(name)

    def request(
        self, name: Any, arguments: Any = None, context: CallContext = NO_CONTEXT
    ) -> CallRequest:
        """The request a call of ``name`` comes to now, as :meth:`call` hands it to the
        pipeline (see :class:`~toolmgmt_core._session.routing.CallRouter`)."""
        return self._router.request(name, arguments, context)

    def schema_hint(self, tool: Tool) -> str:
        """Where a model whose arguments failed validation finds ``tool``'s parameters."""
        return self._router.schema_hint(tool)
