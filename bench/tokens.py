"""Definition tokens per mode, and the cost of a cold start, against the flat tool list.

For catalogs of 80 and 200 tools (spread over the BFCL pool), the whole demo catalog and the
whole BFCL pool, this prints:

- the reference: tokens of every tool definition sent flat (name, description, parameters);
- each mode's initial tool list (search, gateway, lazy, auto), in tokens and as a share of flat;
- a cold start for the median tool (by definition size), scripted as a model would make it:
  gateway ``discover_tools(query)`` -> ``get_tool_schema`` -> ``execute_tool``; search
  ``tool_search`` -> the loaded definition -> the call; lazy ``load_tool_schema`` -> the call.
  Counted: each call the model writes (name and arguments) and each response it reads; the
  tool's own result is left out (it is the same in every mode and with a flat list).

Goals (issue 3): initial list <= 2% of flat at 200 tools; cold start <= 1,500 tokens.

Every figure comes from :mod:`toolmgmt_core._session.report` (the same code as ``toolmgmt report``).

Run: ``python bench/tokens.py [--encoding o200k_base] [--json bench/results/tokens.json]``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import load_bfcl  # noqa: E402
from _results import write_results  # noqa: E402

from toolmgmt_core import ToolCatalog, ToolManager, count_tokens  # noqa: E402
from toolmgmt_core._model.tokens import definition_text  # noqa: E402
from toolmgmt_core._session.report import cold_start, median_tool  # noqa: E402

MODES = ("search", "gateway", "lazy", "auto")
INITIAL_SHARE_GOAL = 0.02
COLD_START_GOAL = 1500


def _spread(items: list[Any], n: int) -> list[Any]:
    """``n`` items spread evenly over ``items`` (so a subset mixes every BFCL category)."""
    if n >= len(items):
        return list(items)
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def bfcl_catalog(definitions: list[dict[str, Any]], n: int | None = None) -> ToolCatalog:
    catalog = ToolCatalog()
    chosen = definitions if n is None else _spread(definitions, n)
    catalog.add_schemas(chosen, on_error="skip")
    return catalog


CATALOGS: dict[str, int | None] = {"bfcl-80": 80, "bfcl-200": 200, "demo": None, "bfcl-pool": None}
"""The catalogs measured, in table order: BFCL ones by their number of tools (None: the whole
pool), and the demo catalog."""


def catalogs(labels: Sequence[str] = tuple(CATALOGS)) -> list[tuple[str, ToolCatalog]]:
    """The catalogs of ``labels`` (default: all); the BFCL data is read only for a BFCL one."""
    import toolmgmt_demo

    pool = load_bfcl()[0] if any(label != "demo" for label in labels) else []
    return [
        (
            label,
            toolmgmt_demo.demo_catalog()
            if label == "demo"
            else bfcl_catalog(pool, CATALOGS[label]),
        )
        for label in labels
    ]


def measure(label: str, catalog: ToolCatalog, encoding: str) -> dict[str, Any]:
    catalog = catalog if catalog.encoding == encoding else ToolCatalog(catalog, encoding=encoding)
    flat = ToolManager(catalog).session().usage().flat_tokens
    row: dict[str, Any] = {"catalog": label, "tools": len(catalog), "flat": flat, "modes": {}}
    tool = median_tool(catalog)
    row["median_tool"] = tool.name
    row["median_definition"] = count_tokens(definition_text(tool), encoding)
    for mode in MODES:
        session = ToolManager(catalog, mode=mode).session()
        initial = session.usage().definition_tokens
        entry: dict[str, Any] = {
            "initial": initial,
            "share": initial / flat if flat else 0.0,
            "listed": len(session.tools()),
        }
        if mode == "auto":
            entry["effective"] = session.mode
        else:
            cold = cold_start(catalog, mode, tool, encoding)
            entry["cold_start"] = {
                "tokens": cold.tokens,
                "found_by_query": cold.found,
                "steps": dict(cold.steps),
            }
        row["modes"][mode] = entry
    return row


def print_table(rows: list[dict[str, Any]]) -> None:
    head = f"{'catalog':<14}{'tools':>6}{'flat':>9}"
    for mode in MODES:
        head += f"{mode + ' init':>16}"
    print(head)
    print("-" * len(head))
    for row in rows:
        line = f"{row['catalog']:<14}{row['tools']:>6}{row['flat']:>9}"
        for mode in MODES:
            entry = row["modes"][mode]
            cell = f"{entry['initial']} ({entry['share']:.1%})"
            line += f"{cell:>16}"
        print(line)
    print()
    print("Cold start for the median tool (calls written + responses read, tokens):")
    head = f"{'catalog':<14}{'median tool':<34}{'def':>6}"
    for mode in ("gateway", "search", "lazy"):
        head += f"{mode:>12}"
    print(head)
    print("-" * len(head))
    for row in rows:
        line = f"{row['catalog']:<14}{row['median_tool'][:33]:<34}{row['median_definition']:>6}"
        for mode in ("gateway", "search", "lazy"):
            cold = row["modes"][mode]["cold_start"]
            mark = "" if cold["found_by_query"] else "*"
            line += f"{str(cold['tokens']) + mark:>12}"
        print(line)
    print("(* the median tool was not among the hits of a query made of its own first sentence)")
    for row in rows:
        steps = row["modes"]["gateway"]["cold_start"]["steps"]
        parts = ", ".join(f"{k} {v}" for k, v in steps.items())
        print(f"  gateway steps, {row['catalog']}: {parts}")


def check_goals(rows: list[dict[str, Any]]) -> bool:
    ok = True
    print()
    for row in rows:
        if row["tools"] == 200:
            for mode in ("search", "gateway"):
                share = row["modes"][mode]["share"]
                passed = share <= INITIAL_SHARE_GOAL
                ok &= passed
                print(
                    f"goal initial <= 2% of flat at 200 tools, {mode}: {share:.2%} "
                    f"{'PASS' if passed else 'FAIL'}"
                )
    worst = max(row["modes"]["gateway"]["cold_start"]["tokens"] for row in rows)
    passed = worst <= COLD_START_GOAL
    ok &= passed
    print(
        f"goal gateway cold start <= {COLD_START_GOAL} tokens: worst {worst} "
        f"{'PASS' if passed else 'FAIL'}"
    )
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--encoding", default="o200k_base")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    rows = [measure(label, catalog, args.encoding) for label, catalog in catalogs()]
    print(f"Definition tokens ({args.encoding}): flat list against each mode's initial list")
    print_table(rows)
    ok = check_goals(rows)
    if args.json:
        write_results(args.json, "tokens", {"encoding": args.encoding, "catalogs": rows})
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
