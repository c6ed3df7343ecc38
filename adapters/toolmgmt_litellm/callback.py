"""``ToolManagerCallback``: each session's tools in the LiteLLM requests that name it.

:func:`prepare_request` sets a request's tools to the session's (formatted for the target
provider) and cuts tool results over the manager's budget; the callback applies it on the async
client path and in the proxy (whose sessions are kept apart per API key and restored from the
conversation's own tool results); :func:`completion_with_tools` applies it on the sync path,
where LiteLLM runs no request-changing hook. Conversations live in the manager's session store
(``manager.session(id)`` on every request): in memory by default, shared by every worker of a
proxy with a ``RedisSessionStore``, so none is ever evicted while alive (they expire after the
store's TTL).

Its own work shows in the completion's trace: a ``toolmgmt prepare_request`` span (the tools
listed, the tool messages cut) under the proxy's request span, or the parent LiteLLM's own span
takes (``metadata["litellm_parent_otel_span"]``, else the current span), when the manager's
OpenTelemetry listener records (:mod:`toolmgmt_core._events.otel`).
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import warnings
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import litellm
from litellm.integrations.custom_logger import CustomLogger
from opentelemetry import trace

from toolmgmt_core import OtelListener, ToolManager, ToolSession, format_tools
from toolmgmt_core.integration import (
    META_TOOL_NAMES,
    SessionSettings,
    StoredSession,
    call_store,
    chat_breakpoints,
    check_session_id,
    has_breakpoints,
    restore_loaded,
)
from toolmgmt_litellm.calls import deferral_for, field_of, target_shape

__all__ = [
    "SESSION_KEY",
    "ToolManagerCallback",
    "completion_with_tools",
    "prepare_request",
]

SESSION_KEY = "toolmgmt_session"
"""The ``metadata`` key naming the session of a request."""

_CHAT_CALLS = ("acompletion", "completion")
_RESPONSES_CALLS = ("aresponses", "responses")
_PREPARED = "toolmgmt_prepared"
"""Set in a request's metadata once its tools are set (the proxy hook, then the client path;
:func:`completion_with_tools`, whose request the sync path's warning then leaves alone)."""
_OWN_KEYS = (SESSION_KEY, _PREPARED)


def _tool_name(tool: Mapping[str, Any]) -> str:
    function = tool.get("function")
    return str((function or {}).get("name") if isinstance(function, Mapping) else tool.get("name"))


def prepare_request(
    session: ToolSession, kwargs: Mapping[str, Any], *, api: str = "chat"
) -> dict[str, Any]:
    """``kwargs`` for ``litellm.(a)completion`` with the session's tools and cut tool messages.

    Tools in ``kwargs["tools"]`` that the catalog does not hold stay (after the session's).
    ``api="responses"`` formats them for ``litellm.(a)responses`` and cuts its
    ``function_call_output`` items instead. A cache-stable session goes out with the provider's
    deferral where LiteLLM reaches its API (Anthropic models; OpenAI's Responses API): run its
    calls with :func:`~toolmgmt_litellm.run_meta_tool_calls`, which answers ``tool_search``
    natively. For Anthropic models, cache breakpoints are placed after the tools, at the end of
    the system prompt and on the last message (:mod:`toolmgmt_core._providers.breakpoints`),
    unless the request carries breakpoints of its own.
    """
    manager = session.manager
    request = dict(kwargs)
    shape = target_shape(request, api)
    anthropic = shape == "anthropic"
    # Anthropic: a breakpoint after the tools sent up front, unless the app placed its own.
    own_marks = has_breakpoints(request.get("tools") or (), request.get("messages") or ())
    cache = anthropic and not own_marks
    managed = format_tools(session, shape, native=deferral_for(request, api), cache_control=cache)[
        "tools"
    ]
    own = [
        t
        for t in request.get("tools") or []
        if _tool_name(t) not in META_TOOL_NAMES and manager.catalog.find(_tool_name(t)) is None
    ]
    request["tools"] = [*managed, *own]
    if not request["tools"]:
        request.pop("tools")
        request.pop("tool_choice", None)
    if request.get("messages"):
        request["messages"] = [_cut(m, session) for m in request["messages"]]
        if cache:  # and at the end of the system prompt and on the last message
            request["messages"] = chat_breakpoints(request["messages"])
    if api == "responses":
        if isinstance(request.get("input"), list):
            request["input"] = [_cut(item, session) for item in request["input"]]
        _keep_to_litellm(request)
    return request


def _keep_to_litellm(request: dict[str, Any]) -> None:
    """Move toolmgmt's keys out of a Responses request's ``metadata``, which LiteLLM forwards
    to the provider, into ``litellm_metadata``, which it keeps to itself."""
    metadata = request.get("metadata")
    if not isinstance(metadata, Mapping) or not any(k in metadata for k in _OWN_KEYS):
        return
    request["litellm_metadata"] = {
        **(request.get("litellm_metadata") or {}),
        **{k: metadata[k] for k in _OWN_KEYS if k in metadata},
    }
    forwarded = {k: v for k, v in metadata.items() if k not in _OWN_KEYS}
    if forwarded:
        request["metadata"] = forwarded
    else:
        request.pop("metadata")


@contextlib.contextmanager
def _prepare_span(
    manager: SessionSettings, session_id: str, kwargs: Mapping[str, Any], parent: Any = None
) -> Iterator[Any]:
    """The span of the callback's work on one request, under ``parent`` (the proxy's request
    span) or the parent LiteLLM gives the completion's own span; none when nothing records."""
    listener = next((x for x in manager.events.listeners if isinstance(x, OtelListener)), None)
    if listener is None or not listener.enabled():
        yield None
        return
    parent = parent or _metadata_of(kwargs).get("litellm_parent_otel_span")
    context = trace.set_span_in_context(parent) if isinstance(parent, trace.Span) else None
    attributes = {
        "gen_ai.conversation.id": session_id,
        "gen_ai.request.model": str(kwargs.get("model", "")),
    }
    with listener.tracer.start_as_current_span(
        "toolmgmt prepare_request", context=context, attributes=attributes
    ) as span:
        yield span


def _describe_request(span: Any, before: Mapping[str, Any], after: Mapping[str, Any]) -> None:
    """What the callback did to a request, on its span: tools listed, tool results cut."""
    if span is None or not span.is_recording():
        return
    cut = 0
    for key in ("messages", "input"):
        new, old = after.get(key), before.get(key)
        if isinstance(new, list) and isinstance(old, list):
            cut += sum(1 for item, was in zip(new, old, strict=False) if item is not was)
    span.set_attributes(
        {"toolmgmt.tools": len(after.get("tools") or []), "toolmgmt.results_cut": cut}
    )


def _cut(message: Any, session: ToolSession) -> Any:
    """A tool result over its budget, cut by the core (the tool's own budget when it names
    one): a Chat ``tool`` message or a Responses API ``function_call_output`` item."""
    if not isinstance(message, Mapping):
        return message
    if message.get("role") == "tool":
        key = "content"
    elif message.get("type") == "function_call_output":
        key = "output"
    else:
        return message
    text = message.get(key)
    if not isinstance(text, str):
        return message
    name = message.get("name")
    cut = session.pipeline.fit(name if isinstance(name, str) else None, text, session.result_budget)
    return {**message, key: cut} if cut != text else message


class ToolManagerCallback(CustomLogger):
    """A LiteLLM callback that sends each session's tools on the async path.

    Each request's session is the conversation its ``metadata["toolmgmt_session"]`` names in
    the manager's session store (:meth:`ToolManager.session`), opened afresh for the request
    and saved after every change: what the app's own session object loaded (running the
    meta-tool calls) is listed in the next request, and with a ``RedisSessionStore`` every
    worker of a proxy serves every conversation.

    Args:
        manager: the catalog, its discovery configuration and its session store.
    """

    def __init__(self, manager: ToolManager) -> None:
        super().__init__()
        if not isinstance(manager, ToolManager):
            raise TypeError(
                f"ToolManagerCallback needs a ToolManager, got {type(manager).__name__}: "
                "ToolManagerCallback(ToolManager(catalog, mode='search'))."
            )
        self.manager = manager
        self._lock = threading.Lock()
        self._warned_sync = False

    def session(self, session_id: str, state: Mapping[str, Any] | None = None) -> ToolSession:
        """The conversation ``session_id`` of the manager's session store: restored when the
        store holds it; else new, or started from ``state`` (``session.to_json()``, as untrusted
        as any state: it only narrows). Saved there after every change.

        Raises:
            TypeError: ``session_id`` is not a non-empty string.
            InvalidSessionError: not a valid id (1-256 visible ASCII characters).
            StoreUnavailableError: the store cannot be reached.
        """
        if not isinstance(session_id, str) or not session_id:
            raise TypeError(f"A session id is a non-empty string, got {session_id!r}.")
        if state is None:
            return self.manager.session(session_id)
        stored = self.manager.session_store.load(check_session_id(session_id))
        # Not stored yet: ``state`` is where it starts (version 0, so its first save creates it).
        start = stored if stored is not None else StoredSession(dict(state), 0)
        return ToolSession.restore(self.manager, session_id, start)

    def forget(self, session_id: str) -> None:
        """End a finished conversation (deleted from the session store)."""
        self.manager.session_store.delete(check_session_id(session_id))

    async def async_pre_call_deployment_hook(
        self, kwargs: dict[str, Any], call_type: Any
    ) -> dict[str, Any] | None:
        """LiteLLM's client path (``acompletion``, ``aresponses``): set the session's tools."""
        api = _api(call_type)
        session_id = _session_id(kwargs)
        if session_id is None or api is None or _metadata(kwargs).get(_PREPARED):
            return None  # not ours, not a chat or Responses call, or the proxy hook did it
        with _prepare_span(self.manager, session_id, kwargs) as span:
            session = await call_store(self.manager.session_store, lambda: self.session(session_id))
            request = prepare_request(session, kwargs, api=api)
            _describe_request(span, kwargs, request)
        return request

    async def async_pre_call_hook(
        self, user_api_key_dict: Any, cache: Any, data: dict[str, Any], call_type: Any
    ) -> dict[str, Any] | None:
        """The LiteLLM proxy's hook: set the session's tools on a client's request.

        The session is the client's ``metadata["toolmgmt_session"]``, kept apart per API key;
        the tools the conversation loaded (the meta-tool results among its messages, which the
        client ran) are loaded into it first, as far as the policy allows.
        """
        api = _api(call_type)
        session_id = _session_id(data)
        if session_id is None or api is None:
            return None
        key = getattr(user_api_key_dict, "token", None) or getattr(
            user_api_key_dict, "api_key", None
        )
        # Apart per API key; the key itself is never part of a stored id.
        owner = hashlib.sha256(str(key).encode()).hexdigest()[:32] if key else None
        conversation = f"{owner}/{session_id}" if owner else session_id

        def open_and_restore() -> ToolSession:
            session = self.session(conversation)
            restore_loaded(session, _tool_results(data, api))
            return session

        parent = getattr(user_api_key_dict, "parent_otel_span", None)
        with _prepare_span(self.manager, conversation, data, parent) as span:
            session = await call_store(self.manager.session_store, open_and_restore)
            request = prepare_request(session, data, api=api)
            _describe_request(span, data, request)
        metadata = _metadata(request)
        if metadata is not _EMPTY:
            # The client path after the proxy leaves it as it is. Never in what the provider
            # sees: a chat request's metadata stays in LiteLLM, a Responses request's
            # toolmgmt keys were moved to its litellm_metadata.
            metadata[_PREPARED] = "true"
        return request

    def log_pre_api_call(self, model: Any, messages: Any, kwargs: dict[str, Any]) -> None:
        """Warn, once, when a plain sync ``litellm.completion`` names a session: no hook can
        change a sync request, so it went without the session's tools."""
        if kwargs.get("call_type") != "completion" or self._warned_sync:
            return
        params = kwargs.get("litellm_params")
        request = params if isinstance(params, Mapping) else kwargs
        if _session_id(request) is None or _metadata(request).get(_PREPARED):
            return
        with self._lock:
            if self._warned_sync:
                return
            self._warned_sync = True
        warnings.warn(
            "toolmgmt: litellm.completion (sync) named a toolmgmt_session, but LiteLLM lets no "
            "callback change a sync request, so it was sent without the session's tools. Use "
            "toolmgmt_litellm.completion_with_tools(session, ...) for sync calls, or "
            "litellm.acompletion.",
            UserWarning,
            stacklevel=2,
        )


_EMPTY: dict[str, Any] = {}


def _api(call_type: Any) -> str | None:
    name = getattr(call_type, "value", call_type)
    if name in _CHAT_CALLS:
        return "chat"
    return "responses" if name in _RESPONSES_CALLS else None


def _metadata(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The request's metadata (the proxy names it ``litellm_metadata`` on some routes)."""
    for key in ("metadata", "litellm_metadata"):
        value = kwargs.get(key)
        if isinstance(value, dict) and (SESSION_KEY in value or _PREPARED in value):
            return value
    return _EMPTY


def _metadata_of(kwargs: Mapping[str, Any]) -> Mapping[str, Any]:
    """The request's metadata, whatever it holds."""
    for key in ("metadata", "litellm_metadata"):
        value = kwargs.get(key)
        if isinstance(value, Mapping):
            return value
    return _EMPTY


def _session_id(kwargs: Mapping[str, Any]) -> str | None:
    value = _metadata(kwargs).get(SESSION_KEY)
    return value if isinstance(value, str) and value else None


def _tool_results(request: Mapping[str, Any], api: str) -> Iterable[tuple[str, Any]]:
    """``(tool name, content)`` of each tool result in a chat or Responses request."""
    items = request.get("messages" if api == "chat" else "input")
    if not isinstance(items, list):
        return []
    names: dict[str, str] = {}
    results: list[tuple[str, Any]] = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        if api == "chat":
            for call in item.get("tool_calls") or []:
                function = field_of(call, "function")
                names[str(field_of(call, "id"))] = str(field_of(function, "name"))
            if item.get("role") == "tool":
                call_id = str(item.get("tool_call_id"))
                results.append((str(item.get("name") or names.get(call_id)), item.get("content")))
        elif item.get("type") == "function_call":
            names[str(item.get("call_id"))] = str(item.get("name"))
        elif item.get("type") == "function_call_output":
            results.append((names.get(str(item.get("call_id")), ""), item.get("output")))
    return results


def completion_with_tools(session: ToolSession, **kwargs: Any) -> Any:
    """``litellm.completion`` with the session's tools (the sync path, where hooks cannot)."""
    with _prepare_span(session.manager, session.conversation, kwargs) as span:
        request = prepare_request(session, kwargs)
        _describe_request(span, kwargs, request)
    for key in ("metadata", "litellm_metadata"):
        value = request.get(key)
        if isinstance(value, dict) and SESSION_KEY in value:  # a copy: the caller's stays
            request[key] = {**value, _PREPARED: "true"}
    return litellm.completion(**request)
