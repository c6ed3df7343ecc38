"""Run the replicated gateway on one machine, or print HAProxy's configuration (docs/deploy.md).

    python -m toolmgmt_deploy up --config gateway.toml [--replicas 2] [--port 8080]
    python -m toolmgmt_deploy haproxy-config --bind 0.0.0.0:8080 --server 10.0.0.11:8765 ...

``up`` starts, on 127.0.0.1, a throw-away Redis and PostgreSQL (Debian's ``redis-server`` and
``postgresql``), N ``toolmgmt serve --http`` replicas of ``--config`` with its ``[store]``
pointing at them, and HAProxy in front; it prints where everything is, stays in the foreground
and stops it all on Ctrl-C (or when killed: every server dies with this process).
``haproxy-config`` fills HAProxy's template (``haproxy.cfg`` beside this module, shipped in the
package) for servers you run yourself.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from toolmgmt_core import ToolmgmtError
from toolmgmt_core.integration import ConfigDocument, check_embedder_spec
from toolmgmt_deploy.haproxy import HAPROXY_TEMPLATE, LocalHAProxy, render_haproxy_config
from toolmgmt_deploy.postgres_server import LocalPostgres
from toolmgmt_deploy.redis_server import LocalRedis

__all__ = ["haproxy_config", "main", "replica_config", "run", "up"]


def _read(source: Path) -> dict[str, Any]:
    """The gateway config's data, read as the gateway reads it (``.toml``, else JSON).

    Raises:
        ConfigError: ``file:line: problem`` (missing, not UTF-8, does not parse, not a table).
    """
    document = ConfigDocument.read(
        source, what="gateway config", fmt="toml" if source.suffix == ".toml" else "json"
    )
    return dict(document.root())


def replica_config(source: Path, redis_url: str, dsn: str, folder: Path) -> Path:
    """A copy of the gateway config (as JSON) whose ``[store]`` is the local engines."""
    data = _read(source)
    for upstream in data.get("upstreams", {}).values():
        # the copy lives elsewhere: relative working folders stay relative to the original
        if isinstance(upstream, dict) and "command" in upstream:
            cwd = Path(upstream.get("cwd", "."))
            upstream["cwd"] = str(cwd if cwd.is_absolute() else (source.parent / cwd).resolve())
    search = data.get("search")
    if isinstance(search, dict) and "embedder" in search:  # a model folder beside the original
        search["embedder"] = check_embedder_spec(search["embedder"], base=source.parent.resolve())
    data["store"] = {"sessions": redis_url, "catalog": dsn}
    copy = folder / "gateway.json"
    copy.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return copy


def up(args: argparse.Namespace) -> int:
    """Start Redis, PostgreSQL, the replicas and HAProxy; wait for Ctrl-C (the foreground)."""
    from toolmgmt_deploy.replica import LocalGateway

    _read(Path(args.config))  # a config that cannot be read fails before anything starts
    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="toolmgmt-deploy-") as tmp:
        redis_server = stack.enter_context(LocalRedis())
        postgres = stack.enter_context(LocalPostgres())
        config = replica_config(Path(args.config), redis_server.url, postgres.dsn, Path(tmp))
        replicas = [LocalGateway(config, host=args.host) for _ in range(args.replicas)]
        for replica in replicas:
            stack.callback(replica.stop)
        with ThreadPoolExecutor(len(replicas)) as pool:
            list(pool.map(LocalGateway.start, replicas))
        balancer = stack.enter_context(LocalHAProxy([r.address for r in replicas], port=args.port))
        print(f"redis      {redis_server.url}")
        print(f"postgres   {postgres.dsn}")
        pids = [r.process.pid for r in replicas if r.process is not None]
        for number, (replica, pid) in enumerate(zip(replicas, pids, strict=True), 1):
            print(f"replica {number}  {replica.url}  (pid {pid})")
        print(f"haproxy    {balancer.url}/mcp   <- MCP clients connect here")
        print(f"\npush tools:   toolmgmt catalog push tools.json --store {postgres.dsn}")
        print(f"kill one:     kill -9 {pids[0]}   (its conversations go on)")
        print("Ctrl-C stops everything.", flush=True)
        try:
            while any(r.running for r in replicas):
                time.sleep(0.5)
            print("every replica has stopped", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            return 0


def haproxy_config(args: argparse.Namespace) -> int:
    """Print HAProxy's configuration for ``--bind`` and the ``--server`` replicas."""
    template = Path(args.template).read_text(encoding="utf-8")
    print(
        render_haproxy_config(
            template, bind=args.bind, servers=args.server, admin_socket=args.admin_socket
        ),
        end="",
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run ``up`` or ``haproxy-config`` with ``argv`` (default ``sys.argv[1:]``)."""
    parser = argparse.ArgumentParser(
        prog="python -m toolmgmt_deploy", description=(__doc__ or "").split("\n\n")[0]
    )
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("up", help="Redis, PostgreSQL, N replicas and HAProxy, locally")
    start.add_argument("--config", required=True, help="the gateway config (TOML or JSON)")
    start.add_argument(
        "--replicas", type=int, default=2, help="gateway replicas behind HAProxy (default 2)"
    )
    start.add_argument("--port", type=int, default=8080, help="HAProxy's port (0: a free one)")
    start.add_argument("--host", default="127.0.0.1", help="the replicas' address")
    start.set_defaults(run=up)
    render = commands.add_parser("haproxy-config", help="print the HAProxy template filled in")
    render.add_argument("--bind", required=True, help="ADDRESS:PORT clients connect to")
    render.add_argument("--server", action="append", required=True, help="HOST:PORT, repeated")
    render.add_argument("--admin-socket", help="a Unix socket for HAProxy's runtime API")
    render.add_argument(
        "--template", default=str(HAPROXY_TEMPLATE), help="the template (default: the packaged one)"
    )
    render.set_defaults(run=haproxy_config)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except (ValueError, OSError, ToolmgmtError) as exc:
        print(f"toolmgmt_deploy: {exc}", file=sys.stderr)
        return 2


def run() -> None:
    """The command's entry point: stop everything on SIGTERM too, exit with ``main``'s code."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sys.exit(main())


if __name__ == "__main__":
    run()
