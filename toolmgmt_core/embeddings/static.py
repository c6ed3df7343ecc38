"""A static (model2vec) model: a token-vector lookup, numpy at run time, no torch:
``pip install "toolmgmt[embeddings-static]"``."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolmgmt_core.embeddings.base import matrix_from_vectors
from toolmgmt_core.errors import EmbeddingError

__all__ = ["StaticEmbedder"]


class StaticEmbedder:
    """Embeddings from a static (model2vec) model: a token-vector lookup, no torch at run time.

    Much lighter than a transformer: ``pip install "toolmgmt[embeddings-static]"`` brings
    numpy, tokenizers and safetensors only, embeds a thousand tools in a tenth of a second and a
    query in well under a millisecond. All-MiniLM-L6-v2 distilled to 256 dimensions ranks worse
    than MiniLM itself, but fused with BM25 it still lifts R@1 on the BFCL dev split
    (measured with ``bench/retrieval.py`` given such a model). Make one
    offline from a local sentence-transformers folder with ``model2vec.distill`` (needs
    ``model2vec[distill]`` once), or use a published one.

    Args:
        model: a local model2vec folder, a cached hub name, or a loaded ``StaticModel``.
        model_id: the cache key; defaults to the folder or name.

    Usage::

        from model2vec.distill import distill  # once, offline: pip install "model2vec[distill]"
        distill("path/to/all-MiniLM-L6-v2", pca_dims=256).save_pretrained("minilm-static")
        catalog = ToolCatalog(embedder=StaticEmbedder("minilm-static"))
    """

    def __init__(self, model: Any, *, model_id: str | None = None) -> None:
        self._model = None if isinstance(model, str | Path) else model
        self._source = str(model) if isinstance(model, str | Path) else None
        self.model_id = f"static:{model_id or self._source or type(model).__name__}"
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from model2vec import StaticModel
                except ImportError as exc:
                    raise ImportError(
                        'StaticEmbedder needs model2vec: pip install "toolmgmt[embeddings-static]"'
                    ) from exc
                try:
                    source = str(self._source)
                    # A local folder loads as is; a hub name must not be fetched again each time.
                    options: dict[str, Any] = (
                        {} if Path(source).is_dir() else {"force_download": False}
                    )
                    self._model = StaticModel.from_pretrained(source, **options)
                except Exception as exc:
                    raise EmbeddingError(
                        f"Could not load the static model {self._source!r}: "
                        f"{type(exc).__name__}: {exc}. Pass a folder holding a model2vec model "
                        "(config.json, model.safetensors, tokenizer.json)."
                    ) from exc
            return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        vectors = self._load().encode(texts, show_progress_bar=False, use_multiprocessing=False)
        return matrix_from_vectors(vectors, len(texts), self.model_id)

    def embed_query(self, text: str) -> np.ndarray:
        """One query's vector."""
        return self.embed([text])[0]
