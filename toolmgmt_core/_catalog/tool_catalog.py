"""``ToolCatalog``: every tool an agent could use, organised domain -> group -> tool."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from toolmgmt_core._catalog.entries import DomainSummary, IngestReport, SearchHit, ToolEntry
from toolmgmt_core._catalog.learned_api import CatalogLearning
from toolmgmt_core._catalog.limits import ToolLimits
from toolmgmt_core._catalog.suggestions import safe_suggestions
from toolmgmt_core._embeddings import Embedder, VectorCache
from toolmgmt_core._learning.teaching import LearningOptions
from toolmgmt_core._model.errors import (
    CatalogError,
    DuplicateToolError,
    ToolNotFoundError,
)
from toolmgmt_core._model.names import fold_name, name_forms
from toolmgmt_core._model.schema import tool_from_dict
from toolmgmt_core._model.tokens import DEFAULT_ENCODING, definition_tokens
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._search.engine import (
    MAX_REGEX_LENGTH,
    REGEX_TIME_LIMIT,  # noqa: F401  (importable from here, as before)
    SearchEngine,
    check_scope,
)
from toolmgmt_core._search.hybrid import FusionWeights
from toolmgmt_core._search.params import SearchRequest, ToolFilter

__all__ = [
    "MAX_REGEX_LENGTH",
    "DomainSummary",
    "IngestReport",
    "SearchHit",
    "ToolCatalog",
    "ToolEntry",
    "ToolLimits",
    "normalize_name",
]

normalize_name = fold_name
""":func:`toolmgmt_core._model.names.fold_name`: the one rule for lookup, policy and suggestions."""


class ToolCatalog(CatalogLearning):
    """A catalog of tools with search and browsing (and, when turned on, learning from use:
    :class:`~toolmgmt_core._catalog.learned_api.CatalogLearning`).

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
        limits: ToolLimits | None = None,
        learning: LearningOptions | None = None,
    ) -> None:
        """
        Args:
            tools: tools to start with.
            encoding: the tokenizer for token counts.
            embedder: an :class:`~toolmgmt_core._embeddings.Embedder`; when set, ``search``
                fuses BM25 with embedding similarity (see :class:`FusionWeights`). Without it
                nothing changes and nothing heavy is imported.
            embedding_cache: an SQLite file or a ``VectorCache`` (``PostgresEmbeddingCache``,
                shared by replicas) keeping tool vectors by model and exact tool text.
            fusion: the fusion weights (defaults chosen on the BFCL dev split).
            limits: how large a tool may be (:class:`ToolLimits`; its defaults when None): a
                larger one is refused when added.
            learning: learning from use turned on (``LearningOptions``; see :meth:`learn`).
        """
        self.limits = limits or ToolLimits()
        """How large a tool may be to enter this catalog."""
        self._tools: dict[str, Tool] = {}
        self._folded: dict[str, str] = {}
        self._reached: dict[str, str] = {}  # each of a tool's name_forms -> its name
        self._lock = threading.RLock()
        self._version = 0
        self.encoding = encoding
        self._engine = SearchEngine(
            lambda: list(self._tools.values()),
            lock=self._lock,
            embedder=embedder,
            embedding_cache=embedding_cache,
            fusion=fusion,
        )
        self._start_learning(learning)
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
            ToolNotFoundError: with the closest names (a ``KeyError`` too).
        """
        tool = self._tools.get(name)
        if tool is None:
            raise ToolNotFoundError.unknown(name, self.suggest(name))
        return tool

    def find(self, name: str) -> Tool | None:
        """The tool named ``name``, forgiving what :func:`~toolmgmt_core._model.names.fold_name`
        forgives: case, surrounding space, unicode look-alikes, ``-`` or spaces for ``_``."""
        tool = self._tools.get(name)
        if tool is None and isinstance(name, str):
            real = self._folded.get(fold_name(name))
            tool = self._tools.get(real) if real else None
        return tool

    def _put(self, tool: Tool, forms: frozenset[str]) -> None:
        self._tools[tool.name] = tool
        # A name's fold is one of its forms: the only one for most names (no look-up again).
        fold = next(iter(forms)) if len(forms) == 1 else fold_name(tool.name)
        self._folded[fold] = tool.name
        self._reached.update(dict.fromkeys(forms, tool.name))

    def _changed(self) -> None:
        self._version += 1
        self._engine.changed()

    def _check_new(self, tool: Tool, pending: Mapping[str, Tool] = {}) -> frozenset[str]:
        """Refuse ``tool`` when a form of its name (:func:`~toolmgmt_core._model.names.name_forms`)
        is taken here or in ``pending`` (tools to be added, by form); return its forms."""
        if not isinstance(tool, Tool):
            raise CatalogError(
                f"Expected a Tool, got {type(tool).__name__}. Use add_function() for a function "
                "or add_schemas() for dict definitions."
            )
        self.limits.check(tool)
        forms = name_forms(tool.name)
        clash = self._tools.get(tool.name)
        for form in () if clash else sorted(forms) if len(forms) > 1 else forms:
            clash = self._tools.get(self._reached.get(form, "")) or pending.get(form)
            if clash is not None:
                break
        if clash is None:
            return forms
        if clash.name == tool.name:
            raise DuplicateToolError(
                f"A tool named {tool.name!r} is already in the catalog (domain "
                f"{clash.domain!r}). Tool names must be unique: remove the old one first or "
                "choose another name."
            )
        # Names that fold alike are one name to lookup and policy, so a look-alike of a tool
        # (``Files-Delete`` or ``files.delete`` beside ``files_delete``) could stand in for it.
        raise DuplicateToolError(
            f"Tool name {tool.name!r} is the same name as {clash.name!r} (domain "
            f"{clash.domain!r}) once case, separators, invisible characters, accents, unicode "
            "look-alikes and the characters a provider refuses are ignored, as lookup and "
            "policy ignore them; choose a name that differs in its letters."
        )

    def add(self, tool: Tool) -> Tool:
        """Add one tool.

        Raises:
            DuplicateToolError: the name is taken; the catalog is unchanged.
        """
        with self._lock:
            self._put(tool, self._check_new(tool))
            self._changed()
        return tool

    def add_many(self, tools: Iterable[Tool]) -> list[Tool]:
        """Add several tools at once: all of them, or (on any error) none."""
        tools = list(tools)
        with self._lock:
            pending: dict[str, Tool] = {}
            checked: list[frozenset[str]] = []  # each tool's forms, found once
            for tool in tools:
                checked.append(forms := self._check_new(tool, pending))
                pending.update(dict.fromkeys(forms, tool))
            if not pending:
                return []
            for tool, forms in zip(tools, checked, strict=True):
                self._put(tool, forms)
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
        """Add tools from dict definitions in any accepted shape (see
        :mod:`toolmgmt_core._model.schema`).

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
                forms = self._check_new(tool, seen)
            except CatalogError as exc:
                if on_error == "raise":
                    raise CatalogError(f"Definition #{position} ({label}): {exc}") from exc
                report.skipped.append((label, str(exc)))
                continue
            seen.update(dict.fromkeys(forms, tool))
            tools.append(tool)
        self.add_many(tools)
        report.added = [t.name for t in tools]
        return report

    def remove(self, name: str) -> Tool:
        """Remove and return the tool named ``name``.

        Raises:
            ToolNotFoundError: with the closest names (a ``KeyError`` too).
        """
        with self._lock:
            tool = self.get(name)
            del self._tools[name]
            self._folded.pop(fold_name(name), None)
            for form in name_forms(name):
                if self._reached.get(form) == name:
                    del self._reached[form]
            self._changed()
        return tool

    def replace(self, tool: Tool) -> Tool:
        """Put ``tool`` in place of the tool of the same name (or add it)."""
        with self._lock:
            if tool.name in self._tools:
                self.limits.check(tool)
                self._tools[tool.name] = tool
                self._changed()
                return tool
            return self.add(tool)

    # -- search ---------------------------------------------------------------------------

    @property
    def search_engine(self) -> SearchEngine:
        """The engine behind :meth:`search`, :meth:`search_regex` and :meth:`suggest`."""
        return self._engine

    @property
    def embedder(self) -> Embedder | None:
        """The embedder fused with BM25 in :meth:`search`, or None."""
        return self._engine.embedder

    @property
    def embedding_cache(self) -> VectorCache | None:
        """Where tool vectors are kept across runs, or None."""
        return self._engine.embedding_cache

    @property
    def fusion(self) -> FusionWeights:
        """How BM25 and embedding similarity are fused (see :class:`FusionWeights`)."""
        return self._engine.fusion

    @fusion.setter
    def fusion(self, weights: FusionWeights) -> None:
        self._engine.fusion = weights

    @property
    def embedder_error(self) -> str | None:
        """Why the embedder last failed (search then uses BM25 alone), or None."""
        return self._engine.embedder_error

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
            query, limit, domain, group, where, split: the request, as
                :class:`~toolmgmt_core._search.params.SearchRequest`'s fields say.

        Returns:
            Hits whose ``score`` is the best keyword score the tool got for any part of the
            request (BM25 with the match features of :mod:`toolmgmt_core._search.match`, on
            BM25's scale; with an embedder, the best fused score: see
            :class:`FusionWeights`); tools without a positive score are left out.

        Raises:
            SearchError: an empty query or a limit below 1.
            BrowseError: an unknown domain or group, listing the valid ones.
        """
        request = SearchRequest(query, limit, domain=domain, group=group, where=where, split=split)
        found = self._engine.search(request)
        return [SearchHit.of(tool, score) for tool, score in found]

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
        found = self._engine.search_regex(pattern, limit, domain=domain, group=group, where=where)
        return [SearchHit.of(tool, score) for tool, score in found]

    def suggest(self, name: str, limit: int = 3, *, where: ToolFilter | None = None) -> list[str]:
        """The names closest to ``name`` (for a misspelled tool), best first: a trigram shortlist
        ranked by difflib's ratio (:class:`~toolmgmt_core._search.fuzzy.NameMatcher`), a few ms
        at 10,000 tools. ``where`` limits the names as in :meth:`search`; never a look-alike,
        nor another domain's tool that may destroy (:mod:`~toolmgmt_core._catalog.suggestions`)."""
        found = self._engine.suggest(name, limit * 4, where=where)
        closest = lambda: self._engine.suggest(name, 1)  # noqa: E731  (asked only when needed)
        return safe_suggestions(name, found, limit, self._tools, closest)

    # -- browse ---------------------------------------------------------------------------

    def _check_scope(self, domain: str | None, group: str | None) -> None:
        check_scope(self._tools.values(), domain, group)

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
            ToolEntry.of(t)
            for t in self._tools.values()
            if (domain is None or t.domain == domain)
            and (group is None or t.group == group)
            and (where is None or where(t))
        ]

    # -- tokens ---------------------------------------------------------------------------

    def definition_tokens(self, tools: Iterable[Tool] | None = None) -> int:
        """Tokens the definitions (name, description, parameters) take when sent flat."""
        return definition_tokens(self._tools.values() if tools is None else tools, self.encoding)
