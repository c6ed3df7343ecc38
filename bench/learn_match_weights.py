"""Learn :data:`toolmgmt_core._search.match.MATCH_WEIGHTS` on the BFCL dev split (only).

Run: ``python bench/learn_match_weights.py [--l2 0.001]``; it prints the mapping to
paste into ``toolmgmt_core/_search/match.py``, and the dev figures of ranking by it (in-sample,
and 2-fold by request, which estimates how it does on requests it did not see).

For each dev request, the tools with the best BM25 scores (``MATCH_DEPTH``) are candidates, each
described by :meth:`BM25Index.match_features <toolmgmt_core._search.index.BM25Index.
match_features>`; a linear scorer is fitted by a listwise softmax loss (the ground-truth tools
share the target probability), on standardised features with a little L2, by full-batch
gradient descent from BM25's own order. The weights are then given per raw feature, scaled so
that ``bm25`` weighs 1. Requests whose tools are not among the candidates teach nothing and are
left out. The live split is never read: it is what the weights are checked on
(``bench/retrieval.py --split live``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import load_split  # noqa: E402

from toolmgmt_core import ToolCatalog  # noqa: E402
from toolmgmt_core._search.match import MATCH_DEPTH, MATCH_FEATURES  # noqa: E402

Example = tuple[np.ndarray, np.ndarray]
"""One request: its candidates' features (candidates x features) and which are wanted (0/1)."""


def examples() -> list[Example]:
    """Every dev request's candidates and labels."""
    data = load_split("dev")
    catalog = ToolCatalog()
    catalog.add_schemas(data.pool, on_error="skip")
    catalog.search("warm up the index")
    index = catalog.search_engine.index()
    names = [tool.name for tool in index.tools]
    out: list[Example] = []
    for query in data.queries:
        candidates, features = index.match_features(query.text)
        wanted = np.array([names[i] in query.ground_truth for i in candidates], dtype=float)
        out.append((features.T, wanted))
    return out


def fit(train: Sequence[Example], l2: float, steps: int = 400, rate: float = 0.5) -> np.ndarray:
    """Raw-feature weights (``bm25`` scaled to 1) fitted on ``train``."""
    usable = [(x, y) for x, y in train if 0 < y.sum() < len(y)]
    stacked = np.concatenate([x for x, _ in usable])
    mean, scale = stacked.mean(0), stacked.std(0) + 1e-9
    weights = np.zeros(stacked.shape[1])
    weights[0] = 1.0  # start from BM25's order
    for _ in range(steps):
        grad = l2 * weights
        for x, y in usable:
            z = (x - mean) / scale
            s = z @ weights
            p = np.exp(s - s.max())
            p /= p.sum()
            grad += z.T @ (p - y / y.sum()) / len(usable)
        weights -= rate * grad
    raw = weights / scale
    return raw / raw[0]


def figures(data: Sequence[Example], weights: np.ndarray) -> str:
    """R@1 and R@5 (percent) of ranking each request's candidates by ``weights``."""
    r1 = r5 = 0
    for x, y in data:
        if len(y):
            ranked = y[np.argsort(-(x @ weights), kind="stable")]
            r1 += bool(ranked[0])
            r5 += bool(ranked[:5].any())
    return f"R@1 {100 * r1 / len(data):.1f}, R@5 {100 * r5 / len(data):.1f}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--l2", type=float, default=1e-3, help="L2 on standardised weights")
    args = parser.parse_args(argv)
    data = examples()
    bm25_only = np.eye(len(MATCH_FEATURES))[0]
    weights = fit(data, args.l2)
    halves = np.random.default_rng(0).permutation(len(data)) % 2
    folds = [[d for d, h in zip(data, halves, strict=True) if h == k] for k in (0, 1)]
    crossed = [figures(folds[1 - k], fit(folds[k], args.l2)) for k in (0, 1)]
    print(f"dev, BM25 alone over the top {MATCH_DEPTH}: {figures(data, bm25_only)}")
    print(f"dev, learnt weights (in-sample): {figures(data, weights)}")
    print(f"dev, 2-fold by request (each half fitted on the other): {'; '.join(crossed)}")
    print("\nMATCH_WEIGHTS: Mapping[str, float] = {")
    for name, value in zip(MATCH_FEATURES, weights, strict=True):
        print(f'    "{name}": {value:.3f},')
    print("}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
