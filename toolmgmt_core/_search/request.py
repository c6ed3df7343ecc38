"""What a request asks for, as opposed to what it carries along.

A search request is often not a clean query: an agent passes the user's turn as it came, with
a chat transcript or a system prompt in front of it, the whole wrapped in quotes or in a JSON
object, and with text the user wants a tool to work on (a message to send, a passage to
translate, a list of customer questions to classify). Every word of that counts the same in a
bag of words, so the boilerplate and the payload outvote the few words that name the need.

:func:`read_request` separates the parts (general rules of chat transcripts and quoting,
nothing tied to a catalog):

- scaffolding around the request is dropped: quotes or backticks enclosing all of it, and a
  JSON wrapper such as ``{"input": "..."}`` (the string inside is the request);
- in a transcript with role markers (``USER:``, ``Human:``, ``ASSISTANT:``, ``System:``...),
  the last user turn is the request (the *focus*); the earlier turns and the system prompt are
  *context*, each of their terms kept once at :data:`CONTEXT_WEIGHT`, so that "do the same for
  Paris" still leans on them but a long transcript cannot outweigh the request;
- quoted passages and code blocks of several words inside the request are *payload*, kept at
  :data:`PAYLOAD_WEIGHT`: "translate 'What is your name?' to French" is about translating, not
  about names. A short quoted name ("the 'list_files' command") is a need and counts fully.

:func:`request_terms` turns the parts into weighted search terms for BM25;
:attr:`Request.focus` is the text that clauses are split from and that an embedder reads.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from toolmgmt_core._search.tokenize import tokenize

__all__ = [
    "CONTEXT_WEIGHT",
    "PAYLOAD_MIN_WORDS",
    "PAYLOAD_WEIGHT",
    "Request",
    "read_request",
    "request_terms",
]

CONTEXT_WEIGHT = 0.25
"""What a term of an earlier turn or a system prompt counts, against 1 for the last user turn."""

PAYLOAD_WEIGHT = 0.3
"""What a term inside a quoted passage or code block counts, against 1 for the request's own
words. Not 0: a quoted passage sometimes names the need ("search for 'cheap flights'")."""

PAYLOAD_MIN_WORDS = 3
"""A quoted span of at least this many words (or any code block) is payload."""

_PAIRS = {'"': '"', "'": "'", "`": "`", "\u201c": "\u201d", "\u2018": "\u2019"}
_JSON_MEMBER = re.compile(r'^"[\w ]{1,40}"\s*:\s*(?=")')  # "input": "...", braces lost
_LONE_QUOTE = re.compile(r"(?<![^\W_])'|'(?![^\W_])")  # a quote, not an apostrophe
_ROLE = re.compile(
    r"(?:^|\n|\\n|(?<=[.!?\"'])\s+)\s*(?:<\|)?(?P<role>user|human|assistant|ai|bot|system|"
    r"model)(?:\|>)?\s*:\s*",
    re.IGNORECASE,
)
# Without any of these there is nothing to read: no quote, no JSON, no role marker.
_MARKUP = re.compile(r"[\"'`{\[:\u201c\u2018]")
_USER_ROLES = frozenset({"user", "human"})
_QUOTED = re.compile(
    r"```.*?(?:```|$)"  # a code block (an unclosed one runs to the end)
    r"|`[^`\n]+`"
    r"|\"[^\"\n]+\""
    r"|\u201c[^\u201d]+\u201d"
    r"|(?<![^\W_])'[^'\n]+'(?![^\W_])",  # 'single quotes', not the apostrophe in "it's"
    re.DOTALL,
)


@dataclass(frozen=True)
class Request:
    """A request read into its parts."""

    focus: str
    """What the user asks for now: the last user turn, scaffolding removed."""
    context: str = ""
    """Earlier turns and the system prompt ("" when the request is a single turn)."""


def _unwrap(text: str) -> str:
    """``text`` without enclosing quotes and without a JSON wrapper around its strings."""
    text = text.strip()
    for _ in range(4):  # a wrapper inside a wrapper, but never loop long on crafted input
        before = text
        text = _JSON_MEMBER.sub("", text)
        if text[:1] in ("{", "[", '"'):
            try:
                strings = _json_strings(json.loads(text))
            except ValueError:
                strings = []
            if strings:
                text = "\n".join(strings).strip()
        if len(text) >= 2 and _PAIRS.get(text[0]) == text[-1]:
            inner = text[1:-1]
            if text[0] == "'":  # apostrophes inside ("it's") do not count as quotes
                nested = _LONE_QUOTE.search(inner) is not None
            else:
                nested = text[0] in inner or text[-1] in inner
            if not nested:  # one pair of quotes around everything
                text = inner.strip()
        if text == before:
            break
    return text


def _json_strings(value: object) -> list[str]:
    """The strings of a JSON value: itself, or the string members of an object or list."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [v for v in value.values() if isinstance(v, str) and v.strip()]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str) and v.strip()]
    return []


_CACHED_LENGTH = 4_000
"""Longer requests are read afresh each time rather than kept (a cache of long transcripts
would hold megabytes); a search reads its request two or three times, cheaply."""


def read_request(text: str) -> Request:
    """Split ``text`` into its focus and its context (see the module docstring).

    >>> read_request('"System: You are a travel agent. User: book me a flight"')
    Request(focus='book me a flight', context='You are a travel agent.')
    """
    return _read_cached(text) if len(text) <= _CACHED_LENGTH else _read(text)


def _read(text: str) -> Request:
    if not _MARKUP.search(text):
        return Request(text.strip())
    text = _unwrap(text)
    turns: list[tuple[str, str]] = []
    markers = list(_ROLE.finditer(text))
    if not markers:
        return Request(text)
    if markers[0].start() > 0:
        turns.append(("system", text[: markers[0].start()]))
    for marker, following in zip(markers, [*markers[1:], None], strict=True):
        end = following.start() if following is not None else len(text)
        turns.append((marker.group("role").lower(), text[marker.end() : end]))
    turns = [(role, body.strip().replace("\\n", "\n")) for role, body in turns]
    users = [i for i, (role, body) in enumerate(turns) if role in _USER_ROLES and body]
    if not users:
        return Request(text)
    last = users[-1]
    context = " ".join(body for i, (_, body) in enumerate(turns) if i != last and body)
    return Request(_unwrap(turns[last][1]), context)


def _payload_spans(text: str) -> list[tuple[int, int]]:
    """Where the quoted passages and code blocks of several words are in ``text``."""
    spans = []
    for match in _QUOTED.finditer(text):
        span = match.group(0)
        if span.startswith("```") or len(span.split()) >= PAYLOAD_MIN_WORDS:
            spans.append(match.span())
    return spans


def request_terms(text: str) -> tuple[tuple[str, float], ...]:
    """The search terms of ``text``, each with its weight (1 for the request's own words).

    A term repeated in the request counts once per occurrence (as BM25 counts a query); a
    term of the context counts once however often it comes back, so that a long system prompt
    or transcript cannot outweigh the request.
    """
    return _terms_cached(text) if len(text) <= _CACHED_LENGTH else _terms(text)


def _terms(text: str) -> tuple[tuple[str, float], ...]:
    if not _MARKUP.search(text):  # the common case, kept cheap: every search reads its text
        return tuple((term, 1.0) for term in tokenize(text))
    request = read_request(text)
    terms: list[tuple[str, float]] = []
    focus = request.focus
    position = 0
    for start, end in _payload_spans(focus):
        terms += [(t, 1.0) for t in tokenize(focus[position:start])]
        terms += [(t, PAYLOAD_WEIGHT) for t in tokenize(focus[start:end])]
        position = end
    terms += [(t, 1.0) for t in tokenize(focus[position:])]
    if request.context:  # each term once: a long system prompt names a topic, not a need
        terms += [(t, CONTEXT_WEIGHT) for t in dict.fromkeys(tokenize(request.context))]
    return tuple(terms)


_read_cached = lru_cache(maxsize=1024)(_read)
_terms_cached = lru_cache(maxsize=4096)(_terms)
