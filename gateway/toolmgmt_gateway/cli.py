"""The gateway's command line: ``toolmgmt serve`` and ``python -m toolmgmt_gateway`` (the same).

``--config FILE [--transport stdio|http | --http] [--host H] [--port P] [--token T]
[--log-level debug|info|warning|error] [--log-format text|json]``; the token
can also come from ``$TOOLMGMT_GATEWAY_TOKEN`` or the config's ``[gateway] token_env``. A config
with ``[store]`` runs one replica of several (docs/deploy.md).

The core's command line finds :func:`register` (the ``serve`` command),
:func:`gateway_catalog` (``--catalog gateway.toml``) and :func:`gateway_policy` (``toolmgmt
catalog learn --config gateway.toml``) through entry points (``toolmgmt.commands``,
``toolmgmt.catalog_sources`` and ``toolmgmt.policy_sources``), so it never imports this
adapter.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolmgmt_core import ConfigError, ToolCatalog, ToolmgmtError
from toolmgmt_core.integration import CatalogSourceError, ConfigDocument, run_sync
from toolmgmt_gateway.config_file import LOG_FORMATS, LOG_LEVELS

__all__ = [
    "add_serve_arguments",
    "gateway_catalog",
    "gateway_policy",
    "main",
    "register",
    "run_serve",
]


def register(subparsers: Any) -> None:
    """Add ``toolmgmt serve`` to the core's command line."""
    parser = subparsers.add_parser(
        "serve",
        help="run the MCP gateway over upstream MCP servers",
        description="Serve many MCP servers as one MCP server, over stdio or streamable HTTP: "
        "with three meta-tools (discover_tools, get_tool_schema, execute_tool), or, with "
        '[gateway] mode = "code", two (tool_search and run_code, a Python program calling '
        "the tools). Check the config first with: toolmgmt check --config FILE.",
    )
    add_serve_arguments(parser)
    parser.set_defaults(run=run_serve)


def _is_gateway_config(path: Path) -> bool:
    if path.suffix.casefold() == ".toml":
        return True
    if path.suffix.casefold() != ".json":
        return False
    try:
        data = ConfigDocument.read(path, fmt="json").data
    except ToolmgmtError:
        return False
    return isinstance(data, dict) and "upstreams" in data and "tools" not in data


def gateway_catalog(path: Path, *, warn: Callable[[str], None]) -> ToolCatalog | None:
    """The tools of a gateway config's upstream MCP servers (started, listed, then closed), or
    None when ``path`` is not a gateway config (a catalog source for the core's ``--catalog``).

    Raises:
        CatalogSourceError: a bad config, or no upstream listed any tool.
    """
    if not _is_gateway_config(path):
        return None
    from toolmgmt_gateway.config_file import load_config
    from toolmgmt_gateway.upstreams import GatewayUpstreams

    label = str(path)
    try:
        config = load_config(path)
    except ToolmgmtError as exc:
        raise CatalogSourceError(str(exc)) from exc
    catalog = ToolCatalog()

    async def collect() -> list[Any]:
        async with GatewayUpstreams(config, catalog) as upstreams:
            return list(upstreams.status())

    statuses = run_sync(collect())
    for status in statuses:
        if status.error:
            warn(f"{label}: upstream {status.name!r} is unavailable: {status.error}")
        for name, reason in status.skipped:
            warn(f"{label}: upstream {status.name!r}: skipped tool {name}: {reason}")
    if not len(catalog):
        raise CatalogSourceError(
            f"{label}: no tools: none of its {len(statuses)} upstreams listed any."
        )
    return catalog


def gateway_policy(path: Path) -> Callable[[ToolCatalog], Callable[[Any], bool]] | None:
    """The gateway's policy as ``toolmgmt catalog learn --config`` applies it: for a catalog,
    whether a tool may learn (the gateway's profile, ``[policy]`` with its quarantine, the
    upstreams' policies: a denied or quarantined tool never does), or None when ``path`` is
    not a gateway config.

    Raises:
        ConfigError: a bad config.
    """
    if not _is_gateway_config(path):
        return None
    from toolmgmt_core import PolicyView
    from toolmgmt_gateway.config_file import load_config
    from toolmgmt_gateway.server import Gateway

    config = load_config(path)
    access = Gateway.manager_access(config)

    def where(catalog: ToolCatalog) -> Callable[[Any], bool]:
        view = PolicyView(catalog, access.profile, access.policies, profiles=access.profiles)
        return view.allows

    return where


def add_serve_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``serve`` options to ``parser`` (shared with ``toolmgmt serve``)."""
    parser.add_argument("--config", required=True, help="gateway config file (TOML or JSON)")
    parser.add_argument(
        "--transport", choices=("stdio", "http"), help="override [gateway] transport"
    )
    parser.add_argument(
        "--http",
        dest="transport",
        action="store_const",
        const="http",
        help="same as --transport http",
    )
    parser.add_argument("--host", help="HTTP address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="HTTP port (0 picks a free one)")
    parser.add_argument(
        "--token",
        help="bearer token HTTP clients must send (default: $TOOLMGMT_GATEWAY_TOKEN or config)",
    )
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        help="what the gateway logs, on stderr (default: [gateway] log_level, else info)",
    )
    parser.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        help="text lines or one JSON object per line (default: [gateway] log_format, else text)",
    )
    return parser


def run_serve(args: argparse.Namespace) -> int:
    """Run the gateway from parsed ``serve`` options; the process exit code."""
    from toolmgmt_gateway.config_file import load_config
    from toolmgmt_gateway.logs import configure_logging
    from toolmgmt_gateway.server import serve_sync

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"toolmgmt serve: {exc}", file=sys.stderr)
        return 2
    token = args.token or os.environ.get("TOOLMGMT_GATEWAY_TOKEN") or None
    # On stderr (stdout may be the MCP pipe); a shared gateway's client is named in what is
    # logged while serving it.
    settings = config.gateway
    configure_logging(args.log_level or settings.log_level, args.log_format or settings.log_format)
    try:
        serve_sync(config, transport=args.transport, host=args.host, port=args.port, token=token)
    except ConfigError as exc:
        print(f"toolmgmt serve: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m toolmgmt_gateway``."""
    parser = add_serve_arguments(
        argparse.ArgumentParser(
            prog="python -m toolmgmt_gateway",
            description="Serve many MCP servers as one, with discover/schema/execute meta-tools.",
        )
    )
    return run_serve(parser.parse_args(argv))
