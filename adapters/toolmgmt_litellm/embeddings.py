"""Hosted embedding models through ``litellm.embedding``, for hybrid search.

Usage::

    from toolmgmt_core import ToolCatalog
    from toolmgmt_core._embeddings import EmbeddingCache
    from toolmgmt_litellm import LiteLLMEmbedder

    catalog = ToolCatalog(
        embedder=LiteLLMEmbedder("openai/text-embedding-3-small"),  # reads OPENAI_API_KEY
        embedding_cache=EmbeddingCache("~/.cache/toolmgmt/embeddings.sqlite"),
    )

Any model LiteLLM can embed with works (``"cohere/embed-english-v3.0"``,
``"bedrock/amazon.titan-embed-text-v2:0"``, ``"ollama/nomic-embed-text"``...). Tool texts are
sent in batches; the cache means a catalog is embedded once per model, not once per start.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from toolmgmt_core import ConfigError, EmbeddingError
from toolmgmt_core.integration import matrix_from_vectors

try:
    import litellm
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError('toolmgmt_litellm needs LiteLLM: pip install "toolmgmt[litellm]"') from exc

__all__ = ["LiteLLMEmbedder"]


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


class LiteLLMEmbedder:
    """An embedding model reached through ``litellm.embedding``.

    Args:
        model: a LiteLLM model name, such as ``"openai/text-embedding-3-small"``.
        batch_size: texts per request (96 by default: Cohere's limit; OpenAI takes 2,048).
        timeout: seconds per request; a query waits this long at most before search falls
            back to BM25.
        model_id: the cache key; ``"litellm:<model>"`` (plus ``:<dimensions>`` when given).
        kwargs: more ``litellm.embedding`` arguments (``api_key``, ``api_base``,
            ``dimensions``, ``input_type``...), sent with every request.

    A failed request (API error, timeout, no key) or an answer that is not one vector per text
    raises :class:`~toolmgmt_core.EmbeddingError`, chained to the cause; search catches it
    and falls back to BM25 alone.
    """

    def __init__(
        self,
        model: str,
        *,
        batch_size: int = 96,
        timeout: float = 30.0,
        model_id: str | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise TypeError(
                "LiteLLMEmbedder needs a LiteLLM model name such as "
                f"'openai/text-embedding-3-small', got {model!r}."
            )
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(
                f"batch_size must be a whole number of at least 1, got {batch_size!r}."
            )
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}.")
        self.model = model
        self.batch_size = batch_size
        self.timeout = float(timeout)
        self.kwargs = kwargs
        """Extra ``litellm.embedding`` arguments."""
        if model_id is None:
            dimensions = kwargs.get("dimensions")
            model_id = f"litellm:{model}" + (f":{dimensions}" if dimensions else "")
        self.model_id = model_id

    def _request(self, texts: list[str]) -> np.ndarray:
        try:
            response = litellm.embedding(
                model=self.model, input=texts, timeout=self.timeout, **self.kwargs
            )
        except Exception as exc:
            raise EmbeddingError(
                f"Embedding model {self.model_id!r} failed on {len(texts)} texts: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        items = list(_field(response, "data") or [])
        indexes = [_field(item, "index") for item in items]
        if all(isinstance(i, int) for i in indexes):
            if sorted(indexes) != list(range(len(items))):
                raise EmbeddingError(
                    f"Embedding model {self.model_id!r} answered {len(texts)} texts with vectors "
                    f"numbered {sorted(indexes)[:10]}; expected 0 to {len(texts) - 1}."
                )
            by_index = dict(zip(indexes, items, strict=True))
            items = [by_index[i] for i in range(len(items))]
        vectors = [_field(item, "embedding") for item in items]
        return matrix_from_vectors(vectors, len(texts), self.model_id)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """A ``(len(texts), dim)`` float32 matrix, one request per ``batch_size`` texts."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        parts = [
            self._request(texts[start : start + self.batch_size])
            for start in range(0, len(texts), self.batch_size)
        ]
        if len({part.shape[1] for part in parts}) > 1:
            raise EmbeddingError(
                f"Embedding model {self.model_id!r} returned vectors of different sizes across "
                f"batches ({sorted({part.shape[1] for part in parts})})."
            )
        return np.concatenate(parts)

    def embed_query(self, text: str) -> np.ndarray:
        """One query's ``(dim,)`` vector."""
        return self._request([text])[0]
