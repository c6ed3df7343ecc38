"""The gateway's command line: ``toolmgmt serve`` and ``python -m toolmgmt_mcp`` (the same).

``--config FILE [--transport stdio|http] [--host H] [--port P] [--token T]``; the token can also
come from ``$TOOLMGMT_GATEWAY_TOKEN`` or the config's ``[gateway] token_env``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from toolmgmt_core.errors import ConfigError

__all__ = ["add_serve_arguments", "main", "run_serve"]


def add_serve_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``serve`` options to ``parser`` (shared with ``toolmgmt serve``)."""
    parser.add_argument("--config", required=True, help="gateway config file (TOML or JSON)")
    parser.add_argument(
        "--transport", choices=("stdio", "http"), help="override [gateway] transport"
    )
    parser.add_argument("--host", help="HTTP address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="HTTP port (0 picks a free one)")
    parser.add_argument(
        "--token",
        help="bearer token HTTP clients must send (default: $TOOLMGMT_GATEWAY_TOKEN or config)",
    )
    return parser


def run_serve(args: argparse.Namespace) -> int:
    """Run the gateway from parsed ``serve`` options; the process exit code."""
    from toolmgmt_mcp.config import load_config
    from toolmgmt_mcp.server import serve

    try:
        config = load_config(args.config)
    except ConfigError as exc:
        print(f"toolmgmt serve: {exc}", file=sys.stderr)
        return 2
    token = args.token or os.environ.get("TOOLMGMT_GATEWAY_TOKEN") or None
    # Upstreams going down and coming back, skipped tools: on stderr (stdout may be the MCP pipe).
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    logging.getLogger("toolmgmt_mcp").setLevel(logging.INFO)
    try:
        serve(config, transport=args.transport, host=args.host, port=args.port, token=token)
    except ConfigError as exc:
        print(f"toolmgmt serve: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m toolmgmt_mcp``."""
    parser = add_serve_arguments(
        argparse.ArgumentParser(
            prog="python -m toolmgmt_mcp",
            description="Serve many MCP servers as one, with discover/schema/execute meta-tools.",
        )
    )
    return run_serve(parser.parse_args(argv))
