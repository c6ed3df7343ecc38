"""What one search asks for, written once: :class:`SearchRequest`, the request
:meth:`SearchEngine.search <toolmgmt_core._search.engine.SearchEngine.search>` takes and
:meth:`ToolCatalog.search <toolmgmt_core._catalog.tool_catalog.ToolCatalog.search>` and
:meth:`~toolmgmt_core._catalog.tool_catalog.ToolCatalog.explain_search` build from their
arguments; and the types a search speaks (:data:`ToolFilter`, :data:`Scored`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from toolmgmt_core._model.tool import Tool

__all__ = ["Scored", "SearchRequest", "ToolFilter"]

ToolFilter = Callable[[Tool], bool]
"""A predicate choosing the tools a search may return (a policy view)."""

Scored = list[tuple[Tool, float]]
"""Tools with their scores, best first."""


@dataclass(frozen=True)
class SearchRequest:
    """One keyword (or hybrid) search of a catalog."""

    query: str | Sequence[str]
    """Words describing the need, or a list of such queries. A request that needs several
    tools ("book a flight and email the itinerary") is searched whole and clause by clause
    (:func:`~toolmgmt_core._search.split_query`), and the rankings merged so that each need is
    covered near the top; a list of queries is searched query by query and merged the same way."""
    limit: int = 5
    """At most this many hits (at least 1)."""
    domain: str | None = None
    """Search only this domain (None: every domain)."""
    group: str | None = None
    """Search only this group (None: every group)."""
    where: ToolFilter | None = None
    """Only tools for which this returns True (a policy view); see :meth:`SearchEngine.mask
    <toolmgmt_core._search.engine.SearchEngine.mask>` for caching it."""
    split: bool = True
    """False: search a string as one query, without splitting it."""
    learned: bool = True
    """False: leave out what the catalog learned from use."""
