"""``toolmgmt catalog push``: add or replace tools in the catalog store every replica follows.

Usage::

    toolmgmt catalog push tools.json --config gateway.toml --store postgresql://...
    toolmgmt catalog push tools.json --store ... --allow-orphans   # tools no upstream runs yet

A stored tool runs on the gateway upstream its domain names, and only when its name carries that
upstream's prefix (``notes_create_note`` of domain ``notes`` on upstream ``notes``; see
``toolmgmt_gateway.catalog_store``); any other is searchable nowhere and runs nowhere, skipped by
every replica with a warning in its log. With ``--config``, each such tool is named here and
nothing is pushed (exit code 1) unless ``--allow-orphans``; without it, a warning says the
check was not made.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from toolmgmt_core._cli.console import CliError, add_json_argument, emit_json, print_table, warn
from toolmgmt_core._config.document import ConfigDocument
from toolmgmt_core._model.errors import ToolmgmtError
from toolmgmt_core._model.names import fold_name
from toolmgmt_core._model.tool import Tool

__all__ = ["orphans", "register_push"]


def register_push(
    commands: Any,
    add_store_argument: Callable[[Any], None],
    open_store: Callable[[argparse.Namespace], Any],
) -> None:
    """Add ``push`` to ``toolmgmt catalog``'s actions (``open_store(args)``: the store)."""
    push = commands.add_parser(
        "push",
        help="add or replace tools from a file",
        description="Add or replace tools in the store. Bad definitions are skipped and "
        "reported; the others are written in one transaction. A look-alike of a stored name "
        "is refused and the command exits with code 1. With --config, a tool no upstream of "
        "that gateway serves (its domain is no upstream, or its name lacks the upstream's "
        "prefix) is named and nothing is pushed (exit code 1), unless --allow-orphans.",
    )
    push.add_argument(
        "file",
        metavar="FILE|MODULE:ATTR",
        help='a JSON file of tool schemas (a list, or {"tools": [...]}), a gateway config or '
        "a Python module:attribute, as --catalog takes",
    )
    push.add_argument(
        "--config",
        metavar="GATEWAY_TOML",
        help="the gateway config whose upstreams run the pushed tools: a tool none serves is "
        "an error",
    )
    push.add_argument(
        "--allow-orphans",
        action="store_true",
        help="push tools no upstream serves (yet) all the same, with a warning each",
    )
    add_store_argument(push)
    add_json_argument(push)
    push.set_defaults(run=functools.partial(_run_push, open_store=open_store))


def _prefixes(config: str) -> dict[str, str]:
    """A gateway config's upstreams: folded domain -> the prefix of its tools' names."""
    path = Path(config)
    try:
        document = ConfigDocument.read(
            path, what="gateway config", fmt="toml" if path.suffix == ".toml" else "json"
        )
        upstreams = document.root().table("upstreams")
    except ToolmgmtError as exc:
        raise CliError(str(exc)) from exc
    found = {}
    for name, table in upstreams.items():
        prefix = table.get("prefix") if isinstance(table, Mapping) else None
        found[fold_name(str(name))] = prefix if isinstance(prefix, str) else f"{name}_"
    return found


def orphans(tools: Sequence[Tool], prefixes: Mapping[str, str]) -> list[tuple[str, str]]:
    """(name, why) of each tool no upstream runs: its domain is none of ``prefixes``' (folded
    domain -> prefix), or its name lacks that upstream's prefix."""
    found = []
    for tool in tools:
        prefix = prefixes.get(fold_name(tool.domain))
        if prefix is None:
            known = ", ".join(sorted(prefixes)) or "none"
            found.append((tool.name, f"its domain {tool.domain!r} is no upstream ({known})"))
        elif not fold_name(tool.name).startswith(fold_name(prefix)) and prefix:
            found.append((tool.name, f"its name lacks the {tool.domain!r} upstream's {prefix!r}"))
    return found


def _run_push(args: argparse.Namespace, *, open_store: Callable[[argparse.Namespace], Any]) -> int:
    from toolmgmt_core._catalog.sources import load_catalog

    warnings: list[str] = []

    def collect(message: str) -> None:
        warnings.append(message)
        warn(message)

    try:
        tools = list(load_catalog(args.file, warn=collect))  # bad definitions: warned, skipped
    except ToolmgmtError as exc:
        raise CliError(str(exc)) from exc
    if args.config:
        unserved = orphans(tools, _prefixes(args.config))
        for name, why in unserved:
            collect(f"no upstream of {args.config} serves {name!r}: {why}.")
        if unserved and not args.allow_orphans:
            print(
                f"error: {len(unserved)} tools no upstream serves (above): nothing pushed; fix "
                "their domains or names, or pass --allow-orphans.",
                file=sys.stderr,
            )
            return 1
    elif not args.allow_orphans:
        warn("whether an upstream serves each tool was not checked: pass --config gateway.toml.")
    with open_store(args) as store:
        try:
            report = store.push(tools)
        except ToolmgmtError as exc:
            raise CliError(str(exc)) from exc
    results = {"added": report.added, "updated": report.updated, "unchanged": report.unchanged}
    skipped = [{"tool": name, "reason": reason} for name, reason in report.skipped]
    refused = [{"tool": name, "reason": reason} for name, reason in report.refused]
    code = 1 if refused else 0
    for name, reason in report.refused:
        print(f"error: refused {name!r}: {reason}.", file=sys.stderr)
    if args.json:
        emit_json(
            {
                "store": store.where,
                **results,
                "skipped": skipped,
                "refused": refused,
                "warnings": warnings,
            }
        )
        return code
    rows = [(name, result) for result in results for name in results[result]]
    rows += [(name, f"skipped: {reason}") for name, reason in report.skipped]
    rows += [(name, "refused: a look-alike (above)") for name, _ in report.refused]
    print_table(["tool", "result"], rows)
    counts = ", ".join(f"{len(names)} {result}" for result, names in results.items())
    if skipped:
        counts += f", {len(skipped)} skipped"
    if refused:
        counts += f", {len(refused)} refused as look-alikes of stored names"
    if warnings:
        counts += f"; {len(warnings)} warnings reading {args.file} (above)"
    print(f"\n{store.where}: {counts}.")
    return code
