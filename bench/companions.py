"""Tools that go together, measured on real MCP servers (issue 44).

The shared half of LiveMCPBench (``../shared/bench/livemcp_half``: 70 servers, 527 tools, 47
tasks with the search queries an agent wrote and the tools each task needs). For each fold of
the tasks, the catalog learns from the other folds' tasks only (each task one conversation of
its own principal; its question taught to the tools it used, through ``ToolCatalog.learn``,
the product's own path), then the fold's tasks are replayed: each recorded query searched, the
results of all its queries merged, and a task's recall is the share of its tools found (a
result counts for a tool when its bare name equals it, any server).

Rows, at equal numbers of tools returned per query (k = 3 and 5):

- ``plain, no learning``: the search alone (the reference figure of the data's README);
- ``plain``: the search of the catalog that learned from the other folds;
- ``k-1 + 1 companion``: k-1 results and the one tool ``ToolCatalog.companions`` suggests
  beside them (at each principals floor), or the k-th result when it suggests none;
- ``k-1 + the needed companion, a bound``: the most one companion could add at that floor: of
  all the tools the learned pairs put beside the k-1 results (past the floor, whatever their
  strength, never a hidden, destructive or data-sending one), one the task needs when there is
  one (it reads the task's answer: a ceiling for any scoring, not a method);
- ``plain, one per tool``: k results after same-named near-identical tools from several servers
  are kept once (the best; what a search answer does); ``one per bare name``: the same with
  any description (for reference: it would hide different tools that share a name);
- peers: fastmcp's BM25 search transform and bm25s over name, description and parameters.

With the extra tokens a query's answer costs for its companion (the "often used with" entry, in
the catalog's encoding), and the share of tasks with every tool found.

Run: ``python bench/companions.py [--embedder minilm-onnx|none] [--folds 5]
[--floors 1,2,3] [--json bench/results/companions.json]``
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from itertools import combinations
from pathlib import Path
from types import SimpleNamespace
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
DATA = ROOT.parent / "shared" / "bench" / "livemcp_half"
sys.path.insert(0, str(BENCH))

from _results import write_results  # noqa: E402

from toolmgmt_core import LearningOptions, ToolCatalog, count_tokens  # noqa: E402
from toolmgmt_core._catalog.equivalents import SIMILAR, one_per_tool  # noqa: E402
from toolmgmt_core._learning.companions import Companions  # noqa: E402
from toolmgmt_core._learning.outbound import sends_data_out  # noqa: E402

Ranker = Callable[[str, int], list[str]]
_SAFE = re.compile(r"[^A-Za-z0-9_-]")


def load() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the catalog's tools as definitions with their server and bare name, the tasks)."""
    pool: list[dict[str, Any]] = []
    for server in json.loads((DATA / "tools.json").read_text(encoding="utf-8")):
        for key, listing in server["tools"].items():
            for tool in listing["tools"]:
                pool.append(
                    {
                        "name": _SAFE.sub("_", f"{key}_{tool['name']}")[:64],
                        "description": tool.get("description") or "",
                        "parameters": tool.get("inputSchema") or {"type": "object"},
                        "domain": _SAFE.sub("_", key),
                        "bare": tool["name"],
                    }
                )
    tasks = json.loads((DATA / "tasks.json").read_text(encoding="utf-8"))
    return pool, tasks


def catalog_of(
    pool: list[dict[str, Any]], embedder: Any, floor: int | None, cache: str | None = None
) -> ToolCatalog:
    learning = LearningOptions(companion_principals=floor) if floor is not None else None
    catalog = ToolCatalog(embedder=embedder, learning=learning, embedding_cache=cache)
    definitions = [{k: v for k, v in t.items() if k != "bare"} for t in pool]
    catalog.add_schemas(definitions, on_error="skip")
    catalog.search("warm up the index")
    return catalog


def teach(catalog: ToolCatalog, tasks: Sequence[dict[str, Any]], by_bare: dict[str, list[str]]):
    """Each task a conversation of its own principal: its question taught to the tool it used
    for each needed name (of several servers' tools of that name, the one its question ranks
    best: the one an agent would have found)."""
    pairs = []
    for task in tasks:
        for bare in task["tools"]:
            candidates = [n for n in by_bare.get(bare, []) if n in catalog]
            if not candidates:
                continue
            allowed = set(candidates)
            ranked = catalog.search(
                task["question"], len(candidates), where=lambda t, a=allowed: t.name in a
            )
            tool = ranked[0].name if ranked else candidates[0]
            pairs.append((task["question"], tool, f"task-{task['id']}", f"user-{task['id']}"))
    return catalog.learn(pairs, source="use")


def replay(
    tasks: Sequence[dict[str, Any]],
    bare_of: dict[str, str],
    results: Callable[[str], tuple[list[str], int]],
    style: str = "replay",
) -> dict[str, float]:
    """Tool recall (mean over tasks), the share of tasks with every tool found, and the extra
    tokens per query, for ``results(query) -> (names, extra tokens)``; ``style`` is
    ``replay`` (the agent's recorded queries) or ``steps`` (each annotated step a query)."""
    recalls, complete, extra, queries = [], 0, 0, 0
    for task in tasks:
        needed = set(task["tools"])
        found: set[str] = set()
        for query in task[style]:
            names, tokens = results(query)
            found |= {bare_of.get(n, n) for n in names}
            extra += tokens
            queries += 1
        hit = len(needed & found)
        recalls.append(hit / len(needed))
        complete += hit == len(needed)
    return {
        "recall": 100 * sum(recalls) / len(recalls),
        "all_found": 100 * complete / len(tasks),
        "extra_tokens": extra / max(1, queries),
    }


def folds(tasks: list[dict[str, Any]], n: int) -> list[tuple[list[Any], list[Any]]]:
    order = sorted(tasks, key=lambda t: t["id"])
    return [
        (
            [t for i, t in enumerate(order) if i % n != f],
            [t for i, t in enumerate(order) if i % n == f],
        )
        for f in range(n)
    ]


def measure(
    embedder: Any, n_folds: int, floors: Sequence[int], cache: str | None = None
) -> dict[str, Any]:
    pool, tasks = load()
    bare_of = {t["name"]: t["bare"] for t in pool}
    by_bare: dict[str, list[str]] = {}
    for t in pool:
        by_bare.setdefault(t["bare"], []).append(t["name"])
    rows: dict[str, dict[str, list[dict[str, float]]]] = {}

    def add(label: str, k: int, figures: dict[str, float], weight: int) -> None:
        rows.setdefault(label, {}).setdefault(str(k), []).append({**figures, "n": weight})

    def both(label: str, k: int, test: list[Any], results: Any) -> None:
        for style in ("replay", "steps"):
            add(f"{style}: {label}", k, replay(test, bare_of, results, style), len(test))

    support: list[dict[str, int]] = []
    plain = catalog_of(pool, embedder, None, cache)
    peers = {"fastmcp BM25": fastmcp_ranker(pool), "bm25s": bm25s_ranker(pool)}
    for _, test in folds(tasks, n_folds):
        for k in (3, 5):
            both("plain, no learning", k, test, _plain(plain, k))
            both("plain, one per tool", k, test, _one(plain, k))
            both("one per bare name", k, test, _one(plain, k, similar=0.0))
            for label, rank in peers.items():
                both(label, k, test, lambda q, r=rank, k=k: (r(q, k), 0))
    for floor in floors:
        catalog = catalog_of(pool, embedder, floor, cache)
        for train, test in folds(tasks, n_folds):
            catalog.forget()
            learned = teach(catalog, train, by_bare).learned
            pairs = _every_pair(catalog, learned, floor)
            if floor == floors[0]:
                support.append(_support(learned))
            for k in (3, 5):
                if floor == floors[0]:
                    both("plain", k, test, _plain(catalog, k))
                both(f"{k - 1} + 1 companion (floor {floor})", k, test, _companion(catalog, k))
                for task in test:  # the bound reads each task's needs: one task at a time
                    bound = _bound(catalog, pairs, k, set(task["tools"]), bare_of)
                    label = f"{k - 1} + the needed companion, a bound (floor {floor})"
                    both(label, k, [task], bound)
    return {
        "rows": {
            label: {k: _weighted(parts) for k, parts in by_k.items()}
            for label, by_k in rows.items()
        },
        "pair_support": support,
        "tasks": len(tasks),
        "tools": len(pool),
        "folds": n_folds,
        "versions": _versions(),
        "embedder": getattr(embedder, "name", None)
        or (type(embedder).__name__ if embedder else None),
    }


def _plain(catalog: ToolCatalog, k: int) -> Callable[[str], tuple[list[str], int]]:
    return lambda q: ([h.name for h in catalog.search(q, k)], 0)


def _one(
    catalog: ToolCatalog, k: int, similar: float = SIMILAR
) -> Callable[[str], tuple[list[str], int]]:
    def results(query: str) -> tuple[list[str], int]:
        hits = one_per_tool(catalog.search(query, 3 * k), catalog.find, similar=similar)
        return [h.name for h in hits[:k]], 0

    return results


def _companion(catalog: ToolCatalog, k: int) -> Callable[[str], tuple[list[str], int]]:
    def results(query: str) -> tuple[list[str], int]:
        names = [h.name for h in catalog.search(query, k)]
        companions = catalog.companions(names[: k - 1], 1)
        if not companions:  # nothing to suggest: the k-th result keeps its slot
            return names, 0
        return [*names[: k - 1], companions[0].name], _entry_tokens(catalog, companions[0].name)

    return results


def _entry_tokens(catalog: ToolCatalog, name: str) -> int:
    """The tokens a search answer's "often used with" entry for ``name`` costs."""
    summary = catalog.get(name).summary
    entry = json.dumps({"often_used_with": {name: summary}}, ensure_ascii=False)
    return count_tokens(entry[1:-1])


def _support(learned: Sequence[Any]) -> dict[str, int]:
    """How many pairs of tools one, two, or three or more principals used together."""
    used: dict[str, tuple[str, set[str]]] = {}
    for request in learned:
        used.setdefault(request.conversation, (request.teacher, set()))[1].add(request.tool)
    together: dict[tuple[str, str], set[str]] = {}
    for teacher, tools in used.values():
        for pair in combinations(sorted(tools), 2):
            together.setdefault(pair, set()).add(teacher)
    counts = [min(3, len(who)) for who in together.values()]
    return {"1": counts.count(1), "2": counts.count(2), "3+": counts.count(3)}


def _every_pair(catalog: ToolCatalog, learned: Sequence[Any], floor: int) -> Companions:
    """The pairs ``learned`` holds past ``floor``, whatever their strength (for the bound)."""
    requests = SimpleNamespace(generation=0, requests=lambda: learned)
    return Companions(requests, min_principals=floor, unknown_conversation="", min_strength=0.0)  # type: ignore[arg-type]


def _bound(
    catalog: ToolCatalog, pairs: Companions, k: int, needed: set[str], bare_of: dict[str, str]
) -> Callable[[str], tuple[list[str], int]]:
    def allowed(name: str) -> bool:
        tool = catalog.get(name)
        return tool.annotations.destructive is not True and not sends_data_out(tool)

    def results(query: str) -> tuple[list[str], int]:
        names = [h.name for h in catalog.search(query, k)]
        shown = names[: k - 1]
        for companion in pairs.suggest(shown, len(catalog), allowed=allowed):
            if bare_of[companion.name] in needed:
                return [*shown, companion.name], _entry_tokens(catalog, companion.name)
        return names, 0

    return results


def _weighted(parts: list[dict[str, float]]) -> dict[str, float]:
    total = sum(p["n"] for p in parts)
    keys = [k for k in parts[0] if k != "n"]
    return {key: round(sum(p[key] * p["n"] for p in parts) / total, 2) for key in keys}


def fastmcp_ranker(pool: list[dict[str, Any]]) -> Ranker:
    """fastmcp's own BM25 search transform's index and document text."""
    from fastmcp.server.transforms.search.base import _extract_searchable_text
    from fastmcp.server.transforms.search.bm25 import _BM25Index

    tools = [SimpleNamespace(**t) for t in pool]
    index = _BM25Index()
    index.build([_extract_searchable_text(t) for t in tools])  # type: ignore[arg-type]
    return lambda query, k: [tools[i].name for i in index.query(query, k)]


def bm25s_ranker(pool: list[dict[str, Any]]) -> Ranker:
    """bm25s over name, description and parameters (bench/retrieval.py's peer)."""
    import retrieval

    rank = retrieval.bm25s_ranker(pool)
    return lambda query, k: list(rank(query))[:k]


def _versions() -> dict[str, str]:
    out = {}
    for package in ("fastmcp-slim", "bm25s", "onnxruntime", "tiktoken"):
        try:
            out[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="minilm-onnx", help="minilm-onnx, minilm or none")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--floors", default="1,2,3", help="principals floors, comma-separated")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    embedder = None
    if args.embedder != "none":
        import retrieval

        embedder = retrieval.load_embedder(args.embedder)
    floors = [int(f) for f in args.floors.split(",")]
    with tempfile.TemporaryDirectory() as cache:  # each tool embedded once, not per catalog
        vectors = str(Path(cache) / "vectors.sqlite") if embedder else None
        figures = measure(embedder, args.folds, floors, vectors)
    figures["embedder"] = args.embedder
    print(f"{'row':<42} {'k':>2} {'recall':>7} {'all found':>9} {'+tokens':>8}")
    for label, by_k in figures["rows"].items():
        for k, f in by_k.items():
            print(
                f"{label:<42} {k:>2} {f['recall']:>7.1f} {f['all_found']:>9.1f}"
                f" {f['extra_tokens']:>8.1f}"
            )
    if args.json:
        write_results(args.json, "companions", figures)


if __name__ == "__main__":
    main()
