"""Search over the catalog: tokenising, the BM25 index, and (optionally) fusion with embeddings."""

from __future__ import annotations

from toolmgmt_core.search.index import BM25Index, tool_terms
from toolmgmt_core.search.tokenize import split_identifier, stem, tokenize

__all__ = ["BM25Index", "split_identifier", "stem", "tokenize", "tool_terms"]
