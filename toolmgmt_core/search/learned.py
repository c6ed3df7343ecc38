"""What a catalog learned from use: requests that led to a successful call of a tool, kept as a
field of that tool with its own weight in keyword and hybrid search.

A deployed catalog sees its own traffic: when a conversation searched and then successfully
called a tool it found, it said which tool its request wanted. Each such request is kept
(:class:`LearnedRequest`) and the words it holds become the tool's *learned* field, scored apart
from the tool's own text (query-log expansion, scored like a BM25 field with the main index's
IDF, so that nothing learned changes how any other text scores).

What is kept is bounded and guarded (:class:`LearnedRequests`):

- per tool, the most recent :attr:`LearnedRequests.max_per_tool` requests, each at most
  :data:`MAX_REQUEST_CHARS` characters, one copy of a request per conversation, and at most
  :attr:`LearnedRequests.max_per_conversation` requests of one conversation;
- a term counts for a tool once per conversation, and only once it came from at least
  :attr:`LearnedRequests.min_conversations` (2) different conversations: one client repeating a
  search a thousand times in its conversation teaches nothing;
- what a term adds saturates with the number of conversations (BM25's ``k1``), so no amount of
  traffic makes a learned word outweigh everything else.

:mod:`~toolmgmt_core.search.learned_ranking` scores what is kept as a field of each tool.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from toolmgmt_core.search.tokenize import tokenize

__all__ = [
    "MAX_REQUEST_CHARS",
    "PLACEHOLDERS",
    "LearnedRequest",
    "LearnedRequests",
    "learned_terms",
]

PLACEHOLDERS = re.compile(r"<(?:email|url|number)>")
"""What redaction leaves in a request's place of an e-mail address, a URL or a long number
(:func:`~toolmgmt_core.catalog.learning.redact`); never a learned term."""

_MAX_SURFACE = 200_000
"""Spellings kept for the embedder's learned text, at most (forgotten all at once past it)."""

MAX_REQUEST_CHARS = 400
"""A learned request is cut to this many characters (the request the user asked, not a
transcript: what a search reads first, :func:`~toolmgmt_core.search.request.read_request`)."""


@dataclass(frozen=True)
class LearnedRequest:
    """One request a tool learned: the text (redacted, cut), where it came from and when."""

    tool: str
    """The tool the request led to."""
    text: str
    """The request, as searched (e-mail addresses, URLs and long numbers redacted)."""
    conversation: str
    """Who taught it: a digest of the conversation id, or a fresh one for a pair without one."""
    at: float
    """When it was learned (seconds since the epoch)."""
    id: int = 0
    """Its id in the store that keeps it (0 until kept)."""
    source: str = "use"
    """``use`` (a conversation's search that led to a call) or ``import`` (a pair imported)."""

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "tool": self.tool,
            "text": self.text,
            "conversation": self.conversation,
            "at": self.at,
            "source": self.source,
        }


_PROPER = re.compile(r"(?<=[a-z,;:] )[A-Z][\w'-]*(?: [A-Z][\w'-]*)*")
"""Capitalised words inside a sentence: names of places, people, companies (the request's
values, "in New York", "for Apple Inc.", not its need)."""


def learned_terms(text: str) -> list[str]:
    """The search terms of a learned request that may be learned: what it asks for, not the
    values it carries. Left out: numbers, words of fewer than three letters ("36 and 24",
    "a = 3"), redaction placeholders and capitalised names inside a sentence ("in New York",
    "ask John Smith": often someone's name, never a tool's need)."""
    text = _PROPER.sub(" ", PLACEHOLDERS.sub(" ", text))
    return [t for t in tokenize(text) if len(t) >= 3 and not t.isdigit()]


@dataclass
class _Taught:
    """One tool's learned requests and what they taught."""

    requests: list[LearnedRequest] = field(default_factory=list)
    counts: dict[str, int] | None = None
    """Term -> how many conversations taught it (all terms; computed on demand)."""


class LearnedRequests:
    """The requests each tool learned, bounded, and the terms they taught.

    Thread-safe. :attr:`generation` increases on every change (a search rebuilds its
    :class:`LearnedIndex` then).
    """

    def __init__(
        self,
        *,
        max_per_tool: int = 32,
        max_per_conversation: int = 2,
        min_conversations: int = 2,
    ) -> None:
        self.max_per_tool = max_per_tool
        """At most this many requests are kept per tool (the most recent)."""
        self.max_per_conversation = max_per_conversation
        """At most this many of them from one conversation (its most recent)."""
        self.min_conversations = min_conversations
        """A term moves a tool only once this many different conversations taught it."""
        self.generation = 0
        self._tools: dict[str, _Taught] = {}
        self._ids: set[int] = set()
        self._lock = threading.RLock()
        self._surface: dict[str, str] = {}

    def __len__(self) -> int:
        with self._lock:
            return sum(len(t.requests) for t in self._tools.values())

    def __bool__(self) -> bool:
        return bool(self._tools)

    def tools(self) -> list[str]:
        """The tools that learned something, in the order they first did."""
        with self._lock:
            return list(self._tools)

    def requests(self, tool: str | None = None) -> list[LearnedRequest]:
        """The requests ``tool`` learned (every tool's when None), oldest first."""
        with self._lock:
            taught = [self._tools[tool]] if tool is not None and tool in self._tools else []
            if tool is None:
                taught = list(self._tools.values())
            return [r for t in taught for r in t.requests]

    def has(self, request_id: int) -> bool:
        """Whether a request of this store id is held."""
        return request_id in self._ids

    def add(self, request: LearnedRequest) -> str | None:
        """Keep ``request``; return why it was not kept (a duplicate), else None.

        The oldest requests of the tool (first the conversation's own, past
        :attr:`max_per_conversation`) make room past :attr:`max_per_tool`.
        """
        with self._lock:
            if request.id and request.id in self._ids:
                return "already learned"
            taught = self._tools.setdefault(request.tool, _Taught())
            key = learned_terms(request.text)
            for held in taught.requests:
                if held.conversation == request.conversation and (learned_terms(held.text) == key):
                    return "the same request from the same conversation is already learned"
            taught.requests.append(request)
            taught.requests.sort(key=lambda r: (r.at, r.id))
            own = [r for r in taught.requests if r.conversation == request.conversation]
            for old in own[: max(0, len(own) - self.max_per_conversation)]:
                self._drop(taught, old)
            while len(taught.requests) > self.max_per_tool:
                self._drop(taught, taught.requests[0])
            if request.id:
                self._ids.add(request.id)
            if len(self._surface) > _MAX_SURFACE:
                self._surface.clear()
            for word in PLACEHOLDERS.sub(" ", request.text).split():
                for term in tokenize(word):
                    self._surface.setdefault(term, word.strip(".,;:!?()[]{}\"'").lower())
            taught.counts = None
            self.generation += 1
            return None

    def _drop(self, taught: _Taught, request: LearnedRequest) -> None:
        taught.requests.remove(request)
        self._ids.discard(request.id)

    def remove(
        self,
        tool: str | None = None,
        *,
        ids: Iterable[int] | None = None,
        conversation: str | None = None,
    ) -> list[LearnedRequest]:
        """Forget requests: a tool's, those of these store ids, or one conversation's (every
        request when no argument is given). Returns what was forgotten."""
        wanted = set(ids) if ids is not None else None
        with self._lock:
            gone: list[LearnedRequest] = []
            for name in list(self._tools):
                if tool is not None and name != tool:
                    continue
                taught = self._tools[name]
                keep: list[LearnedRequest] = []
                for r in taught.requests:
                    drop = (wanted is None or r.id in wanted) and (
                        conversation is None or r.conversation == conversation
                    )
                    (gone if drop else keep).append(r)
                taught.requests = keep
                taught.counts = None
                if not keep:
                    del self._tools[name]
            for r in gone:
                self._ids.discard(r.id)
            if gone:
                self.generation += 1
            return gone

    def counts(self, tool: str) -> dict[str, int]:
        """Term -> how many different conversations taught it to ``tool`` (every term)."""
        with self._lock:
            taught = self._tools.get(tool)
            if taught is None:
                return {}
            if taught.counts is None:
                seen: dict[str, set[str]] = {}
                for r in taught.requests:
                    for term in set(learned_terms(r.text)):
                        seen.setdefault(term, set()).add(r.conversation)
                taught.counts = {term: len(c) for term, c in seen.items()}
            return taught.counts

    def taught(self, tool: str) -> dict[str, int]:
        """The terms that move ``tool``: those at least :attr:`min_conversations` taught, with
        how many did."""
        return {t: c for t, c in self.counts(tool).items() if c >= self.min_conversations}

    def surface(self, term: str) -> str:
        """A word users wrote for ``term`` (for an embedder; the term itself if none)."""
        return self._surface.get(term, term)

    def snapshot(self) -> tuple[int, dict[str, dict[str, int]]]:
        """(generation, tool -> the terms that move it): what a :class:`LearnedIndex` is
        built from."""
        with self._lock:
            taught = {tool: self.taught(tool) for tool in self._tools}
            return self.generation, {tool: terms for tool, terms in taught.items() if terms}
