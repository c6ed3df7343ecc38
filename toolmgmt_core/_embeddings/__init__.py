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
- adapters add ``toolmgmt_langchain.LangChainEmbedder`` (any LangChain ``Embeddings``) and
  ``toolmgmt_litellm.LiteLLMEmbedder`` (hosted models through ``litellm.embedding``).

One module per backend (:mod:`.sentence_transformer`, :mod:`.static`, :mod:`.onnx_runtime`), each
importing its library only when a model is loaded; :mod:`.base` holds the protocol,
:mod:`.cache` the vectors kept across runs (:class:`EmbeddingCache`, an SQLite file keyed by the
model and the exact tool text), and :mod:`.named` an embedder named by a string
(:func:`embedder_from_spec`: ``onnx:<folder>``, ``module:attribute``...).
"""

from __future__ import annotations

from toolmgmt_core._embeddings.base import (
    Embedder,
    PromptedQueries,
    matrix_from_vectors,
    normalize_rows,
)
from toolmgmt_core._embeddings.cache import EmbeddingCache, VectorCache, embed_with_cache, text_key
from toolmgmt_core._embeddings.named import EMBEDDER_KINDS, check_embedder_spec, embedder_from_spec
from toolmgmt_core._embeddings.onnx_runtime import OnnxEmbedder, export_onnx
from toolmgmt_core._embeddings.sentence_transformer import SentenceTransformerEmbedder
from toolmgmt_core._embeddings.static import StaticEmbedder

__all__ = [
    "EMBEDDER_KINDS",
    "Embedder",
    "EmbeddingCache",
    "OnnxEmbedder",
    "PromptedQueries",
    "SentenceTransformerEmbedder",
    "StaticEmbedder",
    "VectorCache",
    "check_embedder_spec",
    "embed_with_cache",
    "embedder_from_spec",
    "export_onnx",
    "matrix_from_vectors",
    "normalize_rows",
    "text_key",
]
