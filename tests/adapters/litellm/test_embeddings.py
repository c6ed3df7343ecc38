"""LiteLLMEmbedder through real ``litellm.embedding`` calls; only the model is faked.

``mock_response`` (LiteLLM's own test seam) answers ONE vector, or raises for ``"error"``; a
``CustomLLM`` registered as a provider stands in for a hosted model that answers batches.
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("litellm")

import litellm  # noqa: E402
from litellm import CustomLLM  # noqa: E402
from litellm.types.utils import Embedding, EmbeddingResponse  # noqa: E402
from toolmgmt_litellm import LiteLLMEmbedder  # noqa: E402

from toolmgmt_core._embeddings import Embedder, EmbeddingCache, embed_with_cache  # noqa: E402
from toolmgmt_core._model.errors import ConfigError, EmbeddingError  # noqa: E402

MODEL = "openai/text-embedding-3-small"


def test_single_query_with_mock_response() -> None:
    embedder = LiteLLMEmbedder(MODEL, mock_response=[0.6, 0.8, 0.0])
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == "litellm:openai/text-embedding-3-small"
    vector = embedder.embed_query("send an email")
    assert vector.dtype == np.float32
    assert np.allclose(vector, [0.6, 0.8, 0.0])
    matrix = embedder.embed(["one tool text"])
    assert matrix.shape == (1, 3)
    assert np.allclose(matrix[0], [0.6, 0.8, 0.0])


def test_one_vector_for_two_texts_is_an_error() -> None:
    embedder = LiteLLMEmbedder(MODEL, mock_response=[0.6, 0.8])
    with pytest.raises(EmbeddingError, match="returned 1 vectors for 2 texts"):
        embedder.embed(["send an email", "refund a payment"])


def test_a_failed_call_is_an_embedding_error_chained_to_the_cause() -> None:
    embedder = LiteLLMEmbedder(MODEL, mock_response="error")
    with pytest.raises(EmbeddingError, match="text-embedding-3-small.*failed on 1 texts") as info:
        embedder.embed_query("send an email")
    assert info.value.__cause__ is not None
    assert "Mock error" in str(info.value)


def test_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="batch_size"):
        LiteLLMEmbedder(MODEL, batch_size=0)
    with pytest.raises(ConfigError, match="timeout"):
        LiteLLMEmbedder(MODEL, timeout=0)
    with pytest.raises(TypeError, match="model name"):
        LiteLLMEmbedder("")  # type: ignore[arg-type]
    assert LiteLLMEmbedder(MODEL, dimensions=256).model_id.endswith(":256")
    assert LiteLLMEmbedder(MODEL, model_id="mine").model_id == "mine"


def _vector(text: str) -> list[float]:
    return [float(len(text)), float(zlib.crc32(text.encode()) % 1000), 1.0]


class FakeHostedModel(CustomLLM):
    """Answers each batch with one vector per text, listed in reverse order (by ``index``)."""

    def __init__(self, mode: str = "ok") -> None:
        super().__init__()
        self.batches: list[list[str]] = []
        self.timeouts: list[Any] = []
        self.mode = mode

    def embedding(self, model: str, input: list, model_response: EmbeddingResponse, **kwargs: Any):  # type: ignore[override]
        self.batches.append(list(input))
        self.timeouts.append(kwargs.get("timeout"))
        if self.mode == "timeout":
            raise litellm.Timeout("took too long", model=model, llm_provider="fake-hosted")
        indexes = list(range(len(input)))
        if self.mode == "gap":
            indexes[-1] += 1
        data = [
            Embedding(embedding=_vector(text), index=index, object="embedding")
            for index, text in zip(indexes, input, strict=True)
        ]
        model_response.data = list(reversed(data))
        model_response.model = model
        return model_response


@pytest.fixture
def hosted(monkeypatch: pytest.MonkeyPatch) -> FakeHostedModel:
    handler = FakeHostedModel()
    monkeypatch.setattr(
        litellm, "custom_provider_map", [{"provider": "fake-hosted", "custom_handler": handler}]
    )
    monkeypatch.setattr(litellm, "provider_list", list(litellm.provider_list))
    monkeypatch.setattr(litellm, "_custom_providers", list(litellm._custom_providers))
    return handler


def test_batches_are_sent_in_order_and_rows_follow_the_index(hosted: FakeHostedModel) -> None:
    texts = [f"tool {i}: " + "word " * i for i in range(7)]
    embedder = LiteLLMEmbedder("fake-hosted/embedder", batch_size=3, timeout=5)
    matrix = embedder.embed(texts)
    assert [len(b) for b in hosted.batches] == [3, 3, 1]
    assert [t for b in hosted.batches for t in b] == texts
    assert np.allclose(matrix, [_vector(t) for t in texts])  # reversed answers put back in order
    assert hosted.timeouts == [5.0, 5.0, 5.0]


def test_numbering_that_skips_a_text_is_an_error(hosted: FakeHostedModel) -> None:
    hosted.mode = "gap"
    with pytest.raises(EmbeddingError, match=r"numbered \[0, 2\]; expected 0 to 1"):
        LiteLLMEmbedder("fake-hosted/embedder").embed(["a", "b"])


def test_a_timeout_is_an_embedding_error(hosted: FakeHostedModel) -> None:
    hosted.mode = "timeout"
    with pytest.raises(EmbeddingError, match="Timeout") as info:
        LiteLLMEmbedder("fake-hosted/embedder", timeout=1).embed_query("slow")
    assert isinstance(info.value.__cause__, litellm.Timeout)


def test_cached_tools_are_not_sent_again(hosted: FakeHostedModel, tmp_path: Path) -> None:
    embedder = LiteLLMEmbedder("fake-hosted/embedder", batch_size=4)
    texts = [f"tool number {i}" for i in range(10)]
    first = embed_with_cache(embedder, texts, cache=EmbeddingCache(tmp_path / "e.sqlite"))
    assert sum(len(b) for b in hosted.batches) == 10
    again = embed_with_cache(
        embedder, [*texts, "one more tool"], cache=EmbeddingCache(tmp_path / "e.sqlite")
    )
    assert hosted.batches[-1] == ["one more tool"]
    assert sum(len(b) for b in hosted.batches) == 11
    assert np.allclose(first, again[:10])


def test_a_catalog_with_a_failing_hosted_model_falls_back_to_bm25() -> None:
    from toolmgmt_core import ToolCatalog
    from toolmgmt_demo import demo_catalog

    tools = list(demo_catalog())
    catalog = ToolCatalog(tools, embedder=LiteLLMEmbedder(MODEL, mock_response="error"))
    with pytest.warns(RuntimeWarning, match="search uses BM25"):
        hits = catalog.search("send an email", limit=3)
    keyword = ToolCatalog(tools).search("send an email", limit=3)
    assert [h.name for h in hits] == [h.name for h in keyword]
    assert catalog.embedder_error is not None
    assert "EmbeddingError" in catalog.embedder_error
    assert "text-embedding-3-small" in catalog.embedder_error


def test_a_catalog_searches_with_a_hosted_model(hosted: FakeHostedModel) -> None:
    from toolmgmt_core import ToolCatalog
    from toolmgmt_demo import demo_catalog

    tools = list(demo_catalog())
    catalog = ToolCatalog(tools, embedder=LiteLLMEmbedder("fake-hosted/embedder", batch_size=64))
    hits = catalog.search("send an email", limit=3)
    assert catalog.embedder_error is None
    assert hits
    tool_batches = [b for b in hosted.batches if len(b) > 1]
    assert [len(b) for b in tool_batches] == [64, 64, len(tools) - 128]
