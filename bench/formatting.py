"""Provider formatting time per tool, cold and cached, on the BFCL dev pool (979 tools).

For each provider configuration the pool is formatted in requests of 100 tools (OpenAI accepts
at most 128 per request), and three costs are measured:

- cold: every cache cleared, every schema converted;
- same content: new ``Tool`` objects with the same content (what a session that rebuilds its
  tools each step sends): the request cache misses, the per-tool content cache hits;
- cached: the same tool objects again (an unchanged step): one request-cache lookup.

Reference, in the same run: ``copy.deepcopy`` of each tool's name, description and parameters,
the least any uncached formatter must do. A native session step (a ``ToolManager`` over the whole
pool in search mode, ``format_tools(session, "anthropic", native=True)``: the loaded tools plus
the rest of the catalog deferred; the catalog refuses the look-alike ``calculate_BMI``) is timed
cold and cached too.

``--json OUT`` writes (under ``figures``, see ``bench/_results.py``)::

    {"tools": int, "request_size": 100, "repeat": int, "deepcopy_us_per_tool": float,
     "configs": [{"config": "anthropic" | "anthropic native" | "openai" | "openai strict" |
                            "responses strict" | "gemini" | "gemini json schema",
                  "cold_us_per_tool": float, "same_content_us_per_tool": float,
                  "cached_us_per_tool": float, "cached_us_per_request": float,
                  "cold_vs_deepcopy": cold / deepcopy}, ...],
     "native_session_step": {"provider": "anthropic", "tools_sent": int, "deferred": int,
                             "cold_ms": float, "cached_ms": float}}

Run: ``python bench/formatting.py [--repeat 5] [--json bench/results/formatting.json]``.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._data import load_bfcl  # noqa: E402
from bench._results import write_results  # noqa: E402
from toolmgmt_core import Tool, ToolCatalog  # noqa: E402
from toolmgmt_core._model.schema import tool_from_dict  # noqa: E402
from toolmgmt_core._providers import clear_format_cache, format_tools  # noqa: E402
from toolmgmt_core._session.manager import ToolManager  # noqa: E402

CONFIGS: list[tuple[str, str, dict[str, Any]]] = [
    ("anthropic", "anthropic", {}),
    ("anthropic native", "anthropic", {"native": True}),
    ("openai", "openai", {}),
    ("openai strict", "openai", {"strict": True}),
    ("responses strict", "openai-responses", {"strict": True}),
    ("gemini", "gemini", {}),
    ("gemini json schema", "gemini", {"gemini_json_schema": True}),
]
CHUNK = 100


def _chunks(tools: list[Tool]) -> list[list[Tool]]:
    return [tools[i : i + CHUNK] for i in range(0, len(tools), CHUNK)]


def _time(fn: Callable[[], Any], repeat: int, before: Callable[[], None] | None = None) -> float:
    """Median seconds of ``fn`` over ``repeat`` runs (``before`` runs untimed first)."""
    times = []
    for _ in range(repeat):
        if before:
            before()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timing rounds (median is shown)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)

    definitions, _ = load_bfcl()
    tools = [tool_from_dict(d) for d in definitions]
    twins = [t.replace() for t in tools]  # same content, new objects
    n = len(tools)
    chunks, twin_chunks = _chunks(tools), _chunks(twins)

    reference = _time(
        lambda: [copy.deepcopy([t.name, t.description, dict(t.parameters)]) for t in tools],
        args.repeat,
    )
    print(f"BFCL pool: {n} tools, requests of {CHUNK} tools, median of {args.repeat} rounds\n")
    header = f"{'configuration':<20} {'cold µs/tool':>13} {'same content':>13} {'cached':>9}"
    header += f" {'cached µs/request':>18} {'cold/deepcopy':>14}"
    print(header)
    print("-" * len(header))
    rows: list[dict[str, Any]] = []
    for label, provider, options in CONFIGS:

        def run(parts: list[list[Tool]], provider: str = provider, options: dict = options) -> None:
            for part in parts:
                format_tools(part, provider, **options)

        cold = _time(lambda: run(chunks), args.repeat, before=clear_format_cache)

        def warm_content(run: Callable[..., None] = run) -> None:
            clear_format_cache()
            run(chunks)

        same = _time(lambda: run(twin_chunks), args.repeat, before=warm_content)
        run(chunks)
        cached = _time(lambda: run(chunks), args.repeat)
        print(
            f"{label:<20} {cold / n * 1e6:>13.1f} {same / n * 1e6:>13.1f} "
            f"{cached / n * 1e6:>9.2f} {cached / len(chunks) * 1e6:>18.1f} "
            f"{cold / reference:>13.1f}x"
        )
        rows.append(
            {
                "config": label,
                "cold_us_per_tool": cold / n * 1e6,
                "same_content_us_per_tool": same / n * 1e6,
                "cached_us_per_tool": cached / n * 1e6,
                "cached_us_per_request": cached / len(chunks) * 1e6,
                "cold_vs_deepcopy": cold / reference,
            }
        )
    print(f"{'reference: deepcopy':<20} {reference / n * 1e6:>13.1f}")

    catalog = ToolCatalog()
    catalog.add_schemas(definitions, on_error="skip")  # look-alike names (calculate_BMI) refused
    session = ToolManager(catalog, mode="search").session()
    cold = _time(
        lambda: format_tools(session, "anthropic", native=True),
        args.repeat,
        before=clear_format_cache,
    )
    cached = _time(lambda: format_tools(session, "anthropic", native=True), args.repeat)
    out = format_tools(session, "anthropic", native=True)
    print(
        f"\nnative session step (anthropic, {len(out['tools'])} tools sent, "
        f"{len(out['report'].deferred)} deferred): cold {cold * 1e3:.1f} ms, "
        f"cached {cached * 1e3:.2f} ms ({cold / cached:.0f}x faster)"
    )
    if args.json:
        figures = {
            "tools": n,
            "request_size": CHUNK,
            "repeat": args.repeat,
            "deepcopy_us_per_tool": reference / n * 1e6,
            "configs": rows,
            "native_session_step": {
                "provider": "anthropic",
                "tools_sent": len(out["tools"]),
                "deferred": len(out["report"].deferred),
                "cold_ms": cold * 1e3,
                "cached_ms": cached * 1e3,
            },
        }
        write_results(args.json, "formatting", figures)
    return 0


if __name__ == "__main__":
    sys.exit(main())
