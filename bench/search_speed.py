"""Search speed on synthetic catalogs of 1k, 10k and 100k tools, against raw bm25s.

Run: ``python bench/search_speed.py`` (``--sizes 1000 10000`` for fewer, ``--queries N``).

Each catalog is generated from a seeded vocabulary: verb + object names in mixed conventions
(snake_case, camelCase, dotted), one- or two-sentence descriptions, one to six parameters with
descriptions and enums, across domains and groups, plus made-up product words so that the
vocabulary grows with the catalog as a real one does. Measured, in the same run:

- toolmgmt: ``ToolCatalog.add_many`` + the index build (tokenizing every field, the BM25 matrix),
  the latency of ``ToolCatalog.search(query, limit=5)`` for single queries and for two-need
  requests (split into clauses and fused), a search scoped by domain, and ``suggest`` for
  misspelled names;
- raw bm25s on the same text (name + description + parameters, ``bm25s.tokenize``):
  index build and ``retrieve(k=5)`` latency.

Build times are the median of ``--rounds`` builds, wall clock with the CPU time in brackets
(on a shared machine the wall clock includes waiting for a CPU; the load average is printed and
recorded); ``tm_index`` is the index alone (after ``add_many``). Peak memory is measured for
each engine in a fresh subprocess that makes the catalog, then builds: the growth of the peak
resident set (``ru_maxrss`` over the resident set before the build) and, in another
subprocess, tracemalloc's peak (Python and numpy allocations; it slows Python down, so times
come from runs without it). The versions of bm25s and numpy are recorded with the figures.
Goals: p50 <= 1 ms at 10k tools and <= 5 ms at 100k (issue 2); at 100k tools, build time and
peak memory within 1.5x of bm25s's and p50 no slower (issue 34).
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import write_results  # noqa: E402

from toolmgmt_core import Tool, ToolCatalog  # noqa: E402

VERBS = (
    "get list create update delete search send fetch cancel book schedule archive export import "
    "sync merge approve reject assign close open move copy upload download resize convert "
    "calculate estimate forecast validate translate summarize notify invite refund charge "
    "transfer publish render analyze compare subscribe unsubscribe"
).split()
OBJECTS = (
    "invoice customer contact deal ticket issue pull_request branch commit file folder document "
    "spreadsheet calendar_event meeting email message channel thread user team project task "
    "milestone payment subscription refund order product inventory shipment flight hotel "
    "booking weather_forecast stock_price exchange_rate report dashboard metric alert incident "
    "deployment container secret webhook note comment label playlist song recipe route map"
).split()
ADJECTIVES = (
    "recent archived shared pending overdue active draft public private monthly daily "
    "international local default custom primary"
).split()
DOMAINS = (
    "crm files calendar email code payments analytics web travel devops music commerce "
    "support finance health education"
).split()
TYPES = ("string", "integer", "number", "boolean")
SYLLABLES = "ka lo mi zu ren tor vex qua pli dran sol nim fex bru tak yel gor mip".split()


def _product_word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))


def _name(verb: str, obj: str, product: str, style: int) -> str:
    parts = [verb, *obj.split("_")]
    if style == 0:
        return "_".join([*parts, product])
    if style == 1:
        return parts[0] + "".join(p.title() for p in parts[1:]) + product.title()
    return f"{product}.{'_'.join(parts)}"


def make_tools(n: int, seed: int = 7) -> list[Tool]:
    """``n`` distinct synthetic tools, the same for the same seed."""
    rng = random.Random(seed)
    products = sorted({_product_word(rng) for _ in range(max(50, n // 20))})
    tools: list[Tool] = []
    seen: set[str] = set()
    while len(tools) < n:
        verb, obj, product = rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(products)
        name = _name(verb, obj, product, rng.randrange(3))
        if name in seen:
            name = f"{name}_{len(tools)}"
        seen.add(name)
        noun = obj.replace("_", " ")
        adjective = rng.choice(ADJECTIVES)
        description = (
            f"{verb.title()} {adjective} {noun}s in {product.title()}. "
            f"Use it to {rng.choice(VERBS)} the {rng.choice(OBJECTS).replace('_', ' ')} "
            f"of a {noun} by {rng.choice(OBJECTS).replace('_', ' ')}."
        )
        properties: dict[str, Any] = {}
        for _ in range(rng.randint(1, 6)):
            pobj = rng.choice(OBJECTS)
            pname = f"{pobj}_{rng.choice(['id', 'name', 'date', 'limit', 'status', 'type'])}"
            prop: dict[str, Any] = {
                "type": rng.choice(TYPES),
                "description": f"The {rng.choice(ADJECTIVES)} {pobj.replace('_', ' ')} to use.",
            }
            if rng.random() < 0.2:
                prop = {
                    "type": "string",
                    "enum": rng.sample(ADJECTIVES, 3),
                    "description": prop["description"],
                }
            properties[pname] = prop
        domain = rng.choice(DOMAINS)
        tools.append(
            Tool(
                name=name,
                description=description,
                parameters={"type": "object", "properties": properties},
                domain=domain,
                group=rng.choice(OBJECTS),
            )
        )
    return tools


def make_queries(tools: Sequence[Tool], count: int, seed: int = 11) -> list[str]:
    """Single-need queries (half) and two-need requests (half) in plain English."""
    rng = random.Random(seed)
    out: list[str] = []
    for i in range(count):
        tool = rng.choice(tools)
        first = f"{tool.description.split('.')[0].lower()} for the {rng.choice(ADJECTIVES)} one"
        if i % 2:
            other = rng.choice(tools).description.split(".")[0].lower()
            out.append(f"Please {first}, then {other}")
        else:
            out.append(first)
    return out


def _typo(name: str, rng: random.Random) -> str:
    """``name`` with two neighbouring letters swapped (a typical misspelling)."""
    i = rng.randrange(max(1, len(name) - 1))
    return name[:i] + name[i + 1 : i + 2] + name[i : i + 1] + name[i + 2 :]


def tool_text(tool: Tool) -> str:
    """Name, description and parameters as one text (what raw bm25s indexes)."""
    params = " ".join(
        f"{k} {v.get('description', '')} {' '.join(v.get('enum', []))}"
        for k, v in tool.parameters.get("properties", {}).items()
    )
    return f"{tool.name} {tool.description} {params}"


def _latencies(fn: Callable[[str], object], queries: Sequence[str]) -> tuple[float, float]:
    for q in queries[:5]:
        fn(q)  # warm up
    times = []
    for q in queries:
        start = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - start) * 1000)
    return float(np.percentile(times, 50)), float(np.percentile(times, 95))


def _rss_mb() -> float:
    """The resident set now (Linux: /proc/self/statm)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _measure_memory(engine: str, size: int, traced: bool) -> float:
    """In this (fresh) process: make the catalog, then the peak MB that building ``engine``
    adds (tracemalloc's peak when ``traced``, else the peak resident set's growth)."""
    tools = make_tools(size)
    build: Callable[[], object]
    if engine == "toolmgmt":
        build = lambda: _build_toolmgmt(tools)  # noqa: E731
    else:
        texts = [tool_text(t) for t in tools]
        build = lambda: _build_bm25s(texts)  # noqa: E731
    gc.collect()
    if traced:
        tracemalloc.start()
        build()
        return tracemalloc.get_traced_memory()[1] / 2**20
    before = _rss_mb()
    build()
    return max(0.0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before)


def _peak_mb(engine: str, size: int, *, traced: bool) -> float:
    """:func:`_measure_memory` in a fresh subprocess (no earlier build's heap or high-water
    mark counts)."""
    argv = [sys.executable, __file__, "--memory-of", engine, str(size)]
    out = subprocess.run(argv + (["--traced"] if traced else []), capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"measuring {engine} at {size} failed:\n{out.stderr}")
    return float(out.stdout.strip().splitlines()[-1])


def _build_toolmgmt(tools: Sequence[Tool]) -> ToolCatalog:
    catalog = ToolCatalog()
    catalog.add_many(tools)
    catalog.search("warm up")  # builds the index
    return catalog


def _build_bm25s(texts: Sequence[str]) -> bm25s.BM25:
    engine = bm25s.BM25()
    engine.index(
        bm25s.tokenize(list(texts), stopwords="en", show_progress=False), show_progress=False
    )
    return engine


def _timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    start, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - start, time.process_time() - cpu, out


def run(size: int, n_queries: int, rounds: int = 1) -> dict[str, float]:
    tools = make_tools(size)
    queries = make_queries(tools, n_queries)
    singles = queries[0::2]
    doubles = queries[1::2]
    texts = [tool_text(t) for t in tools]
    row: dict[str, float] = {"size": size}

    walls: dict[str, list[float]] = {k: [] for k in ("tm_build", "tm_cpu", "tm_index")}
    walls.update({"bs_build": [], "bs_cpu": []})
    catalog: Any = None
    engine: Any = None
    for _ in range(rounds):
        catalog = engine = None
        gc.collect()
        wall, cpu, catalog = _timed(lambda: _add(tools))
        index_wall, index_cpu, _ = _timed(partial(catalog.search, "warm up"))  # builds the index
        walls["tm_build"].append(wall + index_wall)
        walls["tm_cpu"].append(cpu + index_cpu)
        walls["tm_index"].append(index_wall)
        catalog = None
        gc.collect()
        wall, cpu, engine = _timed(lambda: _build_bm25s(texts))
        walls["bs_build"].append(wall)
        walls["bs_cpu"].append(cpu)
    row.update({k: statistics.median(v) for k, v in walls.items()})
    catalog = _build_toolmgmt(tools)
    row["tm_p50"], row["tm_p95"] = _latencies(lambda q: catalog.search(q, limit=5), singles)
    row["tm2_p50"], row["tm2_p95"] = _latencies(lambda q: catalog.search(q, limit=5), doubles)
    domain = tools[0].domain
    row["tmd_p50"], row["tmd_p95"] = _latencies(
        lambda q: catalog.search(q, limit=5, domain=domain), singles
    )

    rng = random.Random(3)
    typos = [_typo(rng.choice(tools).name, rng) for _ in range(100)]
    row["sg_p50"], row["sg_p95"] = _latencies(catalog.suggest, typos)

    def raw(q: str) -> object:
        tokens = bm25s.tokenize([q], stopwords="en", show_progress=False)
        return engine.retrieve(tokens, k=5, show_progress=False, n_threads=1)

    row["bs_p50"], row["bs_p95"] = _latencies(raw, singles)
    catalog = engine = None
    for key, engine_name in (("tm", "toolmgmt"), ("bs", "bm25s")):
        row[f"{key}_rss"] = _peak_mb(engine_name, size, traced=False)
        row[f"{key}_mem"] = _peak_mb(engine_name, size, traced=True)
    return row


def _add(tools: Sequence[Tool]) -> ToolCatalog:
    catalog = ToolCatalog()
    catalog.add_many(tools)
    return catalog


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--queries", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3, help="builds a size (the median counts)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--memory-of", nargs=2, metavar=("ENGINE", "SIZE"), help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.memory_of:
        print(_measure_memory(args.memory_of[0], int(args.memory_of[1]), args.traced))
        return 0
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}.")
    load_before = os.getloadavg()[0]
    rows = [run(size, args.queries, args.rounds) for size in args.sizes]
    versions = {"bm25s": bm25s.__version__, "numpy": np.__version__}
    if args.json:
        figures = {
            "queries": args.queries,
            "rounds": args.rounds,
            "versions": versions,
            "load_before": round(load_before, 2),
            "rows": rows,
        }
        write_results(args.json, "search_speed", figures)
    print(f"bm25s {versions['bm25s']}, numpy {versions['numpy']}; median of {args.rounds} builds")
    print(
        "| tools | toolmgmt build s (cpu) | bm25s build s (cpu) | toolmgmt p50 / p95 ms "
        "| two-need p50 / p95 | scoped p50 / p95 | bm25s p50 / p95 ms "
        "| toolmgmt peak MB: RSS / traced | bm25s peak MB: RSS / traced | suggest p50 / p95 ms |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {int(r['size']):,} | {r['tm_build']:.2f} ({r['tm_cpu']:.2f}) | "
            f"{r['bs_build']:.2f} ({r['bs_cpu']:.2f}) | "
            f"{r['tm_p50']:.2f} / {r['tm_p95']:.2f} | {r['tm2_p50']:.2f} / {r['tm2_p95']:.2f} | "
            f"{r['tmd_p50']:.2f} / {r['tmd_p95']:.2f} | {r['bs_p50']:.2f} / {r['bs_p95']:.2f} | "
            f"{r['tm_rss']:.0f} / {r['tm_mem']:.0f} | {r['bs_rss']:.0f} / {r['bs_mem']:.0f} | "
            f"{r['sg_p50']:.2f} / {r['sg_p95']:.2f} |"
        )
    goals = {10000: 1.0, 100000: 5.0}
    for r in rows:
        if int(r["size"]) in goals:
            ok = r["tm_p50"] <= goals[int(r["size"])]
            print(
                f"p50 at {int(r['size']):,} tools: {r['tm_p50']:.2f} ms (goal <= "
                f"{goals[int(r['size'])]} ms): {'met' if ok else 'MISSED'}"
            )
        if int(r["size"]) == 100000:
            ok = r["tm_build"] <= 10
            print(
                f"build at 100,000 tools: {r['tm_build']:.1f} s wall, {r['tm_cpu']:.1f} s CPU "
                f"(goal <= 10 s): {'met' if ok else 'MISSED'}"
            )
    for r in rows:
        build, index = r["tm_build"] / r["bs_build"], r["tm_index"] / r["bs_build"]
        rss, traced = r["tm_rss"] / max(r["bs_rss"], 1e-9), r["tm_mem"] / r["bs_mem"]
        print(
            f"{int(r['size']):,} tools, toolmgmt against bm25s: build {build:.2f}x (index alone "
            f"{index:.2f}x), peak RSS {rss:.2f}x, traced {traced:.2f}x, p50 "
            f"{r['tm_p50'] / r['bs_p50']:.2f}x (goals at 100k: <= 1.5x, <= 1.5x, <= 1x)"
        )
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
