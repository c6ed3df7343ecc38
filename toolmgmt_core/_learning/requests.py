"""What a catalog learned from use: the terms of requests that led to a successful call of a
tool, kept as a field of that tool with its own weight in keyword and hybrid search.

A deployed catalog sees its own traffic: when a principal (a user, a gateway client) searched
and then successfully called a tool it found, it said which tool its request wanted. Each such
request is kept (:class:`LearnedRequest`) and the words it holds become the tool's *learned*
field, scored apart from the tool's own text (query-log expansion, scored like a BM25 field with
the main index's IDF, so that nothing learned changes how any other text scores).

Evidence counts principals, not conversations (conversations are free; principals are who the
deployment says is asking). What is kept is bounded and guarded (:class:`LearnedRequests`):

- a term counts for a tool once per principal, and moves it only once at least
  :attr:`LearnedRequests.min_principals` (3) different principals taught it to that very tool
  (never to a family of similar names: ``billing_get_invoice2`` borrows nothing of
  ``billing_get_invoice``'s evidence): one client opening a thousand conversations teaches
  nothing;
- a term is kept in clear only once that many principals taught it to the tool; until then it
  is kept as a keyed digest (:func:`term_digest`), which counts principals and says nothing,
  and nothing shows it (:meth:`LearnedRequests.public`): no membership oracle;
- per tool at most :attr:`LearnedRequests.max_per_tool` requests, and at most
  :attr:`LearnedRequests.max_per_principal` of one principal (its most recent); past the
  quota, the principal holding most requests gives up its oldest, so that flooding keeps
  the diversity of principals rather than the most recent requests;
- what a term adds saturates with the number of principals (BM25's ``k1``).

:mod:`~toolmgmt_core._learning.ranking` scores what is kept as a field of each tool.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from toolmgmt_core._search.tokenize import tokenize

__all__ = [
    "ANONYMOUS",
    "MAX_REQUEST_CHARS",
    "PLACEHOLDERS",
    "LearnedRequest",
    "LearnedRequests",
    "learned_terms",
    "learned_words",
    "term_digest",
]

PLACEHOLDERS = re.compile(r"<(?:email|url|number|card|iban|secret|name|address|phone)>")
"""What redaction leaves in place of what it removed
(:func:`~toolmgmt_core._learning.redaction.redact`); never a learned term."""

ANONYMOUS = "anonymous"
"""The principal of pairs that name none: all of them count as this one principal."""

MAX_REQUEST_CHARS = 400
"""A learned request is cut to this many characters (the request the user asked, not a
transcript: what a search reads first, :func:`~toolmgmt_core._search.request.read_request`)."""

_DIGEST = "#"
"""How a stored term kept as a digest starts (a clear term never does)."""

_MAX_KEYS = 100_000
"""Clear words whose digests are remembered, at most (forgotten all at once past it)."""


@dataclass(frozen=True)
class LearnedRequest:
    """One request a tool learned: its terms (each in clear once enough principals taught it
    to the tool, else a keyed digest), who taught it and when."""

    tool: str
    """The tool the request led to."""
    text: str
    """The request's learned terms, space-separated: a word in clear, or ``#`` and its keyed
    digest (:func:`term_digest`). Never the request as typed."""
    conversation: str
    """The conversation that taught it: a digest of its id."""
    at: float
    """When it was learned (seconds since the epoch)."""
    id: int = 0
    """Its id in the store that keeps it (0 until kept)."""
    source: str = "use"
    """``use`` (a conversation's search that led to a call) or ``import`` (a pair imported)."""
    principal: str = ""
    """Who taught it: a digest of the principal (:data:`ANONYMOUS`'s digest for pairs naming
    none); empty in rows kept before principals were counted (their conversation counts)."""

    @property
    def teacher(self) -> str:
        """The principal the request counts for (its conversation, for rows without one)."""
        return self.principal or self.conversation

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "tool": self.tool,
            "text": self.text,
            "conversation": self.conversation,
            "principal": self.principal,
            "at": self.at,
            "source": self.source,
        }


_PROPER = re.compile(r"(?<=[a-z,;:] )[A-Z][\w'-]*(?: [A-Z][\w'-]*)*")
"""Capitalised words inside a sentence: names of places, people, companies (the request's
values, "in New York", "for Apple Inc.", not its need)."""


def learned_words(text: str) -> list[tuple[str, str]]:
    """The search terms of a (redacted) request that may be learned, each once, with a word the
    user wrote for it: ``(term, spelling)``. Left out: numbers, terms of fewer than three
    letters, redaction placeholders and capitalised names inside a sentence ("in New York",
    "ask John Smith": often someone's name, never a tool's need)."""
    text = _PROPER.sub(" ", PLACEHOLDERS.sub(" ", text))
    out: dict[str, str] = {}
    for raw in text.split():
        word = raw.strip(".,;:!?()[]{}\"'`").lower()
        terms = [t for t in tokenize(word) if len(t) >= 3 and not t.isdigit()]
        for term in terms:
            # the spelling is kept only when it reads back as this one term
            out.setdefault(term, word if terms == [term] else term)
    return list(out.items())


def learned_terms(text: str) -> list[str]:
    """The learned terms of a request (:func:`learned_words` without the spellings)."""
    return [term for term, _ in learned_words(text)]


def term_digest(salt: bytes, term: str) -> str:
    """What is kept of a term fewer principals taught than the threshold: ``#`` and the first
    16 hex digits of its HMAC-SHA256 under the store's key."""
    return _DIGEST + hmac.new(salt, term.encode("utf-8"), hashlib.sha256).hexdigest()[:16]


@dataclass
class _Taught:
    """One tool's learned requests and what they taught."""

    requests: list[LearnedRequest] = field(default_factory=list)
    counts: dict[str, set[str]] | None = None
    """Term digest -> the principals that taught it (computed on demand)."""
    clear: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Term digest -> (term, spelling), for the terms some request holds in clear."""


class LearnedRequests:
    """The requests each tool learned, bounded, and the terms they taught.

    Thread-safe. :attr:`generation` increases on every change (a search rebuilds its
    :class:`~toolmgmt_core._learning.ranking.LearnedIndex` then).
    """

    def __init__(
        self,
        *,
        max_per_tool: int = 32,
        max_per_principal: int = 2,
        min_principals: int = 3,
        salt: bytes = b"",
    ) -> None:
        self.max_per_tool = max_per_tool
        """At most this many requests are kept per tool."""
        self.max_per_principal = max_per_principal
        """At most this many of them from one principal (its most recent)."""
        self.min_principals = min_principals
        """A term moves a tool (and is kept in clear) only once this many principals taught
        it."""
        self.salt = salt
        """The key of the terms' digests (kept outside the store; the same on every replica)."""
        self.generation = 0
        self._tools: dict[str, _Taught] = {}
        self._ids: set[int] = set()
        self._lock = threading.RLock()
        self._spelled: tuple[int, dict[str, str]] = (-1, {})
        self._keys: dict[str, str] = {}

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
        """The requests ``tool`` learned (every tool's when None), oldest first, as kept."""
        with self._lock:
            taught = [self._tools[tool]] if tool is not None and tool in self._tools else []
            if tool is None:
                taught = list(self._tools.values())
            return [r for t in taught for r in t.requests]

    def public(self, tool: str | None = None) -> list[LearnedRequest]:
        """:meth:`requests` as they may be shown: each with only its terms past the threshold
        for its tool (in clear); the others, digests included, left out."""
        with self._lock:
            out = []
            for request in self.requests(tool):
                counts, clear = self._counts(request.tool), self._tools[request.tool].clear
                words = [
                    clear[key][1]
                    for key in map(self._key, request.text.split())
                    if key in clear and len(counts[key]) >= self.min_principals
                ]
                out.append(dataclasses.replace(request, text=" ".join(words)))
            return out

    def has(self, request_id: int) -> bool:
        """Whether a request of this store id is held."""
        return request_id in self._ids

    def digest(self, term: str) -> str:
        """``term``'s digest under this catalog's key."""
        return term_digest(self.salt, term)

    def _key(self, word: str) -> str:
        """The digest a kept word counts under (a digest is its own)."""
        if word.startswith(_DIGEST):
            return word
        key = self._keys.get(word)
        if key is None:
            if len(self._keys) > _MAX_KEYS:
                self._keys.clear()
            key = self._keys[word] = self.digest(self._term(word))
        return key

    @staticmethod
    def _term(word: str) -> str:
        if word.startswith(_DIGEST):
            return word
        terms = tokenize(word)
        return terms[0] if len(terms) == 1 else word

    def seal(
        self,
        tool: str,
        principal: str,
        words: Iterable[tuple[str, str]],
        pending: dict[tuple[str, str], set[str]],
    ) -> str:
        """The stored text of a request of ``principal`` to ``tool`` with these ``(term,
        spelling)`` words: each in clear if with this request at least :attr:`min_principals`
        principals taught it to ``tool`` (those held, and those in ``pending``, the requests of
        the same batch, which this one joins), else as its digest."""
        with self._lock:
            counts = self._counts(tool)
            out = []
            for term, spelling in words:
                key = self.digest(term)
                who = pending.setdefault((tool, key), set())
                who.add(principal)
                clear = len(counts.get(key, set()) | who) >= self.min_principals
                # a spelling that does not read back as its term is kept as the term
                word = spelling if self._term(spelling) == term else term
                out.append(word if clear and self._term(word) == term else key)
            return " ".join(out)

    def add(self, request: LearnedRequest) -> str | None:
        """Keep ``request``; return why it was not kept (a duplicate), else None.

        Past :attr:`max_per_principal` the principal's oldest request goes; past
        :attr:`max_per_tool`, the oldest of the principal holding the most requests.
        """
        with self._lock:
            if request.id and request.id in self._ids:
                return "already learned"
            taught = self._tools.setdefault(request.tool, _Taught())
            key = sorted(self._key(w) for w in request.text.split())
            for held in taught.requests:
                if held.teacher == request.teacher and (
                    sorted(self._key(w) for w in held.text.split()) == key
                ):
                    return "the same request from the same principal is already learned"
            taught.requests.append(request)
            taught.requests.sort(key=lambda r: (r.at, r.id))
            own = [r for r in taught.requests if r.teacher == request.teacher]
            for old in own[: max(0, len(own) - self.max_per_principal)]:
                self._drop(taught, old)
            while len(taught.requests) > self.max_per_tool:
                self._drop(taught, _most_held(taught.requests))
            if request.id:
                self._ids.add(request.id)
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
        principal: str | None = None,
    ) -> list[LearnedRequest]:
        """Forget requests: a tool's, those of these store ids, one conversation's or one
        principal's (digests; every request when no argument is given). Returns what was
        forgotten."""
        wanted = set(ids) if ids is not None else None
        with self._lock:
            gone: list[LearnedRequest] = []
            for name in list(self._tools):
                if tool is not None and name != tool:
                    continue
                taught = self._tools[name]
                keep: list[LearnedRequest] = []
                for r in taught.requests:
                    drop = (
                        (wanted is None or r.id in wanted)
                        and (conversation is None or r.conversation == conversation)
                        and (principal is None or r.teacher == principal)
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

    def _counts(self, tool: str) -> dict[str, set[str]]:
        taught = self._tools.get(tool)
        if taught is None:
            return {}
        if taught.counts is None:
            seen: dict[str, set[str]] = {}
            taught.clear = {}
            for r in taught.requests:
                for word in r.text.split():
                    key = self._key(word)
                    seen.setdefault(key, set()).add(r.teacher)
                    if not word.startswith(_DIGEST):
                        taught.clear.setdefault(key, (self._term(word), word))
            taught.counts = seen
        return taught.counts

    def counts(self, tool: str) -> dict[str, int]:
        """Term digest -> how many different principals taught it to ``tool`` (every term)."""
        with self._lock:
            return {key: len(who) for key, who in self._counts(tool).items()}

    def taught(self, tool: str) -> dict[str, int]:
        """The terms that move ``tool``, in clear: those at least :attr:`min_principals`
        principals taught, with how many did."""
        with self._lock:
            counts = self._counts(tool)
            clear = self._tools[tool].clear if tool in self._tools else {}
            return {
                clear[key][0]: len(who)
                for key, who in counts.items()
                if len(who) >= self.min_principals and key in clear
            }

    def surface(self, term: str) -> str:
        """A word users wrote for ``term`` (for an embedder; the term itself if none): one of
        a request that holds it in clear."""
        with self._lock:
            if self._spelled[0] != self.generation:
                spelled: dict[str, str] = {}
                for tool in self._tools:
                    self._counts(tool)
                    for term_, spelling in self._tools[tool].clear.values():
                        spelled.setdefault(term_, spelling)
                self._spelled = (self.generation, spelled)
            return self._spelled[1].get(term, term)

    def snapshot(self) -> tuple[int, dict[str, dict[str, int]]]:
        """(generation, tool -> the terms that move it): what a learned index is built from."""
        with self._lock:
            taught = {tool: self.taught(tool) for tool in self._tools}
            return self.generation, {tool: terms for tool, terms in taught.items() if terms}


def _most_held(requests: list[LearnedRequest]) -> LearnedRequest:
    """The request to drop for room: the oldest of the principal holding the most (of those,
    the one whose oldest is oldest), so that eviction keeps the diversity of principals."""
    held: dict[str, list[LearnedRequest]] = {}
    for r in requests:  # oldest first
        held.setdefault(r.teacher, []).append(r)
    most = max(len(rs) for rs in held.values())
    return min((rs[0] for rs in held.values() if len(rs) == most), key=lambda r: (r.at, r.id))
