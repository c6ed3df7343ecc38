"""A throw-away ``redis-server`` on loopback (:class:`LocalRedis`)."""

from __future__ import annotations

import os
import shutil
import socket

from toolmgmt_core import StoreUnavailableError
from toolmgmt_deploy.process import LocalServer

__all__ = ["LocalRedis", "find_redis_server"]


def find_redis_server() -> str | None:
    """The ``redis-server`` binary (``$TOOLMGMT_REDIS_SERVER``, then the PATH), or None."""
    configured = os.environ.get("TOOLMGMT_REDIS_SERVER")
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    return shutil.which("redis-server") or shutil.which("redis-server", path="/usr/sbin:/sbin")


class LocalRedis(LocalServer):
    """A throw-away ``redis-server`` on 127.0.0.1 (no persistence); ``url`` to connect."""

    name = "redis"

    def __init__(self, binary: str | None = None) -> None:
        """
        Args:
            binary: the ``redis-server`` to run (default: :func:`find_redis_server`).

        Raises:
            StoreUnavailableError: no ``redis-server`` was found; the message says how to
                install one.
        """
        super().__init__()
        found = binary or find_redis_server()
        if not found:
            raise StoreUnavailableError(
                "redis-server was not found: install it (apt-get install redis-server) or set "
                "TOOLMGMT_REDIS_SERVER to its path."
            )
        self.binary = found

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    def _command(self) -> list[str]:
        assert self.folder is not None
        return [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--save", "",
            "--appendonly", "no",
            "--dir", str(self.folder),
            "--daemonize", "no",
            "--loglevel", "warning",
            # DEBUG SLEEP, from loopback only: the tests' slow Redis (a throw-away server).
            "--enable-debug-command", "local",
        ]  # fmt: skip

    def _ready(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def start(self) -> LocalRedis:
        """See :meth:`LocalServer.start`."""
        super().start()
        return self
