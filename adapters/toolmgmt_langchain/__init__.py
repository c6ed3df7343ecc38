"""LangChain adapter: a ``create_agent`` middleware whose tools come from a toolmgmt session.

Usage::

    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from toolmgmt_core import ToolCatalog, ToolManager
    from toolmgmt_langchain import ToolManagerMiddleware, add_langchain_tools

    catalog = ToolCatalog()
    add_langchain_tools(catalog, my_langchain_tools, domain="crm")  # MCP tools too
    agent = create_agent(
        "openai:gpt-4.1",
        tools=[],  # the middleware supplies and runs them
        middleware=[ToolManagerMiddleware(ToolManager(catalog, mode="search"))],
        checkpointer=InMemorySaver(),
    )
    agent.invoke({"messages": [...]}, {"configurable": {"thread_id": "1"}})

Each model call gets the session's tools (meta-tools, then always-on, then loaded tools);
each tool call runs through the session (policy, validation, truncation) and the session's
state travels in the agent state under ``"toolmgmt"``, so a checkpointer restores loaded tools.
Tools passed to ``create_agent`` that are not in the catalog are left to LangChain.

LangGraph's control flow passes through the session untouched: a catalog tool that calls
``interrupt()`` pauses the graph and resumes with ``Command(resume=...)``. A call that needs
approval under toolmgmt's policy (a step's ``require_approval``, or a destructive tool) pauses
with ``interrupt()`` when the manager has no ``approval`` callback, in the shape of
``HumanInTheLoopMiddleware``'s per-call requests (``{"type": "tool_approval", "tool_call_id",
"name", "args", "description"}``); resume with ``Command(resume={"type": "approve"})`` (or
``{"type": "reject", "message": ...}``, ``{"decisions": [...]}``, True or False). An approved
call runs once through the session; a rejected one never runs and the model is told why. This
needs a checkpointer; ``approval=False`` leaves approval to the manager alone.

LangChain tools taking ``ToolRuntime``, ``InjectedState``, ``InjectedStore`` or
``InjectedToolCallId`` arguments run through the agent's own ``ToolNode``, which supplies those
values (a ``Command`` they return updates the agent state as usual); outside an agent they
cannot run.

For a hand-written loop: ``bind_session_tools(model, session)`` and
``run_tool_calls(session, ai_message)`` (``arun_tool_calls`` when async).
"""

from __future__ import annotations

import contextlib
import inspect
import threading
import typing
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from typing import Annotated, Any, Literal

from typing_extensions import NotRequired

from toolmgmt_core import (
    ApprovalDeniedError,
    ApprovalRequest,
    CatalogError,
    ConfigError,
    IngestReport,
    InvalidToolError,
    Tool,
    ToolAnnotations,
    ToolExecutionError,
    ToolUnavailableError,
)
from toolmgmt_core.catalog import ToolCatalog
from toolmgmt_core.compat import require_version
from toolmgmt_core.control import ApprovalAsker, framework_approval, passthrough
from toolmgmt_core.manager import ToolManager
from toolmgmt_core.meta_tools import META_TOOL_NAMES
from toolmgmt_core.providers import format_tools
from toolmgmt_core.session import ToolSession

MIN_LANGCHAIN_VERSION = "1.0"
"""Oldest supported ``langchain`` (the ``create_agent`` middleware API)."""

try:
    from langchain.agents.middleware import AgentMiddleware, AgentState
    from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
    from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from langgraph.errors import GraphBubbleUp
    from langgraph.prebuilt import InjectedState, InjectedStore, ToolRuntime
    from langgraph.types import Command, interrupt
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        'toolmgmt_langchain needs LangChain: pip install "toolmgmt[langchain]"'
    ) from exc

require_version("langchain", MIN_LANGCHAIN_VERSION, "langchain")

from toolmgmt_langchain.embeddings import LangChainEmbedder  # noqa: E402

__all__ = [
    "LangChainEmbedder",
    "MIN_LANGCHAIN_VERSION",
    "STATE_KEY",
    "ToolManagerMiddleware",
    "ToolManagerState",
    "add_langchain_tools",
    "arun_tool_calls",
    "bind_session_tools",
    "run_tool_calls",
    "session_tool_definitions",
]

STATE_KEY = "toolmgmt"
"""Agent-state key holding ``{"rev": n, "session": session.to_json()}``."""

_LIVE_STEPS = 256
_PROVIDERS = ("openai", "anthropic")
_SIGNALS = (GraphBubbleUp,)
"""LangGraph's control flow (``interrupt()``'s GraphInterrupt, a parent ``Command``)."""
_DECISIONS = ("approve", "reject")
"""The HumanInTheLoopMiddleware decisions an approval request takes."""
_SUPPLIED = (InjectedState, InjectedStore, InjectedToolCallId, ToolRuntime)
"""Injected argument kinds the ToolNode supplies (a plain InjectedToolArg it does not)."""


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


def session_tool_definitions(session: ToolSession, provider: str = "openai") -> list[Any]:
    """The session's tools as dicts every LangChain chat model accepts in ``bind_tools``.

    ``provider`` picks the core's formatting: ``"openai"`` (function dicts; at most 128 tools)
    or ``"anthropic"`` (``input_schema`` dicts; no such cap). Names are made provider-safe and
    the session resolves them back.
    """
    if provider not in _PROVIDERS:
        raise ConfigError(f"provider must be 'openai' or 'anthropic', got {provider!r}.")
    return list(format_tools(session, provider)["tools"])


def bind_session_tools(
    model: Any, session: ToolSession, *, provider: str = "openai", **kwargs: Any
) -> Any:
    """``model.bind_tools`` with the session's current tools; call again after each step."""
    return model.bind_tools(session_tool_definitions(session, provider), **kwargs)


def _tool_message(call: Mapping[str, Any], result: Any) -> ToolMessage:
    return ToolMessage(
        content=result.content,
        tool_call_id=call["id"],
        name=call["name"],
        status="error" if result.is_error else "success",
    )


def run_tool_calls(session: ToolSession, message: AIMessage) -> list[ToolMessage]:
    """Run every tool call of ``message`` through the session; one ``ToolMessage`` per call.

    Inside a LangGraph node, an ``interrupt()`` from a tool passes through and pauses it.
    """
    with passthrough(*_SIGNALS):
        return [
            _tool_message(
                call, session.call_sync(call["name"], call.get("args"), call_id=call["id"])
            )
            for call in message.tool_calls
        ]


async def arun_tool_calls(session: ToolSession, message: AIMessage) -> list[ToolMessage]:
    """Async :func:`run_tool_calls` (calls run one after another, in order)."""
    with passthrough(*_SIGNALS):
        return [
            _tool_message(
                call, await session.call(call["name"], call.get("args"), call_id=call["id"])
            )
            for call in message.tool_calls
        ]


class _NodeCall:
    """The ToolNode call a middleware answers: where tools with injected arguments run."""

    def __init__(self, request: Any, execute: Callable[[Any], Any]) -> None:
        self.request = request
        self.execute = execute
        self.commands: list[Command[Any]] = []
        """Commands those tools returned, merged into the middleware's answer."""


_NODE: ContextVar[_NodeCall | None] = ContextVar("toolmgmt_langchain_node", default=None)


def _interrupt_approver(call: Mapping[str, Any]) -> ApprovalAsker:
    """Approval through ``interrupt()``, in HumanInTheLoopMiddleware's per-call shape."""

    def approve(request: ApprovalRequest) -> bool:
        name = request.tool.name
        answer = interrupt(
            {
                "type": "tool_approval",
                "tool_call_id": call["id"],
                "name": name,
                "args": request.arguments,
                "description": f"Tool execution requires approval ({request.reason})\n\n"
                f"Tool: {name}\nArgs: {request.arguments}",
                "allowed_decisions": list(_DECISIONS),
            }
        )
        return _approved(answer, name)

    return approve


def _approved(answer: Any, name: str) -> bool:
    """A reviewer's answer as the approver's verdict (a rejection's reason goes to the model)."""
    if isinstance(answer, Mapping) and isinstance(answer.get("decisions"), list):
        if len(answer["decisions"]) == 1:  # a batched HITLResponse for this one call
            answer = answer["decisions"][0]
    if isinstance(answer, bool):
        return answer
    kind = answer.get("type") if isinstance(answer, Mapping) else None
    if kind == "approve":
        return True
    if kind == "reject":
        reason = answer.get("message")
        if isinstance(reason, str) and reason.strip():
            raise ApprovalDeniedError(
                f"The user rejected the call to {name!r}, so it did not run: {reason.strip()} "
                "Do not retry it unless the user asks.",
                tool_name=name,
            )
        return False
    raise ValueError(  # the approval check fails closed: the call does not run
        f"Cannot read the answer {answer!r} to the approval of {name!r}: resume with "
        f"{{'type': one of {list(_DECISIONS)}}} (a 'reject' may carry a 'message'), "
        "{'decisions': [that]}, True or False."
    )


class _Live:
    """The session shared by the parallel tool calls of one model step."""

    def __init__(self, session: ToolSession, rev: int) -> None:
        self.session = session
        self.rev = rev
        self.lock = threading.Lock()

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            self.rev += 1
            return {"rev": self.rev, "session": self.session.to_json()}


class ToolManagerMiddleware(AgentMiddleware[ToolManagerState, Any, Any]):
    """Puts a toolmgmt session between a ``create_agent`` agent and its tools.

    Args:
        manager: the catalog and its discovery configuration.
        provider: the core formatting sent to ``bind_tools`` (``"openai"`` or ``"anthropic"``,
            see :func:`session_tool_definitions`).
        instructions: append the mode's short instructions to the system message.
        approval: pause calls that need approval with ``interrupt()`` when the manager has no
            ``approval`` callback (see the module docstring; needs a checkpointer).
    """

    state_schema = ToolManagerState
    tools: Sequence[BaseTool] = ()

    def __init__(
        self,
        manager: ToolManager,
        *,
        provider: str = "openai",
        instructions: bool = True,
        approval: bool = True,
    ) -> None:
        super().__init__()
        if not isinstance(manager, ToolManager):
            raise TypeError(
                f"ToolManagerMiddleware needs a ToolManager, got {type(manager).__name__}: "
                "ToolManagerMiddleware(ToolManager(catalog, mode='search'))."
            )
        if provider not in _PROVIDERS:
            raise ConfigError(f"provider must be 'openai' or 'anthropic', got {provider!r}.")
        self.manager = manager
        self.provider = provider
        self.instructions = instructions
        self.approval = approval
        self._live: OrderedDict[tuple[Any, ...], _Live] = OrderedDict()
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

    def _live_for(self, state: Mapping[str, Any], call_id: str) -> _Live:
        rev, _ = _snapshot(state)
        key = (_step_id(state, call_id), rev)
        with self._lock:
            live = self._live.get(key)
            if live is None:
                live = _Live(self.session_from_state(state), rev)
                self._live[key] = live
                while len(self._live) > _LIVE_STEPS:
                    self._live.popitem(last=False)
            return live

    def _manages(self, name: str, tool: BaseTool | None) -> bool:
        # Unknown names go to the session too, which answers with the closest names.
        return (
            tool is None or name in META_TOOL_NAMES or self.manager.catalog.find(name) is not None
        )

    @contextlib.contextmanager
    def _scope(self, call: Mapping[str, Any], node: _NodeCall) -> Iterator[None]:
        """LangGraph's signals pass, approval asks ``interrupt()``, injected tools find the
        ToolNode: for this one call."""
        approver = _interrupt_approver(call) if self.approval else None
        token = _NODE.set(node)
        try:
            with passthrough(*_SIGNALS), framework_approval(approver):
                yield
        finally:
            _NODE.reset(token)

    def _answer(
        self, call: Mapping[str, Any], live: _Live, result: Any, node: _NodeCall
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
        update.update(
            {"messages": [*messages, _tool_message(call, result)], STATE_KEY: live.snapshot()}
        )
        return Command(update=update, goto=goto)

    # -- model calls ------------------------------------------------------------------------

    def _prepare(self, request: Any) -> Any:
        session = self.session_from_state(request.state)
        managed = session_tool_definitions(session, self.provider)
        # Provider built-ins (dicts) and framework tools outside the catalog stay as they are.
        kept = [
            t
            for t in request.tools
            if not isinstance(t, BaseTool)
            or (t.name not in META_TOOL_NAMES and self.manager.catalog.find(t.name) is None)
        ]
        overrides: dict[str, Any] = {"tools": [*managed, *kept]}
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
        live = self._live_for(request.state, call["id"])
        node = _NodeCall(request, handler)
        with self._scope(call, node):
            result = live.session.call_sync(call["name"], call.get("args"), call_id=call["id"])
        return self._answer(call, live, result, node)

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        call = request.tool_call
        if not self._manages(call["name"], request.tool):
            return await handler(request)
        live = self._live_for(request.state, call["id"])
        node = _NodeCall(request, handler)
        with self._scope(call, node):
            result = await live.session.call(call["name"], call.get("args"), call_id=call["id"])
        return self._answer(call, live, result, node)


def _step_id(state: Mapping[str, Any], call_id: str) -> str:
    """The id of the AI message that made the call ``call_id``: one per model step."""
    for message in reversed(state.get("messages") or []):
        if isinstance(message, AIMessage) and any(
            c.get("id") == call_id for c in message.tool_calls
        ):
            return str(message.id or call_id)
    return call_id


# -- ingestion ------------------------------------------------------------------------------


def _in_tool_node(tool: BaseTool, injected: Sequence[str]) -> Any:
    """The handler of a tool with injected arguments: the agent's ToolNode runs it."""

    async def run_in_tool_node(**arguments: Any) -> Any:
        node = _NODE.get()
        if node is None:
            raise ToolUnavailableError(
                f"Tool {tool.name!r} takes arguments LangChain supplies at run time "
                f"({', '.join(injected)}), so it runs only inside a create_agent agent with "
                "ToolManagerMiddleware; use another tool.",
                tool_name=tool.name,
            )
        call = {**node.request.tool_call, "name": tool.name, "args": arguments}
        response = node.execute(node.request.override(tool=tool, tool_call=call))
        if inspect.isawaitable(response):
            response = await response
        if isinstance(response, Command):
            node.commands.append(response)
            update = response.update if isinstance(response.update, Mapping) else {}
            own = [
                m
                for m in update.get("messages") or []
                if isinstance(m, ToolMessage) and m.tool_call_id == call["id"]
            ]
            return own[-1].content if own else "Done."
        if isinstance(response, ToolMessage):
            if response.status == "error":
                raise ToolExecutionError(
                    f"Tool {tool.name!r} failed: {response.content}", tool_name=tool.name
                )
            return response.content
        return response

    run_in_tool_node.__name__ = f"run_{tool.name}"
    return run_in_tool_node


def _handler(tool: BaseTool) -> Any:
    if isinstance(tool, StructuredTool) and tool.func is None and tool.coroutine is not None:

        async def run_async(**arguments: Any) -> Any:  # async-only, as MCP tools are
            return await tool.ainvoke(arguments)

        return run_async
    return lambda **arguments: tool.invoke(arguments)


def add_langchain_tools(
    catalog: ToolCatalog,
    tools: Iterable[BaseTool],
    *,
    on_error: Literal["raise", "skip"] = "raise",
    **fields: Any,
) -> IngestReport:
    """Add LangChain tools (including MCP tools from ``langchain-mcp-adapters``) to a catalog.

    Each keeps its name, description and argument schema; its handler invokes the tool
    (``ainvoke`` for async-only ones). A tool taking arguments the agent supplies at run time
    (``ToolRuntime``, ``InjectedState``, ``InjectedStore``, ``InjectedToolCallId``) runs through
    the agent's ``ToolNode`` when ``ToolManagerMiddleware`` answers its call (and nowhere
    else); one with a required plain ``InjectedToolArg``, which only the caller's own code
    can supply, is refused.

    Args:
        catalog: where to add them.
        tools: ``BaseTool`` instances (``@tool`` functions, ``StructuredTool``, MCP tools).
        on_error: ``"raise"`` adds none when one is bad; ``"skip"`` adds the good ones.
        fields: :class:`~toolmgmt_core.Tool` fields for every tool (``domain``, ``group``, ...).

    Raises:
        CatalogError: with ``on_error="raise"``, the first bad tool; nothing is added.
    """
    if on_error not in ("raise", "skip"):
        raise CatalogError(f"on_error must be 'raise' or 'skip', got {on_error!r}.")
    report = IngestReport()
    converted: list[Tool] = []
    for position, tool in enumerate(tools):
        try:
            converted.append(_convert_tool(tool, fields))
        except CatalogError as exc:
            if on_error == "raise":
                raise
            report.skipped.append((str(getattr(tool, "name", f"#{position}")), str(exc)))
    if on_error == "raise":
        catalog.add_many(converted)
        converted, to_add = [], converted
        report.added = [t.name for t in to_add]
    for item in converted:  # "skip": one by one, so a duplicate name skips only itself
        try:
            report.added.append(catalog.add(item).name)
        except CatalogError as exc:
            report.skipped.append((item.name, str(exc)))
    return report


def _convert_tool(tool: Any, fields: Mapping[str, Any]) -> Tool:
    if not isinstance(tool, BaseTool):
        raise InvalidToolError(
            f"Expected a LangChain BaseTool, got {type(tool).__name__}; wrap functions with "
            "langchain_core.tools.tool or add them with catalog.add_function()."
        )
    function = convert_to_openai_tool(tool)["function"]
    parameters = function.get("parameters") or {"type": "object", "properties": {}}
    names: set[str] = set()
    required: set[str] = set()
    if not isinstance(tool.args_schema, Mapping):  # a JSON Schema cannot mark injected fields
        # The fields, not model_json_schema(): a ToolRuntime field has no JSON Schema.
        model_fields = getattr(tool.get_input_schema(), "model_fields", {})
        names = set(model_fields)
        required = {n for n, f in model_fields.items() if f.is_required()}
    injected = sorted(names - set(parameters.get("properties", {})))
    hints = _annotations(tool)
    unsupplied = [
        n for n in injected if n in required and n != "runtime" and not _supplied(hints.get(n))
    ]
    if unsupplied:
        raise InvalidToolError(
            f"LangChain tool {tool.name!r} takes {', '.join(unsupplied)}, a plain "
            "InjectedToolArg that only your own code can supply, so toolmgmt cannot run it. "
            "Bind the value first (a new tool whose function fills it in), or take it as "
            "ToolRuntime / InjectedState, which the agent supplies."
        )
    extra = {"annotations": ToolAnnotations.from_mapping(tool.metadata or {}), **fields}
    extra["metadata"] = {**extra.get("metadata", {}), "langchain_tool": tool}
    return Tool(
        name=function["name"],
        description=function.get("description") or "",
        parameters=parameters,
        handler=_in_tool_node(tool, injected) if injected else _handler(tool),
        **extra,
    )


def _annotations(tool: BaseTool) -> dict[str, Any]:
    """The type hints of a tool's arguments, from its function and its argument schema."""
    found: dict[str, Any] = {}
    for source in (
        getattr(tool, "func", None) or getattr(tool, "coroutine", None),
        tool.args_schema,
    ):
        if source is None or isinstance(source, Mapping):
            continue
        try:
            found.update(typing.get_type_hints(source, include_extras=True))
        except Exception:  # unresolvable forward references: those arguments are checked as
            continue  # plain ones, and the ToolNode still decides at run time
    return found


def _supplied(hint: Any) -> bool:
    """Whether the ToolNode supplies an argument of this type (ToolRuntime, InjectedState...)."""
    stack = [hint]
    while stack:
        item = stack.pop()
        if isinstance(item, _SUPPLIED[:3]):
            return True
        kind = typing.get_origin(item) or item
        if isinstance(kind, type) and issubclass(kind, _SUPPLIED):
            return True
        stack.extend(typing.get_args(item))
        stack.extend(getattr(item, "__metadata__", ()))
    return False
