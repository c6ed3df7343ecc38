"""Real Redis, PostgreSQL and HAProxy servers on loopback, for tests, benchmarks and trying
things out.

``LocalRedis`` and ``LocalPostgres`` start the Debian binaries (``redis-server``; PostgreSQL's
``initdb`` and ``postgres`` from ``/usr/lib/postgresql/*/bin``) on 127.0.0.1 with a free port
in a temporary folder, wait until they answer, and stop them and delete the folder on exit::

    with LocalRedis() as redis_server, LocalPostgres() as postgres_server:
        sessions = RedisSessionStore(redis_server.url)
        catalog_store = PostgresCatalogStore(postgres_server.dsn)

``LocalHAProxy`` runs ``haproxy`` in front of gateway replicas, from the repository's template
``deploy/haproxy.cfg``::

    with LocalHAProxy(["127.0.0.1:8001", "127.0.0.1:8002"]) as balancer:
        client = mcp.Client(balancer.url + "/mcp")

Install them with ``apt-get install redis-server postgresql haproxy``. Other locations can be
named with ``TOOLMGMT_REDIS_SERVER`` (the ``redis-server`` binary), ``TOOLMGMT_PG_BINDIR`` (the
folder holding ``initdb`` and ``postgres``) and ``TOOLMGMT_HAPROXY`` (the ``haproxy`` binary).

Each server is a child process of this one; ``stop`` and ``start`` restart it on the same port
and data (to test what happens while it is down). Started from the main thread, it is also
told to stop if this process dies without cleaning up (``PR_SET_PDEATHSIG`` on Linux), so a
killed test run leaves no server behind. PostgreSQL refuses to run as root: as root, it runs as
the ``postgres`` system user in a folder that user owns. The data is disposable: PostgreSQL
runs without fsync by default (``durable=True`` turns it back on).
"""

from __future__ import annotations

import contextlib
import ctypes
import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolmgmt_core.errors import StoreUnavailableError

__all__ = [
    "HAPROXY_TEMPLATE",
    "LocalHAProxy",
    "LocalPostgres",
    "LocalRedis",
    "die_with_parent",
    "find_haproxy",
    "find_postgres_bindir",
    "find_redis_server",
    "render_haproxy_config",
]

HAPROXY_TEMPLATE = Path(__file__).resolve().parents[2] / "deploy" / "haproxy.cfg"
"""The repository's HAProxy template (``deploy/haproxy.cfg``; not part of an installed wheel)."""

_START_TIMEOUT = 30.0
_STOP_TIMEOUT = 10.0


def find_redis_server() -> str | None:
    """The ``redis-server`` binary (``$TOOLMGMT_REDIS_SERVER``, then the PATH), or None."""
    configured = os.environ.get("TOOLMGMT_REDIS_SERVER")
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    return shutil.which("redis-server") or shutil.which("redis-server", path="/usr/sbin:/sbin")


def find_postgres_bindir() -> Path | None:
    """The folder of PostgreSQL's ``initdb`` and ``postgres``, newest version first, or None.

    ``$TOOLMGMT_PG_BINDIR``, then Debian's ``/usr/lib/postgresql/<version>/bin``, then the PATH.
    """
    configured = os.environ.get("TOOLMGMT_PG_BINDIR")
    candidates = [Path(configured)] if configured else []
    if not configured:
        versions = glob.glob("/usr/lib/postgresql/*/bin")
        versions.sort(key=lambda p: [int(n) for n in re.findall(r"\d+", p)], reverse=True)
        candidates += [Path(p) for p in versions]
        on_path = shutil.which("initdb")
        if on_path:
            candidates.append(Path(on_path).parent)
    for folder in candidates:
        if all(os.access(folder / name, os.X_OK) for name in ("initdb", "postgres")):
            return folder
    return None


def find_haproxy() -> str | None:
    """The ``haproxy`` binary (``$TOOLMGMT_HAPROXY``, then the PATH and /usr/sbin), or None."""
    configured = os.environ.get("TOOLMGMT_HAPROXY")
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    return shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")


def render_haproxy_config(
    template: str, *, bind: str, servers: Sequence[str], admin_socket: str | Path | None = None
) -> str:
    """``deploy/haproxy.cfg``'s placeholders filled in.

    Args:
        template: the template's text.
        bind: ``ADDRESS:PORT`` clients connect to (``@BIND@``).
        servers: ``HOST:PORT`` of each gateway replica, named ``gw1``, ``gw2``... (``@SERVERS@``).
        admin_socket: a Unix socket path for HAProxy's runtime API (``@ADMIN@``), or None.

    Raises:
        ValueError: no server, a server or bind that is not ``HOST:PORT``, or a template
            without the placeholders.
    """
    for placeholder in ("@BIND@", "@SERVERS@", "@ADMIN@"):
        if placeholder not in template:
            raise ValueError(f"The HAProxy template has no {placeholder} placeholder.")
    if not servers:
        raise ValueError("HAProxy needs at least one gateway replica (HOST:PORT).")
    for address in [bind, *servers]:
        if not re.fullmatch(r"[\w.\-\[\]:*]+:\d{1,5}", address):
            raise ValueError(f"{address!r} is not HOST:PORT (for example 127.0.0.1:8765).")
    block = "\n    ".join(f"server gw{n} {address}" for n, address in enumerate(servers, 1))
    admin = "" if admin_socket is None else f"stats socket {admin_socket} mode 600 level admin"
    filled = []
    for line in template.splitlines(keepends=True):
        if not line.lstrip().startswith("#"):  # the comments name the placeholders
            line = line.replace("@BIND@", bind).replace("@SERVERS@", block)
            line = line.replace("@ADMIN@", admin)
        filled.append(line)
    return "".join(filled)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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


class _LocalServer:
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

    def start(self) -> _LocalServer:
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
                self.port = self.fixed_port or _free_port()
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
        if process.poll() is None:
            process.send_signal(self.stop_signal)
            try:
                process.wait(_STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self._kill()
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


class LocalRedis(_LocalServer):
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
        ]  # fmt: skip

    def _ready(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def start(self) -> LocalRedis:
        """See :meth:`_LocalServer.start`."""
        super().start()
        return self


class LocalPostgres(_LocalServer):
    """A throw-away PostgreSQL cluster on 127.0.0.1 (trust authentication); ``dsn`` to connect."""

    name = "postgres"
    stop_signal = signal.SIGINT  # "fast" shutdown: disconnect clients, stop at once

    def __init__(self, bindir: str | Path | None = None, *, durable: bool = False) -> None:
        """
        Args:
            bindir: the folder of ``initdb`` and ``postgres`` (default:
                :func:`find_postgres_bindir`).
            durable: keep fsync and synchronous commits on (off by default: test data).

        Raises:
            StoreUnavailableError: PostgreSQL was not found, or this process is root and there
                is no ``postgres`` user to run it as.
        """
        super().__init__()
        found = Path(bindir) if bindir else find_postgres_bindir()
        if found is None:
            raise StoreUnavailableError(
                "PostgreSQL was not found (initdb and postgres): install it (apt-get install "
                "postgresql) or set TOOLMGMT_PG_BINDIR to the folder holding them."
            )
        self.bindir = found
        self.durable = durable
        if os.geteuid() == 0:
            import pwd

            try:
                user = pwd.getpwnam("postgres")
            except KeyError:
                raise StoreUnavailableError(
                    "PostgreSQL refuses to run as root and there is no 'postgres' user to run "
                    "it as: install Debian's postgresql package (which creates it) or run as "
                    "another user."
                ) from None
            self._uid, self._gid = user.pw_uid, user.pw_gid
            self._run_as = {"user": self._uid, "group": self._gid, "extra_groups": []}

    @property
    def dsn(self) -> str:
        """``postgresql://postgres@127.0.0.1:<port>/postgres``."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    @property
    def _data(self) -> Path:
        assert self.folder is not None
        return self.folder / "data"

    def _prepare(self, folder: Path) -> None:
        if self._run_as:
            os.chown(folder, self._uid, self._gid)
        result = subprocess.run(
            self._initdb_command(),
            cwd=folder,
            capture_output=True,
            text=True,
            env={**os.environ, "LC_ALL": "C"},
            check=False,
            timeout=120,
            **self._run_as,
        )
        if result.returncode != 0:
            raise StoreUnavailableError(
                f"initdb failed (code {result.returncode}):\n{result.stdout}\n{result.stderr}"
            )

    def _initdb_command(self) -> Sequence[str]:
        return [
            str(self.bindir / "initdb"),
            "-D", str(self._data),
            "-U", "postgres",
            "-A", "trust",
            "-E", "UTF8",
            "--locale=C",
            "--no-sync",
        ]  # fmt: skip

    def _command(self) -> list[str]:
        assert self.folder is not None
        command = [
            str(self.bindir / "postgres"),
            "-D", str(self._data),
            "-p", str(self.port),
            "-h", "127.0.0.1",
            "-k", str(self.folder),
            "-c", "max_connections=200",
        ]  # fmt: skip
        if not self.durable:
            command += ["-c", "fsync=off", "-c", "synchronous_commit=off"]
            command += ["-c", "full_page_writes=off"]
        return command

    def _ready(self) -> bool:
        # postmaster.pid's eighth line is the server's status, "ready" once it accepts clients;
        # its first line is the pid (a file left by a killed server is not ours).
        try:
            lines = (self._data / "postmaster.pid").read_text(encoding="utf-8").splitlines()
        except OSError:
            return False
        mine = self._process is not None and lines[:1] == [str(self._process.pid)]
        return mine and len(lines) >= 8 and lines[7].strip() == "ready"

    def start(self) -> LocalPostgres:
        """See :meth:`_LocalServer.start`."""
        super().start()
        return self


class LocalHAProxy(_LocalServer):
    """A throw-away ``haproxy`` on 127.0.0.1 in front of gateway replicas, configured from the
    repository's ``deploy/haproxy.cfg``; ``url`` to connect, :meth:`admin` for its runtime API
    (which replica is up, which one serves a request in flight)."""

    name = "haproxy"

    def __init__(
        self,
        servers: Sequence[str],
        *,
        port: int = 0,
        template: str | Path | None = None,
        binary: str | None = None,
    ) -> None:
        """
        Args:
            servers: ``HOST:PORT`` of each gateway replica.
            port: the port clients connect to (0: a free one).
            template: the configuration template (default: :data:`HAPROXY_TEMPLATE`).
            binary: the ``haproxy`` to run (default: :func:`find_haproxy`).

        Raises:
            StoreUnavailableError: no ``haproxy`` was found, or no template.
        """
        super().__init__()
        found = binary or find_haproxy()
        if not found:
            raise StoreUnavailableError(
                "haproxy was not found: install it (apt-get install haproxy) or set "
                "TOOLMGMT_HAPROXY to its path."
            )
        path = Path(template) if template is not None else HAPROXY_TEMPLATE
        try:
            self.template = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise StoreUnavailableError(
                f"Cannot read the HAProxy template {path} ({exc.strerror or exc}); it ships in "
                "the repository's deploy/ folder: pass template= with its path."
            ) from exc
        self.binary = found
        self.fixed_port = port
        self.servers = list(servers)
        render_haproxy_config(self.template, bind="127.0.0.1:1", servers=self.servers)  # check

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (add the gateway's path, ``/mcp``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def admin_socket(self) -> Path:
        """The runtime API's Unix socket."""
        assert self.folder is not None
        return self.folder / "admin.sock"

    def _command(self) -> list[str]:
        assert self.folder is not None
        config = self.folder / "haproxy.cfg"
        config.write_text(
            render_haproxy_config(
                self.template,
                bind=f"127.0.0.1:{self.port}",
                servers=self.servers,
                admin_socket=self.admin_socket,
            ),
            encoding="utf-8",
        )
        return [self.binary, "-db", "-f", str(config)]  # -db: foreground, no daemon

    def _ready(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                pass
            return self.admin_socket.exists()
        except OSError:
            return False

    def admin(self, command: str, timeout: float = 5.0) -> str:
        """Send one command to HAProxy's runtime API (``show stat``, ``show sess``...); its
        answer."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(timeout)
            sock.connect(str(self.admin_socket))
            sock.sendall(command.encode() + b"\n")
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode("utf-8", "replace")

    def server_states(self) -> dict[str, str]:
        """Each replica's state as HAProxy's health checks see it: ``{"gw1": "UP", ...}``."""
        states: dict[str, str] = {}
        lines = self.admin("show stat").splitlines()
        header = lines[0].lstrip("# ").split(",") if lines else []
        for line in lines[1:]:
            row = dict(zip(header, line.split(","), strict=False))
            if row.get("pxname") == "gateways" and row.get("svname", "").startswith("gw"):
                states[row["svname"]] = row.get("status", "")
        return states

    def busy_servers(self) -> list[str]:
        """The replicas serving a request now (from ``show sess``), e.g. ``["gw2"]``."""
        return re.findall(r"\bbe=gateways srv=(gw\d+)", self.admin("show sess"))

    def log(self) -> str:
        """What HAProxy logged (one line per request, ``option httplog``)."""
        return self._log_tail(lines=100_000)

    def start(self) -> LocalHAProxy:
        """See :meth:`_LocalServer.start`."""
        super().start()
        return self
