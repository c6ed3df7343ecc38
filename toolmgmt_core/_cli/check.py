"""``toolmgmt check --config FILE``: every problem of a gateway config or a policy file at once.

Usage::

    toolmgmt check --config gateway.toml            # starts its upstreams to list their tools
    toolmgmt check --config gateway.toml --offline  # the file alone: no upstream started
    toolmgmt check --config policy.toml --catalog tools.json
    toolmgmt check --config gateway.toml --json     # {"file", "errors", "warnings", "findings"}

Each problem is one line, ``error:`` or ``warning:`` then ``file:line: key.path: problem``, in
the order of the file: what its reader refuses (unknown keys, bad values, a weak client token,
``/metrics`` without a credential of its own), then what it accepts but cannot mean (a deny of a
tool name no upstream lists, a ``required`` entry naming no property, an upstream that does not
start). An exact tool name matching no tool is an error, a pattern (a glob, ``domain:``) matching
none a warning. Exit code: 1 when any finding is an error (a file that cannot be read is one),
else 0.

A gateway config is checked by the gateway (``toolmgmt[gateway]``), found through the
``toolmgmt.config_checks`` entry-point group: ``check(path, *, connect, warn)`` returns its
:class:`~toolmgmt_core._policy.check.ConfigFinding` list, or None when ``path`` is not its kind.
Any other file is read as a policy file, its names held against ``--catalog``'s tools.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from toolmgmt_core._cli.commands import load_catalog
from toolmgmt_core._cli.console import CliError, add_json_argument, emit_json, warn
from toolmgmt_core._config.document import ConfigDocument
from toolmgmt_core._model.errors import ToolmgmtError
from toolmgmt_core._policy.check import ConfigFinding, check_policy_file

__all__ = ["CHECK_GROUP", "register"]

_LINE = re.compile(r"^.*?:(\d+): ")

CHECK_GROUP = "toolmgmt.config_checks"
"""The entry-point group of configuration checks that live outside the core (the gateway's)."""


def register(subparsers: Any) -> None:
    """Add ``toolmgmt check`` to the ``toolmgmt`` command."""
    parser = subparsers.add_parser(
        "check",
        help="check a gateway config or a policy file: every problem at once (exit 1 on errors)",
        description="Report every problem of a gateway config or a policy file at once, each "
        "as file:line: key.path: problem: unknown keys, bad values, missing or weak tokens, "
        "/metrics without a credential, invalid tool schemas, and policy names and patterns "
        "that match no tool (an exact name is an error, a pattern a warning). A gateway "
        "config's upstreams are started to list their tools, unless --offline. Exits 1 when "
        "any finding is an error.",
    )
    parser.add_argument(
        "--config", required=True, metavar="FILE", help="a gateway config or a policy file"
    )
    parser.add_argument(
        "--catalog",
        metavar="FILE|MODULE:ATTR",
        help="the tools a policy file's names are checked against (as lint's --catalog)",
    )
    parser.add_argument(
        "--offline",
        action="store_true",
        help="do not start a gateway config's upstreams: its tool names go unchecked",
    )
    add_json_argument(parser)
    parser.set_defaults(run=run_check)


def run_check(args: argparse.Namespace) -> int:
    path = Path(args.config)
    findings = _gateway_findings(path, connect=not args.offline)
    if findings is None:
        tools = list(load_catalog(args.catalog)) if args.catalog else None
        findings = check_policy_file(path, tools)
    return _report(str(path), findings, args.json)


def _gateway_findings(path: Path, *, connect: bool) -> list[ConfigFinding] | None:
    """The findings of the first check that knows ``path``'s kind, or None (a policy file)."""
    missing = []
    for entry in entry_points(group=CHECK_GROUP):
        try:
            check = entry.load()
        except ImportError as exc:  # its extra is not installed
            missing.append(f"{entry.name}: {exc}")
            continue
        found: list[ConfigFinding] | None = check(path, connect=connect, warn=warn)
        if found is not None:
            return found
    if _has_upstreams(path):  # no check of gateway configs is installed
        why = "; ".join(missing) or 'pip install -e ".[gateway]" from the clone'
        raise CliError(f"{path} is a gateway config, whose check comes with the gateway: {why}")
    return None


def _has_upstreams(path: Path) -> bool:
    try:
        data = ConfigDocument.read(path).data
    except ToolmgmtError:
        return False
    return isinstance(data, dict) and "upstreams" in data


def _line(finding: ConfigFinding) -> int:
    line = _LINE.match(finding.message)
    return int(line.group(1)) if line else 0


def _report(source: str, findings: Sequence[ConfigFinding], as_json: bool) -> int:
    findings = sorted(findings, key=_line)  # in the order of the file, whole-file ones first
    errors = sum(f.severity == "error" for f in findings)
    warnings = sum(f.severity == "warning" for f in findings)
    if as_json:
        emit_json(
            {
                "file": source,
                "errors": errors,
                "warnings": warnings,
                "findings": [f.to_dict() for f in findings],
            }
        )
    else:
        for finding in findings:
            print(f"{finding.severity}: {finding.message}")
        counts = [
            f"{n} {word}{'s' * (n != 1)}" for n, word in ((errors, "error"), (warnings, "warning"))
        ]
        print(f"{source}: {', '.join(counts)}.")
    return 1 if errors else 0
