"""A deterministic embedder for tests: no model, no meaning, only stable vectors."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from toolmgmt_core._embeddings import normalize_rows

__all__ = ["HashingEmbedder"]


class HashingEmbedder:
    """Deterministic bag of hashed words and character trigrams. For unit tests only.

    It knows nothing of meaning; it exists so tests of fusion, caching and fallbacks run
    without a model.
    """

    def __init__(self, dim: int = 256, *, fail: bool = False) -> None:
        self.dim = dim
        self.model_id = f"hashing-{dim}"
        self.fail = fail
        self.calls = 0
        self.texts_embedded = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        if self.fail:
            raise RuntimeError("embedding service unavailable")
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = text.lower().split()
            grams = words + [w[i : i + 3] for w in words for i in range(max(1, len(w) - 2))]
            for gram in grams:
                out[row, zlib.crc32(gram.encode()) % self.dim] += 1.0
        return normalize_rows(out)
