"""Closest names for a misspelled tool name, fast on large catalogs.

``difflib.get_close_matches`` compares the key with every name in Python: about 100 ms over
10,000 names. Here a character-trigram index first picks the few dozen names that share the
most trigrams with the key (one ``np.bincount``), and difflib's ratio only ranks those. A
misspelling keeps most trigrams of the intended name, so the right name is among them.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import numpy as np

from toolmgmt_core._model.names import fold_name  # the one folding, re-exported here

__all__ = ["NameMatcher", "fold_name"]

_SHORTLIST = 64
"""How many names, by shared trigrams, difflib ranks."""


def _grams(text: str) -> set[str]:
    padded = f"  {text} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


class NameMatcher:
    """Names by position, with a trigram index over their folded forms."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.folded = [fold_name(n) for n in self.names]
        self._by_folded: dict[str, int] = {}
        for position, folded in enumerate(self.folded):
            self._by_folded.setdefault(folded, position)
        gram_ids: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        for position, folded in enumerate(self.folded):
            for gram in _grams(folded):
                rows.append(gram_ids.setdefault(gram, len(gram_ids)))
                cols.append(position)
        self._gram_ids = gram_ids
        order = np.argsort(np.asarray(rows, dtype=np.int64), kind="stable")
        self._postings = np.asarray(cols, dtype=np.int64)[order]
        self._indptr = np.zeros(len(gram_ids) + 1, dtype=np.int64)
        np.cumsum(
            np.bincount(np.asarray(rows, dtype=np.int64), minlength=len(gram_ids)),
            out=self._indptr[1:],
        )
        self._sizes = np.asarray([len(_grams(f)) for f in self.folded], dtype=np.float64)

    def closest(
        self,
        name: str,
        limit: int = 3,
        *,
        allowed: np.ndarray | None = None,
        cutoff: float = 0.6,
    ) -> list[str]:
        """The names closest to ``name``, best first.

        An exact match after folding (case, look-alikes, ``-``/space for ``_``) is returned
        alone; otherwise names whose difflib ratio is at least ``cutoff``, then names that
        contain the key (for a prefix or a fragment), up to ``limit``.

        Args:
            name: the name as written.
            limit: at most this many names.
            allowed: a boolean mask over the names (None: all of them).
            cutoff: the lowest difflib ratio kept.
        """
        key = fold_name(name)
        if not self.names or not key:
            return []
        keep = np.ones(len(self.names), dtype=bool) if allowed is None else allowed
        exact = self._by_folded.get(key)
        if exact is not None and keep[exact]:
            return [self.names[exact]]
        grams = _grams(key)
        ids = [self._gram_ids[g] for g in grams if g in self._gram_ids]
        shortlist: list[int] = []
        if ids:
            postings = np.concatenate(
                [self._postings[self._indptr[i] : self._indptr[i + 1]] for i in ids]
            )
            shared = np.bincount(postings, minlength=len(self.names)).astype(np.float64)
            dice = 2 * shared / (self._sizes + len(grams))
            dice[~keep] = 0
            candidates = np.flatnonzero(dice > 0)
            if len(candidates) > _SHORTLIST:
                part = np.argpartition(-dice[candidates], _SHORTLIST - 1)[:_SHORTLIST]
                candidates = candidates[part]
            shortlist = candidates.tolist()
        matcher = difflib.SequenceMatcher()
        matcher.set_seq2(key)
        scored: list[tuple[float, int]] = []
        for i in shortlist:
            matcher.set_seq1(self.folded[i])
            if matcher.real_quick_ratio() >= cutoff and matcher.quick_ratio() >= cutoff:
                ratio = matcher.ratio()
                if ratio >= cutoff:
                    scored.append((ratio, i))
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        out = [i for _, i in scored[:limit]]
        if len(out) < limit and len(key) >= 3:
            for i, folded in enumerate(self.folded):
                if key in folded and keep[i] and i not in out:
                    out.append(i)
                    if len(out) >= limit:
                        break
        return [self.names[i] for i in out[:limit]]
