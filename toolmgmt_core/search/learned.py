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

:class:`LearnedIndex` is the field as the search reads it, rebuilt when the requests or the
tools change. A tool's learned score depends only on its own learned terms and the main index's
IDF, never on another tool's learned text: a hidden tool's traffic cannot move a visible one.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from toolmgmt_core.search.request import request_terms
from toolmgmt_core.search.tokenize import tokenize

__all__ = [
    "MAX_REQUEST_CHARS",
    "MAX_LEARNED_SHARE",
    "MIN_COMMON",
    "PLACEHOLDERS",
    "LearnedIndex",
    "LearnedRequest",
    "LearnedRequests",
    "LearnedWeights",
    "learned_terms",
    "learned_text",
]

PLACEHOLDERS = re.compile(r"<(?:email|url|number)>")
"""What redaction leaves in a request's place of an e-mail address, a URL or a long number
(:func:`~toolmgmt_core.catalog.learning.redact`); never a learned term."""

MAX_LEARNED_SHARE = 0.15
"""A learned term that more than this share of the tools hold or learned (and more than
:data:`MIN_COMMON` of them) moves no tool: a word one tool in seven has says little about any
of them, and touching that many tools on every search that says it would cost time for
nothing."""

MIN_COMMON = 20
"""However small the catalog, a term held or learned by this many tools or fewer is never too
common to learn."""

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


def learned_text(terms: Mapping[str, int], surface: Mapping[str, str]) -> str:
    """A tool's learned terms as text for an embedder: each term's first spelling as users
    wrote it, the terms most conversations taught first."""
    ordered = sorted(terms, key=lambda t: (-terms[t], t))
    return " ".join(surface.get(t, t) for t in ordered)


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


@dataclass
class LearnedIndex:
    """The learned field over an index's tools: per term, the tools it moves and what it adds.

    A request's learned score for a tool is, over the request's terms the tool learned,
    ``idf(term) * weight_in_request * c * (k1 + 1) / (c + k1 * (1 - b + b * dl / avgdl))`` with
    ``c`` the number of conversations that taught the term to the tool and ``dl`` the sum of
    them over the tool's learned terms: BM25 on the learned field. The IDF counts the tools
    that hold the term in their own text or learned it (BM25F's), so a word most tools mention
    or many learned says little. That is the one way another tool's learned terms reach a
    tool's score, and it can only lower it.
    """

    postings: dict[str, tuple[np.ndarray, np.ndarray]]
    """Term -> (tool positions, what the term adds to each, before the request's weight)."""
    idf: Callable[[str], float]
    """A term's IDF over the tools, their own text and learned terms alike."""
    n_tools: int
    """How many tools the index ranks."""
    texts: dict[int, str] = field(default_factory=dict)
    """Tool position -> its learned terms as text (for an embedder)."""

    @classmethod
    def build(
        cls,
        taught: Mapping[str, Mapping[str, int]],
        positions: Mapping[str, int],
        n_tools: int,
        doc_freq: Callable[[str], int],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        surface: Callable[[str], str] = str,
    ) -> LearnedIndex:
        """The field for ``taught`` (tool -> term -> conversations) over the tools at
        ``positions`` (tools not there are left out: removed, or out of this index);
        ``doc_freq(term)`` is how many tools hold the term in their own text."""
        present = {positions[t]: terms for t, terms in taught.items() if t in positions}
        learned_df: dict[str, int] = {}
        for terms in present.values():
            for term in terms:
                learned_df[term] = learned_df.get(term, 0) + 1

        known: dict[str, float] = {}
        common = max(MIN_COMMON, MAX_LEARNED_SHARE * n_tools)

        def idf(term: str) -> float:
            # BM25F's IDF: a term counts once per tool that holds it in any field (its own
            # text or what it learned), so a word many tools learned says little
            value = known.get(term)
            if value is None:
                df = min(doc_freq(term) + learned_df.get(term, 0), n_tools)
                value = float(np.log1p((n_tools - df + 0.5) / (df + 0.5)))
                if len(known) < 100_000:
                    known[term] = value
            return value

        lengths = {p: float(sum(terms.values())) for p, terms in present.items()}
        avgdl = (sum(lengths.values()) / len(lengths)) if lengths else 1.0
        rows: dict[str, tuple[list[int], list[float]]] = {}
        for position, terms in present.items():
            norm = k1 * (1.0 - b + b * lengths[position] / avgdl)
            for term, count in terms.items():
                if doc_freq(term) + learned_df[term] > common:
                    continue
                tools, values = rows.setdefault(term, ([], []))
                tools.append(position)
                values.append(idf(term) * count * (k1 + 1.0) / (count + norm))
        postings = {
            term: (np.asarray(tools, dtype=np.int64), np.asarray(values, dtype=np.float64))
            for term, (tools, values) in rows.items()
        }
        texts = {
            p: learned_text(terms, {t: surface(t) for t in terms}) for p, terms in present.items()
        }
        return cls(postings, idf, n_tools, texts)

    def __bool__(self) -> bool:
        return bool(self.postings)

    def scores(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The tools the request ``text`` (read as the keyword search reads it) reaches through
        their learned terms: (positions, learned score, share of the request's IDF mass they
        learned), or None when no term of it was learned. Sparse: a search at 10,000 tools
        touches only the tools that learned one of its words."""
        seen: dict[str, float] = {}
        for term, weight in request_terms(text):
            if weight > seen.get(term, 0.0):
                seen[term] = weight
        total = 0.0
        hits: list[tuple[np.ndarray, np.ndarray, float, float]] = []
        for term, weight in seen.items():
            mass = self.idf(term) * min(weight, 1.0)
            total += mass
            hit = self.postings.get(term)
            if hit is not None:
                hits.append((hit[0], hit[1], weight, mass))
        if not hits:
            return None
        if len(hits) == 1:
            one = hits[0]
            return one[0], one[1] * one[2], np.full(len(one[0]), one[3] / max(total, 1e-12))
        where = np.concatenate([h[0] for h in hits])
        learned = np.concatenate([h[1] * h[2] for h in hits])
        share = np.repeat([h[3] / max(total, 1e-12) for h in hits], [len(h[0]) for h in hits])
        positions = np.flatnonzero(np.bincount(where, minlength=self.n_tools))
        return (
            positions,
            np.bincount(where, weights=learned, minlength=self.n_tools)[positions],
            np.bincount(where, weights=share, minlength=self.n_tools)[positions],
        )

    def matched(self, text: str, position: int) -> list[str]:
        """The request's terms that tool ``position`` learned (for explaining a hit)."""
        return [
            term
            for term in dict.fromkeys(t for t, _ in request_terms(text))
            if (hit := self.postings.get(term)) is not None and position in set(hit[0].tolist())
        ]


@dataclass(frozen=True)
class LearnedWeights:
    """How much the learned field weighs against a tool's own text.

    Chosen on halves of the shared BFCL live requests (learn from one, rank the other;
    ``bench/retrieval.py --history``): ``keyword`` 0.5-2 and ``dense`` 0.5-2 give within a point
    of the best strict R@5, 4 is too much (a tool that learned a word then outranks the tool the
    request describes). ``dense`` 0.5 rather than 1: the same on live (-0.5 strict R@5), and on
    the dev split learning from one half and ranking the other, R@1 76 instead of 71.
    """

    keyword: float = 1.0
    """Times its BM25 score (same units as the keyword score of the tool's own text)."""
    coverage: float = 0.5
    """Times the share of the request's IDF mass the tool learned, times the best keyword
    score of the request (a tool that learned most of what the request says, not one word)."""
    dense: float = 0.5
    """With an embedder: times the similarity of the request to the tool's learned terms (same
    units as :attr:`FusionWeights.dense <toolmgmt_core.search.hybrid.FusionWeights.dense>`)."""
