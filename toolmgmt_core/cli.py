"""The ``toolmgmt`` command line: search, browse and report on a tool catalog.

Usage::

    toolmgmt search refund a customer payment          # on the embedded demo catalog
    toolmgmt search "send.*email" --regex --json
    toolmgmt search --each "read the app log" "email the team" --limit 4
    toolmgmt browse                                   # domains; then: browse crm; browse crm deals
    toolmgmt report --catalog tools.json              # tools, domains, definition tokens

``--catalog`` takes a JSON file (a list of tool schemas in any shape
:meth:`~toolmgmt_core.catalog.ToolCatalog.add_schemas` accepts, or ``{"tools": [...]}``), a
gateway config (TOML, or JSON with ``upstreams``: its upstream MCP servers are started and
their tools listed; needs ``toolmgmt[mcp]``) or a Python ``module:attribute`` naming a
:class:`~toolmgmt_core.catalog.ToolCatalog`, a list of tools, or a function returning either.
Without it, the embedded demo catalog is used.

Exit codes: 0 success (also when nothing matched: a message says so); 1 a check that found
problems (``lint`` errors, a breaking ``diff``); 2 bad usage or bad input (a missing or malformed
file, an unknown domain, a regex that does not compile); 130 when interrupted. Errors go to
stderr and name the file and what is wrong; tools that cannot be read are skipped with a warning
and counted.

Adding a command (``lint``, ``diff``, ``serve``...): write a module with a ``register`` function
and add its dotted name to :data:`COMMAND_MODULES`::

    # toolmgmt_core/lint.py (or any importable module)
    def register(subparsers):
        parser = subparsers.add_parser("lint", help="check tool schemas for problems")
        add_catalog_argument(parser)                  # from toolmgmt_core.cli: --catalog
        add_json_argument(parser)                     # --json
        parser.set_defaults(run=run_lint)             # run_lint(args) -> exit code

    def run_lint(args):
        catalog = load_catalog(args.catalog)          # errors become exit code 2
        for tool in progress(list(catalog), "linting"):  # a bar for thousands of tools
            ...
        print_table(["tool", "problem"], rows)        # or emit_json(data) with --json
        return 0

``register`` must stay cheap and import no optional dependency (import those inside the run
function); a module that cannot be imported leaves its command listed as unavailable, with the
reason, instead of breaking the other commands. Raise :class:`CliError` for bad input: ``main``
prints it and exits with code 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import shutil
import statistics
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from toolmgmt_core.catalog import ToolCatalog, ToolEntry
from toolmgmt_core.errors import CatalogError, TokenizerUnavailableError, ToolmgmtError
from toolmgmt_core.schema import tool_from_dict
from toolmgmt_core.tokens import (
    DEFAULT_ENCODING,
    ApproxEncoding,
    Encoding,
    count_tokens,
    get_encoding,
)
from toolmgmt_core.tool import Tool

__all__ = [
    "COMMAND_MODULES",
    "PROGRESS_THRESHOLD",
    "CliError",
    "ReportTable",
    "add_catalog_argument",
    "add_json_argument",
    "build_parser",
    "emit_json",
    "load_catalog",
    "main",
    "print_table",
    "progress",
    "report_rows",
]

COMMAND_MODULES: tuple[str, ...] = ("toolmgmt_core.lint", "toolmgmt_core.diff")
"""Dotted names of modules that add subcommands through ``register(subparsers)``."""

PROGRESS_THRESHOLD = 2000
"""Catalogs with more tools than this show a progress bar (on a terminal) while loading."""

_MODULE_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


class CliError(ToolmgmtError):
    """Bad usage or input; ``main`` prints the message and exits with code 2."""


# -- shared helpers for commands --------------------------------------------------------------


def add_catalog_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--catalog FILE|module:attribute`` to a command's parser."""
    parser.add_argument(
        "--catalog",
        metavar="FILE|MODULE:ATTR",
        help='a JSON file of tool schemas (a list, or {"tools": [...]}), a gateway config '
        "(TOML, its upstreams' tools) or a Python module:attribute naming a ToolCatalog; "
        "default: the embedded demo catalog",
    )


def add_json_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--json`` (machine-readable output) to a command's parser."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def emit_json(data: Any, out: TextIO | None = None) -> None:
    """Print ``data`` as indented JSON."""
    out = out or sys.stdout
    json.dump(data, out, indent=2, ensure_ascii=False, default=str)
    out.write("\n")


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def _show_progress(count: int) -> bool:
    return count > PROGRESS_THRESHOLD and sys.stderr.isatty()


def progress(items: Sequence[Any], desc: str) -> Iterable[Any]:
    """``items``, wrapped in a tqdm bar on stderr when there are more than
    :data:`PROGRESS_THRESHOLD` and stderr is a terminal (for long work such as linting)."""
    if not _show_progress(len(items)):
        return items
    from tqdm import tqdm

    return tqdm(items, desc=desc, unit="tool", file=sys.stderr, leave=False)


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _stage_bar(count: int, stages: int, desc: str) -> Any:
    """A tqdm bar over ``stages`` steps of work on ``count`` tools (a no-op when small or not
    on a terminal)."""
    if not _show_progress(count):
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=stages, desc=desc, unit="step", file=sys.stderr, leave=False)


def _width() -> int:
    return max(60, shutil.get_terminal_size((120, 24)).columns)


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(1, width - 1)] + "…"


def print_table(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    out: TextIO | None = None,
    align: Sequence[str] | None = None,
) -> None:
    """Print an aligned plain-text table; the last column is cut to the terminal width.

    Args:
        columns: header names.
        rows: one sequence of cells per row (numbers are formatted with thousands separators).
        align: per column ``"<"`` or ``">"``; numbers default to right, text to left.
    """
    out = out or sys.stdout
    raw = [list(row) for row in rows]
    body = [[_cell(value) for value in row] for row in raw]
    numeric = [
        any(_is_number(row[i]) for row in raw)
        and all(_is_number(row[i]) or row[i] is None for row in raw)
        for i in range(len(columns))
    ]
    widths = [len(name) for name in columns]
    for row in body:
        for i, cell in enumerate(row[:-1]):
            widths[i] = max(widths[i], len(cell))
    used = sum(widths[:-1]) + 2 * (len(columns) - 1)
    last = max(len(columns[-1]), min(max((len(r[-1]) for r in body), default=0), _width() - used))
    widths[-1] = max(last, min(len(columns[-1]), 10), 1)
    sides = list(align) if align else [">" if numeric[i] else "<" for i in range(len(columns))]

    def line(cells: Sequence[str]) -> str:
        parts = []
        for i, cell in enumerate(cells):
            cell = _fit(cell, widths[i]) if i == len(cells) - 1 else cell
            parts.append(cell.rjust(widths[i]) if sides[i] == ">" else cell.ljust(widths[i]))
        return "  ".join(parts).rstrip()

    print(line(list(columns)), file=out)
    print("  ".join("-" * w for w in widths), file=out)
    for row in body:
        print(line(row), file=out)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _cell(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".") if abs(value) < 100 else f"{value:,.0f}"
    return str(value)


# -- loading a catalog ------------------------------------------------------------------------


def load_catalog(spec: str | None) -> ToolCatalog:
    """The catalog named by ``--catalog`` (``None``: the embedded demo catalog).

    Raises:
        CliError: the file is missing, unreadable, not JSON, not a list of tools, or holds no
            valid tool; the module cannot be imported or does not give a catalog. The message
            names the file (or module) and what is wrong. Single bad tools are skipped with a
            warning on stderr instead.
    """
    if spec is None:
        from toolmgmt_core.demo import demo_catalog

        return demo_catalog()
    path = Path(spec)
    if not path.exists() and _MODULE_SPEC.match(spec):
        return _load_python(spec)
    if path.suffix == ".toml" and path.is_file():
        return _load_gateway(path)
    return _load_file(path)


def _load_file(path: Path) -> ToolCatalog:
    label = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CliError(f"{label}: no such file.") from None
    except IsADirectoryError:
        raise CliError(f"{label}: is a directory, not a JSON file.") from None
    except UnicodeDecodeError as exc:
        raise CliError(f"{label}: not UTF-8 text (byte {exc.start}).") from None
    except OSError as exc:
        raise CliError(f"{label}: cannot read: {exc.strerror or exc}.") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"{label}: not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}."
        ) from None
    if isinstance(data, dict) and "upstreams" in data and "tools" not in data:
        return _load_gateway(path)
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        definitions = data["tools"]
    elif isinstance(data, list):
        definitions = data
    else:
        kind = "an object without a 'tools' list" if isinstance(data, dict) else type(data).__name__
        raise CliError(
            f'{label}: expected a JSON list of tool schemas or an object with a "tools" '
            f"list, got {kind}."
        )
    return _catalog_from_definitions(definitions, label)


def _load_gateway(path: Path) -> ToolCatalog:
    """The tools of a gateway config's upstream MCP servers (started, listed, then closed)."""
    label = str(path)
    try:  # the MCP adapter only for this: the core imports no adapter at import time
        import anyio
        from toolmgmt_mcp.config import load_config
        from toolmgmt_mcp.upstreams import UpstreamManager
    except ImportError as exc:
        raise CliError(
            f"{label} is a gateway config; reading its upstreams' tools needs the MCP extra: "
            f'pip install "toolmgmt[mcp]" ({exc}).'
        ) from exc
    try:
        config = load_config(path)
    except ToolmgmtError as exc:
        raise CliError(str(exc)) from exc
    catalog = ToolCatalog()

    async def collect() -> list[Any]:
        async with UpstreamManager(config, catalog) as upstreams:
            return list(upstreams.status())

    statuses = anyio.run(collect)
    for status in statuses:
        if status.error:
            _warn(f"{label}: upstream {status.name!r} is unavailable: {status.error}")
        for name, reason in status.skipped:
            _warn(f"{label}: upstream {status.name!r}: skipped tool {name}: {reason}")
    if not len(catalog):
        raise CliError(f"{label}: no tools: none of its {len(statuses)} upstreams listed any.")
    return catalog


def _catalog_from_definitions(definitions: Sequence[Any], label: str) -> ToolCatalog:
    tools: list[Tool] = []
    names: set[str] = set()
    skipped = 0
    for position, definition in enumerate(progress(definitions, "reading tools"), start=1):
        name = _definition_name(definition)
        where = f"tool #{position}" + (f" ({name})" if name else "")
        try:
            tool = tool_from_dict(definition)
            if tool.name in names:
                raise CatalogError(f"the name {tool.name!r} is already used by an earlier tool")
        except CatalogError as exc:
            skipped += 1
            _warn(f"{label}: skipped {where}: {exc}")
            continue
        names.add(tool.name)
        tools.append(tool)
    if not tools:
        what = f"all {skipped} definitions were skipped" if skipped else "the list is empty"
        raise CliError(f"{label}: no valid tool definitions ({what}).")
    if skipped:
        _warn(f"{label}: loaded {len(tools)} tools, skipped {skipped}.")
    return ToolCatalog(tools)


def _definition_name(definition: Any) -> str | None:
    if not isinstance(definition, dict):
        return None
    body = definition.get("function") if isinstance(definition.get("function"), dict) else None
    name = (body or definition).get("name")
    return name if isinstance(name, str) and name else None


def _load_python(spec: str) -> ToolCatalog:
    module_name, _, attribute = spec.partition(":")
    if os.getcwd() not in sys.path:  # console scripts do not put the working folder on the path
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CliError(f"{spec}: cannot import module {module_name!r}: {exc}.") from None
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise CliError(
                f"{spec}: module {module_name!r} has no attribute {attribute!r}."
            ) from None
    if callable(target) and not isinstance(target, ToolCatalog):
        try:
            target = target()
        except Exception as exc:  # the user's factory failed: say so, with its error
            raise CliError(
                f"{spec}: calling {attribute}() failed: {type(exc).__name__}: {exc}"
            ) from exc
    if isinstance(target, ToolCatalog):
        return target
    if isinstance(target, list | tuple):
        if all(isinstance(item, Tool) for item in target) and target:
            return ToolCatalog(target)
        return _catalog_from_definitions(list(target), spec)
    raise CliError(
        f"{spec}: expected a ToolCatalog, a list of tools or schemas, or a function returning "
        f"one, got {type(target).__name__}."
    )


# -- search -------------------------------------------------------------------------------


def _register_search(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "search",
        help="find tools for a request",
        description="Rank the catalog's tools for a request (BM25 over names, descriptions, "
        "parameters and keywords), or match a regular expression with --regex.",
    )
    parser.add_argument("query", nargs="+", help="words describing the tool you need")
    add_catalog_argument(parser)
    parser.add_argument(
        "--limit", type=_positive_int, default=5, metavar="N", help="at most N results (5)"
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
    parser.set_defaults(run=_run_search)


def _positive_int(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {value!r}") from None
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {number}")
    return number


def _warm_index(catalog: ToolCatalog) -> None:
    """Build the search index now, behind a progress bar when the catalog is large."""
    if not _show_progress(len(catalog)):
        return
    from tqdm import tqdm

    with tqdm(
        total=len(catalog), desc="indexing", unit="tool", file=sys.stderr, leave=False
    ) as bar:
        catalog.search("index")
        bar.update(len(catalog))


def _run_search(args: argparse.Namespace) -> int:
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


# -- browse -------------------------------------------------------------------------------


def _register_browse(subparsers: Any) -> None:
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
    parser.set_defaults(run=_run_browse)


def _run_browse(args: argparse.Namespace) -> int:
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


# -- report -------------------------------------------------------------------------------


@dataclass
class ReportTable:
    """One table of ``toolmgmt report``: a title, column names and rows."""

    key: str
    """Machine name, the key in ``--json`` output."""
    title: str
    """Heading printed above the table."""
    columns: list[str]
    """Column names (also the keys of each row in ``--json`` output)."""
    rows: list[list[Any]] = field(default_factory=list)
    """The rows, one value per column."""
    note: str | None = None
    """A line printed under the table (how a figure was measured)."""

    def to_json(self) -> list[dict[str, Any]]:
        """The rows as dicts keyed by column name."""
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


def _encoding(name: str) -> Encoding:
    """The tokenizer ``name``; an unknown name is an error, a missing file falls back to the
    documented estimate (with a warning)."""
    try:
        return get_encoding(name, fallback=False)
    except TokenizerUnavailableError as exc:
        if str(exc).startswith("Unknown encoding"):
            raise CliError(str(exc)) from exc
        _warn(f"{exc} Counting with an estimate instead.")
        return get_encoding(name)


def _definition_text(tool: Tool) -> str:
    """A definition as sent flat (name, description, parameters): compact JSON, as the
    session layer counts it."""
    return json.dumps(tool.to_dict(full=False), separators=(",", ":"), ensure_ascii=False)


def report_rows(catalog: ToolCatalog, *, encoding: str = DEFAULT_ENCODING) -> list[ReportTable]:
    """The tables of ``toolmgmt report`` for ``catalog``.

    Definition tokens are those of each tool's name, description and parameters sent flat
    (compact JSON), counted with ``encoding``.
    """
    enc = _encoding(encoding)
    encoding_label = enc.name if not isinstance(enc, ApproxEncoding) else f"{enc.name} (estimate)"
    per_tool = {
        tool.name: count_tokens(_definition_text(tool), enc)
        for tool in progress(list(catalog), "counting tokens")
    }
    total = sum(per_tool.values())
    tools = list(catalog)
    domains: dict[str, list[int]] = {}
    groups: set[tuple[str, str]] = set()
    for tool in tools:
        domains.setdefault(tool.domain, []).append(per_tool[tool.name])
        groups.add((tool.domain, tool.group))
    median = statistics.median(per_tool.values()) if per_tool else 0
    summary = ReportTable(
        "summary",
        "Catalog",
        ["measure", "value"],
        [
            ["tools", len(tools)],
            ["domains", len(domains)],
            ["groups", len(groups)],
            ["definition tokens (all tools, flat)", total],
            ["median tokens per tool", median],
            ["largest tool (tokens)", max(per_tool.values(), default=0)],
            ["encoding", encoding_label],
        ],
    )
    by_domain = ReportTable(
        "domains",
        "Definition tokens per domain",
        ["domain", "tools", "tokens", "share %", "median per tool"],
        [
            [
                name,
                len(counts),
                sum(counts),
                round(100 * sum(counts) / total, 1) if total else 0.0,
                statistics.median(counts),
            ]
            for name, counts in sorted(domains.items(), key=lambda kv: -sum(kv[1]))
        ],
    )
    largest = ReportTable(
        "largest",
        "Largest definitions",
        ["tool", "domain", "tokens"],
        [
            [name, catalog.get(name).domain, count]
            for name, count in sorted(per_tool.items(), key=lambda kv: -kv[1])[:5]
        ],
    )
    return [summary, by_domain, largest, *_mode_tables(catalog, encoding)]


_MODES = ("search", "gateway", "lazy")
_OPENAI_CHUNK = 128  # OpenAI accepts at most 128 tools per request: count a flat list in chunks


def _provider_tokens(tools: Sequence[Tool], provider: str, encoding: str) -> int:
    """Tokens of ``tools`` formatted for ``provider`` (compact JSON of the request's tools)."""
    from toolmgmt_core.execution import dumps_compact
    from toolmgmt_core.providers import format_tools
    from toolmgmt_core.tokens import count_tokens

    chunk = _OPENAI_CHUNK if provider.startswith("openai") else max(1, len(tools))
    total = 0
    for start in range(0, len(tools), chunk):
        formatted = format_tools(list(tools[start : start + chunk]), provider)["tools"]
        total += count_tokens(dumps_compact(formatted), encoding)
    return total


def _median_tool(catalog: ToolCatalog) -> Tool:
    from toolmgmt_core.manager import definition_text

    tools = sorted(catalog, key=lambda t: (len(definition_text(t)), t.name))
    return tools[len(tools) // 2]


def _cold_start(catalog: ToolCatalog, mode: str, tool: Tool, encoding: str) -> dict[str, Any]:
    """Tokens a fresh session spends to reach one call of ``tool``: the model's calls and the
    responses it reads (and, in search mode, the definitions a search loads). The tool's own
    result is left out: it is the same with a flat list."""
    from toolmgmt_core.demo import example_arguments
    from toolmgmt_core.execution import dumps_compact
    from toolmgmt_core.manager import ToolManager
    from toolmgmt_core.tokens import count_tokens

    session = ToolManager(catalog, mode=mode, encoding=encoding).session()  # type: ignore[arg-type]
    arguments = example_arguments(tool)
    steps: list[tuple[str, dict[str, Any]]]
    if mode == "gateway":
        steps = [
            ("discover_tools", {"query": tool.summary}),
            ("get_tool_schema", {"tool_name": tool.name}),
        ]
        final: tuple[str, dict[str, Any]] = (
            "execute_tool",
            {"tool_name": tool.name, "arguments": arguments},
        )
    elif mode == "search":
        steps = [("tool_search", {"query": tool.summary})]
        final = (tool.name, arguments)
    else:
        steps = [("load_tool_schema", {"tool_names": [tool.name]})]
        final = (tool.name, arguments)

    def call_tokens(name: str, args: dict[str, Any]) -> int:
        return count_tokens(dumps_compact({"name": name, "arguments": args}), encoding)

    total = 0
    found = True
    for name, args in steps:
        result = session.call_sync(name, args)
        total += call_tokens(name, args) + result.tokens
        if name in ("discover_tools", "tool_search") and isinstance(result.value, dict):
            listed = result.value.get("tools") or result.value.get("found") or {}
            found = tool.name in listed
    if mode == "search":
        meta = {t.name for t in session.manager.meta_tools()}
        total += session.manager.definition_tokens(
            [t for t in session.tools() if t.name not in meta]
        )
    total += call_tokens(*final)
    return {"tokens": total, "found": found}


def _mode_tables(catalog: ToolCatalog, encoding: str) -> list[ReportTable]:
    """Per mode and per provider: the initial tool list against the flat list, and the cost of
    a cold start. Needs the manager and the provider formatters (left out when missing)."""
    try:
        from toolmgmt_core.manager import ToolManager
        from toolmgmt_core.providers import PROVIDERS
    except ImportError:  # pragma: no cover - a partial install without the session layer
        return []
    if not len(catalog):
        return []
    initial: dict[str, list[Tool]] = {}
    neutral: dict[str, int] = {}
    flat_neutral = 0
    bar = _stage_bar(len(catalog), 4 + len(_MODES) + len(PROVIDERS), "measuring modes")
    for mode in (*_MODES, "auto"):
        manager = ToolManager(catalog, mode=mode, encoding=encoding)  # type: ignore[arg-type]
        session = manager.session()
        usage = session.usage()
        flat_neutral = usage.flat_tokens
        key = mode if mode != "auto" else f"auto ({session.mode})"
        initial[key] = session.tools()
        neutral[key] = usage.definition_tokens
        bar.update()
    tool = _median_tool(catalog)
    cold = {}
    for mode in _MODES:
        cold[mode] = _cold_start(catalog, mode, tool, encoding)
        bar.update()
    modes = ReportTable(
        "modes",
        "Initial tool list per mode (neutral definitions) and a cold start",
        ["mode", "tools listed", "tokens", "% of flat", "cold start tokens"],
        [["flat", len(catalog), flat_neutral, 100.0, None]]
        + [
            [
                key,
                len(initial[key]),
                neutral[key],
                round(100 * neutral[key] / flat_neutral, 2) if flat_neutral else 0.0,
                cold[key]["tokens"] if key in cold else None,
            ]
            for key in initial
        ],
        note=f"Cold start: a fresh session's calls and responses up to one call of the median "
        f"tool, {tool.name} (search: tool_search + loaded definitions; gateway: discover_tools"
        f" + get_tool_schema + execute_tool; lazy: load_tool_schema)."
        + (
            ""
            if all(c["found"] for c in cold.values())
            else " Its summary did not find it in every mode: see 'found'."
        ),
    )
    provider_rows = []
    for provider in PROVIDERS:
        row: list[Any] = [provider, _provider_tokens(list(catalog), provider, encoding)]
        for key in initial:
            row.append(_provider_tokens(initial[key], provider, encoding))
        provider_rows.append(row)
        bar.update()
    bar.close()
    providers = ReportTable(
        "providers",
        "Definition tokens per provider: flat against each mode's initial list",
        ["provider", "flat", *initial],
        provider_rows,
        note=f"Flat lists over {_OPENAI_CHUNK} tools are counted in chunks for OpenAI, which "
        f"accepts at most {_OPENAI_CHUNK} tools per request.",
    )
    return [modes, providers]


def _register_report(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "report",
        help="tools, domains and definition tokens of a catalog",
        description="Count the catalog's tools, domains and groups, and the tokens their "
        "definitions take when sent flat, in total and per domain.",
    )
    add_catalog_argument(parser)
    parser.add_argument(
        "--encoding",
        default=DEFAULT_ENCODING,
        help=f"tiktoken encoding for counting ({DEFAULT_ENCODING})",
    )
    add_json_argument(parser)
    parser.set_defaults(run=_run_report)


def _run_report(args: argparse.Namespace) -> int:
    catalog = load_catalog(args.catalog)
    try:
        tables = report_rows(catalog, encoding=args.encoding)
    except ToolmgmtError as exc:
        raise CliError(str(exc)) from exc
    source = args.catalog or "embedded demo catalog"
    if args.json:
        data: dict[str, Any] = {"catalog": source}
        for table in tables:
            if table.columns == ["measure", "value"]:
                data[table.key] = {row[0]: row[1] for row in table.rows}
            else:
                data[table.key] = table.to_json()
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


def _register_serve(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the MCP gateway over upstream MCP servers (needs toolmgmt[mcp])",
        description="Serve many MCP servers as one MCP server with three meta-tools "
        "(discover_tools, get_tool_schema, execute_tool), over stdio or streamable HTTP.",
    )
    parser.add_argument("--config", required=True, help="gateway config file (TOML or JSON)")
    parser.add_argument("--transport", choices=("stdio", "http"), help="override the config's")
    parser.add_argument("--host", help="HTTP address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="HTTP port (0 picks a free one)")
    parser.add_argument("--token", help="bearer token HTTP clients must send")
    parser.set_defaults(run=_run_serve)


def _run_serve(args: argparse.Namespace) -> int:
    try:  # the adapter (and the mcp SDK) only when serving: the core imports no adapter
        from toolmgmt_mcp.cli import run_serve
    except ImportError as exc:
        raise CliError(f'serving needs the MCP extra: pip install "toolmgmt[mcp]" ({exc})') from exc
    return int(run_serve(args))


# -- entry point --------------------------------------------------------------------------

_BUILTIN_COMMANDS: tuple[Callable[[Any], None], ...] = (
    _register_search,
    _register_browse,
    _register_report,
    _register_serve,
)


def _register_unavailable(subparsers: Any, module_name: str, error: Exception) -> None:
    command = module_name.rsplit(".", 1)[-1]
    reason = f"{type(error).__name__}: {error}"
    try:
        parser = subparsers.add_parser(command, help=f"(unavailable: {reason})")
    except argparse.ArgumentError:  # the name is taken: nothing to add
        return

    def run(args: argparse.Namespace) -> int:
        raise CliError(f"the {command!r} command is unavailable: {reason}")

    parser.set_defaults(run=run)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every registered command."""
    parser = argparse.ArgumentParser(
        prog="toolmgmt",
        description="Search, browse and measure a catalog of LLM tools.",
        epilog="Run 'toolmgmt COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for register in _BUILTIN_COMMANDS:
        register(subparsers)
    for module_name in COMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
            module.register(subparsers)
        except Exception as exc:  # one broken add-on must not take the whole CLI down
            _register_unavailable(subparsers, module_name, exc)
    return parser


def _version() -> str:
    from toolmgmt_core import __version__

    return __version__


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help (0) and on usage errors (2)
        return int(exc.code) if isinstance(exc.code, int) else 2
    try:
        return int(args.run(args))
    except CliError as exc:
        print(f"toolmgmt {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `toolmgmt search ... | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
