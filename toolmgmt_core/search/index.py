"""The BM25 index over tools, with weighted fields, on top of bm25s.

bm25s precomputes every (term, tool) BM25 contribution into a sparse matrix, so scoring a query
is a sum over the postings of its terms: no Python loop over tools, well under a millisecond at
10,000 tools. Its scores equal rank-bm25's ``BM25Okapi`` for the same documents when the same
IDF variant is used (``method="robertson"``; see ``tests/core/test_search_index.py``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import bm25s
import numpy as np

from toolmgmt_core.search.tokenize import split_identifier, tokenize
from toolmgmt_core.tool import Tool

__all__ = ["FIELD_WEIGHTS", "BM25Index", "Ranking", "tool_terms"]

Ranking = list[tuple[int, float]]
"""(tool position, score) pairs, best first."""

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

_MASK_CACHE_SIZE = 64


def _schema_texts(schema: Any, out: list[str], depth: int = 0) -> None:
    """Parameter names, descriptions and enum values of a JSON Schema, recursively."""
    if depth > 8 or not isinstance(schema, Mapping):
        return
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for prop_name, prop in props.items():
            out.append(" ".join(split_identifier(str(prop_name))))
            _schema_texts(prop, out, depth + 1)
    if isinstance(schema.get("description"), str) and depth > 0:
        out.append(schema["description"])
    enum = schema.get("enum")
    if isinstance(enum, list):
        out.extend(str(v) for v in enum if isinstance(v, str | int | float))
    for key in ("items", "additionalProperties"):
        _schema_texts(schema.get(key), out, depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        subs = schema.get(key)
        if isinstance(subs, list):
            for sub in subs:
                _schema_texts(sub, out, depth + 1)
    for key in ("$defs", "definitions"):
        defs = schema.get(key)
        if isinstance(defs, Mapping):
            for sub in defs.values():
                _schema_texts(sub, out, depth + 1)


def tool_terms(tool: Tool, weights: Mapping[str, int] = FIELD_WEIGHTS) -> list[str]:
    """The weighted bag of search terms for ``tool``."""
    params: list[str] = []
    _schema_texts(tool.parameters, params)
    fields = {
        "name": tokenize(tool.name),
        "keywords": tokenize(" ".join(tool.keywords)),
        "domain": tokenize(f"{tool.domain} {tool.group}"),
        "description": tokenize(tool.description),
        "parameters": tokenize(" ".join(params)),
    }
    terms: list[str] = []
    for field_name, field_terms in fields.items():
        terms.extend(field_terms * weights.get(field_name, 1))
    return terms


@dataclass
class BM25Index:
    """A BM25 index over a fixed list of tools; rebuilt, not mutated, when the catalog changes."""

    tools: list[Tool]
    """The indexed tools; hits refer to them by position."""
    _bm25: bm25s.BM25 | None
    _vocab: Mapping[str, int]
    _domains: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    _groups: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    _domain_codes: dict[str, int] = field(default_factory=dict)
    _group_codes: dict[tuple[str, str], int] = field(default_factory=dict)
    _masks: OrderedDict[Hashable, np.ndarray] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def build(
        cls,
        tools: Sequence[Tool],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        method: str = "lucene",
        weights: Mapping[str, int] = FIELD_WEIGHTS,
    ) -> BM25Index:
        """Index ``tools``.

        Args:
            tools: the tools, in the order hits refer to them by position.
            k1, b: BM25's term-saturation and length-normalisation parameters.
            method: the bm25s variant: ``"lucene"`` (IDF never negative, the default),
                ``"robertson"`` (rank-bm25's ``BM25Okapi``), ``"atire"``, ``"bm25l"``,
                ``"bm25+"``.
            weights: repetitions per field (see :data:`FIELD_WEIGHTS`).
        """
        corpus = [tool_terms(tool, weights) or ["__empty__"] for tool in tools]
        engine: bm25s.BM25 | None = None
        vocab: Mapping[str, int] = {}
        if corpus:
            engine = bm25s.BM25(k1=k1, b=b, method=method)
            engine.index(corpus, show_progress=False)
            vocab = engine.vocab_dict
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
            _bm25=engine,
            _vocab=vocab,
            _domains=domains,
            _groups=groups,
            _domain_codes=domain_codes,
            _group_codes=group_codes,
        )

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
        vocab = self._vocab
        return [vocab[t] for t in tokenize(query) if t in vocab]

    def scores(self, query: str) -> np.ndarray:
        """BM25 scores of every tool for ``query`` (zeros when no term is known).

        The array is new and the caller's to modify.
        """
        ids = self.term_ids(query)
        if not ids or self._bm25 is None:
            return np.zeros(len(self.tools), dtype=np.float32)
        return np.asarray(self._bm25.get_scores_from_ids(ids), dtype=np.float32)

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
        candidates = np.flatnonzero(scores > 0)
        if len(candidates) > limit:
            part = np.argpartition(-scores[candidates], limit - 1)[:limit]
            candidates = candidates[part]
        order = np.lexsort((candidates, -scores[candidates]))
        return [(int(i), float(scores[i])) for i in candidates[order]]
