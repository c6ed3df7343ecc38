"""An MCP server script run over streamable HTTP on a free loopback port: the upstream of the
gateway's HTTP tests, ``bench/gateway_load.py`` and ``bench/scaleout.py``.

The scripts (``tests/adapters/mcp/servers/*.py``) take ``--http PORT``::

    with http_upstream(NOTES) as upstream:
        async with mcp.Client(upstream.url) as client: ...
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolmgmt_deploy import free_port, stop_process

__all__ = [
    "CONFORMANCE",
    "COUNTER",
    "NOTES",
    "TRACED",
    "SERVERS",
    "HttpUpstream",
    "http_upstream",
    "wait_for_port",
]

SERVERS = Path(__file__).resolve().parents[1] / "adapters" / "mcp" / "servers"
"""The tests' MCP server scripts."""
NOTES = SERVERS / "notes_server.py"
COUNTER = SERVERS / "counter_server.py"
CONFORMANCE = SERVERS / "conformance_upstream.py"
TRACED = SERVERS / "traced_server.py"


@dataclass(frozen=True)
class HttpUpstream:
    """A running upstream."""

    process: subprocess.Popen[bytes]
    """Its process (to watch its CPU, or to kill it)."""
    port: int
    """The loopback port it serves."""

    @property
    def url(self) -> str:
        """The MCP endpoint, ``http://127.0.0.1:PORT/mcp``."""
        return f"http://127.0.0.1:{self.port}/mcp"


def wait_for_port(port: int, process: subprocess.Popen[Any], timeout: float = 60.0) -> None:
    """Return once something listens on loopback ``port``.

    Raises:
        RuntimeError: ``process`` exited first.
        TimeoutError: nothing listened within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout:g}s")


@contextmanager
def http_upstream(
    script: Path, *, timeout: float = 60.0, env: dict[str, str] | None = None
) -> Iterator[HttpUpstream]:
    """``script --http PORT`` on a free port, until the block ends (then stopped); ``env``: more
    environment variables for it."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(script), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env} if env else None,
    )
    try:
        wait_for_port(port, process, timeout)
        yield HttpUpstream(process, port)
    finally:
        stop_process(process)
