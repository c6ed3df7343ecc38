"""The catalog's side of learning from use: :class:`CatalogLearning`, the methods
:class:`~toolmgmt_core._catalog.tool_catalog.ToolCatalog` has for it (``learn``, ``forget``,
``learned``, ``learned_terms``, ``explain_search``, ``companions``), kept apart from the
catalog's contents.

What is checked and kept is :mod:`toolmgmt_core._learning.teaching`'s; how it ranks,
:mod:`toolmgmt_core._learning.requests` and :mod:`toolmgmt_core._learning.ranking`'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Protocol

from toolmgmt_core._catalog.entries import SearchExplanation
from toolmgmt_core._learning.companions import Companion
from toolmgmt_core._learning.ranking import LearnedSearch
from toolmgmt_core._learning.requests import LearnedRequest
from toolmgmt_core._learning.teaching import Learning, LearningOptions, LearnReport, Pair
from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._search.engine import SearchEngine
from toolmgmt_core._search.params import SearchRequest, ToolFilter

__all__ = ["CatalogLearning", "LearningHost"]


class LearningHost(Protocol):
    """What :class:`CatalogLearning`'s methods need of the catalog they are part of."""

    _engine: SearchEngine
    _learning: Learning | None
    _learned_search: LearnedSearch | None

    def find(self, name: str) -> Tool | None:
        """The tool named ``name`` (folded as a lookup folds it), or None."""
        ...


class CatalogLearning:
    """Learning from use, as a catalog offers it (off unless the catalog was given
    :class:`~toolmgmt_core._learning.teaching.LearningOptions`). Its methods take the catalog as
    a :class:`LearningHost`: the learning itself is the :class:`Learning` object it holds."""

    _engine: SearchEngine
    _learning: Learning | None
    _learned_search: LearnedSearch | None

    def _start_learning(self: LearningHost, learning: LearningOptions | None) -> None:
        self._learning = self._learned_search = None
        if learning is None:
            return
        if not isinstance(learning, LearningOptions):
            raise ConfigError(
                f"learning must be a LearningOptions, got {type(learning).__name__}: "
                "ToolCatalog(tools, learning=LearningOptions(store='learned.sqlite'))."
            )
        self._learning = Learning(learning)
        self._learned_search = LearnedSearch(self._learning.requests, learning.weights)
        self._engine.learned = self._learned_search

    def explain_search(
        self: LearningHost,
        query: str | Sequence[str],
        limit: int = 5,
        *,
        domain: str | None = None,
        group: str | None = None,
        where: ToolFilter | None = None,
        companions: int = 0,
    ) -> list[SearchExplanation]:
        """:meth:`search`'s hits, each with its rank without what the catalog learned and the
        learned terms of the request that moved it (an empty tuple: learning did not touch it);
        then, with ``companions``, the tools :meth:`companions` suggests beside them, each
        saying why (``suggested``; rank 0).

        Raises:
            SearchError, BrowseError: as :meth:`search`.
        """
        request = SearchRequest(query, limit, domain=domain, group=group, where=where)
        found = self._engine.search(request)
        before = self._engine.search(
            dataclasses.replace(request, limit=max(limit, 100), learned=False)
        )
        rank_before = {tool.name: rank for rank, (tool, _) in enumerate(before, start=1)}
        boost = self._learned_search
        field = boost.field(self._engine.index()) if boost is not None else None
        texts, _ = self._engine.plan(query, True)
        positions = self._engine.index().positions()
        out = []
        for rank, (tool, score) in enumerate(found, start=1):
            terms: tuple[str, ...] = ()
            if field:
                position = positions[tool.name]
                terms = tuple(
                    dict.fromkeys(t for text in texts for t in field.matched(text, position))
                )
            out.append(
                SearchExplanation(
                    tool.name,
                    tool.domain,
                    tool.group,
                    tool.summary,
                    score,
                    rank=rank,
                    rank_without_learning=rank_before.get(tool.name),
                    learned_terms=terms,
                )
            )
        learning = self._learning
        if learning is None or not companions:
            return out
        hits = [tool.name for tool, _ in found]
        for companion in learning.companions_of(hits, companions, self.find, where):
            suggested_tool = self.find(companion.name)
            if suggested_tool is None:
                continue
            out.append(
                SearchExplanation(
                    suggested_tool.name,
                    suggested_tool.domain,
                    suggested_tool.group,
                    suggested_tool.summary,
                    companion.score,
                    suggested=companion.reason,
                )
            )
        return out

    def companions(
        self: LearningHost,
        hits: Sequence[str],
        limit: int = 1,
        *,
        where: ToolFilter | None = None,
    ) -> list[Companion]:
        """Tools often used with ``hits`` (a search's names, best first), best first: what
        conversations of at least ``LearningOptions.companion_principals`` different principals
        used together with them (:mod:`~toolmgmt_core._learning.companions`). Never a hit, a tool
        ``where`` refuses, or a destructive tool or one that sends data out unless those may
        learn. Empty when learning is off or nothing was learned yet."""
        if self._learning is None:
            return []
        return self._learning.companions_of(hits, limit, self.find, where)

    @property
    def learning(self: LearningHost) -> LearningOptions | None:
        """How this catalog learns from use, or None (it does not: the default)."""
        return self._learning.options if self._learning is not None else None

    def learned(self: LearningHost, tool: str | None = None) -> list[LearnedRequest]:
        """What the catalog learned (``tool``'s requests, or every tool's), oldest first: the
        audit view, each request with only the terms past the threshold (those that move its
        tool; a term fewer principals taught is never shown, so that nobody learns what
        someone else typed by teaching it once). Empty when learning is off."""
        return self._learning.requests.public(tool) if self._learning is not None else []

    def learned_terms(self: LearningHost, tool: str) -> dict[str, int]:
        """The terms that move ``tool`` in search, with how many principals taught each."""
        return self._learning.requests.taught(tool) if self._learning is not None else {}

    def learn(
        self: LearningHost,
        pairs: Iterable[Pair],
        *,
        where: ToolFilter | None = None,
        source: str = "import",
    ) -> LearnReport:
        """Learn from requests that led to a tool: pairs ``(request_text, tool_name)``,
        ``(request_text, tool_name, conversation_id)`` or ``(request_text, tool_name,
        conversation_id, principal)``.

        Each request's terms become part of its tool's learned field (its own weight in keyword
        and hybrid search; see :mod:`toolmgmt_core._learning.requests` for the bounds and the rule
        that a term moves a tool only once ``min_principals`` different principals taught it),
        after the checks of :mod:`toolmgmt_core._learning.teaching` (unknown, not permitted or
        destructive tools ignored; secrets and personal data removed).

        Args:
            pairs: the pairs. A pair without a principal counts for the one anonymous
                principal, except in an import (``source="import"``), where each
                conversation id counts as a principal.
            where: only tools for which this returns True may learn (the conversation's
                policy view): a hidden or denied tool never does.
            source: ``"use"`` for pairs from conversations, ``"import"`` for a log.

        Returns:
            What was learned and what was ignored, with why.

        Raises:
            ConfigError: learning is off for this catalog.
        """
        learning = _required(self._learning)
        return learning.learn(pairs, self.find, where=where, source=source)

    def forget(
        self: LearningHost,
        tool: str | None = None,
        *,
        conversation: str | None = None,
        principal: str | None = None,
    ) -> int:
        """Forget what ``tool`` learned, what one conversation (its id) or one principal (its
        name) taught, or, with none, everything; return how many requests were forgotten.

        Raises:
            ConfigError: learning is off for this catalog.
        """
        learning = _required(self._learning)
        return learning.forget(tool, conversation=conversation, principal=principal)

    def absorb_learned(
        self: LearningHost, requests: Iterable[LearnedRequest], *, replace: bool = False
    ) -> int:
        """Hold requests another replica learned (already checked and kept in the shared
        store; the catalog follower calls this); ``replace`` forgets what is held first.
        Returns how many were new here. Does nothing when learning is off."""
        if self._learning is None:
            return 0
        return self._learning.absorb(requests, replace=replace)


def _required(learning: Learning | None) -> Learning:
    if learning is None:
        raise ConfigError(
            "This catalog does not learn from use (off by default). Turn it on with "
            "ToolCatalog(..., learning=LearningOptions(store='learned.sqlite'))."
        )
    return learning
