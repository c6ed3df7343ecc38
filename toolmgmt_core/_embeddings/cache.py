"""Tool vectors kept across runs: the SQLite :class:`EmbeddingCache`, and
:func:`embed_with_cache`, which embeds only what a cache does not hold.

Vectors are keyed by the model identifier and the SHA-256 of the exact tool text, so reopening a
catalog embeds nothing again and adding one tool embeds one tool. SQLite commits atomically: a
crash mid-write leaves the cache as it was before that batch. Any object with the same
``key``/``get_many``/``put_many`` methods (:class:`VectorCache`) works in its place, such as
``toolmgmt_core._stores.PostgresEmbeddingCache`` shared by replicas.
"""

from __future__ import annotations

import hashlib
import sqlite3
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from toolmgmt_core._embeddings.base import Embedder, normalize_rows

__all__ = ["EmbeddingCache", "VectorCache", "embed_with_cache", "text_key"]


def text_key(text: str) -> str:
    """The cache key of ``text``: the SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@runtime_checkable
class VectorCache(Protocol):
    """Where tool vectors are kept, by (model id, :func:`text_key` of the text)."""

    def get_many(self, model_id: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``keys``."""
        ...

    def put_many(self, model_id: str, items: dict[str, np.ndarray]) -> None:
        """Store vectors (all of them or none)."""
        ...


class EmbeddingCache:
    """Tool vectors on disk, keyed by (model id, SHA-256 of the text). Safe across crashes."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        with self._connect() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, key TEXT NOT NULL, "
                "dim INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (model, key))"
            )

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        return conn

    key = staticmethod(text_key)
    """The cache key of a text (:func:`text_key`)."""

    def get_many(self, model_id: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """The cached vectors among ``keys``."""
        found: dict[str, np.ndarray] = {}
        with self._lock, self._connect() as conn:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                marks = ",".join("?" * len(chunk))
                rows = conn.execute(
                    f"SELECT key, dim, data FROM vectors WHERE model = ? AND key IN ({marks})",
                    [model_id, *chunk],
                )
                for key, dim, data in rows:
                    vector = np.frombuffer(data, dtype=np.float32)
                    if vector.shape == (dim,):
                        found[key] = vector
        return found

    def put_many(self, model_id: str, items: dict[str, np.ndarray]) -> None:
        """Store vectors in one transaction: all of them or none."""
        rows = [
            (model_id, key, int(vec.shape[0]), np.asarray(vec, dtype=np.float32).tobytes())
            for key, vec in items.items()
        ]
        with self._lock, self._connect() as conn:
            conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)

    def __len__(self) -> int:
        with self._lock, self._connect() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])


def embed_with_cache(
    embedder: Embedder,
    texts: Sequence[str],
    *,
    cache: VectorCache | None = None,
    batch_size: int = 256,
    progress: bool | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Unit vectors for ``texts``, embedding only those the cache does not hold.

    Texts are embedded in batches of ``batch_size``, each batch written to the cache as soon as
    it is done (so an interrupted run keeps its finished batches). A tqdm progress bar is shown
    on stderr for more than 2,000 missing texts when stderr is a terminal (or when ``progress``).
    """
    keys = [text_key(t) for t in texts]
    known = cache.get_many(embedder.model_id, keys) if cache is not None else {}
    missing = sorted({k: i for i, k in enumerate(keys) if k not in known}.values())
    if missing:
        show = progress if progress is not None else (len(missing) > 2000 and sys.stderr.isatty())
        bar = None
        if show:
            from tqdm import tqdm

            bar = tqdm(total=len(missing), desc="embedding tools", unit="tool", file=sys.stderr)
        try:
            for start in range(0, len(missing), batch_size):
                batch = missing[start : start + batch_size]
                vectors = normalize_rows(embedder.embed([texts[i] for i in batch]))
                fresh = {keys[i]: vectors[n] for n, i in enumerate(batch)}
                if cache is not None:
                    cache.put_many(embedder.model_id, fresh)
                known.update(fresh)
                if bar is not None:
                    bar.update(len(batch))
                if on_batch is not None:
                    on_batch(len(batch))
        finally:
            if bar is not None:
                bar.close()
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    return normalize_rows(np.stack([known[k] for k in keys]))
