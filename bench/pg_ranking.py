"""Why search ranking stays in each replica: PostgreSQL full-text ranking against BM25.

Every replica builds its own BM25 index from the tools it follows in the catalog store
(``PostgresCatalogStore``), instead of asking PostgreSQL to rank. This measures that choice on
the BFCL dev split, in one run, on one PostgreSQL:

- ``ts_rank_cd`` over a weighted ``tsvector`` (name A, description B, parameters C; the
  ``english`` configuration), the request's lexemes OR-ed (an AND of every word of a long
  request matches nothing), top 10 by rank, through a GIN index;
- ``ToolCatalog.search`` (in process) on the same tools and requests.

Figures: R@1, R@5, MRR and per-request latency (p50/p95 ms; PostgreSQL's includes the round
trip on loopback).

Run: ``python bench/pg_ranking.py [--dsn postgresql://...] [--json bench/results/pg_ranking.json]``
(without ``--dsn`` a throw-away local PostgreSQL is started). JSON ``figures``::

    {"pool": 978, "queries": 1150,
     "rankers": [{"ranker": "...", "R@1", "R@5", "MRR", "p50_ms", "p95_ms"}, ...]}
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import load_split  # noqa: E402
from _results import write_results  # noqa: E402

from toolmgmt_core import ToolCatalog  # noqa: E402

DEPTH = 10


def _doc(tool: Any) -> tuple[str, str, str]:
    """A tool's name (words split), description and parameter text."""
    name = tool.name.replace("_", " ").replace(".", " ")
    props = tool.parameters.get("properties") or {}
    params = " ".join(
        f"{key.replace('_', ' ')} {value.get('description', '')}"
        for key, value in props.items()
        if isinstance(value, dict)
    )
    return name, tool.description, params


def _metrics(ranked: Sequence[list[str]], truths: Sequence[tuple[str, ...]]) -> dict[str, float]:
    r1 = r5 = rr = 0.0
    for names, truth in zip(ranked, truths, strict=True):
        ranks = [names.index(t) + 1 for t in truth if t in names]
        best = min(ranks) if ranks else None
        r1 += best == 1
        r5 += best is not None and best <= 5
        rr += 1 / best if best else 0.0
    n = len(truths)
    return {"R@1": 100 * r1 / n, "R@5": 100 * r5 / n, "MRR": 100 * rr / n}


def _timed(rank: Callable[[str], list[str]], texts: Sequence[str]) -> tuple[list[list[str]], list]:
    out, times = [], []
    for text in texts:
        start = time.perf_counter()
        out.append(rank(text))
        times.append(1000 * (time.perf_counter() - start))
    return out, times


def _row(name: str, ranked: list[list[str]], times: list[float], truths: Any) -> dict[str, Any]:
    times = sorted(times)
    return {
        "ranker": name,
        **_metrics(ranked, truths),
        "p50_ms": statistics.median(times),
        "p95_ms": times[int(0.95 * (len(times) - 1))],
    }


def measure(dsn: str) -> dict[str, Any]:
    import psycopg

    data = load_split("dev")
    catalog = ToolCatalog()
    catalog.add_schemas(data.pool, on_error="skip")
    tools = list(catalog)
    texts = [q.text for q in data.queries]
    truths = [q.ground_truth for q in data.queries]
    rows = []
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS bench_rank")
        conn.execute("CREATE TABLE bench_rank (name text PRIMARY KEY, doc tsvector)")
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO bench_rank VALUES (%s, "
                "setweight(to_tsvector('english', %s), 'A') || "
                "setweight(to_tsvector('english', %s), 'B') || "
                "setweight(to_tsvector('english', %s), 'C'))",
                [(t.name, *_doc(t)) for t in tools],
            )
        conn.execute("CREATE INDEX ON bench_rank USING gin (doc)")
        conn.execute("ANALYZE bench_rank")

        def pg_rank(text: str) -> list[str]:
            query = (
                "WITH q AS (SELECT to_tsquery('english', coalesce(string_agg(quote_literal("
                "lexeme), ' | '), '')) AS q FROM unnest(to_tsvector('english', %s))) "
                "SELECT name FROM bench_rank, q WHERE doc @@ q.q "
                "ORDER BY ts_rank_cd(doc, q.q) DESC, name LIMIT %s"
            )
            return [r[0] for r in conn.execute(query, (text, DEPTH)).fetchall()]

        pg_rank(texts[0])  # warm up the plan
        ranked, times = _timed(pg_rank, texts)
        rows.append(_row("PostgreSQL ts_rank_cd (GIN, in the store)", ranked, times, truths))
        conn.execute("DROP TABLE bench_rank")
    catalog.search("warm up")
    ranked, times = _timed(lambda t: [h.name for h in catalog.search(t, DEPTH)], texts)
    rows.append(_row("toolmgmt BM25 (ToolCatalog.search, in process)", ranked, times, truths))
    return {"pool": len(tools), "queries": len(texts), "rankers": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dsn", help="an existing PostgreSQL (default: a local one)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.dsn:
        figures = measure(args.dsn)
    else:
        from toolmgmt_deploy import LocalPostgres

        with LocalPostgres() as server:
            figures = measure(server.dsn)
    print(f"BFCL dev: {figures['pool']} tools, {figures['queries']} requests")
    print(f"{'ranker':<50}{'R@1':>7}{'R@5':>7}{'MRR':>7}{'p50 ms':>9}{'p95 ms':>9}")
    for row in figures["rankers"]:
        print(
            f"{row['ranker']:<50}{row['R@1']:>7.1f}{row['R@5']:>7.1f}{row['MRR']:>7.1f}"
            f"{row['p50_ms']:>9.2f}{row['p95_ms']:>9.2f}"
        )
    if args.json:
        write_results(args.json, "pg_ranking", figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
