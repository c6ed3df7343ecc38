"""An embedder named by a string, as a configuration file names one (the gateway's ``[search]
embedder``)::

    onnx:models/minilm-onnx                 # OnnxEmbedder(folder)
    static:minishlab/potion-base-8M         # StaticEmbedder(model name or folder)
    sentence-transformers:models/minilm     # SentenceTransformerEmbedder(model name or folder)
    my_package.search:make_embedder         # any Embedder, or a class or function making one

Nothing is loaded here: each backend loads its model on first use.
"""

from __future__ import annotations

import re
from pathlib import Path

from toolmgmt_core._config.objects import load_object
from toolmgmt_core._embeddings.base import Embedder
from toolmgmt_core._model.errors import ConfigError

__all__ = ["EMBEDDER_KINDS", "check_embedder_spec", "embedder_from_spec"]

EMBEDDER_KINDS = ("onnx", "sentence-transformers", "static")
"""The backends a spec can name by kind (``<kind>:<model>``)."""

_MODULE = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")
_FORMS = (
    "onnx:<folder>, static:<model>, sentence-transformers:<model> or "
    "<module>:<attribute> (an Embedder, or a function returning one)"
)


def check_embedder_spec(spec: object, *, base: Path | None = None) -> str:
    """``spec`` checked (without importing anything), a relative model folder made absolute
    against ``base`` (a configuration file's folder) when it exists there.

    Raises:
        ConfigError: not one of the forms; the message lists them.
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise ConfigError(f"an embedder is named {_FORMS}; got {spec!r}.")
    kind, _, rest = spec.partition(":")
    if not rest:
        raise ConfigError(f"{spec!r} names no model: write {_FORMS}.")
    if kind in EMBEDDER_KINDS:
        folder = Path(rest).expanduser()
        if base is not None and not folder.is_absolute() and (base / folder).exists():
            return f"{kind}:{(base / folder).resolve()}"
        return spec
    if not _MODULE.fullmatch(kind) or not _MODULE.fullmatch(rest):
        raise ConfigError(
            f"{spec!r}: {kind!r} is neither a kind ({', '.join(EMBEDDER_KINDS)}) nor a "
            f"<module>:<attribute>; write {_FORMS}."
        )
    return spec


def embedder_from_spec(spec: str, *, base: Path | None = None) -> Embedder:
    """The embedder ``spec`` names (see the module docstring).

    Raises:
        ConfigError: a bad spec, a module or attribute that cannot be imported, a factory that
            failed, or an object without ``embed`` and ``model_id``.
    """
    spec = check_embedder_spec(spec, base=base)
    kind, _, rest = spec.partition(":")
    if kind == "onnx":
        from toolmgmt_core._embeddings.onnx_runtime import OnnxEmbedder

        return OnnxEmbedder(rest)
    if kind == "static":
        from toolmgmt_core._embeddings.static import StaticEmbedder

        return StaticEmbedder(rest)
    if kind == "sentence-transformers":
        from toolmgmt_core._embeddings.sentence_transformer import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(rest)
    target = load_object(
        spec,
        ConfigError,
        factory=lambda found: (
            isinstance(found, type) or (callable(found) and not hasattr(found, "embed"))
        ),
    )
    if not (
        callable(getattr(target, "embed", None))
        and isinstance(getattr(target, "model_id", None), str)
    ):
        raise ConfigError(
            f"embedder {spec!r} is a {type(target).__name__}, not an Embedder (an object with "
            "embed(texts) and a model_id)."
        )
    return target  # type: ignore[no-any-return]
