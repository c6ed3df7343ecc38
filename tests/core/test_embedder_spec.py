"""An embedder named by a string (the gateway's ``[search] embedder``): by kind or by
``module:attribute``, nothing loaded until used, and errors that list the forms."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolmgmt_core._embeddings import (
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    StaticEmbedder,
    embedder_from_spec,
)
from toolmgmt_core._model.errors import ConfigError


def make_embedder() -> object:
    """A factory a spec may name."""
    from support.embedders import HashingEmbedder

    return HashingEmbedder(32)


NOT_AN_EMBEDDER = object()


def _failing() -> object:
    raise RuntimeError("no model here")


def test_kinds_name_the_backends_without_loading_a_model(tmp_path: Path) -> None:
    (tmp_path / "model").mkdir()
    onnx = embedder_from_spec("onnx:model", base=tmp_path)
    assert isinstance(onnx, OnnxEmbedder) and onnx.path == (tmp_path / "model").resolve()
    assert isinstance(embedder_from_spec("static:some/model"), StaticEmbedder)
    spec = "sentence-transformers:some/model"
    assert isinstance(embedder_from_spec(spec), SentenceTransformerEmbedder)


def test_a_module_attribute_names_an_embedder_a_class_or_a_factory() -> None:
    assert embedder_from_spec("support.embedders:HashingEmbedder").model_id == "hashing-256"
    made = embedder_from_spec(f"{__name__}:make_embedder")
    assert made.model_id == "hashing-32" and made.embed(["a"]).shape == (1, 32)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("minilm", "onnx:<folder>, static:<model>"),
        ("onnx:", "names no model"),
        ("not a module:x", "neither a kind"),
        ("no_such_module_here:x", "cannot import module 'no_such_module_here'"),
        ("support.embedders:Missing", "has no attribute 'Missing'"),
        (f"{__name__}:_failing", "calling _failing() failed: RuntimeError: no model here"),
        (f"{__name__}:NOT_AN_EMBEDDER", "not an Embedder"),
    ],
)
def test_a_bad_spec_says_which_forms_are_valid(spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        embedder_from_spec(spec)
    assert message in str(caught.value)
