"""The built-in commands: ``search``, ``browse``, ``report``, ``lint`` and ``diff``.

Each has a ``register_*(subparsers)`` adding its parser and a ``run`` function taking the parsed
arguments and returning the exit code; the work itself is the library's (the catalog, the report,
the linter, the differ): a command parses, calls and prints.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from toolmgmt_core._catalog.tool_catalog import ToolCatalog, ToolEntry
from toolmgmt_core._cli.console import (
    CliError,
    add_catalog_argument,
    add_json_argument,
    emit_json,
    positive_int,
    print_table,
    stage_bar,
    warn,
)
from toolmgmt_core._lint.findings import Finding
from toolmgmt_core._model.errors import CatalogSourceError, ToolmgmtError
from toolmgmt_core._model.tokens import DEFAULT_ENCODING

__all__ = ["BUILTIN_COMMANDS", "load_catalog"]


def load_catalog(spec: str | None, problems: list[str] | None = None) -> ToolCatalog:
    """The catalog ``--catalog`` names; a bad source is a usage error (exit code 2).

    Args:
        spec: what ``--catalog`` names (None: the embedded demo catalog).
        problems: each warning while reading (a definition skipped, an upstream that did not
            answer) is also added here, for a command that fails on them (``lint``).
    """
    from toolmgmt_core._catalog.sources import load_catalog as load

    def report(message: str) -> None:
        warn(message)
        if problems is not None:
            problems.append(message)

    try:
        return load(spec, warn=report)
    except CatalogSourceError as exc:
        raise CliError(str(exc)) from exc


# -- search -----------------------------------------------------------------------------------


def register_search(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "search",
        help="find tools for a request",
        description="Rank the catalog's tools for a request (BM25 over names, descriptions, "
        "parameters and keywords), or match a regular expression with --regex.",
    )
    parser.add_argument("query", nargs="+", help="words describing the tool you need")
    add_catalog_argument(parser)
    parser.add_argument(
        "--limit", type=positive_int, default=5, metavar="N", help="at most N results (5)"
    )
    parser.add_argument("--domain", help="search only this domain")
    parser.add_argument("--group", help="search only this group (with or without --domain)")
    parser.add_argument("--regex", action="store_true", help="treat QUERY as a regular expression")
    parser.add_argument(
        "--each",
        action="store_true",
        help="search each QUERY argument as its own need (quote multi-word needs) and merge "
        "the results so every need is covered",
    )
    add_json_argument(parser)
    parser.set_defaults(run=run_search)


def _warm_index(catalog: ToolCatalog) -> None:
    """Build the search index now, behind a progress bar when the catalog is large."""
    bar = stage_bar(len(catalog), 1, "indexing")
    catalog.search("index")
    bar.update()
    bar.close()


def run_search(args: argparse.Namespace) -> int:
    catalog = load_catalog(args.catalog)
    query = " ".join(args.query).strip()
    if args.each and args.regex:
        raise CliError("--each and --regex do not combine: give one regular expression.")
    needs: str | list[str] = [q for q in args.query if q.strip()] if args.each else query
    try:
        if args.regex:
            hits = catalog.search_regex(query, args.limit, domain=args.domain, group=args.group)
        else:
            _warm_index(catalog)
            hits = catalog.search(needs, args.limit, domain=args.domain, group=args.group)
    except ToolmgmtError as exc:
        raise CliError(str(exc)) from exc
    if args.json:
        emit_json({"query": needs, "regex": args.regex, "results": [h.to_dict() for h in hits]})
        return 0
    if not hits:
        scope = f" in {args.domain}" if args.domain else ""
        print(f"No tools match {query!r}{scope} (searched {len(catalog):,} tools).")
        return 0
    rows = [
        (rank, hit.name, f"{hit.domain}/{hit.group}", round(hit.score, 2), hit.description)
        for rank, hit in enumerate(hits, start=1)
    ]
    print_table(["#", "tool", "domain/group", "score", "description"], rows)
    return 0


# -- browse -----------------------------------------------------------------------------------


def register_browse(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "browse",
        help="list domains, a domain's tools, or a group's tools",
        description="Without arguments, list the domains with their tool counts and groups; "
        "with DOMAIN, its tools; with DOMAIN GROUP, the tools of one group.",
    )
    parser.add_argument("domain", nargs="?", help="a domain to list")
    parser.add_argument("group", nargs="?", help="a group within DOMAIN")
    add_catalog_argument(parser)
    add_json_argument(parser)
    parser.set_defaults(run=run_browse)


def run_browse(args: argparse.Namespace) -> int:
    catalog = load_catalog(args.catalog)
    if args.domain is None:
        domains = catalog.domains()
        if args.json:
            emit_json({"domains": [d.to_dict() for d in domains], "tools": len(catalog)})
            return 0
        summary = [(d.name, d.tool_count, ", ".join(d.groups)) for d in domains]
        print_table(["domain", "tools", "groups"], summary)
        print(f"\n{len(catalog):,} tools in {len(domains)} domains.")
        return 0
    try:
        entries = catalog.browse(args.domain, args.group)
    except ToolmgmtError as exc:
        raise CliError(str(exc)) from exc
    tools = [e for e in entries if isinstance(e, ToolEntry)]
    if args.json:
        items = [{"domain": e.domain, **e.to_dict()} for e in tools]
        emit_json({"domain": args.domain, "group": args.group, "tools": items})
        return 0
    rows = [(e.name, e.group, e.description) for e in tools]
    print_table(["tool", "group", "description"], rows)
    return 0


# -- report -----------------------------------------------------------------------------------


def register_report(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report",
        help="tools, domains and definition tokens of a catalog",
        description="Count the catalog's tools, domains and groups, and the tokens their "
        "definitions take when sent flat, in total, per domain, per mode and per provider.",
    )
    add_catalog_argument(parser)
    parser.add_argument(
        "--encoding",
        default=DEFAULT_ENCODING,
        help=f"tiktoken encoding for counting ({DEFAULT_ENCODING})",
    )
    add_json_argument(parser)
    parser.set_defaults(run=run_report)


def run_report(args: argparse.Namespace) -> int:
    from toolmgmt_core._session.report import REPORT_STEPS, encoding_label, report_tables

    catalog = load_catalog(args.catalog)
    try:
        if encoding_label(args.encoding).endswith("(estimate)"):
            warn(f"no {args.encoding} encoding file could be loaded; counting with an estimate.")
        bar = stage_bar(len(catalog), REPORT_STEPS, "measuring")
        tables = report_tables(
            catalog, encoding=args.encoding, step=lambda done: bar.update(done - bar.n)
        )
        bar.close()
    except ToolmgmtError as exc:
        raise CliError(str(exc)) from exc
    source = args.catalog or "embedded demo catalog"
    if args.json:
        data: dict[str, Any] = {"catalog": source}
        data.update({table.key: table.to_json() for table in tables})
        emit_json(data)
        return 0
    print(f"toolmgmt report: {source}\n")
    for n, table in enumerate(tables):
        if n:
            print()
        print(table.title)
        print_table(table.columns, table.rows)
        if table.note:
            print(table.note)
    return 0


# -- lint -------------------------------------------------------------------------------------

_SEVERITY = {"error": 0, "warning": 1, "info": 2}
_LOADED_SUMMARY = re.compile(r": loaded \d+ tools, skipped \d+\.$")
"""The count a catalog source ends its skipped definitions with (each is a finding already)."""


def register_lint(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "lint",
        help="check tool schemas for problems (exit 1 on errors)",
        description="Check every tool of a catalog: names, descriptions, parameters and "
        "provider compatibility. Exits 1 when any finding is an error, and when a definition "
        "could not be read (an invalid schema: it was skipped, so it was not checked).",
    )
    add_catalog_argument(parser)
    add_json_argument(parser)
    parser.add_argument(
        "--severity",
        choices=["error", "warning", "info"],
        default="info",
        help="show findings of this severity and worse (default: info, all)",
    )
    parser.set_defaults(run=run_lint)


def run_lint(args: argparse.Namespace) -> int:
    from toolmgmt_core._lint import lint_catalog

    unread: list[str] = []
    findings = lint_catalog(load_catalog(args.catalog, unread))
    findings += [_unreadable(args.catalog, p) for p in unread if not _LOADED_SUMMARY.search(p)]
    shown = [f for f in findings if _SEVERITY[f.severity] <= _SEVERITY[args.severity]]
    shown.sort(key=lambda f: (_SEVERITY[f.severity], f.tool, f.code))
    if args.json:
        emit_json([f.to_dict() for f in shown])
    elif shown:
        rows = [(f.severity, f.tool, f.code, f"{f.message} Fix: {f.hint}") for f in shown]
        print_table(["severity", "tool", "code", "finding"], rows)
    else:
        print("No findings.")
    return 1 if any(f.severity == "error" for f in findings) else 0


def _unreadable(source: str | None, problem: str) -> Finding:
    """A problem reading the catalog as a lint error: what was skipped went unchecked."""
    return Finding(
        source or "",
        "error",
        "definition-unreadable",
        problem,
        "Fix the definition (the message says where and what); a skipped tool is not served.",
    )


# -- diff -------------------------------------------------------------------------------------


def register_diff(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "diff",
        help="classify changes between two catalog versions (exit 1 on a breaking change)",
        description="Compare two versions of a catalog. Each change is major (breaking), minor "
        "or patch. Exits 1 when any change is breaking.",
    )
    parser.add_argument(
        "old", metavar="OLD", help="the previous catalog (JSON file or module:attr)"
    )
    parser.add_argument("new", metavar="NEW", help="the new catalog (JSON file or module:attr)")
    add_json_argument(parser)
    parser.set_defaults(run=run_diff)


def run_diff(args: argparse.Namespace) -> int:
    from toolmgmt_core._lint.diff import LEVELS, diff_catalogs, summarize

    changes = diff_catalogs(load_catalog(args.old), load_catalog(args.new))
    bump = summarize(changes)
    if args.json:
        emit_json({"bump": bump, "changes": [c.to_dict() for c in changes]})
    elif changes:
        print_table(
            ["level", "tool", "code", "change"],
            [(c.level, c.tool, c.code, c.message) for c in changes],
        )
        counts = {level: sum(c.level == level for c in changes) for level in LEVELS}
        print(
            f"\n{counts['major']} breaking, {counts['minor']} minor, {counts['patch']} patch: "
            f"a {bump} version bump."
        )
    else:
        print("No changes.")
    return 1 if bump == "major" else 0


BUILTIN_COMMANDS = (register_search, register_browse, register_report, register_lint, register_diff)
"""The commands every install has, in the order ``--help`` lists them."""

if __name__ == "__main__":  # pragma: no cover
    sys.exit("run: toolmgmt COMMAND")
