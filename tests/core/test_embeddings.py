from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest
from support.embedders import HashingEmbedder

from toolmgmt_core._embeddings import (
    Embedder,
    EmbeddingCache,
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


# -- the catalog with an embedder ------------------------------------------------------------

from toolmgmt_core import Tool, ToolCatalog  # noqa: E402


def _tools() -> list[Tool]:
    return [
        Tool("send_email", "Send an email message to recipients.", domain="email"),
        Tool("refund_charge", "Refund a payment charge to the customer.", domain="payments"),
        Tool("list_files", "List files in a folder.", domain="files"),
    ]


class KeywordBlindEmbedder(HashingEmbedder):
    """Maps 'money back' to the refund tool, as a real model would, and nothing else."""

    def embed(self, texts):  # type: ignore[no-untyped-def]
        out = super().embed(texts)
        for row, text in enumerate(texts):
            if "money back" in text or "Refund" in text:
                out[row] = 0.0
                out[row, 0] = 1.0
        return out


def test_hybrid_search_finds_what_keywords_miss(tmp_path: Path) -> None:
    plain = ToolCatalog(_tools())
    assert plain.search("give the money back") == []  # no keyword in common
    hybrid = ToolCatalog(_tools(), embedder=KeywordBlindEmbedder(64))
    assert hybrid.search("give the money back")[0].name == "refund_charge"
    # Keyword matches still win where they exist, and multi-query search works in both halves.
    names = [h.name for h in hybrid.search(["send an email", "give the money back"], limit=2)]
    assert names == ["send_email", "refund_charge"]


def test_catalog_embeddings_are_cached_on_disk(tmp_path: Path) -> None:
    path = tmp_path / "vectors.sqlite"
    first = HashingEmbedder(32)
    ToolCatalog(_tools(), embedder=first, embedding_cache=path).search("email")
    assert first.texts_embedded == 3 + 1  # three tools and the query
    again = HashingEmbedder(32)
    catalog = ToolCatalog(_tools(), embedder=again, embedding_cache=path)
    catalog.search("email")
    assert again.texts_embedded == 1  # only the query: reopening embeds no tool
    catalog.add(Tool("archive_email", "Archive an email.", domain="email"))
    catalog.search("email")
    assert again.texts_embedded == 2  # one new tool; the query vector is cached per index


def test_failing_embedder_falls_back_to_bm25_and_says_so_once() -> None:
    broken = HashingEmbedder(16, fail=True)
    catalog = ToolCatalog(_tools(), embedder=broken)
    with pytest.warns(RuntimeWarning, match="search uses BM25 alone") as caught:
        first = catalog.search("refund a payment")
        second = catalog.search("send email")
    assert len(caught) == 1
    assert first[0].name == "refund_charge" and second[0].name == "send_email"
    assert "embedding service unavailable" in (catalog.embedder_error or "")
    assert broken.calls == 1  # not retried on every search while the catalog is unchanged


def test_bad_embedder_is_refused() -> None:
    with pytest.raises(Exception, match="Embedder protocol"):
        ToolCatalog(_tools(), embedder=object())  # type: ignore[arg-type]


def test_no_heavy_import_without_an_embedder() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from toolmgmt_core import ToolCatalog, Tool;"
        "c = ToolCatalog([Tool('a_b', 'x y')]); c.search('x');"
        "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_request_and_its_clauses_are_embedded_in_one_batch() -> None:
    embedder = HashingEmbedder(64)
    catalog = ToolCatalog(_tools(), embedder=embedder)
    catalog.search("list files")  # builds the tool vectors, embeds one query
    calls = embedder.calls
    hits = catalog.search("send an email to Ann. Then refund the payment to the customer.")
    assert embedder.calls == calls + 1  # the request and both clauses: one forward pass
    assert {"send_email", "refund_charge"} <= {h.name for h in hits[:2]}


class QueriesFail(HashingEmbedder):
    """Embeds the tools, then fails on every query (a service that went down)."""

    def embed(self, texts):  # type: ignore[no-untyped-def]
        if self.calls:
            self.calls += 1
            raise TimeoutError("embedding service timed out")
        return super().embed(texts)


def test_a_request_whose_query_cannot_be_embedded_is_ranked_by_bm25_alone() -> None:
    request = "send an email to Ann. Then refund the payment to the customer."
    expected = ToolCatalog(_tools()).search(request, limit=3)
    catalog = ToolCatalog(_tools(), embedder=QueriesFail(32))
    with pytest.warns(RuntimeWarning, match="embedding service timed out"):
        hits = catalog.search(request, limit=3)
    # the whole request and both clauses on one (BM25) scale, merged as keyword search merges
    assert [(h.name, h.score) for h in hits] == [(h.name, h.score) for h in expected]


def test_hybrid_scores_are_fused_and_each_need_is_covered() -> None:
    tools = [
        *_tools(),
        Tool("send_email_batch", "Send an email message to many recipients.", domain="email"),
        Tool("send_email_later", "Send an email message later.", domain="email"),
    ]
    catalog = ToolCatalog(tools, embedder=KeywordBlindEmbedder(64))
    hits = catalog.search("Send an email message. Then give the money back.", limit=2)
    # three near-duplicate email tools compete for one need; the refund need still gets a slot
    names = sorted(h.name for h in hits)
    assert names[0] == "refund_charge" and names[1].startswith("send_email"), names
    # fused scores: keyword (0-1) + dense * cosine, a clause's plus the context share of the whole's
    weights = catalog.fusion
    assert all(0 < h.score <= (1 + weights.dense) * (1 + weights.context) for h in hits)
