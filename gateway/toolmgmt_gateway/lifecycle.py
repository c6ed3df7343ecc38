"""A replica's life as a load balancer sees it: ``/readyz``, ``/version`` and the drain on SIGTERM.

On SIGTERM (or the first Ctrl-C) an HTTP gateway **drains** (:class:`Drain`): it keeps its port
open, answers every new MCP request 503 with ``Retry-After`` (nothing of it ran, so HAProxy's
``retry-on 503`` sends it to another replica) and ``/readyz`` 503, lets the requests in flight
(a long ``execute_tool``, a ``run_code`` program) finish for at most ``[gateway]
shutdown_grace`` seconds, then stops the HTTP server, its upstreams and its stores, logging each
step. What continues a call already begun is still taken while draining: a 2025 client's
answer to a question its call asked (a JSON-RPC response), a notification (a cancellation), and
a 2026 client's retry that brings its answer (a request carrying ``requestState``).

``/readyz`` says whether this replica should get new requests (:class:`Readiness`): 503 while
it drains, while its session store (``[store] sessions``) does not answer, or while none of its
upstreams is connected; 200 otherwise, with each check in the JSON body. ``/healthz`` stays the
liveness check (200 while the process serves, draining included). ``/version`` (behind the
gateway's tokens) and the ``toolmgmt_build_info`` metric carry the version.
"""

from __future__ import annotations

import json
import logging
import platform
import time
from collections.abc import Callable, Iterable
from typing import Any

import anyio
from mcp_types import INTERNAL_ERROR

from toolmgmt_core.integration import call_store, package_version
from toolmgmt_gateway.responses import jsonrpc_error

__all__ = [
    "AFTER_DRAIN",
    "Drain",
    "READY_PATH",
    "Readiness",
    "VERSION_PATH",
    "build_info",
    "draining_server",
    "version_route",
]

logger = logging.getLogger("toolmgmt_gateway.lifecycle")

READY_PATH = "/readyz"
"""Whether this replica should get new requests (200) or not (503)."""
VERSION_PATH = "/version"
"""The gateway's version and its main dependencies', as JSON."""

AFTER_DRAIN = 1
"""Seconds the HTTP server gives what is left after the drain (a session's standalone stream,
a request the grace cut) before it cancels it."""

_CUT = (
    "The gateway replica shut down before this call finished (its shutdown_grace was over): "
    "the call may have run in part. Check its effects before calling again."
)

_READY_FOR = 0.5
"""Seconds one readiness check answers every probe."""

_PEEK_LIMIT = 1 << 20
"""Bytes of a request read while draining to tell a client's answer from a new request; a
larger body counts as a new request."""


def build_info() -> dict[str, str]:
    """What this process runs: toolmgmt's version, the MCP SDK's and Python's (``/version``,
    the labels of ``toolmgmt_build_info``)."""
    from importlib import metadata

    try:
        sdk = metadata.version("mcp")
    except metadata.PackageNotFoundError:  # pragma: no cover - the gateway needs it
        sdk = "unknown"
    return {"version": package_version(), "mcp": sdk, "python": platform.python_version()}


class Drain:
    """ASGI middleware: counts the MCP requests in flight on ``path`` and, once :meth:`begin`
    was called, refuses new ones with 503 and ``Retry-After`` while they finish.

    Usage::

        app = Drain(app, path="/mcp", retry_after=2)
        drain.begin()
        left = await drain.wait(grace=30)     # requests still in flight after the grace

    A standalone stream (``GET``) is not counted (it lasts as long as its session); a new one
    is refused while draining. ``DELETE`` (a client ending its session) always passes.
    """

    def __init__(self, app: Any, *, path: str, retry_after: int) -> None:
        self.app = app
        self.path = path
        self.retry_after = str(retry_after).encode()
        self.draining = False
        """Whether :meth:`begin` was called: new requests get 503, ``/readyz`` 503."""
        self.in_flight = 0
        """MCP requests (``POST``) being served now."""
        self.refused = 0
        """Requests refused while draining."""
        self._idle: anyio.Event | None = None
        self._running: set[anyio.CancelScope] = set()

    def begin(self) -> None:
        """Refuse new requests from now on (idempotent)."""
        if not self.draining:
            self.draining = True
            logger.info(
                "draining: new requests get 503 and /readyz 503; %d request(s) in flight",
                self.in_flight,
            )

    async def wait(self, grace: float) -> int:
        """Wait until no request is in flight, at most ``grace`` seconds; how many still are."""
        started = time.monotonic()
        if self.in_flight:
            self._idle = anyio.Event()
            with anyio.move_on_after(grace):
                await self._idle.wait()
        waited = time.monotonic() - started
        if self.in_flight:
            logger.warning(
                "drain: the grace of %g s is over with %d request(s) still in flight; they are "
                "cut (%d new request(s) refused meanwhile)",
                grace,
                self.in_flight,
                self.refused,
            )
        else:
            logger.info(
                "drained: every request in flight answered, after %.1f s (%d new request(s) "
                "refused meanwhile)",
                waited,
                self.refused,
            )
        return self.in_flight

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("path") != self.path:
            await self.app(scope, receive, send)
            return
        method = scope.get("method")
        if method == "DELETE":
            await self.app(scope, receive, send)
            return
        if self.draining:
            if method != "POST":
                await self._refuse(send)
                return
            receive = await self._answers_only(receive)
            if receive is None:
                await self._refuse(send)
                return
        if method != "POST":  # a standalone stream: a session's, not a request in flight
            await self.app(scope, receive, send)
            return
        answered = False

        async def tracked(event: Any) -> None:
            nonlocal answered
            answered = answered or event["type"] == "http.response.start"
            await send(event)

        running = anyio.CancelScope()
        self._running.add(running)
        self.in_flight += 1
        try:
            with running:
                await self.app(scope, receive, tracked)
            if running.cancelled_caught and not answered:
                await jsonrpc_error(send, 500, INTERNAL_ERROR, _CUT)
        finally:
            self._running.discard(running)
            self.in_flight -= 1
            if not self.in_flight and self._idle is not None:
                self._idle.set()

    async def cut(self) -> None:
        """End the requests still in flight (after the grace): each one whose answer had not
        begun gets HTTP 500 and a JSON-RPC error saying it may have run in part (500, not 503:
        HAProxy must not send it again, as a tool may have acted); at most 1 s for them to
        unwind."""
        for running in list(self._running):
            running.cancel()
        with anyio.move_on_after(1):
            while self.in_flight:
                self._idle = anyio.Event()
                await self._idle.wait()

    async def _answers_only(self, receive: Any) -> Any:
        """``receive`` replaying the request's body when all it holds continues a call already
        begun (:func:`_continues`), else None (a new request)."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > _PEEK_LIMIT:
                return None
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        try:
            parsed = json.loads(body)
        except ValueError:
            return None
        messages = parsed if isinstance(parsed, list) else [parsed]
        if not messages or not all(isinstance(m, dict) and _continues(m) for m in messages):
            return None
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if sent:
                return await receive()  # the disconnect, when it comes
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        return replay

    async def _refuse(self, send: Any) -> None:
        self.refused += 1
        retry = self.retry_after

        async def stamped(event: Any) -> None:
            if event["type"] == "http.response.start":
                event = {**event, "headers": [*event["headers"], (b"retry-after", retry)]}
            await send(event)

        message = (
            "Service unavailable (503): this replica is shutting down; nothing of this "
            f"request ran. Retry in {retry.decode()} s (another replica may take it now)."
        )
        await jsonrpc_error(stamped, 503, INTERNAL_ERROR, message)


def _continues(message: dict[str, Any]) -> bool:
    """Whether a JSON-RPC message continues a call already begun: a response or a
    notification (no ``method`` and ``id`` both), or a 2026 retry carrying its request state."""
    if not ("method" in message and "id" in message):
        return True
    params = message.get("params")
    return isinstance(params, dict) and params.get("requestState") is not None


class Readiness:
    """``GET /readyz``: 200 when this replica should get new requests, else 503; the JSON body
    names each check (``draining``, ``sessions``, ``upstreams``, ``catalog``).

    Not ready while draining, while the session store does not answer a ping, or while no
    upstream is connected (one upstream down of several still serves the others: ready, and
    named ``down``). The catalog store is reported, not required: a replica keeps serving the
    catalog it has while its follower reconnects. A probe that finds an upstream down asks for
    its reconnection (``revive``, at the upstream's own pace): a replica out of rotation gets no
    call that would, and would otherwise stay out. One check serves every probe within
    :data:`_READY_FOR` seconds (the probe needs no token, so it must not cost a store round
    trip each).

    Args:
        draining: returns whether the replica drains (its :class:`Drain` began).
        upstreams: returns each upstream's status (``GatewayUpstreams.status``).
        sessions: the session store (with ``ping``), or None.
        catalog: returns whether the catalog store's follower is connected, or None without one.
        revive: reconnects the upstreams that are down and due (``revive_soon``), or None.
    """

    def __init__(
        self,
        draining: Callable[[], bool],
        upstreams: Callable[[], Iterable[Any]],
        sessions: Any = None,
        catalog: Callable[[], bool] | None = None,
        revive: Callable[[], None] | None = None,
    ) -> None:
        self.draining = draining
        self.upstreams = upstreams
        self.sessions = sessions
        self.catalog = catalog
        self.revive = revive
        self._checked: tuple[float, bool, dict[str, Any]] | None = None
        self._lock: anyio.Lock | None = None

    async def check(self) -> tuple[bool, dict[str, Any]]:
        """(ready, the checks by name), at most :data:`_READY_FOR` seconds old (draining is
        always read now)."""
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:  # concurrent probes wait for one check
            if self._checked is None or time.monotonic() - self._checked[0] > _READY_FOR:
                ready, checks = await self._check()
                self._checked = (time.monotonic(), ready, checks)
        _, ready, checks = self._checked
        draining = self.draining()
        return ready and not draining, {**checks, "draining": draining}

    async def _check(self) -> tuple[bool, dict[str, Any]]:
        statuses = list(self.upstreams())
        upstreams = {s.name: "up" if s.connected else "down" for s in statuses}
        if self.revive is not None and "down" in upstreams.values():
            self.revive()
        checks: dict[str, Any] = {"upstreams": upstreams}
        ready = not statuses or "up" in upstreams.values()
        if self.sessions is not None:
            try:
                await call_store(self.sessions, self.sessions.ping)
                checks["sessions"] = "up"
            except Exception:  # noqa: BLE001 - any failure of the ping is "down"
                checks["sessions"] = "down"
                ready = False
        if self.catalog is not None:
            checks["catalog"] = "up" if self.catalog() else "down"
        return ready, checks

    def route(self) -> Any:
        """The Starlette route of ``GET /readyz``."""
        from starlette.routing import Route

        async def readyz(request: Any) -> Any:
            ready, checks = await self.check()
            return _json(200 if ready else 503, {"ready": ready, **checks})

        return Route(READY_PATH, readyz, methods=["GET"])


def version_route(name: str) -> Any:
    """The Starlette route of ``GET /version``: the gateway's ``name`` and :func:`build_info`."""
    from starlette.routing import Route

    info = {"name": name, **build_info()}

    async def version(request: Any) -> Any:
        return _json(200, info)

    return Route(VERSION_PATH, version, methods=["GET"])


def _json(status: int, body: dict[str, Any]) -> Any:
    from starlette.responses import Response

    return Response(json.dumps(body), status, media_type="application/json")


def draining_server(config: Any, on_signal: Callable[[int], None]) -> Any:
    """A ``uvicorn.Server`` for ``config`` whose first SIGTERM or SIGINT calls ``on_signal``
    (which begins the drain, then sets ``should_exit``) instead of stopping at once; a second
    one stops at once. Called from the signal handler: ``on_signal`` must only schedule work
    (``loop.call_soon_threadsafe``)."""
    import uvicorn

    class _DrainingServer(uvicorn.Server):
        stopping = False

        def handle_exit(self, sig: int, frame: Any) -> None:
            if self.stopping:  # a second signal: no more waiting
                self.should_exit = self.force_exit = True
                return
            self.stopping = True
            on_signal(sig)  # not recorded: uvicorn would raise it again once it has stopped

    return _DrainingServer(config)
