"""StaticEmbedder over a tiny model2vec model built in the test (no download, no torch)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from toolmgmt_core._embeddings import (
    Embedder,
    EmbeddingCache,
    StaticEmbedder,
    embed_with_cache,
    matrix_from_vectors,
)
from toolmgmt_core._model.errors import EmbeddingError

# Each word's vector points along its topic: 0 = mail, 1 = payment, 2 = filler.
WORDS = {
    "[UNK]": [0.0, 0.0, 0.0],
    "[PAD]": [0.0, 0.0, 0.0],
    "send": [1.0, 0.0, 0.2],
    "email": [1.0, 0.0, 0.0],
    "mail": [0.9, 0.1, 0.0],
    "message": [0.8, 0.0, 0.3],
    "charge": [0.0, 1.0, 0.1],
    "payment": [0.0, 1.0, 0.0],
    "card": [0.1, 0.9, 0.0],
    "refund": [0.0, 0.8, 0.3],
    "a": [0.0, 0.0, 1.0],
    "an": [0.0, 0.0, 1.0],
}


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    model2vec = pytest.importorskip("model2vec")
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    tokenizer = Tokenizer(WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    vectors = np.array(list(WORDS.values()), dtype=np.float32)
    folder = tmp_path_factory.mktemp("tiny-static")
    model2vec.StaticModel(vectors, tokenizer, normalize=True).save_pretrained(folder)
    return folder


def test_static_model_embeds_by_meaning(tiny_model: Path) -> None:
    embedder = StaticEmbedder(tiny_model)
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == f"static:{tiny_model}"
    tools = embedder.embed(["send an email message", "charge a payment card"])
    assert tools.shape == (2, 3)
    assert tools.dtype == np.float32
    query = embedder.embed_query("mail")
    assert float(tools[0] @ query) > float(tools[1] @ query)
    query = embedder.embed_query("refund")
    assert float(tools[1] @ query) > float(tools[0] @ query)
    assert embedder.embed([]).shape[0] == 0


def test_static_model_with_the_cache(tiny_model: Path, tmp_path: Path) -> None:
    calls: list[int] = []

    class Counting(StaticEmbedder):
        def embed(self, texts):  # type: ignore[no-untyped-def]
            calls.append(len(texts))
            return super().embed(texts)

    embedder = Counting(tiny_model)
    texts = ["send an email", "charge a card", "refund a payment"]
    first = embed_with_cache(embedder, texts, cache=EmbeddingCache(tmp_path / "e.sqlite"))
    again = embed_with_cache(
        embedder, [*texts, "mail"], cache=EmbeddingCache(tmp_path / "e.sqlite")
    )
    assert calls == [3, 1]
    assert np.allclose(first, again[:3])


def test_a_missing_model_is_an_embedding_error(tmp_path: Path) -> None:
    pytest.importorskip("model2vec")
    embedder = StaticEmbedder(tmp_path / "no-such-model")  # lazy: nothing loaded yet
    with pytest.raises(EmbeddingError, match="Could not load the static model"):
        embedder.embed(["send an email"])


def test_matrix_from_vectors_refuses_answers_that_are_not_one_vector_per_text() -> None:
    assert matrix_from_vectors([[1, 2], [3, 4]], 2, "m").shape == (2, 2)
    with pytest.raises(EmbeddingError, match="returned 1 vectors for 2 texts"):
        matrix_from_vectors([[1.0, 2.0]], 2, "m")
    with pytest.raises(EmbeddingError, match="different lengths or that are not numbers"):
        matrix_from_vectors([[1.0, 2.0], [3.0]], 2, "m")
    with pytest.raises(EmbeddingError, match="not numbers"):
        matrix_from_vectors([["a", "b"]], 1, "m")
    with pytest.raises(EmbeddingError, match="non-empty"):
        matrix_from_vectors([[]], 1, "m")
