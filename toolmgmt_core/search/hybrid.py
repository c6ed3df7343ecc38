"""Dense retrieval over tool embeddings, and its fusion with BM25 rankings."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from toolmgmt_core.embeddings import Embedder, EmbeddingCache, embed_with_cache, normalize_rows
from toolmgmt_core.tool import Tool

__all__ = ["FusionWeights", "VectorIndex", "embedding_text", "rrf_fuse"]


@dataclass(frozen=True)
class FusionWeights:
    """How BM25 and embedding rankings are fused (weighted reciprocal rank fusion).

    A tool's fused score is ``bm25 / (k + bm25_rank) + dense / (k + dense_rank)``, ranks
    counted from 1 over each ranking's ``depth`` best hits. Defaults were chosen on the BFCL dev
    split (see ``bench/retrieval.py``).
    """

    bm25: float = 1.0
    """Weight of the keyword ranking."""
    dense: float = 1.0
    """Weight of the embedding ranking."""
    k: float = 60.0
    """RRF's damping constant: larger flattens the difference between top ranks."""
    depth: int = 100
    """How many hits of each ranking take part."""


def embedding_text(tool: Tool) -> str:
    """The text embedded for a tool: its name in words, domain, group and description."""
    from toolmgmt_core.search.tokenize import split_identifier

    words = " ".join(split_identifier(tool.name))
    params = ", ".join(str(p) for p in (tool.parameters.get("properties") or {}))
    text = f"{words}: {tool.description}"
    if params:
        text += f" (parameters: {params})"
    return text


@dataclass
class VectorIndex:
    """Unit vectors of a fixed list of tools; scores are cosine similarities."""

    matrix: np.ndarray
    embedder: Embedder
    _queries: OrderedDict[str, np.ndarray] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def build(
        cls,
        tools: Sequence[Tool],
        embedder: Embedder,
        *,
        cache: EmbeddingCache | None = None,
        progress: bool | None = None,
    ) -> VectorIndex:
        texts = [embedding_text(t) for t in tools]
        matrix = embed_with_cache(embedder, texts, cache=cache, progress=progress)
        return cls(matrix=matrix, embedder=embedder)

    def query_vector(self, query: str) -> np.ndarray:
        """The query's unit vector (the last 256 queries are kept)."""
        with self._lock:
            cached = self._queries.get(query)
            if cached is not None:
                self._queries.move_to_end(query)
                return cached
        embed_query = getattr(self.embedder, "embed_query", None)
        vector = embed_query(query) if embed_query else self.embedder.embed([query])[0]
        vector = normalize_rows(vector)[0]
        with self._lock:
            self._queries[query] = vector
            if len(self._queries) > 256:
                self._queries.popitem(last=False)
        return vector

    def scores(self, query: str) -> np.ndarray:
        """Cosine similarity of every tool to ``query``."""
        if self.matrix.size == 0:
            return np.zeros(0, dtype=np.float32)
        return self.matrix @ self.query_vector(query)


def rrf_fuse(
    bm25: Sequence[tuple[int, float]],
    dense: Sequence[tuple[int, float]],
    weights: FusionWeights = FusionWeights(),
) -> list[tuple[int, float]]:
    """Fuse two rankings of (index, score), best first, by weighted reciprocal rank fusion."""
    fused: dict[int, float] = {}
    for ranking, weight in ((bm25, weights.bm25), (dense, weights.dense)):
        for rank, (index, _score) in enumerate(ranking[: weights.depth], start=1):
            fused[index] = fused.get(index, 0.0) + weight / (weights.k + rank)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))
