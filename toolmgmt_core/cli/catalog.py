"""``toolmgmt catalog``: push tools to a shared catalog store (PostgreSQL), list, remove.

Usage::

    toolmgmt catalog push tools.json --store postgresql://toolmgmt@db/toolmgmt
    toolmgmt catalog list --store postgresql://toolmgmt@db/toolmgmt
    toolmgmt catalog list --json > tools.json        # the store's definitions, re-pushable
    toolmgmt catalog remove crm_old_search --store ...

``--store`` defaults to ``$TOOLMGMT_CATALOG_DSN``, the name docs/deploy.md gives the gateway
config's ``[store] catalog_env`` (``$TOOLMGMT_CATALOG_STORE``, its former name, is still read,
with a warning). ``push`` reads what ``--catalog`` reads
(:func:`toolmgmt_core.catalog.sources.load_catalog`: a JSON list of tool schemas in any accepted
shape,
``{"tools": [...]}``, a gateway config or a Python ``module:attribute``); definitions that
cannot be read are skipped with a warning naming each and why (also in ``--json`` output, as
``warnings``), the others are pushed. A tool whose name is a look-alike of a stored tool's (same
name once case, separators, invisible characters and unicode look-alikes are ignored) is
refused, named with the tool it imitates, and the command exits with code 1 (the other tools
are still pushed). Needs ``toolmgmt[postgres]``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from toolmgmt_core.cli.console import CliError, add_json_argument, emit_json, print_table, warn
from toolmgmt_core.model.errors import ToolmgmtError

__all__ = ["DEPRECATED_STORE_ENV", "STORE_ENV", "register"]

STORE_ENV = "TOOLMGMT_CATALOG_DSN"
"""The environment variable ``--store`` defaults to."""

DEPRECATED_STORE_ENV = "TOOLMGMT_CATALOG_STORE"
"""The former name of :data:`STORE_ENV`: read when that is unset, with a warning."""


def register(subparsers: Any) -> None:
    """Add ``catalog push|list|remove`` to the ``toolmgmt`` command."""
    parser = subparsers.add_parser(
        "catalog",
        help="push tools to a shared catalog store (PostgreSQL), list or remove them",
        description="Manage the catalog store that gateway replicas follow: every replica "
        "sees a push or a removal within a second.",
    )
    commands = parser.add_subparsers(dest="catalog_command", metavar="ACTION", required=True)
    push = commands.add_parser(
        "push",
        help="add or replace tools from a file",
        description="Add or replace tools in the store. Bad definitions are skipped and "
        "reported; the others are written in one transaction. A look-alike of a stored name "
        "is refused and the command exits with code 1.",
    )
    push.add_argument(
        "file",
        metavar="FILE|MODULE:ATTR",
        help='a JSON file of tool schemas (a list, or {"tools": [...]}), a gateway config or '
        "a Python module:attribute, as --catalog takes",
    )
    listing = commands.add_parser("list", help="the stored tools")
    remove = commands.add_parser("remove", help="remove tools by name")
    remove.add_argument("names", nargs="+", metavar="NAME", help="tool names")
    for command, run in ((push, _run_push), (listing, _run_list), (remove, _run_remove)):
        command.add_argument(
            "--store",
            metavar="DSN",
            help=f"postgresql://user[:password]@host[:port]/dbname (default: ${STORE_ENV})",
        )
        add_json_argument(command)
        command.set_defaults(run=run)


def _store_dsn(args: argparse.Namespace) -> str | None:
    """``--store``, else ``$TOOLMGMT_CATALOG_DSN``, else the deprecated name (warned)."""
    if args.store:
        return str(args.store)
    dsn, former = os.environ.get(STORE_ENV), os.environ.get(DEPRECATED_STORE_ENV)
    if former and not dsn:
        warn(f"${DEPRECATED_STORE_ENV} is deprecated and will stop working: set {STORE_ENV}.")
        return former
    if former and former != dsn:
        warn(f"${DEPRECATED_STORE_ENV} is ignored (deprecated): ${STORE_ENV} is set.")
    return dsn


def _store(args: argparse.Namespace) -> Any:
    dsn = _store_dsn(args)
    if not dsn:
        raise CliError(
            f"no catalog store: pass --store postgresql://user@host/dbname or set {STORE_ENV}."
        )
    try:
        from toolmgmt_core.stores.postgres import PostgresCatalogStore
    except ImportError as exc:
        raise CliError(str(exc)) from exc
    try:
        return PostgresCatalogStore(dsn)
    except ToolmgmtError as exc:
        raise CliError(str(exc)) from exc


def _run_push(args: argparse.Namespace) -> int:
    from toolmgmt_core.catalog.sources import load_catalog

    warnings: list[str] = []

    def collect(message: str) -> None:
        warnings.append(message)
        warn(message)

    try:
        tools = list(load_catalog(args.file, warn=collect))  # bad definitions: warned, skipped
    except ToolmgmtError as exc:
        raise CliError(str(exc)) from exc
    with _store(args) as store:
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


def _run_list(args: argparse.Namespace) -> int:
    with _store(args) as store:
        try:
            records = store.records()
        except ToolmgmtError as exc:
            raise CliError(str(exc)) from exc
    if args.json:  # the definitions, as push reads them back (extra keys are ignored)
        emit_json(
            {
                "tools": [
                    {**r.definition, "revision": r.revision, "updated_at": r.updated_at.isoformat()}
                    for r in records
                ]
            }
        )
        return 0
    if not records:
        print(f"{store.where}: no tools.")
        return 0
    rows = [
        (
            r.name,
            f"{r.definition.get('domain', '')}/{r.definition.get('group', '')}",
            r.revision,
            r.updated_at.strftime("%Y-%m-%d %H:%M:%S"),
            str(r.definition.get("description", "")).split("\n")[0],
        )
        for r in records
    ]
    print_table(["tool", "domain/group", "revision", "updated", "description"], rows)
    print(f"\n{store.where}: {len(records):,} tools.")
    return 0


def _run_remove(args: argparse.Namespace) -> int:
    with _store(args) as store:
        try:
            removed = store.remove(args.names)
        except ToolmgmtError as exc:
            raise CliError(str(exc)) from exc
    missing = [name for name in dict.fromkeys(args.names) if name not in removed]
    if args.json:
        emit_json({"store": store.where, "removed": removed, "not_found": missing})
        return 0
    print_table(
        ["tool", "result"], [(n, "removed") for n in removed] + [(n, "not found") for n in missing]
    )
    return 0
