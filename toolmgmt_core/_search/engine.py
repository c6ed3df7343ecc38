"""``SearchEngine``: the search side of a :class:`~toolmgmt_core.ToolCatalog`.

The catalog owns the tools; its engine owns everything derived from them for search: the BM25
index (built lazily on the first search after a change), the tool vectors of an optional
embedder (and what to do when it fails), the masks of scoped searches, and the steps of a
search: planning the texts to rank (:meth:`SearchEngine.plan`), ranking each
(:meth:`SearchEngine.rank_queries`) and merging the rankings (:mod:`.fusion`).
"""

from __future__ import annotations

import logging
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import regex

from toolmgmt_core._embeddings import Embedder, EmbeddingCache, VectorCache
from toolmgmt_core._model.errors import BrowseError, CatalogError, SearchError
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._runtime.control import reraise_control_flow
from toolmgmt_core._search.boost import LearnedBoost
from toolmgmt_core._search.fusion import Ranking, cover_rankings, fuse_rankings
from toolmgmt_core._search.hybrid import FusionWeights, VectorIndex, fuse_scores
from toolmgmt_core._search.index import BM25Index
from toolmgmt_core._search.params import Scored, SearchRequest, ToolFilter
from toolmgmt_core._search.query import CLAUSE_CONTEXT_WEIGHT, split_query
from toolmgmt_core._search.request import read_request

__all__ = [
    "MAX_REGEX_LENGTH",
    "REGEX_TIME_LIMIT",
    "SearchEngine",
    "check_scope",
]

logger = logging.getLogger("toolmgmt.catalog")

MAX_REGEX_LENGTH = 200
"""Longest regex pattern ``search_regex`` accepts."""

REGEX_TIME_LIMIT = 0.25
"""Seconds a regex search may take over the whole catalog before it is stopped."""

def check_scope(tools: Iterable[Tool], domain: str | None, group: str | None) -> None:
    """Check that ``domain`` and ``group`` exist among ``tools``.

    Raises:
        BrowseError: an unknown domain or group, listing the valid ones.
    """
    tools = list(tools)
    if domain is not None:
        domains = sorted({t.domain for t in tools})
        if domain not in domains:
            raise BrowseError(
                f"Unknown domain {domain!r}. Valid domains: {', '.join(domains) or '(none)'}."
            )
    if group is not None:
        groups = sorted({t.group for t in tools if domain is None or t.domain == domain})
        if group not in groups:
            where = f" in domain {domain!r}" if domain else ""
            valid = ", ".join(groups) or "(none)"
            raise BrowseError(f"Unknown group {group!r}{where}. Valid groups: {valid}.")


class SearchEngine:
    """Keyword (BM25) search over a catalog's tools, fused with embeddings when there is an
    embedder; regex search; closest names.

    Usage (the catalog does this)::

        engine = SearchEngine(lambda: list(tools.values()), lock=lock)
        engine.search(SearchRequest("refund a payment", 5))   # [(tool, score), ...]
        engine.changed()                       # after the tools change
    """

    def __init__(
        self,
        tools: Callable[[], list[Tool]],
        *,
        lock: threading.RLock | None = None,
        embedder: Embedder | None = None,
        embedding_cache: str | Path | VectorCache | None = None,
        fusion: FusionWeights | None = None,
    ) -> None:
        """
        Args:
            tools: the catalog's tools now, in catalog order (called under ``lock`` when the
                index is rebuilt).
            lock: the catalog's lock, so that an index is never built from a half-made change.
            embedder: an :class:`~toolmgmt_core._embeddings.Embedder`; when set, searches fuse
                BM25 with embedding similarity (see :class:`FusionWeights`).
            embedding_cache: an SQLite file (or a :class:`~toolmgmt_core._embeddings.VectorCache`
                such as ``PostgresEmbeddingCache``, shared by replicas) keeping tool vectors
                across runs.
            fusion: the fusion weights (defaults chosen on the BFCL dev split).

        Raises:
            CatalogError: ``embedder`` does not follow the Embedder protocol.
        """
        if embedder is not None and not isinstance(embedder, Embedder):
            raise CatalogError(
                f"embedder must have a model_id and an embed(texts) method (the Embedder "
                f"protocol), got {type(embedder).__name__}."
            )
        self._tools = tools
        self._lock = lock or threading.RLock()
        self.embedder = embedder
        if isinstance(embedding_cache, str | Path):
            embedding_cache = EmbeddingCache(Path(embedding_cache).expanduser())
        self.embedding_cache: VectorCache | None = embedding_cache
        self.fusion = fusion or FusionWeights()
        self.embedder_error: str | None = None
        """Why the embedder last failed (search then uses BM25 alone), or None."""
        self._generation = 0
        self._index: BM25Index | None = None
        self._vectors: tuple[int, VectorIndex] | None = None
        self._embedder_failed_at: int | None = None
        self.learned: LearnedBoost | None = None
        """What the catalog learned from use, as searches add it (None: learning is off)."""

    # -- state ----------------------------------------------------------------------------

    def changed(self) -> None:
        """The tools changed: drop the index; tool vectors are rebuilt (and a failed embedder
        retried) on the next search."""
        with self._lock:
            self._index = None
            self._generation += 1
            self._embedder_failed_at = None

    def index(self) -> BM25Index:
        """The BM25 index of the tools now (built once per change)."""
        with self._lock:
            if self._index is None:
                self._index = BM25Index.build(self._tools())
            return self._index

    def vectors(self, index: BM25Index) -> VectorIndex | None:
        """Tool vectors for ``index``'s tools (built once per change), or None when there is no
        embedder or it failed (reported once; retried after the tools change)."""
        if self.embedder is None:
            return None
        with self._lock:
            generation = self._generation
            if self._vectors is not None and self._vectors[0] == generation:
                return self._vectors[1]
            if self._embedder_failed_at == generation:
                return None
            try:
                vectors = VectorIndex.build(index.tools, self.embedder, cache=self.embedding_cache)
            except Exception as exc:  # any embedder failure: keyword search goes on
                reraise_control_flow(exc)
                self._embedder_failed(exc)
                return None
            if self._vectors is not None:  # query vectors do not depend on the tools
                vectors.queries = self._vectors[1].queries
            self._vectors = (generation, vectors)
            return vectors

    def _embedder_failed(self, exc: Exception, *, until_changed: bool = True) -> None:
        first = self.embedder_error is None
        model = getattr(self.embedder, "model_id", type(self.embedder).__name__)
        self.embedder_error = f"{type(exc).__name__}: {exc}"
        if until_changed:
            self._embedder_failed_at = self._generation
        if first:
            message = (
                f"The embedder {model!r} failed ({self.embedder_error}); search uses BM25 "
                "alone until the catalog changes."
            )
            logger.warning(message)
            # stack: here, vectors, rank_queries, SearchEngine.search, ToolCatalog.search, caller
            warnings.warn(message, RuntimeWarning, stacklevel=6)

    def mask(
        self,
        index: BM25Index,
        domain: str | None,
        group: str | None,
        where: ToolFilter | None,
    ) -> np.ndarray | None:
        """Which indexed tools a search may return (None: all of them).

        Domain and group masks are cached with the index (so per change). A ``where``
        predicate is called once per in-scope tool on every search, because its answer may
        change while the tools do not (a policy granting a tool); a predicate that knows
        when it changes may carry a hashable ``cache_key`` attribute, and its mask is then
        cached per (index, domain, group, cache_key).
        """
        scope = index.scope_mask(domain, group)
        if where is None:
            return scope
        key: Any = getattr(where, "cache_key", None)
        if key is not None:
            try:
                key = ("where", key, domain, group)
                hash(key)
            except TypeError:
                key = None
        if key is not None:
            cached = index.cached_mask(key)
            if cached is not None:
                return cached
        tools = index.tools
        positions = range(len(tools)) if scope is None else np.flatnonzero(scope).tolist()
        mask = np.zeros(len(tools), dtype=bool)
        mask[[i for i in positions if where(tools[i])]] = True
        return index.remember_mask(key, mask) if key is not None else mask

    # -- keyword and hybrid search -------------------------------------------------------

    @staticmethod
    def plan(query: str | Sequence[str], split: bool) -> tuple[list[str], bool]:
        """The texts to rank for ``query``, and whether the first is the whole request.

        A string is ranked whole and, when it holds several needs, clause by clause as well;
        an explicit list of queries is ranked query by query, as given.

        Raises:
            SearchError: an empty query, or one that is neither a string nor a list of them.
        """
        if isinstance(query, str):
            if not query.strip():
                raise SearchError("The query is empty: give words describing the tool you need.")
            # clauses come from what the user asks now, not from a transcript or its wrapping
            clauses = split_query(read_request(query).focus) if split else [query]
            return ([query, *clauses] if len(clauses) > 1 else [query]), True
        if not isinstance(query, Sequence) or not all(isinstance(q, str) for q in query):
            raise SearchError(
                f"The query must be a string or a list of strings, got {type(query).__name__}."
            )
        queries = list(dict.fromkeys(q for q in query if q.strip()))
        if not queries:
            raise SearchError("The query is empty: give words describing the tool you need.")
        return queries, False

    def rank_queries(
        self,
        index: BM25Index,
        texts: Sequence[str],
        *,
        whole_first: bool,
        depth: int,
        mask: np.ndarray | None,
        learned: bool = True,
    ) -> tuple[list[Ranking], bool]:
        """One ranking per text: (tool position, score) pairs, best first; and whether the
        scores are hybrid (keyword scores fused with embeddings for every text). A text's
        keyword scores are :meth:`BM25Index.match_scores
        <toolmgmt_core._search.index.BM25Index.match_scores>`: BM25 with the match features.

        This is where each query is scored; the caller merges the rankings. With
        ``whole_first``, ``texts[0]`` is the whole request and the others its clauses: a
        clause's scores get :data:`CLAUSE_CONTEXT_WEIGHT` (hybrid: ``FusionWeights.context``)
        times the whole request's, so that a clause like "use the same function again" or
        "for the same day" still leans on what the request is about, and ties between
        near-duplicate tools break towards the context. ``learned``: add the learned field's.
        """
        keyword = [index.match_scores(text, mask) for text in texts]
        boost = self.learned if learned else None
        field = boost.field(index) if boost is not None else None
        vectors = self.vectors(index)
        cosines = None
        if vectors is not None:
            try:
                # the embedder reads each text without its scaffolding, in one batch
                cosines = vectors.scores_many([read_request(t).focus for t in texts])
            except Exception as exc:  # the request is ranked by BM25 alone, consistently
                reraise_control_flow(exc)
                self._embedder_failed(exc, until_changed=False)
        base = None
        if boost is not None and field:
            # which tools each text reaches by their own text, before anything learned is added
            base = boost.relevance(keyword, cosines, self.fusion.floor)
            boost.add_keyword(field, keyword, texts, mask, base)
        if vectors is None or cosines is None:
            return _rank(keyword, whole_first, CLAUSE_CONTEXT_WEIGHT, depth, mask), False
        fused = [fuse_scores(k, c, self.fusion) for k, c in zip(keyword, cosines, strict=True)]
        if boost is not None and base is not None:
            try:
                floor, cache = self.fusion.floor, self.embedding_cache
                boost.add_dense(field, fused, texts, mask, vectors, floor, cache, base)
            except Exception as exc:  # the learned terms' vectors: keyword part only
                reraise_control_flow(exc)
                self._embedder_failed(exc, until_changed=False)
        return _rank(fused, whole_first, self.fusion.context, depth, mask), True

    def search(self, request: SearchRequest) -> Scored:
        """Tools matching ``request``, best first: :meth:`ToolCatalog.search
        <toolmgmt_core._catalog.tool_catalog.ToolCatalog.search>` without the hit records.

        Raises:
            SearchError: an empty query or a limit below 1.
            BrowseError: an unknown domain or group, listing the valid ones.
        """
        limit, domain, group = request.limit, request.domain, request.group
        texts, whole_first = self.plan(request.query, request.split)
        if not isinstance(limit, int) or limit < 1:
            raise SearchError(f"limit must be a whole number of at least 1, got {limit!r}.")
        index = self.index()
        if (domain is not None and domain not in index.domains) or (
            group is not None and not index.has_group(group, domain)
        ):
            check_scope(index.tools, domain, group)  # raises, naming the valid ones
        mask = self.mask(index, domain, group, request.where)
        rankings, hybrid = self.rank_queries(
            index,
            texts,
            whole_first=whole_first,
            depth=max(2 * limit, 20),
            mask=mask,
            learned=request.learned,
        )
        if hybrid:
            merged = cover_rankings(
                rankings,
                limit,
                temperature=self.fusion.temperature,
                saturation=self.fusion.saturation,
            )
        else:
            merged = fuse_rankings(rankings, limit)
        tools = index.tools
        return [(tools[i], score) for i, score in merged]

    # -- regex and names ------------------------------------------------------------------

    def search_regex(
        self,
        pattern: str,
        limit: int = 20,
        *,
        domain: str | None = None,
        group: str | None = None,
        where: ToolFilter | None = None,
    ) -> Scored:
        """Tools whose name, description, domain or group match ``pattern`` (case-insensitive).

        Names matching score 2, other fields 1; ties keep catalog order. Each field is matched
        on its own, so ``^`` and ``$`` anchor to the start and end of a name, a description, a
        domain or a group.

        Raises:
            SearchError: the pattern is empty, over :data:`MAX_REGEX_LENGTH` characters, does
                not compile, or takes longer than :data:`REGEX_TIME_LIMIT` (a pathological
                pattern).
            BrowseError: an unknown domain or group, listing the valid ones.
        """
        if not pattern:
            raise SearchError("The regex pattern is empty.")
        if len(pattern) > MAX_REGEX_LENGTH:
            raise SearchError(
                f"The regex pattern is {len(pattern)} characters; at most {MAX_REGEX_LENGTH} "
                "are allowed. Use a shorter pattern or a keyword search."
            )
        try:
            compiled = regex.compile(pattern, regex.IGNORECASE)
        except regex.error as exc:
            raise SearchError(f"The regex pattern {pattern!r} does not compile: {exc}.") from exc
        tools = self._tools()
        check_scope(tools, domain, group)
        deadline = time.monotonic() + REGEX_TIME_LIMIT
        hits: Scored = []
        for tool in tools:
            if domain is not None and tool.domain != domain:
                continue
            if group is not None and tool.group != group:
                continue
            if where is not None and not where(tool):
                continue
            remaining = deadline - time.monotonic()
            try:
                if remaining <= 0:
                    raise TimeoutError
                if compiled.search(tool.name, timeout=remaining):
                    score = 2.0
                # each field on its own, so that ^ and $ anchor to a field's ends
                elif any(
                    compiled.search(text, timeout=max(deadline - time.monotonic(), 1e-3))
                    for text in (tool.description, tool.domain, tool.group)
                ):
                    score = 1.0
                else:
                    continue
            except TimeoutError as exc:
                raise SearchError(
                    f"The regex pattern {pattern!r} took longer than {REGEX_TIME_LIMIT}s and was "
                    "stopped; simplify it (avoid nested repetition such as (a+)+)."
                ) from exc
            hits.append((tool, score))
        hits.sort(key=lambda hit: -hit[1])
        return hits[:limit]

    def suggest(self, name: str, limit: int = 3, *, where: ToolFilter | None = None) -> list[str]:
        """The names closest to ``name`` (for a misspelled tool), best first.

        A trigram shortlist ranked by difflib's ratio (:class:`~toolmgmt_core._search.fuzzy.
        NameMatcher`): a few milliseconds at 10,000 tools. ``where`` limits the names as in
        :meth:`search`.
        """
        index = self.index()
        allowed = self.mask(index, None, None, where)
        return index.name_matcher().closest(name, limit, allowed=allowed)


def _rank(
    scores: Sequence[np.ndarray],
    whole_first: bool,
    context_weight: float,
    depth: int,
    mask: np.ndarray | None,
) -> list[Ranking]:
    """Each text's ranking; with ``whole_first``, a clause's scores get ``context_weight``
    times the whole request's (the first text's) added."""
    rankings: list[Ranking] = []
    context: np.ndarray | None = None
    for position, text_scores in enumerate(scores):
        if whole_first and position == 0 and len(scores) > 1:
            context = text_scores * context_weight
        elif context is not None:
            text_scores = text_scores + context
        rankings.append(BM25Index.top(text_scores, depth, mask))
    return rankings
