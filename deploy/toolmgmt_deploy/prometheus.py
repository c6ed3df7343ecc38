"""A throw-away ``prometheus`` on loopback that scrapes gateway replicas' ``/metrics``
(:class:`LocalPrometheus`), and asks it PromQL over its HTTP API.

Usage::

    with LocalGateway("gateway.toml") as replica, LocalPrometheus(
        [replica.address], token=replica.metrics_token
    ) as prom:
        prom.wait_for_scrape()
        prom.query('sum(gen_ai_execute_tool_duration_seconds_count)')   # -> [{"metric":..}]
"""

from __future__ import annotations

import json
import os
import shutil
import time
import urllib.parse
import urllib.request
from collections.abc import Sequence
from typing import Any

from toolmgmt_core import StoreUnavailableError
from toolmgmt_deploy.process import LocalServer

__all__ = ["LocalPrometheus", "find_prometheus", "render_prometheus_config"]

_SCRAPE_SECONDS = 1.0


def find_prometheus() -> str | None:
    """The ``prometheus`` binary (``$TOOLMGMT_PROMETHEUS``, then the PATH and /usr/bin), or
    None."""
    configured = os.environ.get("TOOLMGMT_PROMETHEUS")
    if configured:
        return configured if os.access(configured, os.X_OK) else None
    return shutil.which("prometheus") or shutil.which("prometheus", path="/usr/bin")


def render_prometheus_config(
    targets: Sequence[str], *, token: str | None = None, interval: float = _SCRAPE_SECONDS
) -> str:
    """A ``prometheus.yml`` scraping ``targets`` (``HOST:PORT`` of gateway replicas) at
    ``/metrics`` every ``interval`` seconds, with the replicas' ``/metrics`` credential
    ``token`` (``[gateway.metrics] token``, or the token of a client marked ``metrics = true``)
    when given."""
    lines = [
        "global:",
        f"  scrape_interval: {interval:g}s",
        f"  scrape_timeout: {interval:g}s",
        "scrape_configs:",
        "  - job_name: toolmgmt-gateway",
        "    metrics_path: /metrics",
    ]
    if token:
        lines += ["    authorization:", "      type: Bearer"]
        lines += [f"      credentials: {json.dumps(token)}"]
    lines += ["    static_configs:", f"      - targets: {json.dumps(list(targets))}"]
    return "\n".join(lines) + "\n"


class LocalPrometheus(LocalServer):
    """A ``prometheus`` on 127.0.0.1 with its data in a temporary folder, scraping ``targets``."""

    name = "prometheus"

    def __init__(
        self,
        targets: Sequence[str],
        *,
        token: str | None = None,
        port: int = 0,
        binary: str | None = None,
    ) -> None:
        """
        Args:
            targets: ``HOST:PORT`` of each gateway replica serving ``/metrics``.
            token: the replicas' ``/metrics`` credential (``[gateway.metrics] token``:
                :attr:`LocalGateway.metrics_token <toolmgmt_deploy.replica.LocalGateway.
                metrics_token>`), when they have one; their MCP tokens get 403 there.
            port: the port of Prometheus's web API (0: a free one).
            binary: the ``prometheus`` to run (default: :func:`find_prometheus`).

        Raises:
            StoreUnavailableError: no ``prometheus`` was found.
        """
        super().__init__()
        found = binary or find_prometheus()
        if not found:
            raise StoreUnavailableError(
                "prometheus was not found: install it (apt-get install prometheus) or set "
                "TOOLMGMT_PROMETHEUS to its path."
            )
        self.binary = found
        self.fixed_port = port
        self.config_text = render_prometheus_config(targets, token=token)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    def _command(self) -> list[str]:
        assert self.folder is not None
        config = self.folder / "prometheus.yml"
        config.write_text(self.config_text, encoding="utf-8")
        data = self.folder / "data"
        data.mkdir(exist_ok=True)
        return [
            self.binary,
            f"--config.file={config}",
            f"--storage.tsdb.path={data}",
            f"--web.listen-address=127.0.0.1:{self.port}",
        ]

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=1) as response:
                return bool(response.status == 200)
        except OSError:
            return False

    def api(self, path: str, **params: str) -> Any:
        """``GET /api/v1/<path>`` with ``params``; the ``data`` of its answer.

        Raises:
            RuntimeError: Prometheus answered with an error.
        """
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as response:
            body = json.loads(response.read())
        if body.get("status") != "success":
            raise RuntimeError(f"Prometheus refused {path}: {body}")
        return body["data"]

    def query(self, promql: str) -> list[dict[str, Any]]:
        """An instant PromQL query's result (a vector's samples)."""
        data = self.api("query", query=promql)
        return list(data.get("result") or [])

    def wait_for_scrape(self, timeout: float = 60.0) -> list[dict[str, Any]]:
        """Wait until every target was scraped and is up; Prometheus's targets.

        Raises:
            TimeoutError: not within ``timeout`` seconds (the message has the targets' errors).
        """
        deadline = time.monotonic() + timeout
        targets: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            targets = self.api("targets").get("activeTargets") or []
            if targets and all(t.get("health") == "up" for t in targets):
                return targets
            time.sleep(0.2)
        errors = [(t.get("scrapeUrl"), t.get("lastError")) for t in targets]
        raise TimeoutError(f"Prometheus did not scrape every target in {timeout:g}s: {errors}")

    def start(self) -> LocalPrometheus:
        """See :meth:`LocalServer.start`."""
        super().start()
        return self
