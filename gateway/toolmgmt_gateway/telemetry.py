"""What the gateway tells the people who run it: its MCP requests in traces, and ``GET /metrics``.

Traces: the MCP SDK makes a server span for each request (``tools/call execute_tool``, the
MCP semantic conventions, its parent the client's ``params._meta.traceparent``) and a client
span for each upstream request, carrying the trace on in the upstream's ``_meta``; the core's
``execute_tool`` span sits between them. :func:`describe_request` adds what only the gateway
knows to the request's span (``mcp.session.id``: the conversation, hashed in the store).

Metrics (``[gateway] metrics = true``, ``toolmgmt[metrics]``): :class:`GatewayMetrics` gives
the manager an :class:`~toolmgmt_core.events.OtelListener` on a meter provider of its own,
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

import hashlib
import hmac
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from opentelemetry import trace

from toolmgmt_core import ConfigError
from toolmgmt_core.integration import OtelListener, hung_threads
from toolmgmt_gateway.clients import current_client

__all__ = [
    "ACTIVE_SECONDS",
    "CLIENT_ATTRIBUTE",
    "GatewayMetrics",
    "METRICS_PATH",
    "MetricsAccess",
    "describe_request",
]

METRICS_PATH = "/metrics"
"""Where the Prometheus text is served."""

CLIENT_ATTRIBUTE = "toolmgmt.client"
"""The attribute naming the request's client (``toolmgmt_client`` in Prometheus text)."""

ACTIVE_SECONDS = 300.0
"""A conversation with a request this recently counts as active."""

_MAX_TRACKED = 100_000  # conversations remembered for the active count at most


def describe_request(conversation: str) -> None:
    """Name the conversation, and the client (``[gateway.clients.NAME]``) when the gateway has
    several, on the current MCP request's span (the SDK's server span)."""
    span = trace.get_current_span()
    if span.is_recording():
        span.set_attribute("mcp.session.id", conversation)
        client = current_client()
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
        self.requests = meter.create_histogram(
            "mcp.server.operation.duration",
            unit="s",
            description="MCP requests the gateway answered (tools/list, tools/call).",
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
        """Count a failed store operation (``load``, ``save``, ``open``...)."""
        self.store_errors.add(1, {"operation": operation})

    def pin_changed(self, upstream: str, outcome: str) -> None:
        """Count a pinned tool's change (``accepted`` or ``quarantined``) of ``upstream``."""
        self.pin_changes.add(1, {"upstream": upstream, "outcome": outcome})

    def request_done(
        self, method: str, seconds: float, tool: str | None, error: str | None
    ) -> None:
        """Record one MCP request's duration (by method, tool, error and, with
        ``[gateway.clients]``, the client: a name from the configuration, so the series stay
        few)."""
        attributes = {"mcp.method.name": method}
        client = current_client()
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
