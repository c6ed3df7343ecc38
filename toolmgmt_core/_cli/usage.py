"""``toolmgmt usage``: what a usage log says (:mod:`toolmgmt_core._events.usage`), as a table,
JSON, or a picture.

Usage::

    toolmgmt usage usage.jsonl                         # a JsonlListener's file
    toolmgmt usage --store redis://localhost:6379/0    # a StoreListener's log (or postgresql://)
    toolmgmt usage usage.jsonl --catalog tools.json --json
    toolmgmt usage usage.jsonl --plot usage.png        # needs matplotlib

``--catalog`` names the catalog whose tools no search found (default: the embedded demo
catalog, as for every command).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator
from typing import Any

from toolmgmt_core._catalog.tool_catalog import ToolCatalog
from toolmgmt_core._cli.console import (
    CliError,
    add_catalog_argument,
    add_json_argument,
    emit_json,
    print_table,
    warn,
)
from toolmgmt_core._events.usage import UsageReport, usage_report
from toolmgmt_core._model.errors import CatalogSourceError, ConfigError, StoreError

__all__ = ["draw_report", "plot_report", "register", "run_usage"]

_SHOWN = 10  # rows of the longer lists in the table (--json has them all)


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "usage",
        help="what a usage log says: searches, calls, errors, tokens saved",
        description="Read a usage log (a JSONL file a JsonlListener wrote, or --store: the "
        "Redis or PostgreSQL log a StoreListener wrote) and report its searches, the share of "
        "them that led to a call, the searches that led to none, the tools no search found, "
        "calls and errors per tool, and the tokens discovery and truncation saved.",
    )
    parser.add_argument("file", nargs="?", metavar="FILE", help="a JSONL usage log")
    parser.add_argument(
        "--store", metavar="DSN", help="read the log from redis://... or postgresql://..."
    )
    add_catalog_argument(parser)
    add_json_argument(parser)
    parser.add_argument("--plot", metavar="FILE.png", help="also draw the figures (matplotlib)")
    parser.set_defaults(run=run_usage)


def _records(args: argparse.Namespace) -> Iterator[dict[str, Any]]:
    if (args.file is None) == (args.store is None):
        raise CliError("give a usage log FILE or --store DSN (one of them).")
    if args.file is not None:
        from toolmgmt_core._events.jsonl import read_jsonl

        try:
            yield from read_jsonl(args.file)
        except ConfigError as exc:
            raise CliError(str(exc)) from exc
        return
    from toolmgmt_core._stores.event_log import open_event_log

    try:
        log = open_event_log(args.store)
        try:
            yield from log.read()
        finally:
            log.close()
    except (ConfigError, StoreError, ImportError) as exc:
        raise CliError(str(exc)) from exc


def _refuse_if_not_a_log(path: str) -> None:
    """An empty log is a log with nothing in it yet; a file with text and no record in it is
    some other file, named by mistake (``toolmgmt usage notes.txt``): a usage error.

    Raises:
        CliError: the file holds text but no usage record.
    """
    with open(path, encoding="utf-8", errors="replace") as handle:
        text = handle.read(64 * 1024)
    if text.strip():
        raise CliError(
            f"{path}: not a usage log: no line of it is a usage record (a JSON object with an "
            '"event" name, one a line, as a JsonlListener or StoreListener writes them).'
        )


def _catalog_quietly(spec: str | None) -> ToolCatalog:
    """The catalog ``--catalog`` names, its sources kept out of the report's output.

    A gateway config's catalog is its upstreams' tools: they are started to list them, and
    what they print on stderr (banners, logs) would land in the middle of the report. It is
    kept aside, and shown only when no catalog could be read (it may say why).

    Raises:
        CliError: the catalog cannot be read.
    """
    from toolmgmt_core._catalog.sources import load_catalog

    warnings: list[str] = []
    saved = sys.stderr
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as aside:
        sys.stderr = aside  # a stdio upstream inherits the file behind sys.stderr
        try:
            catalog = load_catalog(spec, warn=warnings.append)
        except CatalogSourceError as exc:
            sys.stderr = saved
            aside.seek(0)
            said = aside.read()[-2000:].strip()
            raise CliError(f"{exc}\n{said}" if said else str(exc)) from exc
        finally:
            sys.stderr = saved
    for message in warnings:
        warn(message)
    return catalog


def run_usage(args: argparse.Namespace) -> int:
    records = list(_records(args))
    if args.file is not None and not records:
        _refuse_if_not_a_log(args.file)
    catalog = _catalog_quietly(args.catalog)
    report = usage_report(records, [tool.name for tool in catalog])
    if args.plot:
        plot_report(report, args.plot)
    if args.json:
        emit_json({"source": args.file or "store", "records": len(records), **report.to_dict()})
        return 0
    source = args.file or "the store's log"
    print(
        f"toolmgmt usage: {source} ({len(records):,} records, {report.conversations} "
        "conversations)\n"
    )
    _print_summary(report)
    if report.tools:
        print("\ncalls and errors per tool")
        rows = sorted(report.tools.items(), key=lambda item: (-item[1].calls, item[0]))
        print_table(
            ["tool", "calls", "errors", "mean ms", "error codes"],
            [
                (
                    name + (" (meta)" if usage.meta else ""),
                    usage.calls,
                    usage.errors,
                    round(usage.seconds / usage.calls * 1000, 1),
                    ", ".join(f"{code} {n}" for code, n in sorted(usage.codes.items())),
                )
                for name, usage in rows
            ],
        )
    if report.unanswered:
        shown = report.unanswered[:_SHOWN]
        print(f"\nsearches that led to no call ({len(shown)} of {report.unanswered_count})")
        print_table(
            ["conversation", "found", "query"],
            [
                (
                    entry["conversation"],
                    ", ".join(entry["found"]) or "(nothing)",
                    " | ".join(entry.get("queries") or ["(not recorded)"]),
                )
                for entry in shown
            ],
        )
    never = report.never_found or []
    if never:
        names = ", ".join(never[:_SHOWN]) + (", ..." if len(never) > _SHOWN else "")
        print(f"\ntools never found by a search ({len(never)} of {len(catalog)}): {names}")
    if args.plot:
        print(f"\nplot written to {args.plot}")
    return 0


def _print_summary(report: UsageReport) -> None:
    share = f"{report.search_call_share:.0%}" if report.searches else "-"
    rows: list[tuple[str, Any]] = [
        ("searches", report.searches),
        ("  led to a call", f"{report.searches_with_call:,} ({share})"),
        ("  led to no call", report.unanswered_count),
        ("calls", report.calls),
        (
            "tokens saved by discovery",
            f"{report.saved_by_discovery:,} (over {report.listings:,} tool lists)",
        ),
        (
            "tokens saved by truncation",
            f"{report.saved_by_truncation:,} (over {report.truncations:,} cut results)",
        ),
        ("policy denials", report.denials),
    ]
    if report.approvals:
        rows.append(("approvals", ", ".join(f"{k} {v}" for k, v in report.approvals.items())))
    if report.programs:
        rows.append(
            (
                "tokens kept out by code mode",
                f"{report.saved_by_code:,} (over {report.programs:,} programs, "
                f"{report.program_calls:,} calls)",
            )
        )
    print_table(["figure", "value"], rows, align=["<", "<"])


_DENIED = frozenset({"not_permitted", "tool_denied", "approval_denied"})
"""Error codes counted as denials in the plot (the policy or an approver said no)."""
_OUTCOMES = (
    ("success", "tab:green"),
    ("denied", "tab:purple"),
    ("unknown tool", "tab:gray"),
    ("other error", "tab:red"),
)


def _outcomes(usage: Any) -> tuple[int, int, int, int]:
    """One tool's calls as (success, denied, unknown tool, other error)."""
    denied = sum(n for code, n in usage.codes.items() if code in _DENIED)
    unknown = usage.codes.get("unknown_tool", 0)
    return usage.calls - usage.errors, denied, unknown, usage.errors - denied - unknown


def plot_report(report: UsageReport, path: str) -> None:
    """Draw the report's figures into a PNG at ``path`` (matplotlib, no display needed):
    :func:`draw_report`'s figure.

    Raises:
        CliError: matplotlib is not installed, or the file cannot be written.
    """
    figure = draw_report(report)
    import matplotlib.pyplot as plt

    try:
        figure.savefig(path, dpi=80)
    except OSError as exc:
        raise CliError(f"cannot write {path}: {exc.strerror}") from exc
    finally:
        plt.close(figure)


def draw_report(report: UsageReport) -> Any:
    """The report's figures, a matplotlib ``Figure``: searches, tokens saved (a log axis, so
    discovery's share shows beside truncation's), the catalog's tools found, calls per tool by
    outcome (success, denied, unknown tool, other error) and each tool's mean latency, every
    bar with its number.

    Raises:
        CliError: matplotlib is not installed.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except ImportError as exc:
        raise CliError("--plot needs matplotlib: pip install matplotlib") from exc
    figure = plt.figure(figsize=(15, 9))
    grid = figure.add_gridspec(2, 6)
    searches = figure.add_subplot(grid[0, 0:2])
    tokens = figure.add_subplot(grid[0, 2:4])
    found = figure.add_subplot(grid[0, 4:6])
    calls = figure.add_subplot(grid[1, 0:3])
    latency = figure.add_subplot(grid[1, 3:6])
    bars = searches.bar(
        ["led to a call", "led to no call"],
        [report.searches_with_call, report.unanswered_count],
        color=["tab:green", "tab:red"],
    )
    searches.bar_label(bars)
    searches.set_title(f"{report.searches} searches")
    searches.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    saved = [report.saved_by_discovery, report.saved_by_truncation]
    bars = tokens.bar(["discovery", "truncation"], saved, color=["tab:blue", "tab:orange"])
    total = sum(saved)
    tokens.bar_label(bars, labels=[f"{n:,} ({n / total:.0%})" if total else "0" for n in saved])
    if any(saved):
        tokens.set_yscale("log")  # one is often 100x the other: both stay readable
        tokens.set_ylim(bottom=1, top=max(saved) * 4)
    tokens.set_title("tokens saved (log scale)")
    top = sorted(report.tools.items(), key=lambda item: -item[1].calls)[:15][::-1]
    names = [name for name, _ in top]
    parts = [_outcomes(usage) for _, usage in top]
    left = [0] * len(top)
    for index, (label, color) in enumerate(_OUTCOMES):
        widths = [part[index] for part in parts]
        if not any(widths):
            continue
        bars = calls.barh(names, widths, left=left, color=color, label=label)
        calls.bar_label(bars, labels=[str(w) if w else "" for w in widths], label_type="center")
        left = [a + b for a, b in zip(left, widths, strict=True)]
    calls.set_title("calls per tool, by outcome")
    if top:
        calls.legend(loc="lower right")
    means = [usage.seconds / usage.calls * 1000 if usage.calls else 0.0 for _, usage in top]
    bars = latency.barh(names, means, color="tab:cyan")
    latency.bar_label(bars, labels=[f"{m:.0f} ms" if m >= 1 else f"{m:.2f} ms" for m in means])
    latency.set_title("mean call latency per tool (ms)")
    latency.margins(x=0.2)  # room for the numbers after the longest bar
    if report.never_found is not None and report.catalog_tools:
        never, size = len(report.never_found), report.catalog_tools
        found.pie(
            [size - never, never],
            labels=["found", "never found"],
            autopct=lambda share: f"{share:.0f}%\n({share * size / 100:.0f})",
            colors=["tab:blue", "tab:gray"],
        )
        found.set_title("catalog tools")
    else:
        found.axis("off")
    figure.tight_layout()
    return figure
