"""A deadline on reading each HTTP request, so slow clients do not hold connections.

uvicorn closes a kept-alive connection that stays idle (``timeout_keep_alive``), but once the
first byte of a request has arrived it waits for the rest without end: 500 connections that
each send a header line every few seconds (slowloris) were all still held after 40 s, and a
body sent as slowly holds a request of the replica's admission limit as well.
:func:`read_deadline_protocol` makes uvicorn's HTTP protocol class (httptools, else h11) give
each request ``seconds`` from its first byte (or from the connection, for the first) to arrive
whole, headers and body; past them the connection is closed. The time the app then takes to
answer is not counted (a tool call may run long).

Usage::

    uvicorn.Config(app, http=read_deadline_protocol(10.0))
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["read_deadline_protocol"]


def read_deadline_protocol(seconds: float) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class with a deadline of ``seconds`` on reading each request."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    class ReadDeadline(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
        """uvicorn's protocol; a request still arriving ``seconds`` after it began is cut."""

        read_timeout = seconds
        cut = 0
        """Connections this process closed for a request that did not arrive in time."""

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._deadline: asyncio.TimerHandle | None = None
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._settle(data_came=True)

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._settle(data_came=False)

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arrived(self) -> bool:
            """Whether the request being served has arrived whole (the app's time now)."""
            cycle = self.cycle
            return cycle is not None and not cycle.response_complete and not cycle.more_body

        def _settle(self, *, data_came: bool) -> None:
            cycle = self.cycle
            if self._arrived():
                self._disarm()
            elif data_came or (cycle is not None and cycle.more_body):
                # a request arriving (headers, or a body: even one answered already, a 401)
                self._arm()
            else:  # idle between requests: uvicorn's keep-alive timeout
                self._disarm()

        def _arm(self) -> None:
            if self._deadline is None:
                loop = asyncio.get_running_loop()
                self._deadline = loop.call_later(self.read_timeout, self._expired)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expired(self) -> None:
            self._deadline = None
            if not self._arrived() and not self.transport.is_closing():
                type(self).cut += 1
                self.transport.close()

    return ReadDeadline
