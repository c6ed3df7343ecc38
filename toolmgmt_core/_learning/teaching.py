"""Learning from use, the catalog's side: turning it on (:class:`LearningOptions`), checking and
redacting what is taught (:func:`redact`, :class:`Learning`), and what a lesson did
(:class:`LearnReport`).

Off by default: a catalog learns only when built with ``learning=LearningOptions(...)``. Then
:meth:`ToolCatalog.learn <toolmgmt_core._catalog.tool_catalog.ToolCatalog.learn>` takes pairs
``(request_text, tool_name[, conversation_id[, principal]])``, from a conversation whose search
led to a successful call of a tool it found
(:class:`~toolmgmt_core._learning.feedback.SearchFeedback` yields them) or from an imported log.
Before anything is kept:

- a pair naming a tool that is not in the catalog, or that ``where`` (the policy) does not let
  the conversation see, is ignored: a denied or hidden tool never learns; nor does a
  destructive one, unless :attr:`LearningOptions.destructive` opts in, or one that can send
  data out (:func:`~toolmgmt_core._learning.outbound.sends_data_out`: open-world, share, send,
  export...), unless :attr:`LearningOptions.outbound` opts in;
- the request is read as a search reads it (the last user turn, scaffolding dropped), secrets
  and personal data are removed (:func:`~toolmgmt_core._learning.redaction.redact`), and only its
  learned terms are kept, each in clear once enough principals taught it to the tool and as a
  keyed digest until then (:meth:`~toolmgmt_core._learning.requests.LearnedRequests.seal`);
- the principal and the conversation are kept as digests (counting needs no more), every
  digest an HMAC under a key kept outside the store (:mod:`~toolmgmt_core._learning.keys`;
  rows kept under another key are ignored, rows of the salt once kept in the store dropped,
  logged). A pair
  without a principal counts for the one anonymous principal; an import (``source="import"``,
  an operator's act) counts each conversation id as a principal unless given principals.

How what is kept moves the ranking, within which bounds, is
:mod:`toolmgmt_core._learning.requests`'s and :mod:`toolmgmt_core._learning.ranking`'s.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolmgmt_core._learning.companions import Companion, Companions
from toolmgmt_core._learning.keys import LearnedKey, learned_key
from toolmgmt_core._learning.outbound import sends_data_out
from toolmgmt_core._learning.ranking import LearnedWeights
from toolmgmt_core._learning.redaction import redact
from toolmgmt_core._learning.requests import (
    MAX_REQUEST_CHARS,
    LearnedRequest,
    LearnedRequests,
    learned_words,
)
from toolmgmt_core._learning.store import LearnedFile, LearnedStore
from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._search.request import read_request

__all__ = [
    "LearnReport",
    "Learning",
    "LearningOptions",
    "Pair",
    "redact",
]

logger = logging.getLogger("toolmgmt_core.learning")

Pair = (
    tuple[str, str]
    | tuple[str, str, str | None]
    | tuple[str, str, str | None, str | None]
)
"""``(request_text, tool_name[, conversation_id[, principal]])``."""


@dataclass(frozen=True)
class LearningOptions:
    """Learning from use, turned on (a catalog without them learns nothing).

    Usage::

        catalog = ToolCatalog(tools, learning=LearningOptions(store="learned.sqlite"))
        catalog.learn([("what's the weather in Riga", "get_weather", "conversation-17")])
    """

    store: str | Path | LearnedStore | None = None
    """Where what is learned is kept: a SQLite file (a path), a :class:`LearnedStore` (such as
    ``PostgresLearnedStore``, shared by replicas), or None (this process's memory only)."""
    key: str | bytes | None = field(default=None, repr=False)
    """The key of the store's digests (terms not yet in clear, principals, conversations),
    kept outside the store so that a copy of it reveals nothing: an operator's secret, the same
    on every replica. None: a SQLite file's own, kept beside it (``<file>.key``), or a random
    one when nothing is stored; a PostgreSQL store needs one
    (:func:`~toolmgmt_core._learning.keys.learned_key`)."""
    weights: LearnedWeights = field(default_factory=LearnedWeights)
    """How much the learned field weighs in keyword and hybrid search."""
    min_principals: int = 3
    """A term moves a tool, and is kept in clear, only once this many different principals
    taught it (all conversations of one principal count once)."""
    max_per_tool: int = 32
    """Requests kept per tool (past it, the principal holding most gives up its oldest)."""
    max_per_principal: int = 2
    """Requests one principal may keep per tool (its most recent)."""
    destructive: bool = False
    """Whether destructive tools (``destructiveHint``) may learn: off, they gain no rank from
    learning."""
    outbound: bool = False
    """Whether tools that can send data out (open-world, share, send, export:
    :func:`~toolmgmt_core._learning.outbound.sends_data_out`) may learn: off, they gain no rank
    from learning."""
    max_request_chars: int = MAX_REQUEST_CHARS
    """A request is cut to this many characters."""
    companion_principals: int | None = None
    """A tool is suggested beside a search's hit (:mod:`~toolmgmt_core._learning.companions`)
    only once this many different principals used the two in one conversation (None:
    :attr:`min_principals`)."""
    from_use: bool = True
    """Whether the sessions of a manager over this catalog teach it: a search whose results
    led to a successful call of a tool they found (:class:`~toolmgmt_core._learning.from_use.
    UseLearner`). False: only :meth:`learn` (imports, ``toolmgmt catalog learn``) teaches."""

    def __post_init__(self) -> None:
        names = ["min_principals", "max_per_tool", "max_per_principal"]
        if self.companion_principals is not None:
            names.append("companion_principals")
        for name in names:
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ConfigError(
                    f"LearningOptions.{name} must be a whole number >= 1, got {value!r}."
                )
        if not isinstance(self.max_request_chars, int) or self.max_request_chars < 20:
            raise ConfigError(
                "LearningOptions.max_request_chars must be a whole number >= 20, got "
                f"{self.max_request_chars!r}."
            )
        for name in ("destructive", "outbound"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(
                    f"LearningOptions.{name} must be True or False, got {getattr(self, name)!r}."
                )
        if self.store is not None and not isinstance(self.store, str | Path | LearnedStore):
            raise ConfigError(
                "LearningOptions.store must be a file path, a LearnedStore (load, add, discard, "
                f"forget) or None, got {type(self.store).__name__}."
            )


@dataclass
class LearnReport:
    """What :meth:`ToolCatalog.learn <toolmgmt_core._catalog.tool_catalog.ToolCatalog.learn>`
    did with each pair."""

    learned: list[LearnedRequest] = field(default_factory=list)
    """The requests kept (redacted, with their store ids)."""
    ignored: list[tuple[int, str, str]] = field(default_factory=list)
    """(position of the pair, tool name as given, why) for each pair left out."""

    def __bool__(self) -> bool:
        return bool(self.learned)

    def to_dict(self) -> dict[str, Any]:
        return {
            "learned": [r.to_dict() for r in self.learned],
            "ignored": [
                {"pair": position, "tool": tool, "reason": reason}
                for position, tool, reason in self.ignored
            ],
        }


class Learning:
    """A catalog's learning: the options, the store and what is held in memory.

    Made by the catalog from its :class:`LearningOptions`; :meth:`learn` is what
    ``ToolCatalog.learn`` runs.
    """

    def __init__(self, options: LearningOptions) -> None:
        self.options = options
        store = options.store
        self.store: LearnedStore | None = (
            LearnedFile(store) if isinstance(store, str | Path) else store
        )
        self.key: LearnedKey = learned_key(options.key, self.store)
        """The key of the digests kept (outside the store)."""
        self.requests = LearnedRequests(
            max_per_tool=options.max_per_tool,
            max_per_principal=options.max_per_principal,
            min_principals=options.min_principals,
            salt=self.key.terms,
        )
        self.companions = Companions(
            self.requests,
            min_principals=options.companion_principals or options.min_principals,
            unknown_conversation=self.key.conversation(""),
        )
        """Which tools conversations used together (:meth:`companions_of` asks it)."""
        self._lock = threading.Lock()
        self._foreign = 0
        if self.store is not None:
            loaded = self.store.load()
            salted = [r for r in loaded if r.principal and "." not in r.principal]
            if salted:  # kept under the salt the store held: readable from a copy of it
                self.store.discard(r.id for r in salted)
                logger.warning(
                    "learning: dropped %d learned requests kept under the salt the store held "
                    "(a copy of the store could be read back); they are learned again from use",
                    len(salted),
                )
            self.absorb(r for r in loaded if r.principal and "." in r.principal)
            self._reseal([r for r in loaded if not r.principal])

    def _reseal(self, legacy: list[LearnedRequest]) -> None:
        """Rewrite rows kept before principals were counted (their text in clear) as today's:
        redacted terms, digests below the threshold, their conversation as their principal."""
        if not legacy or self.store is None:
            return
        rekey = {r.conversation: self.key.conversation(f"legacy:{r.conversation}") for r in legacy}
        who = {old: f"{self.key.id}.{new}" for old, new in rekey.items()}
        pending: dict[tuple[str, str], set[str]] = {}
        fresh = [
            LearnedRequest(
                r.tool,
                self.requests.seal(r.tool, who[r.conversation], words, pending),
                rekey[r.conversation],
                r.at,
                0,
                r.source,
                who[r.conversation],
            )
            for r in legacy
            if (words := learned_words(redact(r.text)))
        ]
        kept = self.store.add(fresh) if fresh else []
        self.store.discard(r.id for r in legacy)
        self.absorb(kept)

    def absorb(self, requests: Iterable[LearnedRequest], *, replace: bool = False) -> int:
        """Hold requests already checked and kept (loaded, or learned by another replica);
        ``replace`` forgets everything held first. Returns how many were new. Rows kept under
        another key (an earlier one, a replica given another) are ignored, logged once."""
        with self._lock:
            if replace:
                self.requests.remove()
            new = foreign = 0
            for r in requests:
                if self.key.owns(r.principal):
                    new += self.requests.add(r) is None
                else:
                    foreign += 1
            if foreign and not self._foreign:
                logger.warning(
                    "learning: ignoring %d learned requests kept under another key than %r "
                    "(an earlier key, or a replica given another one); forget them, or give "
                    "every replica the same key",
                    foreign,
                    self.key,
                )
            self._foreign += foreign
            return new

    def learn(
        self,
        pairs: Iterable[Pair],
        tools: Callable[[str], Tool | None],
        *,
        where: Callable[[Tool], bool] | None = None,
        source: str = "import",
    ) -> LearnReport:
        """Check, redact, seal and keep ``pairs`` (see the module docstring)."""
        report = LearnReport()
        now = time.time()
        checked: list[tuple[int, str, Tool, str, str]] = []
        seen: set[tuple[str, str, str]] = set()
        for position, pair in enumerate(pairs):
            found = self._check(position, pair, tools, where, report)
            if found is None:
                continue
            text, tool, conversation, principal = found
            if principal is None and source == "import":
                principal = conversation  # an operator's log: its conversations are its users
            who = self.key.principal(principal)
            key = (tool.name, " ".join(sorted(t for t, _ in learned_words(text))), who)
            if key in seen:
                report.ignored.append((position, tool.name, "a duplicate of a learned request"))
                continue
            seen.add(key)
            checked.append((position, text, tool, self.key.conversation(conversation or ""), who))
        if not checked:
            return report
        with self._lock:
            pending: dict[tuple[str, str], set[str]] = {}
            fresh = [
                LearnedRequest(
                    tool.name,
                    self.requests.seal(tool.name, who, learned_words(text), pending),
                    conversation,
                    now,
                    0,
                    source,
                    who,
                )
                for _, text, tool, conversation, who in checked
            ]
            kept = self.store.add(fresh) if self.store is not None else fresh
            evicted: list[int] = []
            for request in kept:
                before = {r.id for r in self.requests.requests(request.tool)}
                reason = self.requests.add(request)
                if reason is not None:
                    report.ignored.append((-1, request.tool, reason))
                    evicted.append(request.id)
                    continue
                report.learned.append(request)
                after = {r.id for r in self.requests.requests(request.tool)}
                evicted += [i for i in before - after if i]
            if self.store is not None and evicted:
                self.store.discard(evicted)
        return report

    def _check(
        self,
        position: int,
        pair: Any,
        tools: Callable[[str], Tool | None],
        where: Callable[[Tool], bool] | None,
        report: LearnReport,
    ) -> tuple[str, Tool, str | None, str | None] | None:
        """The pair's request (read, redacted, cut), tool, conversation id and principal, or
        None (the reason reported)."""

        def ignore(name: Any, reason: str) -> None:
            report.ignored.append((position, str(name)[:200], reason))

        if not isinstance(pair, Sequence) or isinstance(pair, str) or len(pair) not in (2, 3, 4):
            ignore("", "not a pair: give (request_text, tool_name[, conversation_id[, principal]])")
            return None
        text, name = pair[0], pair[1]
        conversation = pair[2] if len(pair) >= 3 else None
        principal = pair[3] if len(pair) == 4 else None
        if not isinstance(text, str) or not isinstance(name, str):
            ignore(name, "the request text and the tool name must be strings")
            return None
        if conversation is not None and not isinstance(conversation, str):
            ignore(name, "the conversation id must be a string or None")
            return None
        if principal is not None and (not isinstance(principal, str) or not principal):
            ignore(name, "the principal must be a non-empty string or None")
            return None
        tool = tools(name)
        if tool is None:
            ignore(name, "no tool of this name in the catalog")
            return None
        if where is not None and not where(tool):
            ignore(name, "the tool is not permitted here (a hidden or denied tool never learns)")
            return None
        if tool.annotations.destructive is True and not self.options.destructive:
            ignore(name, "a destructive tool learns only with LearningOptions(destructive=True)")
            return None
        if not self.options.outbound and sends_data_out(tool):
            ignore(
                name, "a tool that sends data out learns only with LearningOptions(outbound=True)"
            )
            return None
        request = redact(read_request(text[: 20 * self.options.max_request_chars]).focus)
        request = " ".join(request.split())[: self.options.max_request_chars]
        if not learned_words(request):
            ignore(name, "the request holds no search term")
            return None
        return request, tool, conversation, principal

    def companions_of(
        self,
        hits: Sequence[str],
        limit: int,
        tools: Callable[[str], Tool | None],
        where: Callable[[Tool], bool] | None = None,
    ) -> list[Companion]:
        """Up to ``limit`` tools often used with ``hits``: catalog tools ``where`` allows, none
        destructive or sending data out unless those may learn (:attr:`LearningOptions.destructive`,
        :attr:`LearningOptions.outbound`)."""

        def allowed(name: str) -> bool:
            tool = tools(name)
            if tool is None or tool.name != name or (where is not None and not where(tool)):
                return False
            if tool.annotations.destructive is True and not self.options.destructive:
                return False
            return self.options.outbound or not sends_data_out(tool)

        return self.companions.suggest(hits, limit, allowed=allowed)

    def forget(
        self,
        tool: str | None = None,
        *,
        conversation: str | None = None,
        principal: str | None = None,
    ) -> int:
        """Forget a tool's requests, one conversation's (its id, not a digest), one
        principal's (its name), or all of them when all are None; kept in the store too.
        Returns how many were held here."""
        digest = self.key.conversation(conversation) if conversation is not None else None
        who = self.key.principal(principal) if principal is not None else None
        with self._lock:
            if self.store is not None:
                if who is None:
                    self.store.forget(tool, conversation=digest)
                else:
                    self.store.forget(tool, conversation=digest, principal=who)
            return len(self.requests.remove(tool, conversation=digest, principal=who))
