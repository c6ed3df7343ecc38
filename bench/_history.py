"""``bench/retrieval.py --history``: search that learns from use, on the BFCL live requests.

The shared live requests are split in two halves (seeded, the same every run). A catalog with
learning on learns the pairs (request, the tool it wanted, one conversation per request: an
import counts each as its own principal, so a term moves a tool once ``--min-principals``
requests taught it to that tool) of one half and is evaluated on the
other, in both directions; "before" is the same requests searched
by a catalog that learned nothing (today's search). Then:

- the spread over ``halvings`` random halvings (the gain on the half not learned from, per
  direction), since one split is one draw;
- the dev split searched by a catalog that learned every shared live request (the dev pool holds
  few of their tools: it must simply be no worse);
- whether a catalog with learning on and nothing learned ranks every request exactly as one
  without learning;
- with ``--latency-10k``: search at 10,000 synthetic tools with learning off against learning on
  with 2,000 tools having learned, in the same run.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from _data import BfclData, BfclQuery

from toolmgmt_core import ToolCatalog
from toolmgmt_core._learning.teaching import LearningOptions

__all__ = [
    "HALVES_SEED",
    "halves",
    "history_figures",
    "latency_with_learning",
    "learned_catalog",
    "pairs_of",
]

HALVES_SEED = 0
"""The seed of the halving reported as "A > B" and "B > A"."""

HEADLINE = ("R@1", "R@5", "MRR", "name-R@5")
"""The figures reported per direction."""

Evaluate = Callable[[Callable[[str], Sequence[str]], BfclData, Sequence[BfclQuery]], Any]


def halves(queries: Sequence[BfclQuery], seed: int) -> tuple[list[BfclQuery], list[BfclQuery]]:
    """The requests in two halves, shuffled by ``seed``."""
    order = list(range(len(queries)))
    random.Random(seed).shuffle(order)
    cut = len(order) // 2
    return [queries[i] for i in order[:cut]], [queries[i] for i in order[cut:]]


def pairs_of(queries: Sequence[BfclQuery]) -> list[tuple[str, str, str]]:
    """What a deployment would have learned from these requests: (request, tool it wanted,
    one conversation per request)."""
    return [(q.text, tool, q.id) for q in queries for tool in q.ground_truth]


def learned_catalog(
    pool: list[dict[str, Any]],
    embedder: Any = None,
    cache: str | None = None,
    *,
    min_principals: int = LearningOptions.min_principals,
) -> ToolCatalog:
    """The pool in a catalog with learning on (in memory), index built."""
    options = LearningOptions(min_principals=min_principals)
    catalog = ToolCatalog(embedder=embedder, embedding_cache=cache, learning=options)
    catalog.add_schemas(pool, on_error="skip")
    catalog.search("warm up the index")
    return catalog


def _ranker(catalog: ToolCatalog, depth: int) -> Callable[[str], list[str]]:
    return lambda text: [hit.name for hit in catalog.search(text, limit=depth)]


def _headline(metrics: dict[str, float]) -> dict[str, float]:
    return {k: metrics[k] for k in HEADLINE if k in metrics}


def _mean(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    return {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}


def history_figures(
    data: BfclData,
    dev: BfclData,
    evaluate: Evaluate,
    rankers: dict[str, tuple[ToolCatalog, ToolCatalog]],
    *,
    depth: int,
    halvings: int,
    dev_rankers: dict[str, tuple[ToolCatalog, ToolCatalog]],
) -> dict[str, Any]:
    """Every figure of the history bench (see the module docstring).

    Args:
        data: the live split.
        dev: the dev split.
        evaluate: ``bench/retrieval.py``'s ``evaluate``.
        rankers: label -> (a catalog without learning, one with learning on) over the live pool.
        depth: how deep each request is ranked.
        halvings: how many random halvings the spread is taken over.
        dev_rankers: the same over the dev pool.
    """
    queries = data.queries
    out: dict[str, Any] = {"halves_seed": HALVES_SEED, "halvings": halvings, "rankers": {}}
    for label, (plain, learning) in rankers.items():
        start = time.perf_counter()
        # today's search does not depend on the halving: rank every request once
        ranked = {q.text: list(_ranker(plain, depth)(q.text)) for q in queries}
        identical = _identical(learning, ranked, queries, depth)
        directions: dict[str, Any] = {}
        spread: dict[str, list[float]] = {"R@5": [], "name-R@5": []}
        for seed in range(max(halvings, 1)):
            first, second = halves(queries, seed)
            for name, train, test in (("A > B", first, second), ("B > A", second, first)):
                learning.forget()
                learning.learn(pairs_of(train))
                after = evaluate(_ranker(learning, depth), data, test).metrics
                base = evaluate(ranked.__getitem__, data, test).metrics
                for key in spread:
                    spread[key].append(after[key] - base[key])
                if seed == HALVES_SEED:
                    directions[name] = {
                        "learned_requests": len(learning.learned()),
                        "before": _headline(base),
                        "after": _headline(after),
                    }
        learning.forget()
        directions["mean"] = {
            "before": _mean([directions[d]["before"] for d in ("A > B", "B > A")]),
            "after": _mean([directions[d]["after"] for d in ("A > B", "B > A")]),
        }
        out["rankers"][label] = {
            "directions": directions,
            "identical_without_learning": identical,
            "gain_spread": {
                key: {
                    "n": len(values),
                    "min": float(np.min(values)),
                    "max": float(np.max(values)),
                    "mean": float(np.mean(values)),
                    "std": float(np.std(values)),
                }
                for key, values in spread.items()
            },
            "seconds": time.perf_counter() - start,
        }
    out["dev"] = {}
    for label, (plain, learning) in dev_rankers.items():
        learning.forget()
        report = learning.learn(pairs_of(queries))
        after = evaluate(_ranker(learning, depth), dev, dev.queries).metrics
        base = evaluate(_ranker(plain, depth), dev, dev.queries).metrics
        keys = ("R@1", "R@5", "MRR", "all@5")
        own: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
        first, second = halves(dev.queries, HALVES_SEED)
        for train, test in ((first, second), (second, first)):
            learning.forget()
            learning.learn(pairs_of(train))
            own["after"].append(evaluate(_ranker(learning, depth), dev, test).metrics)
            own["before"].append(evaluate(_ranker(plain, depth), dev, test).metrics)
        learning.forget()
        out["dev"][label] = {
            "learned_requests": len(report.learned),
            "before": {k: base[k] for k in keys},
            "after": {k: after[k] for k in keys},
            "own_halves": {
                side: {k: float(np.mean([m[k] for m in rows])) for k in keys}
                for side, rows in own.items()
            },
        }
    return out


def _identical(
    learning: ToolCatalog,
    ranked: dict[str, list[str]],
    queries: Sequence[BfclQuery],
    depth: int,
) -> bool:
    """Whether the catalog with learning on and nothing learned ranks every request as today."""
    learning.forget()
    rank = _ranker(learning, depth)
    return all(rank(q.text) == ranked[q.text] for q in queries)


def latency_with_learning(embedder: Any = None, n_queries: int = 400) -> dict[str, float]:
    """Search p50/p95 ms (``limit=5``) at 10,000 synthetic tools: learning off, and learning
    on with 2,000 tools having learned 3 requests each (3 principals, so that their terms move
    them), in the same run."""
    from search_speed import make_queries, make_tools

    tools = make_tools(10_000)
    queries = make_queries(tools, n_queries)
    plain = ToolCatalog(tools, embedder=embedder)
    learning = ToolCatalog(tools, embedder=embedder, learning=LearningOptions())
    rng = random.Random(3)
    teach = make_queries(tools, 6_000, seed=23)
    learners = rng.sample(tools, 2_000)
    pairs = [
        (teach[(3 * i + k) % len(teach)], tool.name, f"conversation-{k}-{i}")
        for i, tool in enumerate(learners)
        for k in range(3)
    ]
    learning.learn(pairs)
    out: dict[str, float] = {"learned_tools": float(len(learners))}
    for catalog in (plain, learning):
        catalog.search("warm up")
        for q in queries[:20]:
            catalog.search(q, limit=5)
    times: dict[str, list[float]] = {"off": [], "on": []}
    for q in queries:  # interleaved, so that the machine's load falls on both alike
        for label, catalog in (("off", plain), ("on", learning)):
            t0 = time.perf_counter()
            catalog.search(q, limit=5)
            times[label].append((time.perf_counter() - t0) * 1000)
    for label, values in times.items():
        out[f"p50_{label}"] = float(np.percentile(values, 50))
        out[f"p95_{label}"] = float(np.percentile(values, 95))
    out["p50_ratio"] = out["p50_on"] / out["p50_off"]
    return out
