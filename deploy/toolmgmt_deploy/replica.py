"""A gateway replica as a child process (``toolmgmt serve --http``), for tests, benchmarks and
``python -m toolmgmt_deploy up`` (:mod:`toolmgmt_deploy.launch`).

Usage::

    with LocalGateway("gateway.toml") as replica:       # port 0: a free one
        client = mcp.Client(replica.url)
        ...
        replica.kill()                                    # SIGKILL, as a crash

It starts ``python -m toolmgmt_gateway --config FILE --http --port P``, waits until the replica
announces its URL on stderr, keeps what it logs (:attr:`log`), and stops it on exit. Started
from the main thread on Linux, the replica is also told to die with this process.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from toolmgmt_deploy import die_with_parent, stop_process

__all__ = ["LocalGateway"]

_ANNOUNCE = re.compile(r"listening on (http://[^\s\"]+)")


class LocalGateway:
    """One ``toolmgmt serve`` replica over HTTP, started and stopped by this object."""

    def __init__(
        self,
        config: str | os.PathLike[str],
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        args: Sequence[str] = (),
        env: dict[str, str] | None = None,
        start_timeout: float = 60.0,
    ) -> None:
        """
        Args:
            config: the gateway config file.
            port: the port to serve (0: a free one, read from the announcement; a restart
                with :meth:`start` uses the same one again).
            host: the address to bind.
            args: more ``serve`` options (``--token``...).
            env: the replica's environment (default: this process's).
            start_timeout: seconds to wait for the announcement.
        """
        self.config = Path(config)
        self.port = port
        self.host = host
        self.args = list(args)
        self.env = env
        self.start_timeout = start_timeout
        self.url: str | None = None
        """The MCP endpoint, once started (``http://127.0.0.1:PORT/mcp``)."""
        self.log: list[str] = []
        """Lines the replica wrote on stderr."""
        self.process: subprocess.Popen[str] | None = None

    @property
    def address(self) -> str:
        """``HOST:PORT`` (for a load balancer's server line)."""
        assert self.url is not None, "not started"
        return self.url.split("//", 1)[1].split("/", 1)[0]

    def start(self) -> LocalGateway:
        """Start the replica and wait until it serves.

        Raises:
            RuntimeError: it exited or did not announce itself in time; the message holds what
                it logged.
        """
        self.url = None  # a restart announces itself again (on the same port when fixed)
        command = [sys.executable, "-m", "toolmgmt_gateway", "--config", str(self.config), "--http"]
        command += ["--host", self.host, "--port", str(self.port), *self.args]
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=self.env,
            preexec_fn=die_with_parent(signal.SIGTERM),
        )
        ready = threading.Event()
        threading.Thread(target=self._read, args=(ready,), daemon=True).start()
        if not ready.wait(self.start_timeout) or self.url is None:
            self.stop()
            raise RuntimeError(
                f"the gateway replica ({self.config}) did not start within "
                f"{self.start_timeout:g}s; it logged:\n" + "".join(self.log[-30:])
            )
        return self

    def _read(self, ready: threading.Event) -> None:
        assert self.process is not None and self.process.stderr is not None
        for line in self.process.stderr:
            self.log.append(line)
            match = _ANNOUNCE.search(line)
            if match and self.url is None:
                self.url = match.group(1)
                # a restart comes back on the same port (the load balancer knows that one)
                self.port = int(self.address.rsplit(":", 1)[1])
                ready.set()
        ready.set()

    @property
    def metrics_token(self) -> str | None:
        """The credential of its ``/metrics`` (``[gateway.metrics] token``, or the variable
        ``token_env`` names in its environment), for a scraper
        (:class:`~toolmgmt_deploy.LocalPrometheus`'s ``token``); None when it has none."""
        from toolmgmt_core.integration import ConfigDocument

        fmt: Literal["toml", "json"] = "toml" if self.config.suffix == ".toml" else "json"
        gateway = ConfigDocument.read(self.config, what="gateway config", fmt=fmt).root()
        metrics = gateway.table("gateway").get("metrics")
        if not isinstance(metrics, dict):
            return None
        if "token_env" in metrics:
            return (self.env if self.env is not None else os.environ).get(metrics["token_env"])
        token = metrics.get("token")
        return token if isinstance(token, str) else None

    @property
    def running(self) -> bool:
        """Whether the process is alive."""
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: the replica dies at once, mid-request, as in a crash."""
        if self.running:
            assert self.process is not None
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM, then SIGKILL after ``timeout`` seconds."""
        if self.process is not None:
            stop_process(self.process, timeout)

    def wait_for(self, pattern: str, timeout: float = 10.0) -> bool:
        """Wait until a line matching ``pattern`` (a regex) was logged; whether it was."""
        deadline = time.monotonic() + timeout
        compiled = re.compile(pattern)
        while time.monotonic() < deadline:
            if any(compiled.search(line) for line in list(self.log)):
                return True
            time.sleep(0.05)
        return False

    def __enter__(self) -> LocalGateway:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __del__(self) -> None:  # a forgotten replica must not outlive its owner
        with contextlib.suppress(Exception):
            if self.running:
                assert self.process is not None
                self.process.kill()
