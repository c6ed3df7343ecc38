"""A throw-away ``haproxy`` on loopback in front of gateway replicas (:class:`LocalHAProxy`),
and the configuration template it fills (``haproxy.cfg`` beside this module, shipped in the
package: the configuration as tested, which ``python -m toolmgmt_deploy haproxy-config`` prints)."""

from __future__ import annotations

import os
import re
import shutil
import socket
from collections.abc import Sequence
from pathlib import Path

from toolmgmt_core import StoreUnavailableError
from toolmgmt_deploy.process import LocalServer

__all__ = ["HAPROXY_TEMPLATE", "LocalHAProxy", "find_haproxy", "render_haproxy_config"]

HAPROXY_TEMPLATE = Path(__file__).with_name("haproxy.cfg")
"""The HAProxy configuration template (package data, with ``@BIND@``, ``@SERVERS@`` and
``@ADMIN@`` placeholders)."""


def find_haproxy() -> str | None:
    """The ``haproxy`` binary (``$TOOLMGMT_HAPROXY``, then the PATH and /usr/sbin), or None."""
    configured = os.environ.get("TOOLMGMT_HAPROXY")
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    return shutil.which("haproxy") or shutil.which("haproxy", path="/usr/sbin:/sbin")


def render_haproxy_config(
    template: str, *, bind: str, servers: Sequence[str], admin_socket: str | Path | None = None
) -> str:
    """The template's placeholders filled in (:data:`HAPROXY_TEMPLATE`'s, or another's).

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


class LocalHAProxy(LocalServer):
    """A throw-away ``haproxy`` on 127.0.0.1 in front of gateway replicas, configured from
    :data:`HAPROXY_TEMPLATE`; ``url`` to connect, :meth:`admin` for its runtime API (which
    replica is up, which one serves a request in flight)."""

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
                f"Cannot read the HAProxy template {path} ({exc.strerror or exc}): pass "
                f"template= with the path of a readable one (the default is {HAPROXY_TEMPLATE})."
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
        """See :meth:`LocalServer.start`."""
        super().start()
        return self
