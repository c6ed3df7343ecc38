"""Any LangChain ``Embeddings`` as a toolmgmt embedder, for hybrid search.

Usage::

    from langchain_openai import OpenAIEmbeddings
    from toolmgmt_core import ToolCatalog
    from toolmgmt_core._embeddings import EmbeddingCache
    from toolmgmt_langchain import LangChainEmbedder

    catalog = ToolCatalog(
        embedder=LangChainEmbedder(OpenAIEmbeddings(model="text-embedding-3-small")),
        embedding_cache=EmbeddingCache("~/.cache/toolmgmt/embeddings.sqlite"),
    )

Tool texts go through ``embed_documents`` and queries through ``embed_query``, so models that
embed the two differently (instruction prefixes, asymmetric models) are used as meant.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from toolmgmt_core import EmbeddingError
from toolmgmt_core.integration import matrix_from_vectors

try:
    from langchain_core.embeddings import Embeddings
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        'toolmgmt_langchain needs LangChain: pip install "toolmgmt[langchain]"'
    ) from exc

__all__ = ["LangChainEmbedder"]

_NAME_FIELDS = ("model", "model_name", "model_id", "deployment")
"""Attributes that name the model on LangChain's embedding classes, in the order tried."""
_SIZE_FIELDS = ("dimensions", "size")
"""Attributes that fix the vector size (so one model at two sizes gets two cache keys)."""


def _model_id(embeddings: Embeddings) -> str:
    name = next(
        (
            str(value)
            for field in _NAME_FIELDS
            if isinstance(value := getattr(embeddings, field, None), str) and value
        ),
        None,
    )
    size = next(
        (
            value
            for field in _SIZE_FIELDS
            if isinstance(value := getattr(embeddings, field, None), int)
            and not isinstance(value, bool)
        ),
        None,
    )
    model_id = f"langchain:{type(embeddings).__name__}"
    if name:
        model_id += f":{name}"
    if size is not None:
        model_id += f":{size}"
    return model_id


class LangChainEmbedder:
    """A LangChain ``Embeddings`` (OpenAI, Ollama, HuggingFace, Bedrock...) as an embedder.

    Args:
        embeddings: any ``langchain_core.embeddings.Embeddings``.
        model_id: the cache key; by default ``"langchain:<class>[:<model>][:<size>]"`` from
            the object's class, its ``model`` / ``model_name`` / ``model_id`` / ``deployment``
            attribute and its ``dimensions`` / ``size`` attribute. Set it when two objects of
            one class embed differently in ways those attributes do not show.

    Errors the model raises (API errors, timeouts) and answers that are not one vector per text
    are raised as :class:`~toolmgmt_core.EmbeddingError`, chained to the cause; search
    catches them and falls back to BM25 alone.
    """

    def __init__(self, embeddings: Embeddings, model_id: str | None = None) -> None:
        if not isinstance(embeddings, Embeddings):
            raise TypeError(
                "LangChainEmbedder needs a langchain_core.embeddings.Embeddings (such as "
                f"OpenAIEmbeddings or OllamaEmbeddings), got {type(embeddings).__name__}."
            )
        self.embeddings = embeddings
        self.model_id = model_id or _model_id(embeddings)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Tool texts through ``embed_documents``: a ``(len(texts), dim)`` float32 matrix."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        try:
            vectors = self.embeddings.embed_documents(texts)
        except Exception as exc:
            raise EmbeddingError(
                f"Embedding model {self.model_id!r} failed on {len(texts)} texts: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        return matrix_from_vectors(vectors, len(texts), self.model_id)

    def embed_query(self, text: str) -> np.ndarray:
        """One query through ``embed_query``: a ``(dim,)`` float32 vector."""
        try:
            vector = self.embeddings.embed_query(text)
        except Exception as exc:
            raise EmbeddingError(
                f"Embedding model {self.model_id!r} failed on a query: {type(exc).__name__}: {exc}"
            ) from exc
        return matrix_from_vectors([vector], 1, self.model_id)[0]
