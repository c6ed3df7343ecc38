"""What a call of a name comes to, decided once per call: :class:`CallRouter`.

A session's call is resolved here, with the step's tool list planned once, into one immutable
:class:`~toolmgmt_core._calls.request.CallRequest` (the tool, its arguments, the integration's
context, the session's view) that the session hands to the manager's pipeline. A meta-tool's name
resolves to the meta-tool, which ``view.meta`` answers; any other to the tool it names as the caller
may call it now (``Callers``, the mode's list, ``call_unloaded``); a name that resolves to nothing
is a request carrying its refusal, so the pipeline reports it as every call is.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from toolmgmt_core._calls.budget import SessionBudget
from toolmgmt_core._calls.context import CallContext
from toolmgmt_core._calls.pipeline import MetaAnswers
from toolmgmt_core._calls.request import CallRequest, CallView
from toolmgmt_core._calls.resolution import cap_message, quoted, resolve_tool
from toolmgmt_core._model.errors import ToolCallError, ToolNotListedError, ToolNotLoadedError
from toolmgmt_core._model.names import fold_name
from toolmgmt_core._model.tool import META_TOOL_NAMES, Tool
from toolmgmt_core._policy.callers import check_caller
from toolmgmt_core._policy.view import PolicyView
from toolmgmt_core._session.layout import Layout
from toolmgmt_core._session.modes import Mode
from toolmgmt_core._session.settings import SessionSettings

__all__ = ["CallRouter"]

_META_NAMES = frozenset(META_TOOL_NAMES)


class RoutedSession(Protocol):
    """What the router reads of its session (a ``ToolSession``)."""

    @property
    def manager(self) -> SessionSettings: ...
    @property
    def conversation(self) -> str: ...
    @property
    def policy(self) -> PolicyView: ...
    @property
    def result_budget(self) -> SessionBudget: ...
    @property
    def goal(self) -> str | None: ...
    @property
    def effective_mode(self) -> Mode: ...
    def can_see(self, tool: Tool) -> bool: ...
    def layout(self) -> Layout: ...
    def loaded(self) -> list[str]: ...
    def is_native_deferred(self, name: str) -> bool: ...
    def record_loads(self, names: Sequence[str]) -> tuple[list[str], list[str]]: ...


def _plan_once(session: RoutedSession) -> Callable[[], Layout]:
    """The step's tool list, planned at most once for one call (and only when asked)."""
    planned: list[Layout] = []

    def plan() -> Layout:
        if not planned:
            planned.append(session.layout())
        return planned[0]

    return plan


class CallRouter:
    """A session's calls, resolved into requests (see the module docstring)."""

    def __init__(self, session: RoutedSession, meta: MetaAnswers) -> None:
        self.session = session
        self.meta = meta

    def view(self, budget: SessionBudget | None = None, *, meta: bool = True) -> CallView:
        """What the session's calls are judged and measured against now (``budget``: another
        account than the session's, a program's; ``meta``: whether meta-tools are answered)."""
        session = self.session
        return CallView(
            session.conversation,
            session.policy,
            session.result_budget if budget is None else budget,
            session.can_see,
            lambda: session.effective_mode.find_hint,
            session.goal,
            self.meta if meta else None,
        )

    def request(self, name: Any, arguments: Any, context: CallContext) -> CallRequest:
        """The request a call of ``name`` comes to (a refused one carries its refusal).

        Raises:
            ToolNotListedError: a ``listed_only`` integration's name the list lacks (nothing runs).
        """
        plan = _plan_once(self.session)
        if context.listed_only:  # a name the list lacks is refused before anything else
            self._check_listed(name, plan())
        view = self.view()
        label = str(name)
        try:
            meta_tool = self.meta_tool(name, plan)
            if meta_tool is not None:
                return CallRequest(label, arguments, context, view, meta_tool, meta=True)
            tool = self.resolve(name)
            manager = self.session.manager
            check_caller(tool, manager.planner.caller_choice(tool), context.from_program)
            self._ensure_listed(tool, plan)
        except ToolCallError as refused:
            return CallRequest(label, arguments, context, view, refusal=refused)
        hint = functools.partial(self.schema_hint, tool)
        return CallRequest(label, arguments, context, view, tool, hint=hint)

    def meta_tool(self, name: Any, plan: Callable[[], Layout] | None = None) -> Tool | None:
        """The meta-tool ``name`` stands for (exactly or folded), when one may be called now."""
        if not isinstance(name, str):
            return None
        folded = fold_name(name)  # kept per name: no work on the common call
        if name not in _META_NAMES and folded not in _META_NAMES:
            return None  # no meta-tool is named so: the list need not be planned
        manager = self.session.manager
        plan = plan or _plan_once(self.session)
        metas = manager.mode.callable_meta(plan, manager.discovery.max_results)
        for tool in metas:
            if tool.name == name or tool.name == folded:
                return tool
        return None

    def resolve(self, name: Any) -> Tool:
        """The visible tool ``name`` stands for (exact, folded, provider-shortened: see
        :func:`~toolmgmt_core._calls.resolution.resolve_tool`).

        Raises:
            ToolNotPermittedError: a catalog tool the policy hides here.
            ToolNotFoundError: with the closest visible names.
        """
        session = self.session
        catalog = session.manager.catalog
        found = catalog.find(name) if isinstance(name, str) else None
        if found is not None and session.can_see(found):  # the common case: no hint needed
            return found
        return resolve_tool(catalog, name, session.can_see, session.effective_mode.find_hint)

    def schema_hint(self, tool: Tool) -> str:
        """Where a model whose arguments failed validation finds ``tool``'s parameters."""
        manager = self.session.manager
        return manager.mode.schema_hint(tool, manager.planner.pinned_names())

    def _check_listed(self, name: Any, layout: Layout) -> None:
        """Refuse ``name`` unless the list holds it exactly (``CallContext.listed_only``)."""
        listed = layout.names
        if isinstance(name, str) and name in listed:
            return
        names = sorted(listed)
        raise ToolNotListedError(
            f"Unknown tool {quoted(name)}: call one of the tools listed ({', '.join(names)}).",
            tool_name=str(name),
            listed=names,
        )

    def _ensure_listed(self, tool: Tool, plan: Callable[[], Layout]) -> None:
        """Apply ``call_unloaded`` to a direct call of a tool not in the list now.

        Raises:
            ToolNotLoadedError: saying how to load it (or that the active tool cap is reached).
        """
        session = self.session
        manager = session.manager
        if manager.mode.lists_without_loading(tool):
            return
        layout = plan()
        if tool.name in layout.names or session.is_native_deferred(tool.name):
            return  # listed, or the provider's tool search loaded it on its side
        if layout.mode.stable_search and tool.name in session.loaded():
            return  # a search gave it: its definition is in the conversation, not the list
        name = tool.name
        cap = manager.discovery.max_active
        appends = layout.mode.appends_loads
        if manager.discovery.call_unloaded == "load":
            if not appends and not layout.mode.stable_search:
                return  # runs as through execute_tool; the list stays as it is
            _, refused = session.record_loads([name])
            if refused:
                raise ToolNotLoadedError(cap_message(cap, refused), tool_name=name)
            return
        if appends and cap is not None and len(layout.appended) >= cap:
            message = cap_message(cap, [name])  # searching again would not help
        else:
            message = layout.mode.unloaded_message(name)
        raise ToolNotLoadedError(message, tool_name=name)
