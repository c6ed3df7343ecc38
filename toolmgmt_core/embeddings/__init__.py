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
importing its library only when a model is loaded; :mod:`.base` holds the protocol and
:mod:`.cache` the vectors kept across runs (:class:`EmbeddingCache`, an SQLite file keyed by the
model and the exact tool text).
"""

from __future__ import annotations

from toolmgmt_core.embeddings.base import (
    Embedder,
    PromptedQueries,
    matrix_from_vectors,
    normalize_rows,
)
from toolmgmt_core.embeddings.cache import EmbeddingCache, VectorCache, embed_with_cache, text_key
from toolmgmt_core.embeddings.onnx_runtime import OnnxEmbedder, export_onnx
from toolmgmt_core.embeddings.sentence_transformer import SentenceTransformerEmbedder
from toolmgmt_core.embeddings.static import StaticEmbedder

__all__ = [
    "Embedder",
    "EmbeddingCache",
    "OnnxEmbedder",
    "PromptedQueries",
    "SentenceTransformerEmbedder",
    "StaticEmbedder",
    "VectorCache",
    "embed_with_cache",
    "export_onnx",
    "matrix_from_vectors",
    "normalize_rows",
    "text_key",
]
