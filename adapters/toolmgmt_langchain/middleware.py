"""``ToolManagerMiddleware``: a ``create_agent`` middleware whose tools come from a session.

Each model call gets the session's tools; each tool call runs through the session, inside one
scope where LangGraph's signals pass, approval asks ``interrupt()``
(:mod:`toolmgmt_langchain.approval`) and tools with injected arguments find the ToolNode
(:mod:`toolmgmt_langchain.tools`); the session's state travels in the agent state under
:data:`STATE_KEY`.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from typing import Annotated, Any

from langchain.agents.middleware import AgentMiddleware, AgentState, HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool
from langgraph.config import get_config
from langgraph.types import Command
from typing_extensions import NotRequired

from toolmgmt_core import (
    ApprovalRequest,
    CallContext,
    ConfigError,
    Tool,
    ToolManager,
    ToolResult,
    ToolSession,
)
from toolmgmt_core.integration import (
    BREAKPOINT,
    META_TOOL_NAMES,
    RUN_CODE,
    ApprovalAsker,
    ApprovalMarker,
    ProgramStateError,
    passthrough,
)
from toolmgmt_langchain.approval import ToCaller, interrupt_approver
from toolmgmt_langchain.checkpoint import apaused_value, paused_value
from toolmgmt_langchain.loop import (
    PROVIDERS,
    SIGNALS,
    run_tool_call,
    run_tool_call_sync,
    session_tool_definitions,
    tool_message,
)
from toolmgmt_langchain.tools import NODE, NodeCall

__all__ = [
    "STATE_KEY",
    "ToolManagerMiddleware",
    "ToolManagerState",
]

STATE_KEY = "toolmgmt"
"""Agent-state key holding ``{"rev": n, "session": session.to_json()}``."""

_LIVE_STEPS = 256
_HITL_STATE_KEY = "hitl_edited_tool_calls"
"""The state key HumanInTheLoopMiddleware writes once it has reviewed a model turn's calls."""


def _newest(current: dict[str, Any] | None, update: dict[str, Any] | None) -> dict[str, Any] | None:
    """Reducer: of two snapshots, keep the later one (parallel tool calls each write one)."""
    if update is None:
        return current
    if current is None or update.get("rev", 0) >= current.get("rev", 0):
        return update
    return current


def _snapshot(state: Mapping[str, Any]) -> tuple[int, Mapping[str, Any] | None]:
    """(rev, session state) of the toolmgmt snapshot in an agent state, checked for shape.

    Raises:
        ConfigError: the snapshot is not ``{"rev": int, "session": {...}}``.
    """
    snapshot = state.get(STATE_KEY)
    if snapshot is None:
        return 0, None
    rev = snapshot.get("rev", 0) if isinstance(snapshot, Mapping) else None
    if not isinstance(rev, int) or isinstance(rev, bool):
        raise ConfigError(
            f'Agent state "{STATE_KEY}" must be {{"rev": <int>, "session": <session state>}} '
            "as the middleware writes it."
        )
    return rev, snapshot.get("session")


class ToolManagerState(AgentState[Any]):
    """Agent state with the toolmgmt session snapshot."""

    toolmgmt: NotRequired[Annotated[dict[str, Any] | None, _newest]]
    """``{"rev": n, "session": session.to_json()}``; the highest ``rev`` wins."""


class _Live:
    """The session shared by the parallel tool calls of one model step, kept for the thread's
    next step while the state it resumes from is the one this session last wrote."""

    def __init__(self, session: ToolSession, rev: int) -> None:
        self.session = session
        self.rev = rev
        self.lock = threading.Lock()
        self.running = 0
        """Calls begun and not yet written back (one paused by an interrupt never is)."""
        self.written: str | None = None
        """The session state this session last wrote to the agent state, as JSON text (the
        state's own dict may be edited in place)."""

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            self.rev += 1
            self.running -= 1
            state = self.session.to_json()
            self.written = json.dumps(state, sort_keys=True, default=str)
            return {"rev": self.rev, "session": state}

    def resumes(self, rev: int, saved: Mapping[str, Any] | None) -> bool:
        """Whether a step whose state holds (``rev``, ``saved``) carries on from this session
        exactly: nothing ran on it since it wrote that state, and no store holds it."""
        with self.lock:
            return (
                not self.running
                and self.rev == rev
                and self.session.session_id is None
                and self.written == json.dumps(saved, sort_keys=True, default=str)
            )


class ToolManagerMiddleware(AgentMiddleware[ToolManagerState, Any, Any]):
    """Puts a toolmgmt session between a ``create_agent`` agent and its tools.

    Args:
        manager: the catalog and its discovery configuration.
        provider: the core formatting sent to ``bind_tools`` (``"openai"`` or ``"anthropic"``,
            see :func:`session_tool_definitions`). ``"anthropic"`` (for ChatAnthropic) sends a
            cache-stable session with Anthropic's deferral (``tool_search`` answered with
            ``tool_reference`` blocks) and places cache breakpoints: after the tools sent up
            front and, through ``model_settings["cache_control"]`` (ChatAnthropic's automatic
            caching), on the last block; an app's own ``cache_control`` setting is kept.
        instructions: append the mode's short instructions to the system message.
        approval: pause calls that need approval with ``interrupt()`` when the manager has no
            ``approval`` callback (see :mod:`toolmgmt_langchain.approval`; needs a
            checkpointer); False leaves approval to the manager alone; the agent's
            ``HumanInTheLoopMiddleware`` (listed before this one) takes its review as the
            approval of the calls it covers (its ``interrupt_on`` and ``when``) and asks
            about the others.
    """

    state_schema = ToolManagerState
    tools: Sequence[BaseTool] = ()

    def __init__(
        self,
        manager: ToolManager,
        *,
        provider: str = "openai",
        instructions: bool = True,
        approval: bool | HumanInTheLoopMiddleware[Any, Any, Any] = True,
    ) -> None:
        super().__init__()
        if not isinstance(approval, bool | HumanInTheLoopMiddleware):
            raise TypeError(
                "approval must be True, False or the agent's HumanInTheLoopMiddleware, got "
                f"{type(approval).__name__}."
            )
        if not isinstance(manager, ToolManager):
            raise TypeError(
                f"ToolManagerMiddleware needs a ToolManager, got {type(manager).__name__}: "
                "ToolManagerMiddleware(ToolManager(catalog, mode='search'))."
            )
        if provider not in PROVIDERS:
            raise ConfigError(f"provider must be 'openai' or 'anthropic', got {provider!r}.")
        self.manager = manager
        self.provider = provider
        self.instructions = instructions
        self.approval = approval
        self._live: OrderedDict[tuple[Any, ...], _Live] = OrderedDict()
        self._threads: OrderedDict[str, _Live] = OrderedDict()
        """Each LangGraph thread's session of its last tool step (see :meth:`_kept`)."""
        self._lock = threading.Lock()

    # -- session state ----------------------------------------------------------------------

    def session_from_state(self, state: Mapping[str, Any]) -> ToolSession:
        """The session an agent state holds (a new one when it holds none).

        The snapshot is untrusted: whoever can invoke the agent can put one in its input. It is
        restored with :meth:`ToolSession.from_json`, so it can only narrow what the manager's
        configuration allows; one the manager does not accept raises ``ConfigError`` and the run
        stops before any tool is listed or run.
        """
        _, session = _snapshot(state)
        return self.manager.session(session)

    def _kept(self, thread: str | None, rev: int, saved: Any) -> ToolSession | None:
        """The thread's session kept from its last tool step, when the state resumes exactly
        from what it wrote (a checkpoint of another branch, an edited state or another
        process restores instead). Call under the lock."""
        kept = self._threads.get(thread) if thread is not None else None
        return kept.session if kept is not None and kept.resumes(rev, saved) else None

    def _live_for(self, state: Mapping[str, Any], call_id: str, thread: str | None = None) -> _Live:
        rev, saved = _snapshot(state)
        key = (_step_id(state, call_id), rev)
        with self._lock:
            live = self._live.get(key)
            if live is None:
                kept = self._kept(thread, rev, saved) if thread is not None else None
                session = kept or self.manager.session(saved)
                if thread is not None and session.session_id is None:
                    session.conversation = thread  # its events name the graph's thread
                    self._threads[thread] = live = _Live(session, rev)
                    self._threads.move_to_end(thread)
                    while len(self._threads) > _LIVE_STEPS:
                        self._threads.popitem(last=False)
                else:
                    live = _Live(session, rev)
                self._live[key] = live
                while len(self._live) > _LIVE_STEPS:
                    self._live.popitem(last=False)
            with live.lock:
                live.running += 1
            return live

    def _manages(self, name: str, tool: BaseTool | None) -> bool:
        # Unknown names go to the session too, which answers with the closest names.
        return (
            tool is None or name in META_TOOL_NAMES or self.manager.catalog.find(name) is not None
        )

    def _approver(self, request: Any) -> ApprovalAsker | None:
        """Who approves this call: HITL's review, ``interrupt()``, or the manager alone."""
        call = request.tool_call
        hitl = self.approval
        if hitl is False:
            return None
        if hitl is True:
            # HITL's (private) state key: it reviewed calls in this agent, unbeknown to us.
            return interrupt_approver(call, reviewed=_HITL_STATE_KEY in request.state)
        config = hitl.interrupt_on.get(call["name"])
        when = config.get("when") if config is not None else None
        # HITL's review of run_code saw the program's text, not the calls it makes: each of
        # those that needs approval is asked about on its own.
        if config is not None and call["name"] != RUN_CODE and (when is None or when(request)):
            return _reviewed  # HITL asked; a rejected call never reaches this middleware
        return interrupt_approver(call, interrupt_on=hitl.interrupt_on)

    def _marker(self, request: Any) -> ApprovalMarker | None:
        """HITL's ``interrupt_on`` asked about the tool a call resolves to: a tool it names,
        reached through ``call_tool`` or ``execute_tool`` (which HITL does not see), needs
        approval as it would by name (its ``when`` asked about the inner call)."""
        hitl = self.approval
        if not isinstance(hitl, HumanInTheLoopMiddleware):
            return None
        name = request.tool_call["name"]
        if name in hitl.interrupt_on and name != RUN_CODE:
            return None  # HITL itself reviewed this call (or its ``when`` let it pass)

        def requires(tool: Tool, arguments: Mapping[str, Any]) -> str | None:
            config = hitl.interrupt_on.get(tool.name)
            if config is None:
                return None
            when = config.get("when")
            if when is not None:
                inner = {**request.tool_call, "name": tool.name, "args": dict(arguments)}
                try:
                    if not when(request.override(tool_call=inner)):
                        return None
                except Exception:  # noqa: S110 - a predicate that cannot judge it: ask
                    pass
            return "HumanInTheLoopMiddleware interrupt_on"

        return requires

    def _context(self, request: Any, node: NodeCall, kept: Mapping[str, Any] | None) -> CallContext:
        """What this call carries down: approval is asked for once, the LangGraph way, with
        the middleware's own ``interrupt_on`` besides the policy; the ToolNode call tools with
        injected arguments run through; a ``run_code`` call keeps its paused program in its
        interrupt (``kept``, read back from the checkpoint on resume)."""
        approver = self._approver(request)
        context = CallContext(
            approver=approver, requires=self._marker(request), slots={NODE: node}
        )
        if request.tool_call["name"] != RUN_CODE or approver is None:
            return context
        state = kept.get("resume_state") if kept is not None else None
        return context.replace(keeps_state=True, resume_state=state)

    @contextlib.contextmanager
    def _scope(self) -> Iterator[None]:
        """LangGraph's signals pass, for this one call. An error meant for the caller leaves
        ``invoke``."""
        with passthrough(*SIGNALS, ToCaller):
            try:
                yield
            except ToCaller as exc:
                raise exc.error from None

    def _answer(
        self, call: Mapping[str, Any], live: _Live, result: Any, node: NodeCall
    ) -> Command[Any]:
        update: dict[str, Any] = {}
        messages: list[Any] = []
        goto: Any = ()
        for command in node.commands:  # a tool's own state updates, as the ToolNode applies
            extra = dict(command.update) if isinstance(command.update, Mapping) else {}
            messages += [
                m
                for m in extra.pop("messages", None) or []
                if not (isinstance(m, ToolMessage) and m.tool_call_id == call["id"])
            ]
            update.update(extra)
            goto = command.goto or goto
        answer = tool_message(call, result, live.session, self.provider)
        update.update({"messages": [*messages, answer], STATE_KEY: live.snapshot()})
        return Command(update=update, goto=goto)

    # -- model calls ------------------------------------------------------------------------

    def _prepare(self, request: Any) -> Any:
        session = self.session_from_state(request.state)
        thread = _thread(_graph_config())
        if thread is not None and session.session_id is None:
            session.conversation = thread  # the listing's event names the graph's thread
        settings = dict(request.model_settings or {})
        # Anthropic: cache breakpoints after the tools and on the last block (ChatAnthropic's
        # automatic caching), unless the app set its own.
        cache = self.provider == "anthropic" and "cache_control" not in settings
        managed = session_tool_definitions(session, self.provider, cache_control=cache)
        # Provider built-ins (dicts) and framework tools outside the catalog stay as they are.
        kept = [
            t
            for t in request.tools
            if not isinstance(t, BaseTool)
            or (t.name not in META_TOOL_NAMES and self.manager.catalog.find(t.name) is None)
        ]
        overrides: dict[str, Any] = {"tools": [*managed, *kept]}
        if cache:
            overrides["model_settings"] = {**settings, "cache_control": dict(BREAKPOINT)}
        text = session.instructions if self.instructions else ""
        if text:
            base = request.system_message.text if request.system_message else ""
            overrides["system_message"] = SystemMessage(content=f"{base}\n\n{text}".strip())
        return request.override(**overrides)

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        return handler(self._prepare(request))

    async def awrap_model_call(self, request: Any, handler: Any) -> Any:
        return await handler(self._prepare(request))

    # -- tool calls -------------------------------------------------------------------------

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        call = request.tool_call
        if not self._manages(call["name"], request.tool):
            return handler(request)
        live = self._live_for(request.state, call["id"], _thread(_config(request)))
        node = NodeCall(request, handler)
        kept = paused_value(_graph_config(), call["id"]) if call["name"] == RUN_CODE else None
        with self._scope():
            result = _lost(live.session, kept) or run_tool_call_sync(
                live.session, call, _config(request), self._context(request, node, kept)
            )
        return self._answer(call, live, result, node)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        call = request.tool_call
        if not self._manages(call["name"], request.tool):
            return await handler(request)
        live = self._live_for(request.state, call["id"], _thread(_config(request)))
        node = NodeCall(request, handler)
        kept = (
            await apaused_value(_graph_config(), call["id"]) if call["name"] == RUN_CODE else None
        )
        with self._scope():
            result = _lost(live.session, kept) or await run_tool_call(
                live.session, call, _config(request), self._context(request, node, kept)
            )
        return self._answer(call, live, result, node)


def _lost(session: ToolSession, kept: Mapping[str, Any] | None) -> ToolResult | None:
    """The refusal of a resumed ``run_code`` call whose interrupt kept no program state: it
    never starts over (the calls before its pause would run again)."""
    if kept is None or isinstance(kept.get("resume_state"), str):
        return None
    return session.error_result(
        RUN_CODE,
        ProgramStateError(
            "The paused program could not be resumed: its state is not in the checkpoint. "
            "Nothing ran. Run the program again.",
            tool_name=RUN_CODE,
        ),
    )


def _config(request: Any) -> Any:
    """The ToolNode's config for this call (its callbacks: a meta-tool's run is reported as a
    bound tool's is), or None outside a graph."""
    return getattr(getattr(request, "runtime", None), "config", None)


def _graph_config() -> Any:
    """The config of the graph run this code is in, or None outside one."""
    try:
        return get_config()
    except RuntimeError:
        return None


def _thread(state_config: Any) -> str | None:
    """The LangGraph thread a run belongs to, when its config names one."""
    configurable = (state_config or {}).get("configurable") or {}
    thread = configurable.get("thread_id")
    return str(thread) if thread not in (None, "") else None


def _reviewed(request: ApprovalRequest) -> bool:
    """The approver of a call HumanInTheLoopMiddleware reviewed: it was approved (or edited)."""
    return True


def _step_id(state: Mapping[str, Any], call_id: str) -> str:
    """The id of the AI message that made the call ``call_id``: one per model step."""
    for message in reversed(state.get("messages") or []):
        if isinstance(message, AIMessage) and any(
            c.get("id") == call_id for c in message.tool_calls
        ):
            return str(message.id or call_id)
    return call_id
