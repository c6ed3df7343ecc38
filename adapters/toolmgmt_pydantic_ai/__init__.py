"""PydanticAI adapter: a toolset whose tools, on every step, come from a toolmgmt session.

Usage::

    from pydantic_ai import Agent
    from pydantic_ai.toolsets import FunctionToolset
    from toolmgmt_core import ToolCatalog, ToolManager
    from toolmgmt_pydantic_ai import ManagedToolset

    managed = ManagedToolset(
        ToolManager(ToolCatalog(), mode="search"),
        toolsets={"crm": crm_toolset, "files": mcp_server},  # or a list: domain = toolset id
    )
    agent = Agent("openai:gpt-4.1", toolsets=[managed])  # instead of toolsets=[crm, mcp]
    result = await agent.run("...")
    managed.session_for(result.run_id).usage()

The wrapped toolsets' tools join the manager's catalog on the first step of the first run (a
``RunContext`` is needed to list them). Each agent run gets its own session (``for_run``),
kept in ``sessions`` by run id. A run given an earlier run's ``message_history`` starts with
the tools that conversation loaded (rebuilt from the meta-tools' answers in the history, as far
as the policy allows); ``state=lambda ctx: ...`` resumes from a saved ``session.to_json()``
instead, and ``conversation=lambda ctx: ctx.deps.conversation_id`` keys the run's session by a
conversation id in the manager's session store (``manager.session(id)``: restored when the
store holds it, saved there after every change, refreshed from it at the start of every step;
with a ``RedisSessionStore``, every worker serving the conversation sees what the others loaded,
from its next step on, even within one run). Calls go through the session (policy,
validation, truncation), whose handlers call back into the wrapped toolset's ``call_tool``.

PydanticAI's own control flow passes through the session untouched: a wrapped tool's
``ApprovalRequired`` or ``CallDeferred`` ends the run with ``DeferredToolRequests``, and its
``ModelRetry`` reaches the model as PydanticAI's retry prompt. A call that needs approval under
toolmgmt's policy (a step's ``require_approval``, or a destructive tool) is deferred the same
way when the manager has no ``approval`` callback: resume with
``DeferredToolResults(approvals={call_id: True})`` and it runs once through the session
(policy re-checked, arguments validated, result truncated); a denial never runs it. The
agent's ``output_type`` must then include ``DeferredToolRequests`` (else PydanticAI raises
``UserError`` at the first such call); ``approval=False`` leaves approval to the manager alone.
In code mode a program's call that needs approval defers its ``run_code`` call the same way
(the request's metadata names the program's call) and keeps the run's sealed state in the
message history (:mod:`toolmgmt_pydantic_ai.programs`); resumed with that history by any worker,
the program carries on from that call, and
``ToolApproved(override_args={**args, "edited_arguments": {...}})`` edits it.

Tool search: ``search="toolmgmt"`` (default) lists toolmgmt's meta-tools and never marks a tool
deferred, so PydanticAI's own ``ToolSearch`` (auto-injected, active only when some tool is
deferred) stays silent. ``search="pydantic_ai"`` lists every visible tool as
``defer_loading=True`` (always-on tools as plain tools) and no meta-tools: PydanticAI's
``search_tools`` or the provider's native search reveals them, and calls still go through the
session (policy, validation, truncation); this needs
``ToolManager(discovery=Discovery(call_unloaded="load"))``.
One search tool at a time: do not also mark tools outside this toolset ``defer_loading``
in ``search="toolmgmt"`` mode.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from typing import Any, Literal

from toolmgmt_core import (
    ApprovalEdit,
    ApprovalRequest,
    CallContext,
    ConfigError,
    DuplicateToolError,
    Tool,
    ToolAnnotations,
    ToolCallError,
    ToolManager,
    ToolResult,
    ToolSession,
    ToolUnavailableError,
)
from toolmgmt_core.integration import (
    CALL_TOOL,
    EXECUTE_TOOL,
    NO_CONTEXT,
    RUN_CODE,
    ApprovalAsker,
    ProgramStateError,
    Slot,
    UsedApprovals,
    approval_key,
    call_store,
    passthrough,
    replayed_approval,
    require_version,
    restore_loaded,
)

MIN_PYDANTIC_AI_VERSION = "2.45"
"""Oldest supported ``pydantic-ai-slim``: the first whose ``pydantic_ai.mcp`` (``MCPToolset``,
since 1.97) imports beside FastMCP 4 (2.32 to 2.44 import ``httpx`` there without depending on
it). The ``pydantic-ai`` extra's floor in pyproject.toml is the same (a test checks)."""

try:
    from pydantic_ai import RunContext
    from pydantic_ai.exceptions import ApprovalRequired, CallDeferred, ModelRetry
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import AbstractToolset
    from pydantic_ai.toolsets.abstract import ToolsetTool
    from pydantic_core import SchemaValidator, core_schema
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        'toolmgmt_pydantic_ai needs PydanticAI: pip install "toolmgmt[pydantic-ai]"'
    ) from exc

require_version("pydantic-ai-slim", MIN_PYDANTIC_AI_VERSION, "pydantic-ai")

from toolmgmt_pydantic_ai.markers import approval_marker, approval_required  # noqa: E402
from toolmgmt_pydantic_ai.programs import asked_about, keep_run, kept_run  # noqa: E402

__all__ = ["MIN_PYDANTIC_AI_VERSION", "ManagedToolset"]

_SIGNALS: tuple[type[Exception], ...] = (ApprovalRequired, CallDeferred, ModelRetry)
_TOOL_FAILED: type[Exception] | None = None
try:  # a terminal failure the model sees, newer than the oldest supported version
    from pydantic_ai.exceptions import ToolFailed

    _SIGNALS += (ToolFailed,)
    _TOOL_FAILED = ToolFailed
except ImportError:  # pragma: no cover - older pydantic-ai
    pass

_ANY_ARGS = SchemaValidator(core_schema.dict_schema())
_KEPT_SESSIONS = 128
_SEARCHES = ("toolmgmt", "pydantic_ai")
_RUNNERS = (CALL_TOOL, EXECUTE_TOOL)
_RUN: Slot[tuple[Any, Any]] = Slot("pydantic_ai run")
"""A call's slot for the agent run it belongs to and its ``RunContext`` (a wrapped tool's
handler forwards to the run's own toolset)."""
_APPROVALS_KEPT = 24 * 3600.0
"""Seconds a used approval is remembered (a resumed run's approval has no expiry of its own)."""
_USED = UsedApprovals(_APPROVALS_KEPT)
"""Approvals used in this process, by every toolset (a fresh agent and toolset per request
replays a history in the same process)."""


class _Run:
    """One agent run: its session and the wrapped toolsets' run copies."""

    def __init__(
        self,
        session: ToolSession,
        toolsets: list[tuple[str, AbstractToolset[Any]]],
        history: list[tuple[str, Any]] | None = None,
    ):
        self.session = session
        self.toolsets = toolsets
        self.history = history
        """Tool results of the run's ``message_history``, whose loads are restored once the
        wrapped toolsets' tools are in the catalog (on the first step)."""
        self.tools: dict[str, tuple[AbstractToolset[Any], ToolsetTool[Any]]] | None = None
        self.plain: frozenset[str] | None = None
        self.lock = asyncio.Lock()
        self.listed = False
        """Whether a step listed the tools yet (the first step uses the session as opened)."""

    async def listing(self, ctx: RunContext[Any]) -> dict[str, tuple[AbstractToolset[Any], Any]]:
        async with self.lock:
            if self.tools is None:
                tools: dict[str, tuple[AbstractToolset[Any], ToolsetTool[Any]]] = {}
                for _, toolset in self.toolsets:
                    for name, tool in (await toolset.get_tools(ctx)).items():
                        tools.setdefault(name, (toolset, tool))
                self.tools = tools
            return self.tools


def _forward(name: str) -> Callable[..., Any]:
    """The catalog handler of a wrapped tool: calls the wrapped toolset of the run its call
    carries (under :data:`_RUN`: the run and its ``RunContext``)."""

    async def call_wrapped(toolmgmt_context: CallContext = NO_CONTEXT, **arguments: Any) -> Any:
        current = toolmgmt_context.get(_RUN)
        if not isinstance(current, tuple):
            raise ToolUnavailableError(
                f"{name!r} comes from a PydanticAI toolset and runs only inside an agent run "
                "that uses its ManagedToolset.",
                tool_name=name,
            )
        run, ctx = current
        entry = (await run.listing(ctx)).get(name)
        if entry is None:
            raise ToolUnavailableError(
                f"{name!r} is no longer offered by its toolset.", tool_name=name
            )
        toolset, tool = entry
        arguments = tool.args_validator.validate_python(arguments)
        if toolmgmt_context.requires is not None and approval_required(
            toolset, ctx, tool, arguments
        ):
            # The session asked for this approval before the call ran (the marker below).
            ctx = dataclasses.replace(ctx, tool_call_approved=True)
        return await toolset.call_tool(name, arguments, ctx, tool)

    call_wrapped.__name__ = f"call_{name}"
    return call_wrapped


class ManagedToolset(AbstractToolset[Any]):
    """A toolset that lists a toolmgmt session's tools and runs calls through the session.

    Args:
        manager: the catalog and its discovery configuration.
        toolsets: PydanticAI toolsets (function toolsets, MCP servers, ...) whose tools join
            the catalog; a mapping gives each one's domain, a list uses the toolset's ``id``
            (or ``"general"``).
        search: ``"toolmgmt"`` or ``"pydantic_ai"`` (see the module docstring).
        state: ``ctx -> session state or None`` to resume a run's session from
            ``session.to_json()`` saved earlier (for example in ``ctx.deps``).
        conversation: ``ctx -> conversation id or None``: the run's session is that
            conversation of the manager's session store (``ctx.run_id`` keys it by the run);
            None from it, a session of the run alone. Not with ``state``.
        instructions: add the mode's short instructions to the agent's instructions.
        approval: defer calls that need approval to PydanticAI's human-in-the-loop
            (``DeferredToolRequests``) when the manager has no ``approval`` callback.
        max_retries: PydanticAI retries per meta-tool (errors reach the model as results
            anyway); a wrapped tool keeps its own.
        id: the toolset id (needed for durable execution).
    """

    def __init__(
        self,
        manager: ToolManager,
        toolsets: Sequence[AbstractToolset[Any]] | Mapping[str, AbstractToolset[Any]] = (),
        *,
        search: Literal["toolmgmt", "pydantic_ai"] = "toolmgmt",
        state: Callable[[RunContext[Any]], Mapping[str, Any] | None] | None = None,
        conversation: Callable[[RunContext[Any]], str | None] | None = None,
        instructions: bool = True,
        approval: bool = True,
        max_retries: int = 1,
        id: str | None = None,
    ) -> None:
        if not isinstance(manager, ToolManager):
            raise TypeError(
                f"ManagedToolset needs a ToolManager, got {type(manager).__name__}: "
                "ManagedToolset(ToolManager(catalog, mode='search'), toolsets=[...])."
            )
        if state is not None and conversation is not None:
            raise ConfigError(
                "Give state= or conversation=, not both: a conversation resumes from the "
                "manager's session store, state= from a saved session.to_json()."
            )
        if search not in _SEARCHES:
            raise ConfigError(f"search must be 'toolmgmt' or 'pydantic_ai', got {search!r}.")
        if search == "pydantic_ai" and manager.discovery.call_unloaded != "load":
            raise ConfigError(
                "search='pydantic_ai' lets PydanticAI reveal tools the session has not listed, "
                "so the session must run them: build the manager with "
                "discovery=Discovery(call_unloaded='load')."
            )
        items = (
            list(toolsets.items()) if isinstance(toolsets, Mapping) else list(enumerate(toolsets))
        )
        for key, toolset in items:
            if not isinstance(toolset, AbstractToolset):
                raise TypeError(
                    f"toolsets[{key!r}] is a {type(toolset).__name__}, not a PydanticAI "
                    "toolset; wrap functions in FunctionToolset([...])."
                )
        pairs = [(k if isinstance(k, str) else (t.id or "general"), t) for k, t in items]
        self.manager = manager
        self.toolsets = pairs
        self.search = search
        self.state = state
        self.conversation = conversation
        self.instructions = instructions
        self.approval = approval
        self.max_retries = max_retries
        self.sessions: OrderedDict[str, ToolSession] = OrderedDict()
        """Sessions of recent runs by run id (the latest ones are kept)."""
        self._id = id
        self._ingested = False
        self._ingest_lock = threading.Lock()
        self._run: _Run | None = None
        self._origin = self
        self._stack: AsyncExitStack | None = None
        self._used = UsedApprovals(_APPROVALS_KEPT)

    @property
    def id(self) -> str | None:
        return self._id

    def session_for(self, run_id: str) -> ToolSession:
        """The session of the run ``run_id`` (``result.run_id``)."""
        try:
            return self.sessions[run_id]
        except KeyError:
            raise KeyError(
                f"No session for run {run_id!r}; recent: {list(self.sessions)}."
            ) from None

    # -- lifecycle ----------------------------------------------------------------------------

    async def for_run(self, ctx: RunContext[Any]) -> ManagedToolset:
        run_copy = copy.copy(self)
        pairs = [(domain, await toolset.for_run(ctx)) for domain, toolset in self.toolsets]
        conversation = self.conversation(ctx) if self.conversation else None
        history: list[tuple[str, Any]] | None = None
        if conversation is not None:
            session = await call_store(
                self.manager.session_store, lambda: self.manager.session(conversation)
            )
            history = _tool_results(ctx.messages) if ctx.messages else None
        else:
            saved = self.state(ctx) if self.state else None
            session = self.manager.session(saved)
            if saved is None and ctx.messages:
                history = _tool_results(ctx.messages)
        run_copy._run = _Run(session, pairs, history)
        run_copy._stack = None
        if ctx.run_id:
            self.sessions[ctx.run_id] = run_copy._run.session
            while len(self.sessions) > _KEPT_SESSIONS:
                self.sessions.popitem(last=False)
        return run_copy

    async def __aenter__(self) -> ManagedToolset:
        async with AsyncExitStack() as stack:
            for _, toolset in self._current().toolsets:
                await stack.enter_async_context(toolset)
            self._stack = stack.pop_all()
        return self

    async def __aexit__(self, *args: Any) -> bool | None:
        if self._stack is not None:
            await self._stack.aclose()
            self._stack = None
        return None

    def _current(self) -> _Run:
        if self._run is None:  # used outside Agent.run: one session for the toolset
            self._run = _Run(self.manager.session(), list(self.toolsets))
        return self._run

    # -- ingestion ------------------------------------------------------------------------------

    async def _ingest(self, run: _Run, ctx: RunContext[Any]) -> None:
        origin = self._origin
        if origin._ingested:
            return
        listing = await run.listing(ctx)
        domains = {id(t): d for d, t in run.toolsets}
        catalog = self.manager.catalog
        with origin._ingest_lock:
            if origin._ingested:
                return
            new: list[Tool] = []
            for name, (toolset, tool) in listing.items():
                existing = catalog.find(name)
                if existing is not None:
                    if existing.metadata.get("pydantic_ai"):
                        continue
                    raise DuplicateToolError(
                        f"PydanticAI tool {name!r} clashes with catalog tool {name!r} (domain "
                        f"{existing.domain!r}); rename one, e.g. toolset.prefixed('crm').",
                    )
                new.append(_convert(tool.tool_def, domains.get(id(toolset), "general")))
            catalog.add_many(new)
            origin._ingested = True
        missing = [n for n in self.manager.always_on if n not in catalog]
        if missing:
            closest = catalog.suggest(missing[0])
            hint = f" Closest: {', '.join(closest)}." if closest else ""
            raise ConfigError(
                f"always_on names {', '.join(map(repr, missing))}, which neither the catalog nor "
                f"the wrapped toolsets hold.{hint}"
            )

    # -- listing and calls ----------------------------------------------------------------------

    async def get_instructions(self, ctx: RunContext[Any]) -> str | None:
        if not self.instructions or self.search != "toolmgmt":
            return None
        return self._current().session.instructions or None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        run = self._current()
        await self._ingest(run, ctx)
        session = run.session
        if run.history is not None:  # the wrapped tools are in the catalog now
            history, run.history = run.history, None
            # Loads only add up, and only what the policy allows; a conversation's store is
            # written from a worker thread.
            await call_store(self.manager.session_store, lambda: restore_loaded(session, history))
        if run.listed:  # what another worker saved to the conversation since the last step
            await session.refresh()
        run.listed = True
        listed = session.tools()
        wrapped = run.tools or {}
        if self.search == "toolmgmt":
            return {t.name: self._toolset_tool(t, wrapped, deferred=False) for t in listed}
        if run.plain is None:  # always-on tools, listed plainly; fixed for the run
            run.plain = frozenset(t.name for t in listed if not t.metadata.get("meta"))
        return {
            t.name: self._toolset_tool(t, wrapped, deferred=t.name not in run.plain)
            for t in session.visible_tools()
        }

    def _toolset_tool(
        self, tool: Tool, wrapped: Mapping[str, tuple[Any, ToolsetTool[Any]]], *, deferred: bool
    ) -> ToolsetTool[Any]:
        own = wrapped.get(tool.name)
        marks = {"toolmgmt": True, "annotations": tool.annotations.to_mcp()}
        if own is not None:
            # A wrapped tool keeps every field of its own definition (``kind="unapproved"``,
            # ``strict``, ``sequential``...): toolmgmt owns only the description (a policy may
            # override it), the deferral, and its marks in the metadata.
            original = own[1].tool_def
            definition = dataclasses.replace(
                original,
                description=tool.description,
                defer_loading=deferred,
                metadata={**(original.metadata or {}), **marks},
            )
        else:
            definition = ToolDefinition(
                name=tool.name,
                description=tool.description,
                parameters_json_schema=dict(tool.parameters),
                metadata=marks,
                defer_loading=deferred,
            )
        return ToolsetTool(
            toolset=self,
            tool_def=definition,
            # A wrapped tool's ModelRetry counts against its own retries, as without toolmgmt.
            max_retries=own[1].max_retries if own is not None else self.max_retries,
            args_validator=_ANY_ARGS,
        )

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        run = self._current()
        context = CallContext(call_id=ctx.tool_call_id, slots={_RUN: (run, ctx)})
        if self.approval:
            context = context.replace(requires=approval_marker(lambda: run.tools, ctx))
            asked = _model_arguments(ctx) if ctx.tool_call_approved else None
            if name in _RUNNERS and isinstance(asked, Mapping) and "tool_name" not in tool_args:
                # ``override_args`` in the inner tool's terms: the call_tool they edit.
                tool_args = {"tool_name": asked.get("tool_name"), "arguments": tool_args}
            kept = kept_run(ctx) if name == RUN_CODE and ctx.tool_call_approved else None
            refused = _lost(name, ctx, kept)
            if refused is not None:  # before anything runs
                return _native(run.session.error_result(name, refused))
            once = _Once([(_USED, _grant(ctx)), (self._origin._used, ctx.tool_call_id)])
            edit, runner = tool_args, name in _RUNNERS
            if runner and asked is not None:  # the model's call runs; the override edits it
                tool_args = dict(asked)
            context = context.replace(approver=_approver(ctx, edit, asked, runner, once, kept))
            if name == RUN_CODE:  # its paused program is kept in the message history
                state = kept.get("resume_state") if kept is not None else None
                context = context.replace(keeps_state=True, resume_state=state)
        if name == RUN_CODE:  # a reviewer's edit of the program's pending call
            tool_args = _without_edit(tool_args)
        with passthrough(*_SIGNALS):
            result = await run.session.call(name, tool_args, context=context)
        return _native(result)


def _native(result: ToolResult) -> Any:
    """The core's outcome in PydanticAI's own form: the content on success; ``ModelRetry`` when
    the model can fix its call (so the tool's retry count applies, as without toolmgmt);
    ``ToolFailed`` when it was refused or failed (a failed result the model sees, no retry)."""
    if result.outcome == "success":
        return result.content
    if result.outcome == "retry":
        raise ModelRetry(result.content)
    if _TOOL_FAILED is not None:
        raise _TOOL_FAILED(result.content)
    return result.content  # pragma: no cover - PydanticAI before ToolFailed


@dataclasses.dataclass
class _Once:
    """Where a resumed call's approval is recorded as used: one approval, one run."""

    grants: list[tuple[UsedApprovals, str | None]]
    """Each record and the call's grant in it: the process's (the call's id and response time,
    whichever toolset resumes it) and the toolset's (its id alone, however the history was
    rebuilt)."""

    def claim(self, request: ApprovalRequest, arguments: Mapping[str, Any] | None = None) -> None:
        # Bound to the model's call and the tool, whatever the reviewer's edit: resuming the
        # same history again, edited or not, runs nothing. A program's calls (run_code) share
        # the model's call id, so theirs name their run, place and arguments.
        for used, grant in self.grants:
            key = approval_key("", request.tool.name, arguments or {}, grant or "")
            if grant is not None and not used.claim(key):
                raise replayed_approval(request.tool.name)


def _inner(arguments: Mapping[str, Any]) -> Any:
    """The inner tool's arguments of a ``call_tool`` call (beside ``tool_name`` when the
    model left out ``arguments``, as the session reads them)."""
    inner = arguments.get("arguments")
    return inner if inner is not None else {k: v for k, v in arguments.items() if k != "tool_name"}


def _approver(
    ctx: RunContext[Any],
    arguments: Mapping[str, Any],
    asked: Mapping[str, Any] | None,
    runner: bool,
    once: _Once,
    kept: Mapping[str, Any] | None = None,
) -> ApprovalAsker:
    """Approval through PydanticAI's deferred tools: the first call pauses the run, the call
    resumed with ``DeferredToolResults(approvals={id: True})`` runs once (a denied one never
    reaches the toolset); resumed with ``ToolApproved(override_args=...)``, PydanticAI hands
    the toolset the reviewer's ``arguments``, which is the core's edit (its result says what
    ran, as through every integration). Through ``call_tool`` (``runner``) the pause names the inner
    tool and its arguments, and an edit changes the inner tool's arguments, never the tool."""

    answered = False

    def approve(request: ApprovalRequest) -> bool | ApprovalEdit:
        nonlocal answered
        # One approval answers one ask: a code-mode program's next call that needs approval
        # pauses the run again (its metadata names that call).
        # A program's call: the approval answers the call it was asked about, no other.
        other = request.run_id is not None and (kept is None or not asked_about(kept, request))
        if not ctx.tool_call_approved or answered or other:
            keep_run(ctx, request)
            raise ApprovalRequired(
                metadata={
                    "tool_name": request.tool.name,
                    "arguments": request.arguments,
                    "reason": request.reason,
                    "via": ctx.tool_name,
                }
            )
        answered = True
        if ctx.tool_name == RUN_CODE:  # a program's call: bound to its place in its run too
            once.claim(
                request,
                {"run": request.run_id, "call": request.call_index, "args": request.arguments},
            )
            edit = arguments.get("edited_arguments") if asked != arguments else None
            return ApprovalEdit(dict(edit)) if isinstance(edit, Mapping) else True
        given, expected = (_inner(arguments), _inner(asked or {})) if runner else (arguments, asked)
        once.claim(request)
        # Through call_tool an edit may name a tool; the core refuses one naming another.
        tool = arguments.get("tool_name") if runner else None
        if asked is None or (given == expected and tool == asked.get("tool_name")):
            return True
        return ApprovalEdit(dict(given), tool_name=tool)

    return approve


def _lost(name: str, ctx: RunContext[Any], kept: Mapping[str, Any] | None) -> ToolCallError | None:
    """The refusal of an approved ``run_code`` call whose paused program's state is not in the
    message history: it never starts over (the calls before its pause would run again)."""
    if name != RUN_CODE or not ctx.tool_call_approved or kept is not None:
        return None
    return ProgramStateError(
        "The paused program could not be resumed: its state is not in the message history "
        "(pass the history the paused run returned, all_messages(), unchanged). Nothing ran. "
        "Run the program again. If PydanticAI itself asked to approve run_code "
        "(requires_approval, approval_required), leave run_code unmarked: toolmgmt asks about "
        "each call of the program that needs approval.",
        tool_name=RUN_CODE,
    )


def _without_edit(arguments: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in arguments.items() if k != "edited_arguments"}


def _grant(ctx: RunContext[Any]) -> str | None:
    """What an approval of the call being run is bound to: its id and when the model response
    that made it was made (a model may reuse ids across conversations; a replayed history keeps
    both)."""
    if ctx.tool_call_id is None:
        return None
    for message in reversed(ctx.messages):
        if isinstance(message, ModelResponse) and any(
            isinstance(p, ToolCallPart) and p.tool_call_id == ctx.tool_call_id
            for p in message.parts
        ):
            return f"{ctx.tool_call_id}@{message.timestamp.isoformat()}"
    return ctx.tool_call_id


def _model_arguments(ctx: RunContext[Any]) -> dict[str, Any] | None:
    """The arguments the model gave the call being run (None when the history lacks it)."""
    for message in reversed(ctx.messages):
        if isinstance(message, ModelResponse):
            for part in message.parts:
                if isinstance(part, ToolCallPart) and part.tool_call_id == ctx.tool_call_id:
                    try:
                        return part.args_as_dict()
                    except ValueError:
                        return None
    return None


def _tool_results(messages: Sequence[ModelMessage]) -> list[tuple[str, Any]]:
    """``(tool name, content)`` of each tool result in a PydanticAI message history."""
    return [
        (part.tool_name, part.content)
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        # A retry prompt, a denial or a failure is no result (``outcome`` came in 1.8x).
        if isinstance(part, ToolReturnPart) and getattr(part, "outcome", "success") == "success"
    ]


def _convert(definition: ToolDefinition, domain: str) -> Tool:
    metadata = definition.metadata or {}
    # PydanticAI's own approval marker, kept in the core's terms: the policy asks for approval
    # on every path to the tool (``call_tool`` too), not only where PydanticAI sees its kind.
    marker = (
        {"requires_approval": "PydanticAI requires_approval"}
        if definition.kind == "unapproved"
        else {}
    )
    annotations = metadata.get("annotations")
    return Tool(
        name=definition.name,
        description=definition.description or "",
        parameters=definition.parameters_json_schema or {"type": "object", "properties": {}},
        domain=domain,
        defer_loading=True if definition.defer_loading else None,
        annotations=ToolAnnotations.from_mapping(
            annotations if isinstance(annotations, Mapping) else None
        ),
        timeout=definition.timeout,
        handler=_forward(definition.name),
        metadata={"pydantic_ai": True, "tool_definition": definition, **marker},
    )
