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
- ``purpose_coverage``, ``parameter_coverage``: the same share for what the tool does (its name,
  keywords and description) and for its parameters (names, descriptions, enum values) alone;
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

from toolmgmt_core._search.bm25 import BM25Matrix

__all__ = [
    "MATCH_DEPTH",
    "MATCH_FEATURES",
    "MATCH_FLOOR",
    "MATCH_WEIGHTS",
    "VALUE_KINDS",
    "MatchIndex",
    "request_kinds",
]

MATCH_FEATURES = (
    "bm25",
    "coverage",
    "purpose_coverage",
    "parameter_coverage",
    "name_share",
    "evidence",
)
"""The features, in the order :meth:`MatchIndex.features` returns them."""

MATCH_WEIGHTS: Mapping[str, float] = {
    "bm25": 1.000,
    "coverage": 1.131,
    "purpose_coverage": 0.528,
    "parameter_coverage": 0.247,
    "name_share": 0.414,
    "evidence": 0.396,
}
"""Each feature's weight, learnt on the BFCL dev split by ``bench/learn_match_weights.py``
(which prints this mapping); ``bm25`` is 1 by construction (only ratios matter)."""

# The field bits of toolmgmt_core._search.index.FIELD_BITS (kept in step by a test), and the
# bit marking a word of a tool's name that is not a number.
_NAME, _DESCRIPTION, _PARAMETERS, _NAME_WORD = 1, 8, 16, 128
_PURPOSE = _NAME | 2 | _DESCRIPTION  # name, keywords, description: what the tool does

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


# Every value of VALUE_KINDS holds one of these: most requests are ruled out by one scan.
_MAYBE_VALUE = re.compile(
    r"\d|@|\bwww\.|\bhttps?:|\b(?:today|tomorrow|yesterday|tonight|week|month|year|weekend|"
    r"\w+day)\b",
    re.IGNORECASE,
)


def request_kinds(text: str) -> tuple[str, ...]:
    """The kinds of :data:`VALUE_KINDS` that ``text`` holds a value of."""
    if not _MAYBE_VALUE.search(text):
        return ()
    return tuple(kind for kind, (pattern, _) in VALUE_KINDS.items() if pattern.search(text))


MATCH_DEPTH = 50
"""At most this many of a text's best tools by BM25 are scored by their match features (the
rest keep their BM25 score, below them): the weights were learnt on these candidates."""

MATCH_FLOOR = 0.2
"""Only tools scoring at least this share of the best BM25 score are candidates: below it the
features could rarely lift a tool to the top (on the BFCL splits 1-3% of the wanted tools are
there), and leaving them out keeps a search at 10,000 tools from sorting thousands of weak
matches."""


@dataclass
class MatchIndex:
    """What the match features read besides the BM25 postings: the terms of each tool (a
    tool-major copy of the postings, so that a few candidates are described without walking
    every posting of the request's terms), each tool's name mass and, per kind of value, which
    tools take one. Built once per index."""

    matrix: BM25Matrix
    indptr: np.ndarray
    """Tool ``i``'s terms are ``rows[indptr[i]:indptr[i + 1]]``."""
    rows: np.ndarray
    """Term rows, tool by tool."""
    fields: np.ndarray
    """Field bits of each (tool, term), as :attr:`rows`; bit 7 marks a name word (not a number)
    counted in the name mass."""
    name_mass: np.ndarray
    """Per tool, the IDF mass of the distinct words of its name (numbers left out)."""
    _kind_masks: dict[str, np.ndarray] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _scratch: threading.local = field(default_factory=threading.local)

    @classmethod
    def build(cls, matrix: BM25Matrix) -> MatchIndex:
        """Read the tools' terms and name masses off ``matrix`` (built with field bits)."""
        n_terms = len(matrix.vocab)
        term_of = np.repeat(np.arange(n_terms, dtype=np.int32), np.diff(matrix.indptr))
        flags = (
            matrix.fields.copy()
            if matrix.fields is not None
            else np.zeros(len(matrix.indices), dtype=np.uint8)
        )
        digits = np.fromiter((t.isdigit() for t in matrix.vocab), dtype=bool, count=n_terms)
        in_name = (flags & _NAME > 0) & ~digits[term_of]
        flags[in_name] |= _NAME_WORD
        idf = matrix.idf if matrix.idf is not None else np.zeros(n_terms)
        name_mass = np.bincount(
            matrix.indices[in_name], weights=idf[term_of[in_name]], minlength=matrix.n_docs
        )
        order = np.argsort(matrix.indices, kind="stable")  # tool-major, terms in row order
        indptr = np.zeros(matrix.n_docs + 1, dtype=np.int64)
        np.cumsum(np.bincount(matrix.indices, minlength=matrix.n_docs), out=indptr[1:])
        return cls(matrix, indptr, term_of[order], flags[order], name_mass)

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

    def candidates(self, bm25: np.ndarray) -> np.ndarray:
        """The tools whose match features are worth reading: those scoring at least
        :data:`MATCH_FLOOR` of the best BM25 score, at most the :data:`MATCH_DEPTH` best of
        them (in no particular order)."""
        top = float(bm25.max()) if len(bm25) else 0.0
        if top <= 0:
            return np.zeros(0, dtype=np.int64)
        near = np.flatnonzero(bm25 >= MATCH_FLOOR * top)
        if len(near) > MATCH_DEPTH:
            near = near[np.argpartition(-bm25[near], MATCH_DEPTH - 1)[:MATCH_DEPTH]]
        return near

    def features(
        self,
        rows: Sequence[int],
        weights: Sequence[float],
        bm25: np.ndarray,
        text: str,
        candidates: np.ndarray,
    ) -> np.ndarray:
        """The :data:`MATCH_FEATURES` of ``candidates``: one row per feature, one column per
        candidate.

        Args:
            rows: the request's distinct known term rows.
            weights: each row's weight in the request (1 for the request's own words).
            bm25: every tool's BM25 score for the request.
            text: the request (for :func:`request_kinds`).
            candidates: the tools to describe (positions; see :meth:`candidates`).
        """
        k = len(candidates)
        out = np.zeros((len(MATCH_FEATURES), k))
        if not k or not len(rows):
            return out
        out[0] = bm25[candidates] / float(bm25.max())
        owner, flags, mass, total = self._hits(rows, weights, candidates)
        share = mass / total
        out[1] = np.bincount(owner, weights=share, minlength=k)
        out[2] = np.bincount(owner, weights=share * (flags & _PURPOSE > 0), minlength=k)
        out[3] = np.bincount(owner, weights=share * (flags & _PARAMETERS > 0), minlength=k)
        named = np.bincount(owner, weights=mass * (flags & _NAME_WORD > 0), minlength=k)
        out[4] = named / np.maximum(self.name_mass[candidates], 1e-12)
        for kind in request_kinds(text):
            out[5] += self.kind_mask(kind)[candidates]
        return out

    def scores(
        self,
        rows: Sequence[int],
        weights: Sequence[float],
        bm25: np.ndarray,
        text: str,
        match_weights: Mapping[str, float] = MATCH_WEIGHTS,
    ) -> np.ndarray:
        """Every tool's score: for the :meth:`candidates`, ``match_weights`` applied to their
        :meth:`features` times the best BM25 score (so that scores keep BM25's scale: a long
        request's whole text still outweighs one of its clauses); the others keep their BM25
        score, which is below. What a search ranks by; ``bm25`` is modified in place and
        returned. The features are summed per term first, in one pass."""
        candidates = self.candidates(bm25)
        if not len(candidates) or not len(rows):
            return bm25
        # only the ratios to the BM25 weight matter: with it at 1, the other tools keep BM25
        w = {name: value / match_weights["bm25"] for name, value in match_weights.items()}
        top = float(bm25.max())
        owner, flags, mass, total = self._hits(rows, weights, candidates)
        per_term = (mass / total) * (
            w["coverage"]
            + w["purpose_coverage"] * (flags & _PURPOSE > 0)
            + w["parameter_coverage"] * (flags & _PARAMETERS > 0)
        )
        inverse_mass = 1.0 / np.maximum(self.name_mass[candidates], 1e-12)
        per_term += w["name_share"] * mass * (flags & _NAME_WORD > 0) * inverse_mass[owner]
        extra = np.bincount(owner, weights=per_term, minlength=len(candidates))
        for kind in request_kinds(text):
            extra += w["evidence"] * self.kind_mask(kind)[candidates]
        bm25[candidates] += top * extra
        return bm25

    def _hits(
        self, rows: Sequence[int], weights: Sequence[float], candidates: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        """Each (candidate, request term) the candidate holds: the candidate's position in
        ``candidates``, the term's field bits in it and its mass (IDF times its weight in the
        request, at most 1); and the request's whole mass."""
        idf = self.matrix.idf
        assert idf is not None
        query = np.asarray(rows, dtype=np.int64)
        mass = idf[query] * np.minimum(np.asarray(weights, dtype=np.float64), 1.0)
        starts = self.indptr[candidates]
        sizes = self.indptr[candidates + 1] - starts
        owner = np.repeat(np.arange(len(candidates)), sizes)
        positions = np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(len(owner))
        lookup = self._lookup()  # term row -> 1 + its place in the request (0: not in it)
        lookup[query] = np.arange(1, len(query) + 1)
        try:
            found = lookup[self.rows[positions]]
        finally:
            lookup[query] = 0
        hit = np.flatnonzero(found)
        return (
            owner[hit],
            self.fields[positions[hit]],
            mass[found[hit] - 1],
            max(float(mass.sum()), 1e-12),
        )

    def _lookup(self) -> np.ndarray:
        """This thread's zeroed array over the vocabulary (left zeroed after each use)."""
        lookup: np.ndarray | None = getattr(self._scratch, "lookup", None)
        if lookup is None:
            lookup = self._scratch.lookup = np.zeros(len(self.matrix.vocab), dtype=np.int32)
        return lookup
