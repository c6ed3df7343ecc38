from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from toolmgmt_core.embeddings import (
    Embedder,
    EmbeddingCache,
    HashingEmbedder,
    embed_with_cache,
    normalize_rows,
)


def test_hashing_embedder_is_a_deterministic_unit_embedder() -> None:
    embedder = HashingEmbedder(64)
    assert isinstance(embedder, Embedder)
    a = embedder.embed(["send an email", "book a flight"])
    b = embedder.embed(["send an email", "book a flight"])
    assert a.shape == (2, 64)
    assert np.allclose(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0)
    assert float(a[0] @ a[1]) < 0.9


def test_normalize_rows_keeps_zero_rows() -> None:
    out = normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert np.allclose(out, [[0.6, 0.8], [0.0, 0.0]])


def test_cache_embeds_only_new_texts(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    embedder = HashingEmbedder(32)
    texts = [f"tool number {i}" for i in range(50)]
    first = embed_with_cache(embedder, texts, cache=cache, batch_size=16)
    assert embedder.texts_embedded == 50

    reopened = EmbeddingCache(tmp_path / "emb.sqlite")
    again = embed_with_cache(embedder, texts, cache=reopened)
    assert embedder.texts_embedded == 50  # nothing embedded again
    assert np.allclose(first, again)

    embed_with_cache(embedder, [*texts, "one more tool"], cache=reopened)
    assert embedder.texts_embedded == 51  # adding one tool embeds one tool


def test_cache_is_keyed_by_model(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    small, large = HashingEmbedder(16), HashingEmbedder(32)
    embed_with_cache(small, ["a text"], cache=cache)
    out = embed_with_cache(large, ["a text"], cache=cache)
    assert out.shape == (1, 32)
    assert large.texts_embedded == 1


def test_crash_mid_write_keeps_finished_batches(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "emb.sqlite")

    class Flaky(HashingEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            if self.calls == 2:
                raise RuntimeError("killed mid-run")
            return super().embed(texts)

    flaky = Flaky(16)
    texts = [f"text {i}" for i in range(30)]
    with pytest.raises(RuntimeError):
        embed_with_cache(flaky, texts, cache=cache, batch_size=10)
    assert len(cache) == 20  # two whole batches, nothing half-written

    # The file is a sound database and the next run embeds only the rest.
    with sqlite3.connect(tmp_path / "emb.sqlite") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    healthy = HashingEmbedder(16)
    embed_with_cache(healthy, texts, cache=cache, batch_size=10)
    assert healthy.texts_embedded == 10
