"""Match features: how well a tool matches a request beyond its BM25 score.

BM25 adds up what each request term earns in a tool's text, so a tool matching one rare word
("the *five* burgers", "*watch* a movie") can outrank the tool matching most of what the
request says, and a request's stray words count as much as its need. A few features of the
match, each general (read from the catalog's own index, nothing about a particular catalog),
correct that:

- ``bm25``: the tool's BM25 score over the best one for this text (0-1);
- ``coverage``: the share of the request's IDF mass (each distinct term's IDF times its weight
  in the request) that the tool contains anywhere: a tool covering most of the request beats one
  matching a single rare word;
- ``description_coverage``, ``parameter_coverage``: the same share for the tool's description and
  its parameters (names, descriptions, enum values) alone;
- ``name_share``: the share of the tool's own name (its words' IDF mass, digits left out) that the
  request contains: a request naming every word of a tool's name is very likely about it;
- ``evidence``: how many kinds of value the request holds (a date, a time, an e-mail address, a
  URL) that the tool has a parameter for ("on March 3rd" favours the tool with a date).

A tool's score is ``sum(MATCH_WEIGHTS[f] * feature f)`` over the tools with a positive BM25 score
(the others stay out of the hits). The weights are learnt on the BFCL dev split only, by
``bench/learn_match_weights.py`` (a listwise softmax over each request's first 50 tools), and
checked on the live split, which they never saw.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from toolmgmt_core.search.bm25 import BM25Matrix

__all__ = [
    "MATCH_FEATURES",
    "MATCH_WEIGHTS",
    "VALUE_KINDS",
    "MatchIndex",
    "request_kinds",
]

MATCH_FEATURES = (
    "bm25",
    "coverage",
    "description_coverage",
    "parameter_coverage",
    "name_share",
    "evidence",
)
"""The features, in the order :meth:`MatchIndex.features` returns them."""

MATCH_WEIGHTS: Mapping[str, float] = {
    "bm25": 1.000,
    "coverage": 1.169,
    "description_coverage": 0.623,
    "parameter_coverage": 0.202,
    "name_share": 0.427,
    "evidence": 0.382,
}
"""Each feature's weight, learnt on the BFCL dev split by ``bench/learn_match_weights.py``
(which prints this mapping); ``bm25`` is 1 by construction (only ratios matter)."""

# The field bits of toolmgmt_core.search.index.FIELD_BITS (kept in step by a test).
_NAME, _DESCRIPTION, _PARAMETERS = 1, 8, 16

_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
VALUE_KINDS: Mapping[str, tuple[re.Pattern[str], tuple[str, ...]]] = {
    "date": (
        re.compile(
            rf"\b\d{{4}}-\d{{1,2}}-\d{{1,2}}\b|\b\d{{1,2}}[/.]\d{{1,2}}[/.]\d{{2,4}}\b"
            rf"|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?"
            rf"{_MONTH}(?![a-z])|\b(?:today|tomorrow|yesterday|tonight)\b"
            rf"|\b(?:next|last|this|coming|upcoming)\s+(?:week|month|year|weekend|{_WEEKDAY})\b",
            re.IGNORECASE,
        ),
        ("date", "day"),
    ),
    "time": (
        re.compile(r"\b\d{1,2}:\d{2}\b|\b\d{1,2}\s?(?:am|pm|a\.m\.|p\.m\.)", re.IGNORECASE),
        ("time", "hour"),
    ),
    "email": (re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b"), ("email", "mail")),
    "url": (re.compile(r"\bhttps?://|\bwww\.", re.IGNORECASE), ("url", "link", "website")),
}
"""Kinds of value a request may hold: how to spot one in the request, and the words (search
terms) of a parameter that takes one."""


def request_kinds(text: str) -> tuple[str, ...]:
    """The kinds of :data:`VALUE_KINDS` that ``text`` holds a value of."""
    return tuple(kind for kind, (pattern, _) in VALUE_KINDS.items() if pattern.search(text))


@dataclass
class MatchIndex:
    """What the match features need from a BM25 index, beyond its postings: each tool's name
    mass and, per kind of value, which tools take one. Built once per index."""

    matrix: BM25Matrix
    name_mass: np.ndarray
    """Per tool, the IDF mass of the distinct words of its name (digits left out)."""
    digit_rows: np.ndarray
    """Per term row, whether the term is a number (left out of names' mass and share)."""
    _kind_masks: dict[str, np.ndarray] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def build(cls, matrix: BM25Matrix) -> MatchIndex:
        """Read the name masses off ``matrix`` (built with field bits)."""
        digit_rows = np.fromiter(
            (term.isdigit() for term in matrix.vocab), dtype=bool, count=len(matrix.vocab)
        )
        name_mass = np.zeros(matrix.n_docs)
        if matrix.fields is not None and matrix.idf is not None and len(matrix.indices):
            rows = np.repeat(np.arange(len(matrix.vocab)), np.diff(matrix.indptr))
            in_name = (matrix.fields & _NAME > 0) & ~digit_rows[rows]
            name_mass = np.bincount(
                matrix.indices[in_name], weights=matrix.idf[rows[in_name]], minlength=matrix.n_docs
            )
        return cls(matrix=matrix, name_mass=name_mass, digit_rows=digit_rows)

    def kind_mask(self, kind: str) -> np.ndarray:
        """Which tools have a parameter taking a value of ``kind`` (cached)."""
        with self._lock:
            cached = self._kind_masks.get(kind)
        if cached is not None:
            return cached
        matrix = self.matrix
        mask = np.zeros(matrix.n_docs)
        rows = [matrix.vocab[w] for w in VALUE_KINDS[kind][1] if w in matrix.vocab]
        if rows and matrix.fields is not None:
            positions, _ = matrix.postings(rows)
            positions = positions[matrix.fields[positions] & _PARAMETERS > 0]
            mask[matrix.indices[positions]] = 1.0
        with self._lock:
            self._kind_masks[kind] = mask
        return mask

    def features(
        self, rows: Sequence[int], weights: Sequence[float], bm25: np.ndarray, text: str
    ) -> np.ndarray:
        """The :data:`MATCH_FEATURES` of every tool: one row per feature, one column per tool.

        Args:
            rows: the request's distinct known term rows.
            weights: each row's weight in the request (1 for the request's own words).
            bm25: the tools' BM25 scores for the request.
            text: the request (for :func:`request_kinds`).
        """
        n = self.matrix.n_docs
        out = np.zeros((len(MATCH_FEATURES), n))
        top = float(bm25.max()) if n else 0.0
        if top <= 0 or not len(rows):
            return out
        out[0] = bm25 / top
        docs, per_posting, flags, share = self._postings(rows, weights)
        out[1] = np.bincount(docs, weights=per_posting, minlength=n)
        out[2] = np.bincount(docs, weights=per_posting * (flags & _DESCRIPTION > 0), minlength=n)
        out[3] = np.bincount(docs, weights=per_posting * (flags & _PARAMETERS > 0), minlength=n)
        out[4] = np.bincount(docs, weights=share, minlength=n)
        for kind in request_kinds(text):
            out[5] += self.kind_mask(kind)
        out[:, bm25 <= 0] = 0.0
        return out

    def scores(
        self,
        rows: Sequence[int],
        weights: Sequence[float],
        bm25: np.ndarray,
        text: str,
        match_weights: Mapping[str, float] = MATCH_WEIGHTS,
    ) -> np.ndarray:
        """``match_weights`` applied to :meth:`features`, times the best BM25 score (so that
        scores keep BM25's scale: a long request's whole text still outweighs one of its
        clauses); computed in one pass over the postings (the features summed per posting
        first). What a search ranks by."""
        n = self.matrix.n_docs
        top = float(bm25.max()) if n else 0.0
        if top <= 0 or not len(rows):
            return np.zeros(n)
        w = match_weights
        docs, per_posting, flags, share = self._postings(rows, weights)
        combined = per_posting * (
            w["coverage"]
            + w["description_coverage"] * (flags & _DESCRIPTION > 0)
            + w["parameter_coverage"] * (flags & _PARAMETERS > 0)
        )
        combined += w["name_share"] * share
        out = np.bincount(docs, weights=combined, minlength=n)
        for kind in request_kinds(text):
            out += w["evidence"] * self.kind_mask(kind)
        out *= top  # on BM25's scale, so that texts compare as their BM25 scores do
        out += w["bm25"] * bm25
        out[bm25 <= 0] = 0.0
        return out

    def _postings(
        self, rows: Sequence[int], weights: Sequence[float]
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per posting of ``rows``: its tool, its share of the request's IDF mass, its field
        bits, and its share of the tool's name mass."""
        matrix = self.matrix
        assert matrix.idf is not None and matrix.fields is not None  # built with fields
        row_array = np.asarray(rows, dtype=np.int64)
        mass = matrix.idf[row_array] * np.minimum(np.asarray(weights, dtype=np.float64), 1.0)
        positions, which = matrix.postings(rows)
        docs = matrix.indices[positions]
        flags = matrix.fields[positions]
        per_posting = mass[which] / max(float(mass.sum()), 1e-12)
        in_name = (flags & _NAME > 0) & ~self.digit_rows[row_array][which]
        name_mass = self.name_mass[docs]
        share = np.where(in_name, mass[which] / np.maximum(name_mass, 1e-12), 0.0)
        return docs, per_posting, flags, share
