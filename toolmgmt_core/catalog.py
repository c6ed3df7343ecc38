"""``ToolCatalog``: every tool an agent could use, organised domain -> group -> tool."""

from __future__ import annotations

import logging
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import regex

from toolmgmt_core.control import reraise_control_flow
from toolmgmt_core.embeddings import Embedder, EmbeddingCache, VectorCache
from toolmgmt_core.errors import (
    BrowseError,
    CatalogError,
    DuplicateToolError,
    SearchError,
    UnknownToolError,
)
from toolmgmt_core.names import fold_name
from toolmgmt_core.schema import tool_from_dict
from toolmgmt_core.search.fusion import Ranking, cover_rankings, fuse_rankings
from toolmgmt_core.search.hybrid import FusionWeights, VectorIndex, fuse_scores
from toolmgmt_core.search.index import BM25Index
from toolmgmt_core.search.query import CLAUSE_CONTEXT_WEIGHT, split_query
from toolmgmt_core.tokens import DEFAULT_ENCODING, definition_tokens
from toolmgmt_core.tool import Tool

__all__ = [
    "MAX_REGEX_LENGTH",
    "DomainSummary",
    "IngestReport",
    "SearchHit",
    "ToolCatalog",
    "ToolEntry",
    "normalize_name",
]

logger = logging.getLogger("toolmgmt.catalog")

MAX_REGEX_LENGTH = 200
"""Longest regex pattern ``search_regex`` accepts."""

REGEX_TIME_LIMIT = 0.25
"""Seconds a regex search may take over the whole catalog before it is stopped."""

ToolFilter = Callable[[Tool], bool]


normalize_name = fold_name
"""A name folded for forgiving lookup: :func:`toolmgmt_core.names.fold_name`, the one rule for
lookups, registration, policy and suggestions alike."""


@dataclass(frozen=True)
class ToolEntry:
    """A tool in a listing: what browsing shows."""

    name: str
    """The tool's name."""
    domain: str
    """Its domain."""
    group: str
    """Its group within the domain."""
    description: str
    """The first sentence of its description."""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "group": self.group, "description": self.description}


@dataclass(frozen=True)
class SearchHit(ToolEntry):
    """A tool found by a search, with its score (higher is better)."""

    score: float = 0.0
    """Relevance; comparable within one search only."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "domain": self.domain,
            "group": self.group,
            "description": self.description,
            "score": round(self.score, 3),
        }


@dataclass(frozen=True)
class DomainSummary:
    """A domain in the table of contents."""

    name: str
    """The domain's name."""
    tool_count: int
    """How many (visible) tools it holds."""
    groups: tuple[str, ...]
    """Its groups, sorted."""

    def to_dict(self) -> dict[str, Any]:
        return {"domain": self.name, "tools": self.tool_count, "groups": list(self.groups)}


@dataclass
class IngestReport:
    """What a batch ingestion added and what it skipped (with the reason)."""

    added: list[str] = field(default_factory=list)
    """Names of the tools added."""
    skipped: list[tuple[str, str]] = field(default_factory=list)
    """(name or position, reason) for each definition left out."""

    def __bool__(self) -> bool:
        return bool(self.added)


class ToolCatalog:
    """A catalog of tools with search and browsing.

    Usage::

        catalog = ToolCatalog()
        catalog.add_function(send_email, domain="email", group="messages")
        catalog.add_schemas(openai_tools, domain="crm")
        catalog.search("email the itinerary")
        catalog.browse("email")

    The search index is built lazily on the first search after a change, so adding thousands
    of tools one by one costs one build, not thousands.
    """

    def __init__(
        self,
        tools: Iterable[Tool] = (),
        *,
        encoding: str = DEFAULT_ENCODING,
        embedder: Embedder | None = None,
        embedding_cache: str | Path | VectorCache | None = None,
        fusion: FusionWeights | None = None,
    ) -> None:
        """
        Args:
            tools: tools to start with.
            encoding: the tokenizer for token counts.
            embedder: an :class:`~toolmgmt_core.embeddings.Embedder`; when set, ``search``
                fuses BM25 with embedding similarity (see :class:`FusionWeights`). Without it
                nothing changes and nothing heavy is imported.
            embedding_cache: an SQLite file (or a :class:`~toolmgmt_core.embeddings.VectorCache`
                such as ``PostgresEmbeddingCache``, shared by replicas) keeping tool vectors
                across runs, keyed by the model and the exact tool text.
            fusion: the fusion weights (defaults chosen on the BFCL dev split).
        """
        self._tools: dict[str, Tool] = {}
        self._folded: dict[str, str] = {}
        self._lock = threading.RLock()
        self._index: BM25Index | None = None
        self._version = 0
        self.encoding = encoding
        if embedder is not None and not isinstance(embedder, Embedder):
            raise CatalogError(
                f"embedder must have a model_id and an embed(texts) method (the Embedder "
                f"protocol), got {type(embedder).__name__}."
            )
        self.embedder = embedder
        if isinstance(embedding_cache, str | Path):
            embedding_cache = EmbeddingCache(Path(embedding_cache).expanduser())
        self.embedding_cache = embedding_cache
        self.fusion = fusion or FusionWeights()
        self.embedder_error: str | None = None
        """Why the embedder last failed (search then uses BM25 alone), or None."""
        self._vectors: tuple[int, VectorIndex] | None = None
        self._embedder_failed_at: int | None = None
        self.add_many(tools)

    # -- contents -------------------------------------------------------------------------

    @property
    def version(self) -> int:
        """Increases on every change; caches key on it."""
        return self._version

    def __len__(self) -> int:
        return len(self._tools)

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def names(self) -> list[str]:
        """Every tool name, in insertion order."""
        return list(self._tools)

    def get(self, name: str) -> Tool:
        """The tool named ``name``.

        Raises:
            UnknownToolError: with the closest names.
        """
        tool = self._tools.get(name)
        if tool is None:
            raise UnknownToolError(name, self.suggest(name))
        return tool

    def find(self, name: str) -> Tool | None:
        """The tool named ``name``, forgiving what :func:`~toolmgmt_core.names.fold_name`
        forgives: case, surrounding space, unicode look-alikes, ``-`` or spaces for ``_``."""
        tool = self._tools.get(name)
        if tool is None and isinstance(name, str):
            real = self._folded.get(fold_name(name))
            tool = self._tools.get(real) if real else None
        return tool

    def _changed(self) -> None:
        self._index = None
        self._version += 1
        self._embedder_failed_at = None

    def _check_new(self, tool: Tool, pending: Mapping[str, Tool] = {}) -> str:
        """Refuse ``tool`` when its name, or its folded name, is taken here or in ``pending``
        (tools about to be added, by folded name); returns its folded name."""
        if not isinstance(tool, Tool):
            raise CatalogError(
                f"Expected a Tool, got {type(tool).__name__}. Use add_function() for a function "
                "or add_schemas() for dict definitions."
            )
        folded = fold_name(tool.name)
        clash = self._tools.get(self._folded.get(folded, "")) or pending.get(folded)
        if clash is None:
            return folded
        if clash.name == tool.name:
            raise DuplicateToolError(
                f"A tool named {tool.name!r} is already in the catalog (domain "
                f"{clash.domain!r}). Tool names must be unique: remove the old one first or "
                "choose another name."
            )
        # Names that fold alike are one name to lookup and policy, so a look-alike of a tool
        # (``Files-Delete`` beside ``files_delete``) could stand in for it: refused.
        raise DuplicateToolError(
            f"Tool name {tool.name!r} is the same name as {clash.name!r} (domain "
            f"{clash.domain!r}) once case, spaces, dashes and unicode look-alikes are ignored, "
            "as lookup and policy ignore them; choose a name that differs in its letters."
        )

    def add(self, tool: Tool) -> Tool:
        """Add one tool.

        Raises:
            DuplicateToolError: the name is taken; the catalog is unchanged.
        """
        with self._lock:
            self._check_new(tool)
            self._tools[tool.name] = tool
            self._folded[fold_name(tool.name)] = tool.name
            self._changed()
        return tool

    def add_many(self, tools: Iterable[Tool]) -> list[Tool]:
        """Add several tools at once: all of them, or (on any error) none."""
        tools = list(tools)
        with self._lock:
            pending: dict[str, Tool] = {}
            for tool in tools:
                pending[self._check_new(tool, pending)] = tool
            if not pending:
                return []
            for tool in tools:
                self._tools[tool.name] = tool
                self._folded[fold_name(tool.name)] = tool.name
            self._changed()
        return tools

    def add_function(self, fn: Callable[..., Any], **fields: Any) -> Tool:
        """Add a Python function as a tool; its schema comes from type hints and docstring.

        ``fields`` sets any :class:`Tool` field (name, domain, group, keywords, ...).
        """
        return self.add(Tool.from_function(fn, **fields))

    def add_schemas(
        self,
        definitions: Iterable[Mapping[str, Any]],
        *,
        on_error: Literal["raise", "skip"] = "raise",
        handlers: Mapping[str, Callable[..., Any]] | None = None,
        **defaults: Any,
    ) -> IngestReport:
        """Add tools from dict definitions in any accepted shape (see :mod:`toolmgmt_core.schema`).

        Args:
            definitions: plain, OpenAI Chat/Responses, Anthropic or MCP tool dicts.
            on_error: ``"raise"`` adds nothing when any definition is bad; ``"skip"`` adds the
                good ones and reports the bad ones in the returned :class:`IngestReport`.
            handlers: handlers by tool name.
            defaults: fields for every tool the dicts do not set (``domain``, ``group``, ...).
        """
        if on_error not in ("raise", "skip"):
            raise CatalogError(f"on_error must be 'raise' or 'skip', got {on_error!r}.")
        report = IngestReport()
        tools: list[Tool] = []
        seen: dict[str, Tool] = {}
        for position, definition in enumerate(definitions):
            label = (
                str(definition.get("name") or (definition.get("function") or {}).get("name"))
                if isinstance(definition, Mapping)
                else f"#{position}"
            )
            try:
                extra = dict(defaults)
                if handlers and label in handlers:
                    extra["handler"] = handlers[label]
                tool = tool_from_dict(definition, **extra)
                folded = self._check_new(tool, seen)
            except CatalogError as exc:
                if on_error == "raise":
                    raise CatalogError(f"Definition #{position} ({label}): {exc}") from exc
                report.skipped.append((label, str(exc)))
                continue
            seen[folded] = tool
            tools.append(tool)
        self.add_many(tools)
        report.added = [t.name for t in tools]
        return report

    def remove(self, name: str) -> Tool:
        """Remove and return the tool named ``name``.

        Raises:
            UnknownToolError: with the closest names.
        """
        with self._lock:
            tool = self.get(name)
            del self._tools[name]
            self._folded.pop(fold_name(name), None)
            self._changed()
        return tool

    def replace(self, tool: Tool) -> Tool:
        """Put ``tool`` in place of the tool of the same name (or add it)."""
        with self._lock:
            if tool.name in self._tools:
                self._tools[tool.name] = tool
                self._changed()
                return tool
            return self.add(tool)

    # -- search ---------------------------------------------------------------------------

    def _get_vectors(self, index: BM25Index) -> VectorIndex | None:
        """Tool vectors for ``index``'s tools (built once per catalog version), or None when
        there is no embedder or it failed (reported once; retried after the catalog changes)."""
        if self.embedder is None:
            return None
        with self._lock:
            version = self._version
            if self._vectors is not None and self._vectors[0] == version:
                return self._vectors[1]
            if self._embedder_failed_at == version:
                return None
            try:
                vectors = VectorIndex.build(index.tools, self.embedder, cache=self.embedding_cache)
            except Exception as exc:  # any embedder failure: keyword search goes on
                reraise_control_flow(exc)
                self._embedder_failed(exc)
                return None
            if self._vectors is not None:  # query vectors do not depend on the tools
                vectors.queries = self._vectors[1].queries
            self._vectors = (version, vectors)
            return vectors

    def _embedder_failed(self, exc: Exception, *, version: int | None | bool = True) -> None:
        first = self.embedder_error is None
        model = getattr(self.embedder, "model_id", type(self.embedder).__name__)
        self.embedder_error = f"{type(exc).__name__}: {exc}"
        if version is True:
            self._embedder_failed_at = self._version
        if first:
            message = (
                f"The embedder {model!r} failed ({self.embedder_error}); search uses BM25 "
                "alone until the catalog changes."
            )
            logger.warning(message)
            warnings.warn(message, RuntimeWarning, stacklevel=4)

    def _get_index(self) -> tuple[BM25Index, list[Tool]]:
        with self._lock:
            if self._index is None:
                self._index = BM25Index.build(list(self._tools.values()))
            return self._index, self._index.tools

    def _mask(
        self,
        index: BM25Index,
        domain: str | None,
        group: str | None,
        where: ToolFilter | None,
    ) -> np.ndarray | None:
        """Which indexed tools a search may return (None: all of them).

        Domain and group masks are cached with the index (so per catalog version). A ``where``
        predicate is called once per in-scope tool on every search, because its answer may
        change while the catalog does not (a policy granting a tool); a predicate that knows
        when it changes may carry a hashable ``cache_key`` attribute, and its mask is then
        cached per (catalog version, domain, group, cache_key).
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

    def _plan(self, query: str | Sequence[str], split: bool) -> tuple[list[str], bool]:
        """The texts to rank for ``query``, and whether the first is the whole request.

        A string is ranked whole and, when it holds several needs, clause by clause as well;
        an explicit list of queries is ranked query by query, as given.
        """
        if isinstance(query, str):
            if not query.strip():
                raise SearchError("The query is empty: give words describing the tool you need.")
            clauses = split_query(query) if split else [query]
            return ([query, *clauses] if len(clauses) > 1 else [query]), True
        if not isinstance(query, Sequence) or not all(isinstance(q, str) for q in query):
            raise SearchError(
                f"The query must be a string or a list of strings, got {type(query).__name__}."
            )
        queries = list(dict.fromkeys(q for q in query if q.strip()))
        if not queries:
            raise SearchError("The query is empty: give words describing the tool you need.")
        return queries, False

    def _rank_queries(
        self,
        index: BM25Index,
        texts: Sequence[str],
        *,
        whole_first: bool,
        depth: int,
        mask: np.ndarray | None,
    ) -> tuple[list[Ranking], bool]:
        """One ranking per text: (tool position, score) pairs, best first; and whether the
        scores are hybrid (BM25 fused with embeddings for every text).

        This is where each query is scored; the caller merges the rankings. With
        ``whole_first``, ``texts[0]`` is the whole request and the others its clauses: a
        clause's scores get :data:`CLAUSE_CONTEXT_WEIGHT` (hybrid: ``FusionWeights.context``)
        times the whole request's, so that a clause like "use the same function again" or
        "for the same day" still leans on what the request is about, and ties between
        near-duplicate tools break towards the context.
        """
        keyword = [index.scores(text) for text in texts]
        vectors = self._get_vectors(index)
        if vectors is not None:
            try:
                cosines = vectors.scores_many(texts)  # the texts embedded in one batch
            except Exception as exc:  # the request is ranked by BM25 alone, consistently
                reraise_control_flow(exc)
                self._embedder_failed(exc, version=None)
            else:
                fused = [
                    fuse_scores(k, c, self.fusion) for k, c in zip(keyword, cosines, strict=True)
                ]
                return self._rank(fused, whole_first, self.fusion.context, depth, mask), True
        return self._rank(keyword, whole_first, CLAUSE_CONTEXT_WEIGHT, depth, mask), False

    @staticmethod
    def _rank(
        scores: Sequence[np.ndarray],
        whole_first: bool,
        context_weight: float,
        depth: int,
        mask: np.ndarray | None,
    ) -> list[Ranking]:
        rankings: list[Ranking] = []
        context: np.ndarray | None = None
        for position, text_scores in enumerate(scores):
            if whole_first and position == 0 and len(scores) > 1:
                context = text_scores * context_weight
            elif context is not None:
                text_scores = text_scores + context
            rankings.append(BM25Index.top(text_scores, depth, mask))
        return rankings

    def search(
        self,
        query: str | Sequence[str],
        limit: int = 5,
        *,
        domain: str | None = None,
        group: str | None = None,
        where: ToolFilter | None = None,
        split: bool = True,
    ) -> list[SearchHit]:
        """Tools matching ``query``, best first.

        Args:
            query: words describing the need, or a list of such queries. A request that
                needs several tools ("book a flight and email the itinerary") is searched
                whole and clause by clause (:func:`~toolmgmt_core.search.split_query`), and
                the rankings merged so that each need is covered near the top; a list of
                queries is searched query by query and merged the same way.
            limit: at most this many hits.
            domain, group: search only there.
            where: only tools for which this returns True (a policy view); see
                :meth:`_mask` for caching it.
            split: set False to search a string as one query, without splitting it.

        Returns:
            Hits whose ``score`` is the best BM25 score the tool got for any part of the
            request (with an embedder, the best fused score: see :class:`FusionWeights`);
            tools without a positive score are left out.

        Raises:
            SearchError: an empty query or a limit below 1.
            BrowseError: an unknown domain or group, listing the valid ones.
        """
        texts, whole_first = self._plan(query, split)
        if not isinstance(limit, int) or limit < 1:
            raise SearchError(f"limit must be a whole number of at least 1, got {limit!r}.")
        index, tools = self._get_index()
        if (domain is not None and domain not in index.domains) or (
            group is not None and not index.has_group(group, domain)
        ):
            self._check_scope(domain, group)  # raises, naming the valid domains or groups
        mask = self._mask(index, domain, group, where)
        rankings, hybrid = self._rank_queries(
            index, texts, whole_first=whole_first, depth=max(2 * limit, 20), mask=mask
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
        return [self._hit(tools[i], score) for i, score in merged]

    def search_regex(
        self,
        pattern: str,
        limit: int = 20,
        *,
        domain: str | None = None,
        group: str | None = None,
        where: ToolFilter | None = None,
    ) -> list[SearchHit]:
        """Tools whose name, description, domain or group match ``pattern`` (case-insensitive).

        Names matching score 2, other fields 1; ties keep catalog order. Each field is matched
        on its own, so ``^`` and ``$`` anchor to the start and end of a name, a description, a
        domain or a group.

        Raises:
            SearchError: the pattern is empty, over 200 characters, does not compile, or takes
                longer than the time limit (a pathological pattern).
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
        self._check_scope(domain, group)
        deadline = time.monotonic() + REGEX_TIME_LIMIT
        hits: list[SearchHit] = []
        for tool in list(self._tools.values()):
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
            hits.append(self._hit(tool, score))
        hits.sort(key=lambda h: -h.score)
        return hits[:limit]

    def suggest(self, name: str, limit: int = 3, *, where: ToolFilter | None = None) -> list[str]:
        """The names closest to ``name`` (for a misspelled tool), best first.

        A trigram shortlist ranked by difflib's ratio (:class:`~toolmgmt_core.search.fuzzy.
        NameMatcher`): a few milliseconds at 10,000 tools. ``where`` limits the names as in
        :meth:`search`.
        """
        index, _ = self._get_index()
        allowed = self._mask(index, None, None, where)
        return index.name_matcher().closest(name, limit, allowed=allowed)

    # -- browse ---------------------------------------------------------------------------

    def _check_scope(self, domain: str | None, group: str | None) -> None:
        tools = list(self._tools.values())
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

    def domains(self, *, where: ToolFilter | None = None) -> list[DomainSummary]:
        """The table of contents: every domain with its tool count and groups."""
        counts: dict[str, int] = {}
        groups: dict[str, set[str]] = {}
        for tool in self._tools.values():
            if where is not None and not where(tool):
                continue
            counts[tool.domain] = counts.get(tool.domain, 0) + 1
            groups.setdefault(tool.domain, set()).add(tool.group)
        return [
            DomainSummary(name, counts[name], tuple(sorted(groups[name])))
            for name in sorted(counts)
        ]

    def browse(
        self,
        domain: str | None = None,
        group: str | None = None,
        *,
        where: ToolFilter | None = None,
    ) -> list[DomainSummary] | list[ToolEntry]:
        """Browse the tree.

        ``browse()`` gives the domains (:class:`DomainSummary`); ``browse(domain)`` its tools;
        ``browse(domain, group)`` the tools of one group (:class:`ToolEntry` each).

        Raises:
            BrowseError: an unknown domain or group, listing the valid ones.
        """
        if domain is None and group is None:
            return self.domains(where=where)
        self._check_scope(domain, group)
        return [
            self._entry(t)
            for t in self._tools.values()
            if (domain is None or t.domain == domain)
            and (group is None or t.group == group)
            and (where is None or where(t))
        ]

    # -- tokens ---------------------------------------------------------------------------

    def definition_tokens(self, tools: Iterable[Tool] | None = None) -> int:
        """Tokens the definitions (name, description, parameters) take when sent flat."""
        return definition_tokens(self._tools.values() if tools is None else tools, self.encoding)

    # -- helpers --------------------------------------------------------------------------

    @staticmethod
    def _entry(tool: Tool) -> ToolEntry:
        return ToolEntry(tool.name, tool.domain, tool.group, tool.summary)

    @staticmethod
    def _hit(tool: Tool, score: float) -> SearchHit:
        return SearchHit(tool.name, tool.domain, tool.group, tool.summary, score)
