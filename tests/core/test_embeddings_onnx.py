"""OnnxEmbedder over a tiny ONNX model and tokenizer built in the test (no download, no torch).

The model is a lookup: each token id's row of a small table (plus a token-type row when the
graph declares ``token_type_ids``) is its "hidden state", so the expected sentence vectors are
plain numpy mean (or CLS) pooling over the same table.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from toolmgmt_core import Tool, ToolCatalog  # noqa: E402
from toolmgmt_core._embeddings import (  # noqa: E402
    Embedder,
    EmbeddingCache,
    OnnxEmbedder,
    embed_with_cache,
)
from toolmgmt_core._model.errors import EmbeddingError  # noqa: E402

WORDS = [
    "[PAD]", "[UNK]", "send", "email", "mail", "message", "charge", "payment", "card",
    "refund", "money", "back", "a", "an", "the", "query",
]  # fmt: skip
"""The vocabulary; a word's id is its index."""

DIM = 8
TABLE = np.random.default_rng(7).normal(size=(len(WORDS), DIM)).astype(np.float32)
"""Each token's vector. The padding row is not zero: a pad token counted would show."""
# Topic structure, so that a catalog search over these vectors means something.
TABLE[WORDS.index("mail")] = TABLE[WORDS.index("email")] + 0.05
TABLE[WORDS.index("refund")] = TABLE[WORDS.index("money")] + TABLE[WORDS.index("back")]
TYPE_ROW = np.linspace(-0.5, 0.5, DIM, dtype=np.float32)
"""The token-type-0 row, added to every token when the graph takes ``token_type_ids``."""


def _write_model(
    path: Path, inputs: tuple[str, ...] = ("input_ids", "attention_mask", "token_type_ids")
) -> Path:
    """A lookup model taking exactly ``inputs``; the ones besides input_ids shape the graph
    (attention_mask is used in a way that changes no value), so onnxruntime keeps them."""
    declared = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
        for name in inputs
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, ["batch", "tokens", DIM]
    )
    initializers = [numpy_helper.from_array(TABLE, "table")]
    nodes = [helper.make_node("Gather", ["table", "input_ids"], ["tokens"], axis=0)]
    last = "tokens"
    if "token_type_ids" in inputs:
        types = np.stack([TYPE_ROW, -TYPE_ROW])
        initializers.append(numpy_helper.from_array(types, "type_table"))
        nodes += [
            helper.make_node("Gather", ["type_table", "token_type_ids"], ["types"], axis=0),
            helper.make_node("Add", [last, "types"], ["with_types"]),
        ]
        last = "with_types"
    for extra in [n for n in inputs if n not in ("input_ids", "token_type_ids")]:
        initializers += [
            numpy_helper.from_array(np.array(0.0, dtype=np.float32), f"{extra}_zero"),
            numpy_helper.from_array(np.array([-1], dtype=np.int64), f"{extra}_axis"),
        ]
        nodes += [
            helper.make_node("Cast", [extra], [f"{extra}_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [f"{extra}_f", f"{extra}_zero"], [f"{extra}_0"]),
            helper.make_node("Unsqueeze", [f"{extra}_0", f"{extra}_axis"], [f"{extra}_u"]),
            helper.make_node("Add", [last, f"{extra}_u"], [f"{last}_{extra}"]),
        ]
        last = f"{last}_{extra}"
    nodes.append(helper.make_node("Identity", [last], ["last_hidden_state"]))
    graph = helper.make_graph(nodes, "lookup", declared, [output], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def _write_tokenizer(folder: Path) -> None:
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.normalizers import Lowercase
    from tokenizers.pre_tokenizers import Whitespace

    tokenizer = Tokenizer(WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tokenizer.normalizer = Lowercase()
    tokenizer.pre_tokenizer = Whitespace()
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]", length=12)  # as MiniLM's file has
    tokenizer.save(str(folder / "tokenizer.json"))


def _write_modules(folder: Path, *modules: tuple[str, str]) -> None:
    """A sentence-transformers ``modules.json`` listing ``(path, module type)`` pairs."""
    listed = [
        {"idx": i, "name": str(i), "path": path, "type": f"sentence_transformers.models.{kind}"}
        for i, (path, kind) in enumerate(modules)
    ]
    (folder / "modules.json").write_text(json.dumps(listed))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    out = tmp_path / "tiny-onnx"
    _write_model(out / "model.onnx")
    _write_tokenizer(out)
    return out


def expected(
    text: str, *, types: bool = True, pooling: str = "mean", limit: int = 99
) -> np.ndarray:
    """The reference vector: numpy pooling over the table rows of the text's words."""
    ids = [WORDS.index(w) if w in WORDS else WORDS.index("[UNK]") for w in text.split()][:limit]
    rows = TABLE[ids] + (TYPE_ROW if types else 0.0)
    vector = rows[0] if pooling == "cls" else rows.mean(axis=0)
    return vector / np.linalg.norm(vector)


TEXTS = ["send an email", "charge the card", "refund", "send a mail message to the payment card"]


def test_vectors_are_the_mean_pooled_unit_rows_of_the_model(folder: Path) -> None:
    embedder = OnnxEmbedder(folder)
    assert isinstance(embedder, Embedder)
    matrix = embedder.embed(TEXTS)
    assert matrix.shape == (len(TEXTS), DIM)
    assert matrix.dtype == np.float32
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-6)
    for row, text in zip(matrix, TEXTS, strict=True):
        assert np.allclose(row, expected(text), atol=1e-6), text
    assert embedder.embed([]).shape[0] == 0


def test_padding_never_changes_a_text_vector(folder: Path) -> None:
    # One long text pads the others in its batch; small batches mix lengths differently.
    embedder = OnnxEmbedder(folder, batch_size=2)
    together = embedder.embed(TEXTS)
    for row, text in zip(together, TEXTS, strict=True):
        assert np.allclose(row, embedder.embed([text])[0], atol=1e-6), text
    assert np.allclose(OnnxEmbedder(folder, batch_size=64).embed(TEXTS), together, atol=1e-6)


def test_queries_get_the_prompt(folder: Path) -> None:
    embedder = OnnxEmbedder(folder, query_prompt="query ")
    assert np.allclose(embedder.embed_query("send an email"), expected("query send an email"))
    both = embedder.embed_queries(["refund", "charge the card"])
    assert np.allclose(both[0], expected("query refund"), atol=1e-6)
    assert np.allclose(both[1], expected("query charge the card"), atol=1e-6)
    # Tools are embedded without it.
    assert np.allclose(embedder.embed(["refund"])[0], expected("refund"), atol=1e-6)


def test_only_the_inputs_the_graph_declares_are_fed(tmp_path: Path) -> None:
    # onnxruntime refuses a feed that names an input the graph lacks, so each model only runs
    # when the embedder feeds exactly what it declares.
    for inputs in [
        ("input_ids",),
        ("input_ids", "attention_mask"),
        ("input_ids", "token_type_ids"),
    ]:
        folder = tmp_path / "-".join(inputs)
        _write_model(folder / "model.onnx", inputs)
        _write_tokenizer(folder)
        row = OnnxEmbedder(folder).embed(["charge the card"])[0]
        assert np.allclose(row, expected("charge the card", types="token_type_ids" in inputs))


def test_an_input_it_cannot_feed_is_named(tmp_path: Path) -> None:
    _write_model(tmp_path / "model.onnx", ("input_ids", "position_ids"))
    _write_tokenizer(tmp_path)
    with pytest.raises(EmbeddingError, match="wants an input 'position_ids'"):
        OnnxEmbedder(tmp_path).embed(["send"])


def test_cls_pooling_and_the_token_limit_come_from_the_sentence_transformers_files(
    folder: Path,
) -> None:
    _write_modules(
        folder, ("", "Transformer"), ("1_Pooling", "Pooling"), ("2_Normalize", "Normalize")
    )
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(
        json.dumps({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False})
    )
    row = OnnxEmbedder(folder).embed(["email charge card"])[0]
    assert np.allclose(row, expected("email charge card", pooling="cls"), atol=1e-6)

    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode": "mean"}))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 2}))
    text = "send email charge payment card"
    assert np.allclose(OnnxEmbedder(folder).embed([text])[0], expected(text, limit=2), atol=1e-6)
    limited = OnnxEmbedder(folder, max_length=3)
    assert np.allclose(limited.embed([text])[0], expected(text, limit=3), atol=1e-6)
    assert limited.model_id != OnnxEmbedder(folder).model_id  # other vectors, other cache key


def test_models_it_cannot_reproduce_are_refused_clearly(folder: Path) -> None:
    _write_modules(folder, ("", "Transformer"), ("1_Pooling", "Pooling"), ("2_Dense", "Dense"))
    with pytest.raises(EmbeddingError, match=r"modules \['Dense'\].*SentenceTransformerEmbedder"):
        OnnxEmbedder(folder).embed(["send"])
    _write_modules(folder, ("1_Pooling", "Pooling"))
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode": "lasttoken"}))
    with pytest.raises(EmbeddingError, match="pooling 'lasttoken'.*'mean', 'cls' and 'max'"):
        OnnxEmbedder(folder).embed(["send"])


def test_missing_files_are_clear_errors(folder: Path, tmp_path: Path) -> None:
    with pytest.raises(EmbeddingError, match="No ONNX model folder at .*export_onnx"):
        OnnxEmbedder(tmp_path / "nowhere").embed(["send"])

    (folder / "model.onnx").rename(folder / "model_qint8.onnx")
    with pytest.raises(EmbeddingError) as caught:
        OnnxEmbedder(folder).embed(["send"])
    message = str(caught.value)
    assert "looked for model.onnx, onnx/model.onnx" in message
    assert "model_qint8.onnx (pass one as model_file=)" in message
    with pytest.raises(EmbeddingError, match="looked for other.onnx"):
        OnnxEmbedder(folder, model_file="other.onnx").embed(["send"])

    (folder / "tokenizer.json").unlink()
    with pytest.raises(EmbeddingError, match="No tokenizer.json in"):
        OnnxEmbedder(folder, model_file="model_qint8.onnx").embed(["send"])


def test_a_hugging_face_snapshot_with_onnx_model_is_found(tmp_path: Path) -> None:
    _write_model(tmp_path / "onnx" / "model.onnx")
    _write_tokenizer(tmp_path)
    embedder = OnnxEmbedder(tmp_path)
    assert embedder.model_id == f"onnx:{tmp_path}/onnx/model.onnx"
    assert np.allclose(embedder.embed(["send an email"])[0], expected("send an email"))


def test_model_id_tells_the_model_files_of_one_folder_apart(folder: Path) -> None:
    _write_model(folder / "model_qint8.onnx")
    fp32 = OnnxEmbedder(folder)
    int8 = OnnxEmbedder(folder, model_file="model_qint8.onnx")
    assert fp32.model_id == f"onnx:{folder}/model.onnx"
    assert int8.model_id == f"onnx:{folder}/model_qint8.onnx"
    assert OnnxEmbedder(folder, model_id="mine").model_id == "onnx:mine"


def test_a_model_file_outside_the_folder_and_a_relative_folder(
    folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = _write_model(tmp_path / "elsewhere" / "lookup.onnx")
    embedder = OnnxEmbedder(folder, model_file=str(elsewhere))
    assert embedder.model_id == f"onnx:{folder}/{elsewhere}"
    assert np.allclose(embedder.embed(["refund"])[0], expected("refund"), atol=1e-6)
    # The cache key names the folder itself, not the path as typed from some directory.
    monkeypatch.chdir(folder.parent)
    assert OnnxEmbedder(folder.name).model_id == OnnxEmbedder(folder).model_id


def test_in_a_catalog_with_the_cache(folder: Path, tmp_path: Path) -> None:
    tools = [
        Tool("send_email", "Send an email message.", domain="email"),
        Tool("refund_charge", "Refund a card charge.", domain="payments"),
        Tool("list_files", "List files in a folder.", domain="files"),
    ]
    path = tmp_path / "vectors.sqlite"
    embedder = OnnxEmbedder(folder)
    catalog = ToolCatalog(tools, embedder=embedder, embedding_cache=path)
    assert catalog.search("money back")[0].name == "refund_charge"  # no keyword in common
    assert catalog.search("send an email")[0].name == "send_email"
    assert catalog.embedder_error is None
    assert len(EmbeddingCache(path)) == len(tools)

    class Counting(OnnxEmbedder):
        texts = 0

        def embed(self, texts):  # type: ignore[no-untyped-def]
            Counting.texts += len(texts)
            return super().embed(texts)

    again = Counting(folder)
    vectors = embed_with_cache(again, ["send an email", "refund"], cache=EmbeddingCache(path))
    assert Counting.texts == 2  # texts, not tools: nothing cached under these keys yet
    reopened = ToolCatalog(tools, embedder=again, embedding_cache=path)
    reopened.search("charge the card")
    assert Counting.texts == 2 + 1  # only the query: the tools came from the cache
    assert np.allclose(vectors[0], expected("send an email"), atol=1e-6)


def test_a_missing_model_in_a_catalog_falls_back_to_bm25(tmp_path: Path) -> None:
    catalog = ToolCatalog(
        [Tool("send_email", "Send an email message.", domain="email")],
        embedder=OnnxEmbedder(tmp_path / "nowhere"),
    )
    with pytest.warns(RuntimeWarning, match="search uses BM25 alone"):
        assert catalog.search("send email")[0].name == "send_email"
    assert "No ONNX model folder" in (catalog.embedder_error or "")
