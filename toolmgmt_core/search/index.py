"""The BM25 index over tools, with weighted fields, on top of bm25s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import bm25s
import numpy as np

from toolmgmt_core.search.tokenize import split_identifier, tokenize
from toolmgmt_core.tool import Tool

__all__ = ["FIELD_WEIGHTS", "BM25Index", "tool_terms"]

FIELD_WEIGHTS: Mapping[str, int] = {
    "name": 3,
    "keywords": 2,
    "domain": 1,
    "description": 1,
    "parameters": 1,
}
"""How many times each field's terms count in a tool's document (BM25F by repetition)."""


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
        for sub in schema.get(key) or ():
            _schema_texts(sub, out, depth + 1)
    defs = schema.get("$defs")
    if isinstance(defs, Mapping):
        for sub in defs.values():
            _schema_texts(sub, out, depth + 1)


def tool_terms(tool: Tool, weights: Mapping[str, int] = FIELD_WEIGHTS) -> list[str]:
    """The weighted bag of search terms for ``tool``."""
    params: list[str] = []
    _schema_texts(tool.parameters, params)
    fields = {
        "name": tokenize(" ".join(split_identifier(tool.name))),
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

    names: list[str]
    _bm25: bm25s.BM25
    _vocab: Mapping[str, int]

    @classmethod
    def build(cls, tools: Sequence[Tool], *, k1: float = 1.2, b: float = 0.75) -> BM25Index:
        corpus = [tool_terms(tool) or ["__empty__"] for tool in tools]
        engine = bm25s.BM25(k1=k1, b=b)
        if corpus:
            engine.index(corpus, show_progress=False)
        vocab = getattr(engine, "vocab_dict", None) or {}
        return cls(names=[t.name for t in tools], _bm25=engine, _vocab=vocab)

    def scores(self, query: str) -> np.ndarray:
        """BM25 scores of every tool for ``query`` (zeros when no term is known)."""
        terms = [t for t in tokenize(query) if t in self._vocab]
        if not terms or not self.names:
            return np.zeros(len(self.names), dtype=np.float32)
        return np.asarray(self._bm25.get_scores(terms), dtype=np.float32)

    def top(
        self, scores: np.ndarray, limit: int, mask: np.ndarray | None = None
    ) -> list[tuple[int, float]]:
        """The best ``limit`` (index, score) pairs with a positive score, best first."""
        if mask is not None:
            scores = np.where(mask, scores, 0.0)
        positive = int(np.count_nonzero(scores > 0))
        k = min(limit, positive)
        if k <= 0:
            return []
        idx = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        idx = idx[np.argsort(-scores[idx], kind="stable")]
        return [(int(i), float(scores[i])) for i in idx if scores[i] > 0][:k]
