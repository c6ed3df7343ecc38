"""Merging several rankings of the same tools into one.

Two cases meet here. A request split into clauses (see :mod:`toolmgmt_core._search.query`) has
one ranking for the whole text and one per clause; a caller's explicit list of queries has one
ranking per query. Either way each need should be covered near the top, and a tool that several
rankings agree on should beat one that a single ranking likes.

:func:`fuse_rankings` does both: every ranking's leader comes first (the whole request's leader,
then the clauses' leaders in fused order, so a need stated in any clause gets a slot in the first
few hits), then the remaining tools by reciprocal rank fusion (RRF). A small RRF constant keeps
the fusion close to rank order, so a clause's second choice does not outvote another clause's
first; on the BFCL dev split ``k=1`` covers all the needs of a multi-tool request in the top 5
about 4 points more often than the classic ``k=60``, and leading with the leaders about 3 more.

:func:`cover_rankings` is the alternative for rankers whose scores mean the same thing in every
ranking (the hybrid search's fused scores: a keyword part scaled to 0-1 per query plus a cosine
similarity). It reads each ranking's scores as how sure that query is of each tool, and picks
tools one at a time to cover every query's need, so a need already met by one tool leaves room
for the next need instead of a second near-duplicate. BM25 scores alone do not allow it: their
scale grows with the length of the query.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["RRF_K", "Ranking", "cover_rankings", "fuse_rankings"]

Ranking = list[tuple[int, float]]
"""(item, score) pairs, best first."""

RRF_K = 1.0
"""Reciprocal rank fusion constant: an item at rank r (from 1) earns ``weight / (RRF_K + r)``."""


def _best_scores(rankings: Sequence[Ranking]) -> dict[int, float]:
    """The best score any ranking gave each item (merged hits keep the rankers' scale)."""
    best: dict[int, float] = {}
    for ranking in rankings:
        for item, score in ranking:
            if score > best.get(item, -math.inf):
                best[item] = score
    return best


def fuse_rankings(
    rankings: Sequence[Ranking],
    limit: int,
    *,
    weights: Sequence[float] | None = None,
    k: float = RRF_K,
    leaders_first: bool = True,
) -> Ranking:
    """Merge ``rankings`` into one of at most ``limit`` items, best first.

    Args:
        rankings: one ranking per query, the most important first (the whole request).
        limit: at most this many items.
        weights: a weight per ranking (default 1 each).
        k: the RRF constant (:data:`RRF_K`).
        leaders_first: put every ranking's first item ahead of the rest (the first ranking's
            leader first of all), so that each query is represented at the top.

    Returns:
        (item, score) pairs; an item's score is the best score any ranking gave it, so that
        scores stay on the rankers' scale (a caller's score threshold keeps its meaning).
    """
    if weights is None:
        weights = [1.0] * len(rankings)
    elif len(weights) != len(rankings):
        raise ValueError(f"{len(rankings)} rankings but {len(weights)} weights: give one each.")
    pairs = [(r, w) for r, w in zip(rankings, weights, strict=True) if r]
    rankings = [r for r, _ in pairs]
    if not rankings:
        return []
    if len(rankings) == 1:
        return list(rankings[0][:limit])
    fused: dict[int, float] = {}
    for ranking, weight in pairs:
        for rank, (item, _) in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + weight / (k + rank)
    best = _best_scores(rankings)
    order = sorted(fused, key=lambda item: -fused[item])
    if leaders_first:
        head = [rankings[0][0][0]]
        leaders = {r[0][0] for r in rankings[1:]} - set(head)
        head.extend(sorted(leaders, key=lambda item: -fused[item]))
        taken = set(head)
        order = head + [item for item in order if item not in taken]
    return [(item, best[item]) for item in order[:limit]]


def cover_rankings(
    rankings: Sequence[Ranking],
    limit: int,
    *,
    temperature: float = 0.3,
    saturation: float = 0.1,
    candidates: int = 20,
) -> Ranking:
    """Merge ``rankings`` by covering every ranking's need, one tool at a time.

    Each ranking's first ``candidates`` scores become a probability per tool (a softmax at
    ``temperature``: how sure that query is that the tool is the one it needs). The first
    ranking's leader comes first; then, greedily, the tool that most raises
    ``sum over rankings of log(saturation + probability covered so far)``. The logarithm makes
    covering a need that has nothing yet worth more than making a covered one surer, so a
    request for a flight and an email gets both tools before a second flight tool. When the
    candidates run out the rest follows in :func:`fuse_rankings`'s order.

    Args:
        rankings: one ranking per query, the most important first (the whole request); scores
            must be comparable across rankings (see the module docstring).
        limit: at most this many items.
        temperature: the softmax temperature, in score units. Lower trusts each ranking's
            leader more.
        saturation: added inside the logarithm; larger values care less about whether a
            need is covered at all.
        candidates: how many of each ranking's items may be picked this way.

    Returns:
        (item, score) pairs; an item's score is the best score any ranking gave it.
    """
    if temperature <= 0 or saturation <= 0:
        raise ValueError(
            f"temperature and saturation must be above 0, got {temperature} and {saturation}."
        )
    rankings = [r for r in rankings if r]
    if len(rankings) <= 1:
        return list(rankings[0][:limit]) if rankings else []
    items: dict[int, int] = {}
    for ranking in rankings:
        for item, _ in ranking[:candidates]:
            items.setdefault(item, len(items))
    shares = np.zeros((len(items), len(rankings)))
    for column, ranking in enumerate(rankings):
        head = ranking[:candidates]
        scores = np.array([score for _, score in head], dtype=np.float64)
        weights = np.exp((scores - scores.max()) / temperature)
        shares[[items[item] for item, _ in head], column] = weights / weights.sum()
    order = list(items)
    covered = np.zeros(len(rankings))
    chosen = [rankings[0][0][0]]
    covered += shares[items[chosen[0]]]
    free = np.ones(len(items), dtype=bool)
    free[items[chosen[0]]] = False
    while len(chosen) < limit and free.any():
        gains = (np.log(saturation + covered + shares) - np.log(saturation + covered)).sum(axis=1)
        gains[~free] = -math.inf
        pick = int(np.argmax(gains))
        chosen.append(order[pick])
        covered += shares[pick]
        free[pick] = False
    best = _best_scores(rankings)
    if len(chosen) < limit:
        taken = set(chosen)
        chosen += [i for i, _ in fuse_rankings(rankings, limit) if i not in taken][
            : limit - len(chosen)
        ]
    return [(item, best[item]) for item in chosen[:limit]]
