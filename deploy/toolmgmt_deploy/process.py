"""What the local servers share: a child process in a temporary folder, started and waited
for until it answers, stopped and cleaned up, and told to die with its owner; a free loopback
port and stopping a process (also for the gateway replicas, the tests and the benchmarks)."""

from __future__ import annotations

import contextlib
import ctypes
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolmgmt_core import StoreUnavailableError

__all__ = ["LocalServer", "die_with_parent", "free_port", "stop_process"]

_START_TIMEOUT = 30.0
_STOP_TIMEOUT = 10.0


def free_port() -> int:
    """A loopback port nothing listens on now (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_process(
    process: subprocess.Popen[Any], timeout: float = _STOP_TIMEOUT, sig: int = signal.SIGTERM
) -> None:
    """Send ``sig`` to ``process`` and wait; SIGKILL it if it has not exited within ``timeout``
    seconds. Returns once it is gone (at once when it already was)."""
    if process.poll() is not None:
        return
    process.send_signal(sig)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def die_with_parent(sig: int) -> Callable[[], None] | None:
    """A preexec function asking Linux to send ``sig`` to the child when this thread dies."""
    if not sys.platform.startswith("linux") or threading.current_thread() is not (
        threading.main_thread()
    ):
        return None  # the signal follows the creating *thread*: only the main one lives long
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None

    def preexec() -> None:
        prctl(1, sig, 0, 0, 0)  # PR_SET_PDEATHSIG, after the switch of user (which clears it)

    return preexec


class LocalServer:
    """A server process in a temporary folder: start, wait until ready, stop, clean up."""

    name = "server"
    stop_signal = signal.SIGTERM
    fixed_port = 0
    """The port to listen on; 0 picks a free one."""

    def __init__(self) -> None:
        self.port = 0
        self.folder: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._log_path: Path | None = None
        self._run_as: dict[str, Any] = {}

    # -- to implement ---------------------------------------------------------------------

    def _prepare(self, folder: Path) -> None:
        """Make the folder ready (once, before the first start)."""

    def _command(self) -> list[str]:
        raise NotImplementedError

    def _ready(self) -> bool:
        raise NotImplementedError

    # -- life cycle -------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs (to watch its CPU, say)."""
        return self._process.pid if self.running and self._process is not None else None

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self._process is not None and self._process.poll() is None

    def start(self) -> LocalServer:
        """Start the server (again, on the same port and data, after :meth:`stop`).

        Raises:
            StoreUnavailableError: the binary is missing or the server did not come up; the
                message holds the end of its log.
        """
        if self.running:
            return self
        first = self.folder is None
        if first:
            self.folder = Path(tempfile.mkdtemp(prefix=f"toolmgmt-{self.name}-"))
            try:
                self._prepare(self.folder)
            except BaseException:
                self.close()
                raise
        for attempt in range(3):
            if first:
                self.port = self.fixed_port or free_port()
            try:
                self._spawn()
                return self
            except StoreUnavailableError:
                # another process may have taken the free port between the check and the bind
                if not first or attempt == 2 or "in use" not in self._log_tail():
                    if first:
                        self.close()
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _spawn(self) -> None:
        assert self.folder is not None
        self._log_path = self.folder / f"{self.name}.log"
        with open(self._log_path, "ab") as log:
            self._process = subprocess.Popen(
                self._command(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.folder,
                start_new_session=True,  # a Ctrl-C at the terminal is ours to handle
                preexec_fn=die_with_parent(self.stop_signal),
                **self._run_as,
            )
        deadline = time.monotonic() + _START_TIMEOUT
        while not self._ready():
            code = self._process.poll()
            if code is not None or time.monotonic() > deadline:
                self._kill()
                what = f"exited with code {code}" if code is not None else "did not become ready"
                raise StoreUnavailableError(
                    f"The local {self.name} on 127.0.0.1:{self.port} {what} within "
                    f"{_START_TIMEOUT:.0f}s. Its log ends with:\n{self._log_tail()}"
                )
            time.sleep(0.02)

    def _log_tail(self, lines: int = 15) -> str:
        try:
            assert self._log_path is not None
            text = self._log_path.read_text(encoding="utf-8", errors="replace")
        except (OSError, AssertionError):
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Stop the server (its data stays, for :meth:`start`)."""
        process = self._process
        if process is None:
            return
        stop_process(process, sig=self.stop_signal)
        self._process = None

    def _kill(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait()

    def close(self) -> None:
        """Stop the server and delete its folder."""
        try:
            self.stop()
        finally:
            if self.folder is not None:
                shutil.rmtree(self.folder, ignore_errors=True)
                self.folder = None

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # a forgotten server must not outlive its owner
        with contextlib.suppress(Exception):
            self._kill()
