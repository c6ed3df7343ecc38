"""The BM25 index over tools, with weighted fields.

Every (term, tool) BM25 contribution is precomputed into a sparse matrix
(:class:`~toolmgmt_core._search.bm25.BM25Matrix`), so scoring a query is a sum over the postings
of its terms: no Python loop over tools. Its scores equal rank-bm25's ``BM25Okapi`` for the same
documents with ``idf="robertson"``, and bm25s's default with ``idf="lucene"`` (the default
here); ``tests/core/test_search_index.py`` checks both.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolmgmt_core._model.tool import Tool
from toolmgmt_core._search.bm25 import BM25Matrix, IdfVariant
from toolmgmt_core._search.fusion import Ranking
from toolmgmt_core._search.fuzzy import NameMatcher
from toolmgmt_core._search.match import MatchIndex
from toolmgmt_core._search.request import request_terms
from toolmgmt_core._search.tokenize import WordRows, tokenize, tokenize_document, tokenize_rows

__all__ = ["FIELD_BITS", "FIELD_WEIGHTS", "BM25Index", "Ranking", "tool_terms"]

FIELD_WEIGHTS: Mapping[str, int] = {
    "name": 3,
    "keywords": 2,
    "domain": 1,
    "description": 1,
    "parameters": 1,
}
"""How many times each field's terms count in a tool's document (BM25F by repetition).

The name says what a tool does in two or three words and keywords are curated synonyms, so a
match there is worth more than one in free-text descriptions; parameter names, descriptions and
enum values still count, since users often describe their arguments ("in Celsius", "by email").
"""

FIELD_BITS: Mapping[str, int] = {
    "name": 1,
    "keywords": 2,
    "domain": 4,
    "description": 8,
    "parameters": 16,
}
"""The bit of each field in :attr:`BM25Matrix.fields <toolmgmt_core._search.bm25.BM25Matrix.
fields>`: which fields of a tool a term occurs in (the match features read them)."""

_MASK_CACHE_SIZE = 64

_NEAR_BEST = 0.25
""":meth:`BM25Index.top` first looks among the tools scoring at least this share of the best."""


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while indexing.

    Indexing allocates millions of small lists and strings (no cycles) while a large catalog
    keeps millions of objects alive; every automatic collection would walk them all again.
    Pausing it makes a 100,000-tool build about a third faster.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _is_mapping(value: Any) -> bool:
    return isinstance(value, dict) or isinstance(value, Mapping)  # dict first: no ABC check


# The keywords under which _schema_texts finds more schemas; a property with none is a leaf.
_NESTING = frozenset(
    "properties items additionalProperties anyOf oneOf allOf $defs definitions".split()
)
_SCALARS = (str, int, float)


def _schema_texts(schema: Mapping[str, Any], out: list[str], depth: int = 0) -> None:
    """Parameter names, descriptions and enum values of a JSON Schema, recursively.

    One pass over each node's keys (not a look-up per keyword): indexing 100,000 tools walks
    a million schema nodes.
    """
    if depth > 8:
        return
    for key, value in schema.items():
        if key == "properties":
            if _is_mapping(value):
                for prop_name, prop in value.items():
                    out.append(str(prop_name))
                    if type(prop) is dict and depth < 8 and _NESTING.isdisjoint(prop):
                        # The usual property nests no schema: its texts here, not by a call.
                        for leaf_key, leaf in prop.items():
                            if leaf_key == "description":
                                if isinstance(leaf, str):
                                    out.append(leaf)
                            elif leaf_key == "enum" and isinstance(leaf, list):
                                out.extend([str(v) for v in leaf if isinstance(v, _SCALARS)])
                    elif _is_mapping(prop):
                        _schema_texts(prop, out, depth + 1)
        elif key == "description":
            if depth > 0 and isinstance(value, str):
                out.append(value)
        elif key == "enum":
            if isinstance(value, list):
                out.extend([str(v) for v in value if isinstance(v, _SCALARS)])
        elif key in ("items", "additionalProperties"):
            if _is_mapping(value):
                _schema_texts(value, out, depth + 1)
        elif key in ("anyOf", "oneOf", "allOf"):
            if isinstance(value, list):
                for sub in value:
                    if _is_mapping(sub):
                        _schema_texts(sub, out, depth + 1)
        elif key in ("$defs", "definitions") and _is_mapping(value):
            for sub in value.values():
                if _is_mapping(sub):
                    _schema_texts(sub, out, depth + 1)


def tool_terms(tool: Tool, weights: Mapping[str, int] = FIELD_WEIGHTS) -> list[str]:
    """The weighted bag of search terms for ``tool``."""
    params: list[str] = []
    _schema_texts(tool.parameters, params)
    fields = (
        ("name", tool.name),
        ("keywords", " ".join(tool.keywords)),
        ("domain", f"{tool.domain} {tool.group}"),
        ("description", tool.description),
        ("parameters", " ".join(params)),
    )
    terms: list[str] = []
    for field_name, text in fields:
        if text:
            terms += tokenize_document(text) * weights.get(field_name, 1)
    return terms


def _field_texts(tools: Sequence[Tool]) -> Iterator[tuple[str, list[str]]]:
    """Each field's texts, one field at a time (a field's texts are freed once tokenized)."""
    yield "name", [t.name for t in tools]
    yield "keywords", [" ".join(t.keywords) for t in tools]
    yield "domain", [f"{t.domain} {t.group}" for t in tools]
    yield "description", [t.description for t in tools]
    params: list[str] = []
    texts: list[str] = []
    for tool in tools:
        params.clear()
        _schema_texts(tool.parameters, params)
        texts.append(" ".join(params))
    yield "parameters", texts


def _build_matrix(
    tools: Sequence[Tool], weights: Mapping[str, int], *, k1: float, b: float, idf: IdfVariant
) -> BM25Matrix:
    """The same matrix as ``BM25Matrix.build([tool_terms(t) for t in tools])``, built field by
    field with weights instead of repetitions, and with terms as vocabulary rows from the start
    (:func:`tokenize_rows`): 4 bytes a term occurrence rather than a string reference, an
    int64 key and its sort index, which is what kept a 100,000-tool build at 3-4x bm25s's
    memory.
    """
    words = WordRows()
    vocab = words.vocab
    doc_parts: list[np.ndarray] = []
    row_parts: list[np.ndarray] = []
    class_parts: list[np.ndarray] = []
    class_weights: list[float] = []
    class_fields: list[int] = []
    positions = np.arange(len(tools), dtype=np.int32)
    for field_name, texts in _field_texts(tools):
        weight = weights.get(field_name, 1)
        if weight <= 0:
            continue
        counts, rows = tokenize_rows(texts, words)
        del texts
        doc_parts.append(np.repeat(positions, np.frombuffer(counts, dtype=np.int32)))
        row_parts.append(np.frombuffer(rows, dtype=np.int32))
        class_parts.append(np.full(len(rows), len(class_weights), dtype=np.uint8))
        class_weights.append(float(weight))
        class_fields.append(FIELD_BITS[field_name])
    if not class_weights:
        empty = np.zeros(0, dtype=np.int64)
        return BM25Matrix.from_rows(empty, empty, empty, vocab, len(tools), k1=k1, b=b, idf=idf)
    return BM25Matrix.from_rows(
        _concatenate(doc_parts),
        _concatenate(row_parts),
        _concatenate(class_parts),
        vocab,
        len(tools),
        class_weights=np.array(class_weights),
        class_fields=np.array(class_fields, dtype=np.uint8),
        k1=k1,
        b=b,
        idf=idf,
    )


def _concatenate(parts: list[np.ndarray]) -> np.ndarray:
    """``np.concatenate(parts)``, emptying ``parts`` as it goes (the parts are freed before the
    sort that needs the memory)."""
    out = np.concatenate(parts)
    parts.clear()
    return out


@dataclass
class BM25Index:
    """A BM25 index over a fixed list of tools; rebuilt, not mutated, when the catalog changes."""

    tools: list[Tool]
    """The indexed tools; hits refer to them by position."""
    _matrix: BM25Matrix
    _domains: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    _groups: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    _domain_codes: dict[str, int] = field(default_factory=dict)
    _group_codes: dict[tuple[str, str], int] = field(default_factory=dict)
    _masks: OrderedDict[Hashable, np.ndarray] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _names: NameMatcher | None = None
    _match: MatchIndex | None = None
    _positions: dict[str, int] | None = None

    @classmethod
    def build(
        cls,
        tools: Sequence[Tool],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        idf: IdfVariant = "lucene",
        weights: Mapping[str, int] = FIELD_WEIGHTS,
    ) -> BM25Index:
        """Index ``tools``.

        Args:
            tools: the tools, in the order hits refer to them by position.
            k1, b: BM25's term-saturation and length-normalisation parameters.
            idf: ``"lucene"`` (never negative; bm25s's default) or ``"robertson"``
                (rank-bm25's ``BM25Okapi``).
            weights: repetitions per field (see :data:`FIELD_WEIGHTS`).
        """
        with _gc_paused():
            matrix = _build_matrix(tools, weights, k1=k1, b=b, idf=idf)
        domain_codes: dict[str, int] = {}
        group_codes: dict[tuple[str, str], int] = {}
        domains = np.fromiter(
            (domain_codes.setdefault(t.domain, len(domain_codes)) for t in tools),
            dtype=np.int32,
            count=len(tools),
        )
        groups = np.fromiter(
            (group_codes.setdefault((t.domain, t.group), len(group_codes)) for t in tools),
            dtype=np.int32,
            count=len(tools),
        )
        return cls(
            tools=list(tools),
            _matrix=matrix,
            _domains=domains,
            _groups=groups,
            _domain_codes=domain_codes,
            _group_codes=group_codes,
        )

    def name_matcher(self) -> NameMatcher:
        """The trigram index over the tools' names, built on first use."""
        with self._lock:
            if self._names is None:
                self._names = NameMatcher([t.name for t in self.tools])
            return self._names

    def __len__(self) -> int:
        return len(self.tools)

    @property
    def domains(self) -> Mapping[str, int]:
        """Domain name to code (every domain present in the index)."""
        return self._domain_codes

    def has_group(self, group: str, domain: str | None = None) -> bool:
        """Whether some tool (in ``domain``, when given) has ``group``."""
        return any(g == group and (domain is None or d == domain) for d, g in self._group_codes)

    def term_ids(self, query: str) -> list[int]:
        """Vocabulary ids of the query's terms (unknown terms dropped; repeats kept)."""
        return self._matrix.term_ids(tokenize(query))

    def scores(self, query: str) -> np.ndarray:
        """BM25 scores of every tool for ``query`` (zeros when no term is known).

        The request is read first (:func:`~toolmgmt_core._search.request.request_terms`): the
        last user turn counts fully, earlier turns, a system prompt and quoted passages less.
        The array is new and the caller's to modify.
        """
        ids, weights = self._request_rows(query)
        plain = all(w == 1.0 for w in weights)
        return self._matrix.scores(ids, None if plain else weights)

    def match_scores(self, query: str, mask: np.ndarray | None = None) -> np.ndarray:
        """What a search ranks by: BM25 with the match features of :mod:`.match` (how much of
        the request a tool covers, how much of its name the request says, values it takes),
        weighted by :data:`~toolmgmt_core._search.match.MATCH_WEIGHTS`, on BM25's scale. Tools
        without a positive BM25 score, or outside ``mask``, score 0 (the features are read for
        the best tools within it). The array is new and the caller's to modify."""
        ids, weights = self._request_rows(query)
        plain = all(w == 1.0 for w in weights)
        bm25 = self._matrix.scores(ids, None if plain else weights)
        if mask is not None:
            bm25[~mask] = 0.0
        rows, row_weights = _distinct(ids, weights)
        return self.match_index().scores(rows, row_weights, bm25, query)

    def match_features(self, query: str) -> tuple[np.ndarray, np.ndarray]:
        """The tools :meth:`match_scores` scores by their match features for ``query`` (the
        :data:`~toolmgmt_core._search.match.MATCH_DEPTH` best by BM25, best first) and those
        features (one row per feature, one column per tool); for learning the weights
        (``bench/learn_match_weights.py``)."""
        ids, weights = self._request_rows(query)
        plain = all(w == 1.0 for w in weights)
        bm25 = self._matrix.scores(ids, None if plain else weights)
        rows, row_weights = _distinct(ids, weights)
        match = self.match_index()
        candidates = match.candidates(bm25)
        return candidates, match.features(rows, row_weights, bm25, query, candidates)

    def match_index(self) -> MatchIndex:
        """What the match features read besides the postings, built on first use."""
        with self._lock:
            if self._match is None:
                self._match = MatchIndex.build(self._matrix)
            return self._match

    def positions(self) -> dict[str, int]:
        """Tool name -> position in :attr:`tools` (built on first use)."""
        with self._lock:
            if self._positions is None:
                self._positions = {tool.name: i for i, tool in enumerate(self.tools)}
            return self._positions

    def doc_freq(self, term: str) -> int:
        """How many tools hold ``term`` (0 for a term no tool holds)."""
        row = self._matrix.vocab.get(term)
        return 0 if row is None else int(self._matrix.indptr[row + 1] - self._matrix.indptr[row])

    def _request_rows(self, query: str) -> tuple[list[int], list[float]]:
        """The vocabulary rows of the request's terms and their weights (repeats kept)."""
        vocab = self._matrix.vocab
        ids: list[int] = []
        weights: list[float] = []
        for term, weight in request_terms(query):
            row = vocab.get(term)
            if row is not None:
                ids.append(row)
                weights.append(weight)
        return ids, weights

    def scope_mask(self, domain: str | None, group: str | None) -> np.ndarray | None:
        """Which tools are in ``domain`` / ``group`` (None: all of them); cached."""
        if domain is None and group is None:
            return None
        key = ("scope", domain, group)
        cached = self.cached_mask(key)
        if cached is not None:
            return cached
        mask = np.ones(len(self.tools), dtype=bool)
        if domain is not None:
            code = self._domain_codes.get(domain, -1)
            mask &= self._domains == code
        if group is not None:
            codes = [
                c for (d, g), c in self._group_codes.items() if g == group and domain in (None, d)
            ]
            mask &= np.isin(self._groups, codes)
        return self.remember_mask(key, mask)

    def cached_mask(self, key: Hashable) -> np.ndarray | None:
        """A mask remembered under ``key`` by :meth:`remember_mask`, if still there."""
        with self._lock:
            mask = self._masks.get(key)
            if mask is not None:
                self._masks.move_to_end(key)
            return mask

    def remember_mask(self, key: Hashable, mask: np.ndarray) -> np.ndarray:
        """Keep ``mask`` under ``key`` (the last 64 are kept) and return it, read-only."""
        mask.setflags(write=False)
        with self._lock:
            self._masks[key] = mask
            self._masks.move_to_end(key)
            while len(self._masks) > _MASK_CACHE_SIZE:
                self._masks.popitem(last=False)
        return mask

    @staticmethod
    def top(scores: np.ndarray, limit: int, mask: np.ndarray | None = None) -> Ranking:
        """The best ``limit`` (index, score) pairs with a positive score, best first.

        ``scores`` is modified in place when ``mask`` is given. Ties keep catalog order.
        """
        if mask is not None:
            scores[~mask] = 0.0
        best = float(scores.max()) if len(scores) else 0.0
        # the tools within a few times of the best hold the first ``limit`` when there are
        # that many of them: sorting out a few hundred is much cheaper than all 10,000
        candidates = np.flatnonzero(scores >= best * _NEAR_BEST) if best > 0 else scores[:0]
        if len(candidates) < limit:
            candidates = np.flatnonzero(scores > 0)
        if len(candidates) > limit:
            # keep every tool scoring at least the limit-th best score, so that ties at the
            # cut are broken by catalog order below, not by argpartition's whim
            values = scores[candidates]
            threshold = -np.partition(-values, limit - 1)[limit - 1]
            candidates = candidates[values >= threshold]
        order = np.lexsort((candidates, -scores[candidates]))[:limit]
        return [(int(i), float(scores[i])) for i in candidates[order]]


def _distinct(ids: Sequence[int], weights: Sequence[float]) -> tuple[list[int], list[float]]:
    """Each row once, with the largest weight it has in the request."""
    best: dict[int, float] = {}
    for row, weight in zip(ids, weights, strict=True):
        if weight > best.get(row, 0.0):
            best[row] = weight
    return list(best), list(best.values())
