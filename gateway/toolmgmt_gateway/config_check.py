"""``toolmgmt check --config gateway.toml``: every problem of a gateway config at once.

Found by the core's ``toolmgmt check`` through the ``toolmgmt.config_checks`` entry point. Three
passes, each said in the one format ``file:line: key.path: problem``:

1. what :func:`~toolmgmt_gateway.config_file.load_config` refuses, every problem of the file
   (unknown keys, bad values, a weak client token, ``/metrics`` without its own credential);
2. the tokens, from the file alone: an HTTP gateway without one (an error off loopback), a token
   shorter than 16 characters, a token written in the file instead of ``token_env``;
3. with ``connect`` (the default), the upstreams started and listed as ``serve`` would: one that
   does not start, a tool definition it skips (an invalid schema), a ``required`` entry naming
   no property, and each name or pattern of ``[policy]``, ``always_on``, a client's ``deny`` and
   an upstream's ``policy`` held against the tools listed (an exact name matching none is an
   error naming the closest, a pattern a warning).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from toolmgmt_core import ConfigError, Tool, ToolCatalog, lint
from toolmgmt_core.integration import (
    ConfigDocument,
    ConfigFinding,
    pattern_findings,
    reader_findings,
    run_sync,
)
from toolmgmt_gateway.config import GatewayConfig

__all__ = ["check_gateway_config"]

_MIN_TOKEN = 16
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
_TOKEN_ENV = "TOOLMGMT_GATEWAY_TOKEN"


def check_gateway_config(
    path: Path, *, connect: bool = True, warn: Callable[[str], None] | None = None
) -> list[ConfigFinding] | None:
    """Every problem of the gateway config at ``path``, or None when it is not one.

    Args:
        path: the file.
        connect: start the upstreams to check the names the config gives their tools.
        warn: unused (each problem is a finding); taken as every check is called.
    """
    from toolmgmt_gateway.config_file import load_config, parse_config

    fmt: Literal["toml", "json"] = "toml" if path.suffix.casefold() == ".toml" else "json"
    try:
        document = ConfigDocument.read(path, what="gateway config", fmt=fmt)
    except ConfigError as exc:
        return reader_findings(exc) if path.suffix.casefold() == ".toml" else None
    if not isinstance(document.data, Mapping) or not {"gateway", "upstreams"} & set(document.data):
        return None  # a policy file, a catalog: not a gateway config
    config: GatewayConfig | None = None
    try:
        config = load_config(path)
    except ConfigError as exc:
        found = reader_findings(exc)
    else:
        found = []
    found += _token_findings(document)
    if not connect:
        return [*found, ConfigFinding("info", f"{path}: tool names not checked (--offline).")]
    if config is None:  # the upstreams alone, to check the names given their tools all the same
        upstreams = json.dumps({"upstreams": document.data.get("upstreams")})
        try:
            config = parse_config(upstreams, source=str(path), fmt="json")
        except ConfigError:
            note = f"{path}: tool names not checked: its upstreams could not be read."
            return [*found, ConfigFinding("info", note)]
    return found + _tool_findings(document, config)


def _token_findings(document: ConfigDocument) -> list[ConfigFinding]:
    """Missing, weak, or written in the file: the gateway's and its clients' tokens."""
    gateway = _table(document.data, "gateway")
    clients = _table(gateway, "clients")
    found = []
    metrics = gateway.get("metrics")
    tables: list[tuple[tuple[str, ...], Mapping[str, Any]]] = [(("gateway",), gateway)]
    tables += [
        (("gateway", "clients", str(n)), c) for n, c in clients.items() if isinstance(c, Mapping)
    ]
    if isinstance(metrics, Mapping):
        tables.append((("gateway", "metrics"), metrics))
    for path, table in tables:
        if isinstance(table.get("token"), str):
            found.append(
                ConfigFinding(
                    "warning",
                    document.problem(
                        (*path, "token"),
                        "the token is written in the file, where whoever reads the file (or "
                        'its history) has it: use token_env = "VARIABLE" instead.',
                    ),
                )
            )
    token = _secret(gateway, "token")
    if token is not None and len(token) < _MIN_TOKEN:
        key = "token_env" if "token_env" in gateway else "token"
        found.append(
            ConfigFinding(
                "error",
                document.problem(
                    ("gateway", key),
                    f"the token is {len(token)} characters; it needs at least {_MIN_TOKEN} (make "
                    'one with: python -c "import secrets; print(secrets.token_urlsafe(32))").',
                ),
            )
        )
    http = gateway.get("transport") == "http"
    named = {"token", "token_env"} & set(gateway)  # a variable not set: the reader says so
    if http and not named and not clients and not os.environ.get(_TOKEN_ENV):
        host = gateway.get("host", "127.0.0.1")
        local = host in _LOOPBACK
        found.append(
            ConfigFinding(
                "warning" if local else "error",
                document.problem(
                    ("gateway", "transport"),
                    f"an HTTP gateway on {host} without a token: "
                    + ("every process of this machine" if local else "anyone who reaches it")
                    + ' can call its tools; set token_env = "VARIABLE" (or [gateway.clients]).',
                ),
            )
        )
    return found


def _table(data: Any, key: str) -> Mapping[str, Any]:
    """The table at ``key`` of ``data``, or an empty one (the reader says what is wrong)."""
    value = data.get(key) if isinstance(data, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _secret(table: Mapping[str, Any], key: str) -> str | None:
    value = table.get(key)
    if isinstance(value, str):
        return value
    variable = table.get(f"{key}_env")
    return os.environ.get(variable) or None if isinstance(variable, str) else None


def _tool_findings(document: ConfigDocument, config: GatewayConfig) -> list[ConfigFinding]:
    """Start the upstreams, list their tools, and hold the config's names against them."""
    from toolmgmt_gateway.upstreams import GatewayUpstreams

    catalog = ToolCatalog()

    async def collect() -> list[Any]:
        async with GatewayUpstreams(config, catalog) as upstreams:
            return list(upstreams.status())

    found = []
    for status in run_sync(collect()):
        where = ("upstreams", status.name)
        if status.error:
            found.append(
                ConfigFinding("error", document.problem(where, f"did not start: {status.error}"))
            )
        for name, reason in status.skipped:
            problem = f"its tool {name!r} is skipped (not served): {reason}"
            found.append(ConfigFinding("error", document.problem(where, problem)))
    tools = list(catalog)
    found += _schema_findings(document, config, tools)
    if not tools:
        return found
    for key in ("allow", "deny", "trusted"):
        found += pattern_findings(document, ("policy", key), tools)
    found += pattern_findings(document, ("gateway", "always_on"), tools)
    for client in _table(_table(document.data, "gateway"), "clients"):
        found += pattern_findings(document, ("gateway", "clients", client, "deny"), tools)
    for upstream in config.upstreams:
        for key in ("allow", "deny"):
            path = ("upstreams", upstream.name, "policy", key)
            found += pattern_findings(
                document, path, tools, domain=upstream.name, prefix=upstream.tool_prefix
            )
    return found


def _schema_findings(
    document: ConfigDocument, config: GatewayConfig, tools: Sequence[Tool]
) -> list[ConfigFinding]:
    """A ``required`` entry naming no property: every call of the tool would fail."""
    domains = {u.name for u in config.upstreams}
    return [
        ConfigFinding(
            "error",
            document.problem(
                ("upstreams", tool.domain) if tool.domain in domains else ("upstreams",),
                f"its tool {tool.name!r}: {finding.message}",
            ),
        )
        for tool in tools
        for finding in lint(tool, providers=())
        if finding.code == "required-unknown"
    ]
