"""What listings, searches and ingestion hand back: small frozen records of tools.

:class:`ToolEntry` (a tool in a listing), :class:`SearchHit` (a tool a search found, with its
score), :class:`DomainSummary` (a domain in the table of contents) and :class:`IngestReport`
(what a batch ingestion added and what it skipped, with the reason).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toolmgmt_core._model.tool import Tool

__all__ = ["DomainSummary", "IngestReport", "SearchExplanation", "SearchHit", "ToolEntry"]


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

    @classmethod
    def of(cls, tool: Tool) -> ToolEntry:
        """``tool`` in a listing."""
        return cls(tool.name, tool.domain, tool.group, tool.summary)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "group": self.group, "description": self.description}


@dataclass(frozen=True)
class SearchHit(ToolEntry):
    """A tool found by a search, with its score (higher is better)."""

    score: float = 0.0
    """Relevance; comparable within one search only."""
    also: tuple[str, ...] = ()
    """The same tool served by other servers, left out of the results for this one (see
    :func:`~toolmgmt_core._catalog.equivalents.one_per_tool`)."""

    @classmethod
    def of(cls, tool: Tool, score: float = 0.0) -> SearchHit:  # type: ignore[override]
        """``tool`` found with ``score``."""
        return cls(tool.name, tool.domain, tool.group, tool.summary, score)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "domain": self.domain,
            "group": self.group,
            "description": self.description,
            "score": round(self.score, 3),
            **({"also": list(self.also)} if self.also else {}),
        }


@dataclass(frozen=True)
class SearchExplanation(SearchHit):
    """A hit of :meth:`ToolCatalog.explain_search
    <toolmgmt_core._catalog.tool_catalog.ToolCatalog.explain_search>`: where it ranks with and
    without what the catalog learned from use."""

    rank: int = 0
    """Its rank in this search (from 1)."""
    rank_without_learning: int | None = None
    """Its rank had nothing been learned (None: not in the first 100 then)."""
    learned_terms: tuple[str, ...] = ()
    """The request's terms this tool learned from use (empty: learning did not touch it)."""
    suggested: str = ""
    """Why the tool was suggested beside the hits, for a companion (``explain_search(...,
    companions=n)``; its :attr:`rank` is 0); empty for a hit of the search itself."""

    @property
    def moved(self) -> bool:
        """Whether learned text moved it up."""
        before = self.rank_without_learning
        return bool(self.learned_terms) and (before is None or before > self.rank)

    def to_dict(self) -> dict[str, Any]:
        return {
            **super().to_dict(),
            "rank": self.rank,
            "rank_without_learning": self.rank_without_learning,
            "learned_terms": list(self.learned_terms),
            **({"suggested": self.suggested} if self.suggested else {}),
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
