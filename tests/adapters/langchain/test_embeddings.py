"""LangChainEmbedder over LangChain's own embedding classes (a fake model, the real framework)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("langchain_core")

from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings  # noqa: E402
from toolmgmt_langchain import LangChainEmbedder  # noqa: E402

from toolmgmt_core._embeddings import Embedder, EmbeddingCache, embed_with_cache  # noqa: E402
from toolmgmt_core._model.errors import EmbeddingError  # noqa: E402


class AsymmetricFake(DeterministicFakeEmbedding):
    """Embeds queries with a prefix, as instruction-tuned models do; counts document texts."""

    documents_embedded: int = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents_embedded += len(texts)
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return super().embed_documents(["query: " + text])[0]


def test_documents_and_queries_take_their_own_paths() -> None:
    fake = AsymmetricFake(size=16)
    embedder = LangChainEmbedder(fake)
    assert isinstance(embedder, Embedder)
    matrix = embedder.embed(["send an email", "refund a payment"])
    assert matrix.shape == (2, 16)
    assert matrix.dtype == np.float32
    assert np.allclose(matrix, fake.embed_documents(["send an email", "refund a payment"]))
    query = embedder.embed_query("send an email")
    assert query.shape == (16,)
    assert np.allclose(
        query, DeterministicFakeEmbedding(size=16).embed_query("query: send an email")
    )
    assert not np.allclose(query, matrix[0])  # the query went through embed_query
    assert embedder.embed([]).shape[0] == 0


def test_model_id_names_class_model_and_size() -> None:
    assert LangChainEmbedder(DeterministicFakeEmbedding(size=8)).model_id == (
        "langchain:DeterministicFakeEmbedding:8"
    )
    assert LangChainEmbedder(DeterministicFakeEmbedding(size=8), model_id="x").model_id == "x"

    class Hosted(DeterministicFakeEmbedding):
        model: str = "text-embedding-3-small"
        dimensions: int = 8

    assert LangChainEmbedder(Hosted(size=8)).model_id == (
        "langchain:Hosted:text-embedding-3-small:8"
    )


def test_model_failures_and_bad_answers_are_embedding_errors() -> None:
    class Down(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise ConnectionError("embedding service unreachable")

        def embed_query(self, text: str) -> list[float]:
            raise TimeoutError("read timed out")

    with pytest.raises(EmbeddingError, match="unreachable") as info:
        LangChainEmbedder(Down()).embed(["a"])
    assert isinstance(info.value.__cause__, ConnectionError)
    with pytest.raises(EmbeddingError, match="TimeoutError: read timed out"):
        LangChainEmbedder(Down()).embed_query("a")

    class Short(DeterministicFakeEmbedding):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return super().embed_documents(texts)[:-1]

    with pytest.raises(EmbeddingError, match="returned 1 vectors for 2 texts"):
        LangChainEmbedder(Short(size=4)).embed(["a", "b"])

    with pytest.raises(TypeError, match="langchain_core.embeddings.Embeddings"):
        LangChainEmbedder(lambda texts: texts)  # type: ignore[arg-type]


def test_reopened_cache_embeds_only_new_tools(tmp_path: Path) -> None:
    fake = AsymmetricFake(size=12)
    embedder = LangChainEmbedder(fake)
    texts = [f"tool number {i}" for i in range(20)]
    first = embed_with_cache(embedder, texts, cache=EmbeddingCache(tmp_path / "e.sqlite"))
    assert fake.documents_embedded == 20
    again = embed_with_cache(
        embedder, [*texts, "one more tool"], cache=EmbeddingCache(tmp_path / "e.sqlite")
    )
    assert fake.documents_embedded == 21
    assert np.allclose(first, again[:20])


def test_a_catalog_embeds_its_tools_and_queries_through_langchain() -> None:
    from toolmgmt_core import ToolCatalog
    from toolmgmt_demo import demo_catalog

    tools = list(demo_catalog())
    fake = AsymmetricFake(size=32)
    catalog = ToolCatalog(tools, embedder=LangChainEmbedder(fake))
    hits = catalog.search("send an email", limit=3)
    assert hits
    assert catalog.embedder_error is None
    assert fake.documents_embedded == len(tools)  # queries went through embed_query
