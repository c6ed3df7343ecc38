"""What the gateway tells the people who run it: its MCP requests in traces, and ``GET /metrics``.

Traces: the MCP SDK makes a server span for each request (``tools/call execute_tool``, the
MCP semantic conventions, its parent the client's ``params._meta.traceparent``) and a client
span for each upstream request, carrying the trace on in the upstream's ``_meta``; the core's
``execute_tool`` span sits between them. :func:`describe_request` adds what only the gateway
knows to the request's span (``mcp.session.id``: the conversation, hashed in the store).

Metrics (``[gateway] metrics = true``, ``toolmgmt[metrics]``): :class:`GatewayMetrics` gives
the manager an :class:`~toolmgmt_core._events.OtelListener` on a meter provider of its own,
read by OpenTelemetry's Prometheus reader, and adds what an SRE watches beside the core's
counters: each upstream's health and tools, the sessions this replica holds, the conversations
it served lately, hung tool threads, store errors and MCP request durations. ``/metrics``
serves them as Prometheus text (names as the reader writes them:
``gen_ai_execute_tool_duration_seconds``, ``toolmgmt_searches_total``...) to its own credential
only (:class:`MetricsAccess`: ``[gateway.metrics] token`` or a client marked ``metrics = true``),
since they name every client's series and tools outside a caller's profile: any other token of
the gateway gets 403, none (or an unknown one) 401.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode
from pydantic import ValidationError
from toolmgmt_mcp.sdk_internals import OpenTelemetryMiddleware, extract_trace_context, otel_span

from toolmgmt_core import ConfigError, OtelListener
from toolmgmt_core.integration import hung_threads
from toolmgmt_gateway.lifecycle import build_info

__all__ = [
    "ACTIVE_SECONDS",
    "CLIENT_ATTRIBUTE",
    "CallOutcome",
    "GatewayMetrics",
    "METRICS_PATH",
    "MetricsAccess",
    "REQUEST_BUCKETS",
    "RequestSpans",
    "STORE_OPERATIONS",
    "caller_label",
    "describe_outcome",
    "describe_request",
]

METRICS_PATH = "/metrics"
"""Where the Prometheus text is served."""

CLIENT_ATTRIBUTE = "toolmgmt.client"
"""The attribute naming the request's client (``toolmgmt_client`` in Prometheus text)."""

ACTIVE_SECONDS = 300.0
"""A conversation with a request this recently counts as active."""

REQUEST_BUCKETS = (
    0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
)  # fmt: skip
"""Bucket bounds (seconds) of ``mcp.server.operation.duration``: the MCP semantic conventions'
own, with 5 ms below them (a ``tools/list`` answers in a few). OpenTelemetry's default bounds are
milliseconds (0, 5, 10, 25 ... 10000): on a seconds metric every request falls in the first
buckets and ``histogram_quantile`` answers seconds where the mean is tens of milliseconds."""

STORE_OPERATIONS = ("conversation", "save")
"""The store operations ``toolmgmt_gateway_store_errors_total`` counts, each exported at 0 from
the start (an ``increase()`` alert then sees the first error)."""

_MAX_TRACKED = 100_000  # conversations remembered for the active count at most


def describe_request(conversation: str, client: str | None = None) -> None:
    """Name the conversation, and the client (``[gateway.clients.NAME]``) when the gateway has
    several, on the current MCP request's span (the SDK's server span)."""
    span = trace.get_current_span()
    if span.is_recording():
        span.set_attribute("mcp.session.id", conversation)
        if client is not None:
            span.set_attribute(CLIENT_ATTRIBUTE, client)


class MetricsAccess:
    """Who may read ``/metrics``: the bearer tokens in ``readers`` (``[gateway.metrics] token``,
    the clients marked ``metrics = true``); the gateway's ``others`` get 403, anyone else 401.
    With neither (a gateway without tokens), everyone may.

    Tokens are compared as SHA-256 digests with :func:`hmac.compare_digest`, every one of them
    each time (as :class:`~toolmgmt_gateway.clients.ClientAuth` does).
    """

    def __init__(self, readers: Iterable[str], others: Iterable[str] = ()) -> None:
        self._readers = [_digest(t) for t in readers if t]
        self._others = [_digest(t) for t in others if t]

    def status(self, authorization: str) -> int:
        """200, 401 or 403 for a request carrying this ``Authorization`` header."""
        if not self._readers and not self._others:
            return 200
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return 401
        given = _digest(token.strip())
        reader = any([hmac.compare_digest(given, d) for d in self._readers])
        other = any([hmac.compare_digest(given, d) for d in self._others])
        return 200 if reader else 403 if other else 401


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


_REFUSED = {
    401: "A valid bearer token is required.",
    403: "This token may not read /metrics: it needs the metrics credential ([gateway.metrics] "
    "token, or a client marked metrics = true).",
}


class CallOutcome:
    """What the handler of one ``tools/call`` says about its answer, for the request's span:
    :class:`RequestSpans` makes one per call and hands it down on the request's context
    (:func:`describe_outcome` fills it), then reads it once the handler has answered."""

    __slots__ = ("error_type", "outcome", "tool")

    def __init__(self) -> None:
        self.error_type: str | None = None
        """The error code of a failed call (``not_permitted``...), or None."""
        self.outcome: str | None = None
        """The core's outcome of the call (``success``, ``denied``...), for the access log."""
        self.tool: str | None = None
        """The tool the call ran (a meta-tool's target), for the access log."""


@dataclasses.dataclass(kw_only=True)
class _OutcomeContext(ServerRequestContext[Any, Any]):
    """The SDK's request context with the call's :class:`CallOutcome` on it; a middleware
    that rewrites the context (``dataclasses.replace``) keeps this class, so the same object
    reaches the handler."""

    call_outcome: CallOutcome


def describe_outcome(
    ctx: Any, error_code: str | None, *, outcome: str | None = None, tool: str | None = None
) -> None:
    """Note the error code of the ``tools/call`` ``ctx`` is answering, for :class:`RequestSpans`
    to put on its span as ``error.type`` (``not_permitted``, ``unknown_tool``...), and the
    core's ``outcome`` and the ``tool`` it ran, for the access log; a context it did not make
    (no spans installed) takes no note."""
    note = getattr(ctx, "call_outcome", None)
    if not isinstance(note, CallOutcome):
        return
    if error_code is not None:
        note.error_type = error_code
    note.outcome = outcome or note.outcome
    note.tool = tool or note.tool


def caller_label(headers: Iterable[tuple[bytes, bytes]], client: str | None) -> str | None:
    """What names a 2026 caller's conversation when the gateway keeps none (each request a new
    session): its client (``[gateway.clients]``), else a digest of its ``Authorization`` header,
    so one caller's ``tools/list`` and calls share ``mcp.session.id``; None without either."""
    if client is not None:
        who = f"client:{client}"
    else:
        found = dict(headers).get(b"authorization")
        if not found:
            return None
        who = found.decode("latin-1")
    return "caller-" + hashlib.sha256(f"caller\n{who}".encode()).hexdigest()[:16]


class RequestSpans(OpenTelemetryMiddleware):
    """The MCP SDK's span of each request (the MCP semantic conventions), with a failed
    ``tools/call``'s ``error.type`` the call's own error code (:func:`describe_outcome`), where
    the SDK writes ``tool_error`` for every one (here, only for a failed answer whose handler
    named no code). It takes the SDK's middleware's place."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        name = ctx.params.get("name") if ctx.params else None
        target = name if isinstance(name, str) else None
        attributes: dict[str, Any] = {
            "mcp.method.name": ctx.method,
            "mcp.protocol.version": ctx.protocol_version,
        }
        if ctx.request_id is not None:
            attributes["jsonrpc.request.id"] = str(ctx.request_id)
        if ctx.method == "tools/call":
            attributes["gen_ai.operation.name"] = "execute_tool"
            if target is not None:
                attributes["gen_ai.tool.name"] = target
        elif ctx.method == "prompts/get" and target is not None:
            attributes["gen_ai.prompt.name"] = target
        outcome: CallOutcome | None = None
        if ctx.method == "tools/call":  # the handler's note of its answer, on its context
            outcome = CallOutcome()
            ctx = _OutcomeContext(**_fields(ctx), call_outcome=outcome)
        with otel_span(
            name=f"{ctx.method}{f' {target}' if target else ''}",
            kind=SpanKind.SERVER,
            attributes=attributes,
            context=extract_trace_context(ctx.meta),
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                result = await call_next(ctx)
            except MCPError as exc:
                code = str(exc.error.code)
                span.set_attributes({"error.type": code, "rpc.response.status_code": code})
                span.set_status(StatusCode.ERROR, exc.error.message)
                raise
            except ValidationError:  # the wire's answer: pydantic's text echoes input
                code = str(INVALID_PARAMS)
                span.set_attributes({"error.type": code, "rpc.response.status_code": code})
                span.set_status(StatusCode.ERROR, "Invalid request parameters")
                raise
            except Exception as exc:
                span.set_attribute("error.type", type(exc).__qualname__)
                span.record_exception(exc)
                span.set_status(StatusCode.ERROR, str(exc))
                raise
            if outcome is not None and _is_error(result):
                span.set_attribute("error.type", outcome.error_type or "tool_error")
                span.set_status(StatusCode.ERROR)
            return result


def _fields(ctx: Any) -> dict[str, Any]:
    """The fields of the SDK's request context ``ctx``, by name (to rebuild it as another
    class)."""
    return {f.name: getattr(ctx, f.name) for f in dataclasses.fields(ctx)}


def _is_error(result: Any) -> bool:
    if isinstance(result, CallToolResult):
        return bool(result.is_error)
    return isinstance(result, Mapping) and result.get("isError") is True


class GatewayMetrics:
    """The gateway's meter provider, its Prometheus registry and what it observes.

    Args:
        service: the gateway's name (the ``service.name`` of its metrics).
        upstreams: returns each upstream's status (``GatewayUpstreams.status``).
        sessions: returns how many MCP sessions this replica holds open.

    Raises:
        ConfigError: ``toolmgmt[metrics]`` is not installed.
    """

    def __init__(
        self,
        service: str,
        upstreams: Callable[[], Iterable[Any]],
        sessions: Callable[[], int],
    ) -> None:
        try:
            from opentelemetry.exporter.prometheus import PrometheusMetricReader
            from opentelemetry.metrics import CallbackOptions, Observation
            from opentelemetry.sdk.metrics import MeterProvider
            from opentelemetry.sdk.resources import Resource
            from prometheus_client import CollectorRegistry
        except ImportError as exc:
            raise ConfigError(
                "[gateway] metrics = true needs the metrics extra: "
                f'pip install "toolmgmt[metrics]" ({exc}).'
            ) from exc
        self.registry = CollectorRegistry()
        """The Prometheus registry ``/metrics`` renders (this gateway's alone)."""
        reader = PrometheusMetricReader(registry=self.registry)
        self.provider = MeterProvider(
            metric_readers=[reader], resource=Resource.create({"service.name": service})
        )
        self.listener = OtelListener(meter_provider=self.provider)
        """The manager's listener: the core's metrics into this provider, spans as usual."""
        self._seen: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()
        meter = self.provider.get_meter("toolmgmt.gateway")

        def upstream_up(options: CallbackOptions) -> Iterable[Observation]:
            return [Observation(int(s.connected), {"upstream": s.name}) for s in upstreams()]

        def upstream_tools(options: CallbackOptions) -> Iterable[Observation]:
            return [Observation(len(s.tools), {"upstream": s.name}) for s in upstreams()]

        meter.create_observable_gauge(
            "toolmgmt.gateway.upstream.up",
            [upstream_up],
            unit="1",
            description="1 while the upstream's connection is open, 0 while it is down.",
        )
        meter.create_observable_gauge(
            "toolmgmt.gateway.upstream.tools",
            [upstream_tools],
            unit="{tool}",
            description="Tools the upstream brings to the catalog.",
        )
        meter.create_observable_gauge(
            "toolmgmt.gateway.sessions",
            [lambda options: [Observation(sessions())]],
            unit="{session}",
            description="MCP sessions this replica holds open (the SDK's, without [store]).",
        )
        meter.create_observable_gauge(
            "toolmgmt.gateway.conversations.active",
            [lambda options: [Observation(self.active())]],
            unit="{conversation}",
            description=f"Conversations with a request here in the last {ACTIVE_SECONDS:g} s.",
        )
        meter.create_observable_gauge(
            "toolmgmt.gateway.hung_threads",
            [lambda options: [Observation(sum(hung_threads().values()))]],
            unit="{thread}",
            description="Threads held by tool calls that timed out and still run.",
        )
        self.store_errors = meter.create_counter(
            "toolmgmt.gateway.store.errors",
            unit="{error}",
            description="Session store operations that failed (a 503 answered, a record unsaved).",
        )
        self.pin_changes = meter.create_counter(
            "toolmgmt.gateway.upstream.pin_changes",
            unit="{change}",
            description="Changes of pinned upstream tools: accepted (accept_changes) or "
            "quarantined until an operator trusts them.",
        )
        for operation in STORE_OPERATIONS:  # each series exists from the start, at 0
            self.store_errors.add(0, {"operation": operation})
        self._store_up = True
        meter.create_observable_gauge(
            "toolmgmt.gateway.store.up",
            [lambda options: [Observation(int(self._store_up))]],
            unit="1",
            description="0 while the session store's last operation here failed, else 1.",
        )
        info = build_info()
        meter.create_observable_gauge(
            "toolmgmt.build_info",
            [lambda options: [Observation(1, info)]],
            unit="",
            description="1, with the gateway's version, its MCP SDK's and Python's as labels.",
        )
        self.requests = meter.create_histogram(
            "mcp.server.operation.duration",
            unit="s",
            description="MCP requests the gateway answered (tools/list, tools/call).",
            explicit_bucket_boundaries_advisory=REQUEST_BUCKETS,
        )

    def seen(self, conversation: str) -> None:
        """Note a request of ``conversation`` (for the active count)."""
        now = time.monotonic()
        with self._lock:
            self._seen[conversation] = now
            self._seen.move_to_end(conversation)
            while len(self._seen) > _MAX_TRACKED:
                self._seen.popitem(last=False)

    def active(self) -> int:
        """Conversations seen in the last :data:`ACTIVE_SECONDS`."""
        horizon = time.monotonic() - ACTIVE_SECONDS
        with self._lock:
            while self._seen and next(iter(self._seen.values())) < horizon:
                self._seen.popitem(last=False)
            return len(self._seen)

    def store_failed(self, operation: str) -> None:
        """Count a failed store operation (:data:`STORE_OPERATIONS`); the store is down until
        a request is answered again."""
        self._store_up = False
        self.store_errors.add(1, {"operation": operation})

    def pin_changed(self, upstream: str, outcome: str) -> None:
        """Count a pinned tool's change (``accepted`` or ``quarantined``) of ``upstream``."""
        self.pin_changes.add(1, {"upstream": upstream, "outcome": outcome})

    def request_done(
        self,
        method: str,
        seconds: float,
        tool: str | None,
        error: str | None,
        client: str | None = None,
    ) -> None:
        """Record one MCP request's duration (by method, tool, error and, with
        ``[gateway.clients]``, its ``client``: a name from the configuration, so the series stay
        few)."""
        self._store_up = True  # answered: the conversation was read (a failed save says so next)
        attributes = {"mcp.method.name": method}
        if client is not None:
            attributes[CLIENT_ATTRIBUTE] = client
        if tool is not None:
            attributes["gen_ai.tool.name"] = tool
        if error is not None:
            attributes["error.type"] = error
        self.requests.record(seconds, attributes)

    def text(self) -> tuple[bytes, str]:
        """The Prometheus exposition of everything, and its content type."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST

    def route(self, access: MetricsAccess | None = None) -> Any:
        """The Starlette route of ``GET /metrics``, for ``access``'s readers (None: anyone)."""
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        async def metrics(request: Any) -> Any:
            status = access.status(request.headers.get("authorization", "")) if access else 200
            if status != 200:
                headers = {"www-authenticate": 'Bearer realm="toolmgmt-gateway"'}
                body = {"error": "unauthorized" if status == 401 else "forbidden"}
                return JSONResponse(
                    {**body, "message": _REFUSED[status]}, status, headers if status == 401 else {}
                )
            text, content_type = self.text()
            return Response(text, media_type=content_type)

        return Route(METRICS_PATH, metrics, methods=["GET"])

    def close(self) -> None:
        self.provider.shutdown()
