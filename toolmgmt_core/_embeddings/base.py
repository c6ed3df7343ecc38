"""What every embedder is: the :class:`Embedder` protocol, and the checks and scaling of the
vectors it returns."""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from toolmgmt_core._model.errors import EmbeddingError

__all__ = ["Embedder", "LazyModel", "PromptedQueries", "matrix_from_vectors", "normalize_rows"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors. ``model_id`` names the model (it keys the cache)."""

    model_id: str

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """A ``(len(texts), dim)`` float matrix, one row per text."""
        ...


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), as float32."""
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


def matrix_from_vectors(vectors: Any, count: int, model_id: str) -> np.ndarray:
    """A model's answer (a list of vectors) as a ``(count, dim)`` float32 matrix, checked.

    For embedders wrapping a remote or foreign model, whose answer may not be one vector per text.

    Raises:
        EmbeddingError: vectors of different lengths, not numbers, empty, or not ``count`` of them.
    """
    try:
        matrix = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(
            f"Embedding model {model_id!r} returned vectors of different lengths or that are "
            f"not numbers ({exc})."
        ) from exc
    if matrix.ndim != 2 or matrix.shape[0] != count or (count and matrix.shape[1] == 0):
        got = f"{matrix.shape[0]} vectors" if matrix.ndim == 2 else f"shape {matrix.shape}"
        raise EmbeddingError(
            f"Embedding model {model_id!r} returned {got} for {count} texts; expected one "
            "non-empty vector per text."
        )
    return matrix


class PromptedQueries(abc.ABC):
    """The query side of an embedder whose model may expect a prefix on queries (a base class:
    the embedder provides :meth:`embed`)."""

    query_prompt: str
    """Prepended to every query (``""``: none)."""

    @abc.abstractmethod
    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """One vector per text (documents and prompted queries alike)."""

    def embed_query(self, text: str) -> np.ndarray:
        """One query's vector (with ``query_prompt`` prepended)."""
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Several queries' vectors in one batch (with ``query_prompt`` prepended)."""
        return self.embed([self.query_prompt + text for text in texts])


class LazyModel:
    """The model of an embedder: an object given loaded, or a folder or name (:attr:`source`)
    that ``load`` turns into one on first use, once, under a lock (several threads may embed)."""

    def __init__(self, model: Any, load: Callable[[str], Any]) -> None:
        self.source: str | None = str(model) if isinstance(model, str | Path) else None
        """The folder or name to load from (None: the model was given loaded)."""
        self._model = None if self.source is not None else model
        self._load = load
        self._lock = threading.Lock()

    def get(self) -> Any:
        """The model, loaded now if it was not yet."""
        with self._lock:
            if self._model is None:
                assert self.source is not None
                self._model = self._load(self.source)
            return self._model
