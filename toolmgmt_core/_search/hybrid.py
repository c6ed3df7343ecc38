"""Dense retrieval over tool embeddings, and its fusion with BM25 rankings."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from toolmgmt_core._embeddings import Embedder, VectorCache, embed_with_cache, normalize_rows
from toolmgmt_core._model.tool import Tool

__all__ = ["FusionWeights", "VectorIndex", "embedding_text", "fuse_scores", "matvec"]


@dataclass(frozen=True)
class FusionWeights:
    """How keyword and embedding similarity are fused into one score per tool.

    ``fused = keyword / max(keyword) + dense * max(0, (cosine - floor) / (1 - floor))``: the
    keyword score (BM25 with the match features of :mod:`~toolmgmt_core._search.match`) scaled to
    0-1 within the query, plus the cosine similarity above a floor (unrelated
    texts still score about 0.1 with small sentence models). Score fusion beat reciprocal rank
    fusion on the BFCL dev split (a better R@1 at the same R@5), because it keeps how sure each
    ranker is, not only its order. With an embedder, hit scores are on this scale.

    A request holding several needs is ranked whole and clause by clause, each clause with
    ``context`` times the whole request's scores added; because fused scores mean the same in
    every ranking, the rankings are merged by covering each clause's need
    (:func:`~toolmgmt_core._search.fusion.cover_rankings`) rather than by rank alone: on the dev
    split it puts every need of a multi-tool request in the top 5 more often than the keyword
    search's merge (all@5 in ``bench/results/retrieval_dev.json``). The defaults sit in the
    middle of a flat region: ``context`` 0.3-0.4, ``temperature`` 0.25-0.4 and ``saturation``
    0.05-0.2 give about the same all@5.
    """

    dense: float = 2.5
    """Weight of the embedding similarity against the (0-1) keyword score. On the dev split 2-2.5
    give the best R@5 and all@5 with the match features (1.5 before them: the keyword part now
    separates its best tools more)."""
    floor: float = 0.1
    """Cosine similarity counted as none."""
    context: float = 0.4
    """Share of the whole request's fused scores added to each clause's (see
    :data:`~toolmgmt_core._search.query.CLAUSE_CONTEXT_WEIGHT` for BM25 alone)."""
    temperature: float = 0.3
    """How the clause rankings are merged: :func:`~toolmgmt_core._search.fusion.cover_rankings`'s
    softmax temperature, in fused-score units."""
    saturation: float = 0.1
    """:func:`~toolmgmt_core._search.fusion.cover_rankings`'s saturation."""


def embedding_text(tool: Tool) -> str:
    """The text embedded for a tool: its name in words, domain, group and description."""
    from toolmgmt_core._search.tokenize import split_identifier

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
    queries: OrderedDict[str, np.ndarray] = field(default_factory=OrderedDict)
    """Recent query vectors (they do not depend on the tools, so a rebuilt index keeps them)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def build(
        cls,
        tools: Sequence[Tool],
        embedder: Embedder,
        *,
        cache: VectorCache | None = None,
        progress: bool | None = None,
    ) -> VectorIndex:
        texts = [embedding_text(t) for t in tools]
        matrix = embed_with_cache(embedder, texts, cache=cache, progress=progress)
        return cls(matrix=matrix, embedder=embedder)

    def query_vector(self, query: str) -> np.ndarray:
        """The query's unit vector (the last 256 queries are kept)."""
        with self._lock:
            cached = self.queries.get(query)
            if cached is not None:
                self.queries.move_to_end(query)
                return cached
        embed_query = getattr(self.embedder, "embed_query", None)
        vector = embed_query(query) if embed_query else self.embedder.embed([query])[0]
        vector = normalize_rows(vector)[0]
        with self._lock:
            self.queries[query] = vector
            if len(self.queries) > 256:
                self.queries.popitem(last=False)
        return vector

    def prefetch(self, texts: Sequence[str]) -> None:
        """Embed the texts not cached yet in one batch (a request and its clauses cost about
        one forward pass instead of one each)."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self.queries]
        batch = getattr(self.embedder, "embed_queries", None)
        if batch is None and getattr(self.embedder, "embed_query", None) is None:
            batch = self.embedder.embed  # no separate query path: queries embed like tools
        if len(missing) < 2 or batch is None:
            return  # query_vector embeds each text on its own
        rows = normalize_rows(batch(missing))
        with self._lock:
            for text, row in zip(missing, rows, strict=True):
                self.queries[text] = row
            while len(self.queries) > 256:
                self.queries.popitem(last=False)

    def scores(self, query: str) -> np.ndarray:
        """Cosine similarity of every tool to ``query``."""
        return self.scores_many([query])[0]

    def scores_many(self, queries: Sequence[str]) -> np.ndarray:
        """Cosine similarity of every tool to each query: one row per query.

        The queries not cached yet are embedded in one batch; each is then scored by its own
        matrix-vector product (one matrix product with a column per query was slower).
        """
        if self.matrix.size == 0:
            return np.zeros((len(queries), 0), dtype=np.float32)
        self.prefetch(queries)  # does nothing for fewer than two new queries
        return np.stack([matvec(self.matrix, self.query_vector(q)) for q in queries])


def matvec(matrix: np.ndarray, vector: np.ndarray) -> np.ndarray:
    """``matrix @ vector`` on the calling thread only.

    A BLAS product wakes the BLAS thread pool, whose threads then spin for a while: on 2 cores
    they took the CPU from the query embedding that follows (an ONNX or torch forward pass),
    doubling it. einsum's own loop is slower alone (0.75 against 0.2 ms at 10,000 tools) but
    a hybrid search at 10,000 tools is faster as a whole.
    """
    return np.einsum("ij,j->i", matrix, vector)


def fuse_scores(
    bm25: np.ndarray, cosine: np.ndarray, weights: FusionWeights = FusionWeights()
) -> np.ndarray:
    """One fused score per tool from BM25 scores and cosine similarities (see FusionWeights)."""
    top = float(bm25.max()) if bm25.size else 0.0
    keyword = bm25 / top if top > 0 else np.zeros_like(bm25)
    dense = np.clip((cosine - weights.floor) / (1.0 - weights.floor), 0.0, None)
    return (keyword + weights.dense * dense).astype(np.float32)
