"""Definition tokens per mode, and the cost of a cold start, against the flat tool list.

For catalogs of 80 and 200 tools (spread over the BFCL pool), the whole demo catalog (when
``toolmgmt_core.demo`` is there) and the whole BFCL pool, this prints:

- the reference: tokens of every tool definition sent flat (name, description, parameters);
- each mode's initial tool list (search, gateway, lazy, auto), in tokens and as a share of flat;
- a cold start for the median tool (by definition size), scripted as a model would make it:
  gateway ``discover_tools(query)`` -> ``get_tool_schema`` -> ``execute_tool``; search
  ``tool_search`` -> the loaded definition -> the call; lazy ``load_tool_schema`` -> the call.
  Counted: each call the model writes (name and arguments) and each response it reads; the
  tool's own result is left out (it is the same in every mode and with a flat list).

Goals (issue 3): initial list <= 2% of flat at 200 tools; cold start <= 1,500 tokens.

Run: ``python bench/tokens.py [--encoding o200k_base] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import load_bfcl  # noqa: E402

from toolmgmt_core import Tool, ToolCatalog, ToolManager, count_tokens  # noqa: E402
from toolmgmt_core.execution import dumps_compact  # noqa: E402
from toolmgmt_core.manager import definition_text  # noqa: E402

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


def demo_catalog() -> ToolCatalog | None:
    try:
        from toolmgmt_core import demo
    except ImportError:
        return None
    for name in ("demo_catalog", "build_demo_catalog", "load_demo_catalog"):
        factory = getattr(demo, name, None)
        if callable(factory):
            return factory()
    return None


def example_value(schema: Any, depth: int = 0) -> Any:
    """A plausible value for ``schema`` (what a model would send), from examples or types."""
    if not isinstance(schema, dict) or depth > 4:
        return "x"
    for key in ("default", "const"):
        if key in schema and schema[key] is not None:
            return schema[key]
    if schema.get("enum"):
        return schema["enum"][0]
    if schema.get("examples"):
        return schema["examples"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            branches = [b for b in schema[key] if b.get("type") != "null"] or schema[key]
            return example_value(branches[0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or "properties" in schema:
        return example_arguments(schema, depth + 1)
    if kind == "array":
        return [example_value(schema.get("items", {}), depth + 1)]
    return {"integer": 1, "number": 1.5, "boolean": True, "null": None}.get(kind, "example")


def example_arguments(schema: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    props = schema.get("properties") or {}
    required = schema.get("required") or list(props)[:1]
    return {k: example_value(props[k], depth) for k in required if k in props}


def median_tool(catalog: ToolCatalog) -> Tool:
    tools = sorted(catalog, key=lambda t: (len(definition_text(t)), t.name))
    return tools[len(tools) // 2]


def _call_tokens(name: str, arguments: dict[str, Any], encoding: str) -> int:
    return count_tokens(dumps_compact({"name": name, "arguments": arguments}), encoding)


def cold_start(catalog: ToolCatalog, mode: str, tool: Tool, encoding: str) -> dict[str, Any]:
    """Tokens of the calls and responses that take a fresh session to one call of ``tool``."""
    session = ToolManager(catalog, mode=mode, encoding=encoding).session()
    arguments = dict(tool.input_examples[0]) if tool.input_examples else None
    if arguments is None:
        arguments = example_arguments(dict(tool.parameters))
    steps: list[tuple[str, dict[str, Any]]] = []
    query = tool.summary
    if mode == "gateway":
        steps = [
            ("discover_tools", {"query": query}),
            ("get_tool_schema", {"tool_name": tool.name}),
        ]
        final = ("execute_tool", {"tool_name": tool.name, "arguments": arguments})
    elif mode == "search":
        steps = [("tool_search", {"query": query})]
        final = (tool.name, arguments)
    else:
        steps = [("load_tool_schema", {"tool_names": [tool.name]})]
        final = (tool.name, arguments)
    total = 0
    found = True
    detail: dict[str, int] = {}
    for name, args in steps:
        result = session.call_sync(name, args)
        cost = _call_tokens(name, args, encoding) + result.tokens
        detail[name] = cost
        total += cost
        if name in ("discover_tools", "tool_search"):
            listed = result.value.get("tools") or result.value.get("found") or {}
            found = tool.name in listed
    if mode == "search":
        grown = session.manager.definition_tokens(session.tools()[1:])
        detail["loaded definitions"] = grown
        total += grown
    detail["call"] = _call_tokens(*final, encoding)
    total += detail["call"]
    return {"tokens": total, "found_by_query": found, "steps": detail}


def measure(label: str, catalog: ToolCatalog, encoding: str) -> dict[str, Any]:
    flat = ToolManager(catalog, encoding=encoding).session().usage().flat_tokens
    row: dict[str, Any] = {"catalog": label, "tools": len(catalog), "flat": flat, "modes": {}}
    tool = median_tool(catalog)
    row["median_tool"] = tool.name
    row["median_definition"] = count_tokens(definition_text(tool), encoding)
    for mode in MODES:
        session = ToolManager(catalog, mode=mode, encoding=encoding).session()
        initial = session.usage().definition_tokens
        entry: dict[str, Any] = {"initial": initial, "share": initial / flat if flat else 0.0}
        if mode == "auto":
            entry["effective"] = session.mode
        else:
            entry["cold_start"] = cold_start(catalog, mode, tool, encoding)
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
    pool, _ = load_bfcl()
    catalogs: list[tuple[str, ToolCatalog]] = [
        ("bfcl-80", bfcl_catalog(pool, 80)),
        ("bfcl-200", bfcl_catalog(pool, 200)),
    ]
    demo = demo_catalog()
    if demo is not None:
        catalogs.append(("demo", demo))
    else:
        print("(toolmgmt_core.demo has no demo catalog yet: its row is left out)")
    catalogs.append(("bfcl-pool", bfcl_catalog(pool)))
    rows = [measure(label, catalog, args.encoding) for label, catalog in catalogs]
    print(f"Definition tokens ({args.encoding}): flat list against each mode's initial list")
    print_table(rows)
    ok = check_goals(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
