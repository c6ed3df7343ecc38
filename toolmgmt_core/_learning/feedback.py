"""Which searches led to a successful call: the pairs a conversation teaches its catalog.

:class:`SearchFeedback` is fed what one conversation did, in order: the searches it ran (the
query, or the user turn an adapter saw, with the names the search returned) and the calls it
made (the tool, whether the call succeeded). A successful call of a tool that an earlier search
of the conversation returned yields the pair ``(request, tool, conversation_id)`` for
:meth:`ToolCatalog.learn <toolmgmt_core._catalog.tool_catalog.ToolCatalog.learn>`; so does
nothing else:

- a failed call teaches nothing, and neither does a call of a tool no search returned (the
  model knew it already: the search did not help, or did not happen);
- the request credited is the most recent search that returned the tool;
- each (request, tool) pair is yielded once per conversation, however often the tool is called.

Bounded: the last :data:`MAX_SEARCHES` searches of a conversation are remembered.

Usage (the call pipeline does this for each conversation)::

    feedback = SearchFeedback("conversation-17")
    feedback.searched("weather in Riga", ["get_weather", "get_forecast"])
    feedback.called("get_weather", ok=True)
    catalog.learn(feedback.pairs(), where=policy_view_filter, source="use")
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["MAX_SEARCHES", "SearchFeedback", "SearchSeen"]

MAX_SEARCHES = 50
"""How many of a conversation's most recent searches are remembered."""


@dataclass(frozen=True)
class SearchSeen:
    """One search of a conversation: what it asked and which tools it returned."""

    request: str
    """The query searched (or the user turn the adapter saw)."""
    names: tuple[str, ...]
    """The names of the tools it returned, best first."""


class SearchFeedback:
    """One conversation's searches and calls, and the pairs they teach (see the module
    docstring). Not thread-safe: one per conversation, fed in the order things happened."""

    def __init__(self, conversation_id: str, *, max_searches: int = MAX_SEARCHES) -> None:
        if not isinstance(conversation_id, str) or not conversation_id:
            raise ValueError("SearchFeedback needs the conversation's id (a non-empty string).")
        self.conversation_id = conversation_id
        """Whose searches and calls these are."""
        self._searches: deque[SearchSeen] = deque(maxlen=max_searches)
        self._pending: list[tuple[str, str, str]] = []
        self._taught: set[tuple[str, str]] = set()

    def searched(self, request: str, names: Iterable[str]) -> None:
        """A search ran: ``request`` returned the tools ``names``."""
        if isinstance(request, str) and request.strip():
            found = tuple(n for n in names if isinstance(n, str))
            self._searches.append(SearchSeen(request, found))

    def called(self, name: str, *, ok: bool) -> tuple[str, str, str] | None:
        """A call of ``name`` ended (``ok``: it succeeded); return the pair it teaches, if
        any (also kept for :meth:`pairs`)."""
        if not ok:
            return None
        for search in reversed(self._searches):
            if name in search.names:
                key = (search.request, name)
                if key in self._taught:
                    return None
                self._taught.add(key)
                pair = (search.request, name, self.conversation_id)
                self._pending.append(pair)
                return pair
        return None

    def pairs(self) -> list[tuple[str, str, str]]:
        """The pairs taught since the last call of this method (each once)."""
        out, self._pending = self._pending, []
        return out
