"""Search over the catalog: tokenising, the BM25 index and its match features, query splitting,
rank fusion, names."""

from __future__ import annotations

from toolmgmt_core._search.bm25 import BM25Matrix
from toolmgmt_core._search.engine import SearchEngine
from toolmgmt_core._search.fusion import RRF_K, Ranking, cover_rankings, fuse_rankings
from toolmgmt_core._search.fuzzy import NameMatcher, fold_name
from toolmgmt_core._search.index import FIELD_WEIGHTS, BM25Index, tool_terms
from toolmgmt_core._search.match import MATCH_FEATURES, MATCH_WEIGHTS, MatchIndex
from toolmgmt_core._search.params import SearchRequest
from toolmgmt_core._search.query import (
    CLAUSE_CONTEXT_WEIGHT,
    MAX_CLAUSES,
    MIN_CLAUSE_TERMS,
    split_query,
)
from toolmgmt_core._search.tokenize import STOPWORDS, split_identifier, stem, tokenize

__all__ = [
    "CLAUSE_CONTEXT_WEIGHT",
    "FIELD_WEIGHTS",
    "MATCH_FEATURES",
    "MATCH_WEIGHTS",
    "MAX_CLAUSES",
    "MIN_CLAUSE_TERMS",
    "RRF_K",
    "STOPWORDS",
    "BM25Index",
    "BM25Matrix",
    "MatchIndex",
    "NameMatcher",
    "Ranking",
    "SearchEngine",
    "SearchRequest",
    "cover_rankings",
    "fold_name",
    "fuse_rankings",
    "split_identifier",
    "split_query",
    "stem",
    "tokenize",
    "tool_terms",
]
