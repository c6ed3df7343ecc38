"""Splitting one user request into the separate needs it expresses.

A request such as "book a flight to Paris, then email the itinerary to Ann" needs two tools.
Searched as one bag of words, the longer need drowns the shorter one; searched clause by clause,
each need gets its own ranking, and :mod:`toolmgmt_core._search.fusion` merges them so every need
is covered near the top. The rules below are plain English discourse structure (sentences,
list items, sequencing words), nothing tied to a catalog:

- sentence ends (``.``, ``!``, ``?`` before a capital, a digit or a quote), ``;`` and new lines;
- numbered or bulleted items (``1.``, ``2)``, ``-``, ``*``, ``•``);
- sequencing connectives: "then", "after that", "afterwards", "also", "additionally",
  "furthermore", "moreover", "as well as"; ordinals ("first", "second", "next", "finally",
  "lastly"...) only where they open a clause or are followed by a comma, so that "the second
  point" or "the next 5 days" stay whole;
- "and" when every side holds at least two search terms ("book a flight and email the
  itinerary"); "salt and pepper" stays whole. "and" also joins nouns ("the area and perimeter of
  a circle"): such a split costs little, since the whole request is ranked too and each clause
  keeps some of its context (:data:`CLAUSE_CONTEXT_WEIGHT`).
"""

from __future__ import annotations

import re

from toolmgmt_core._search.tokenize import tokenize

__all__ = ["CLAUSE_CONTEXT_WEIGHT", "MAX_CLAUSES", "MIN_CLAUSE_TERMS", "split_query"]

CLAUSE_CONTEXT_WEIGHT = 0.15
"""A clause is scored with this share of the whole request's scores added.

Clauses lose context ("use the same function again", "for the same day"); a little of the whole
request brings it back and breaks ties between near-duplicate tools. On the BFCL dev split any
value from 0.1 to 0.3 covers all needs in the top 5 about 3 points more often than 0; at 0.5
the whole request starts to drown the clause again.
"""

MIN_CLAUSE_TERMS = 3
"""A sentence with fewer search terms than this (numbers aside) is not a need of its own but part
of its neighbour's ("Can you find one for me?", "I'll be in Paris."): it joins the sentence
before it (a first sentence joins the next) before the sentences are split further. Ranked
alone, such a sentence's best tool took a slot in the first hits for a need nobody had. Within
a sentence, "and" already splits only between sides of two terms or more ("book a flight and
email the itinerary")."""

MAX_CLAUSES = 12
"""At most this many clauses are searched for one request (the rest are merged into the last)."""

_SENTENCE = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|\s*[;\n]+\s*")
_ITEM = re.compile(r"(?:^|\s)(?:\(?\d{1,2}[.)]|[-*\u2022])\s+")
_CONNECTIVE = re.compile(
    r"(?:,\s*|\s+|^)(?:and\s+)?\b(?:then|after\s+that|afterwards|also|additionally|furthermore|"
    r"moreover|as\s+well\s+as)\b[,:]?\s*"
    r"|(?:^|,\s*)(?:and\s+)?(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|fourth(?:ly)?|fifth|next|"
    r"finally|lastly|last(?:\s+of\s+all)?|in\s+addition(?:\s+to\s+(?:that|this))?)\b[,:]?\s*"
    r"|\b(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|next|finally|lastly)\s*,\s*",
    re.IGNORECASE,
)
_AND = re.compile(r",?\s+and\s+", re.IGNORECASE)
# A new question: "how"/"what" after a comma ("..., how long does it take"), any question word
# after "and" ("... and who approved it"). A bare comma before "which", "where", "whose"...
# opens a relative clause ("restaurants near me, which are open now"), not a new need.
_QUESTION = re.compile(
    r",\s*(?:and\s+)?(?=(?:what|how)\b)|,?\s+and\s+(?=(?:what|how|which|where|when|who|whose)\b)",
    re.IGNORECASE,
)
_QUESTION_WORDS = frozenset({"how", "who", "whose", "what", "which", "where", "when", "why"})
_STRIP = " \t,.;:!?\"'()[]"


def _separate_needs(pieces: list[str]) -> bool:
    """Whether a clause's pieces are separate needs: each names at least two things and none
    ends on a question word ("is it open, and how late", "find out what and how much to order"
    and "salt and pepper" stay whole)."""
    return (
        len(pieces) > 1
        and all(len([t for t in tokenize(p) if t not in _QUESTION_WORDS]) >= 2 for p in pieces)
        and not any(p.split()[-1].lower() in _QUESTION_WORDS for p in pieces[:-1])
    )


def _split_at(pattern: re.Pattern[str], clause: str) -> list[str]:
    """``clause`` split at ``pattern`` when the pieces are separate needs, else whole."""
    pieces = [p.strip(_STRIP) for p in pattern.split(clause)]
    return pieces if _separate_needs(pieces) else [clause]


def _size(clause: str) -> int:
    return sum(not t.isdigit() for t in tokenize(clause))


def _join_short(sentences: list[str]) -> list[str]:
    """``sentences`` with each of fewer than :data:`MIN_CLAUSE_TERMS` terms joined to a
    neighbour."""
    joined: list[str] = []
    for sentence in sentences:
        if joined and (_size(sentence) < MIN_CLAUSE_TERMS or _size(joined[-1]) < MIN_CLAUSE_TERMS):
            joined[-1] = f"{joined[-1]} {sentence}"
        else:
            joined.append(sentence)
    return joined


def split_query(text: str) -> list[str]:
    """The clauses of ``text`` that each express a need, in order.

    Returns ``[text]`` when there is nothing to split; clauses without any search term
    ("Can you help?" is kept, a lone "5" is not) are dropped.

    >>> split_query("Book a flight to Paris and email the itinerary to Ann")
    ['Book a flight to Paris', 'email the itinerary to Ann']
    >>> split_query("Find the area of a circle. Then convert 5 EUR to USD.")
    ['Find the area of a circle', 'convert 5 EUR to USD']
    """
    clauses: list[str] = []
    for sentence in _join_short([s for s in _SENTENCE.split(text) if _size(s)]):
        for item in _ITEM.split(sentence):
            for piece in _CONNECTIVE.split(item):
                piece = piece.strip(_STRIP)
                if piece:
                    clauses.extend(
                        c for q in _split_at(_QUESTION, piece) for c in _split_at(_AND, q)
                    )
    clauses = [c for c in clauses if any(not t.isdigit() for t in tokenize(c))]
    if len(clauses) > MAX_CLAUSES:
        clauses = [*clauses[: MAX_CLAUSES - 1], " ".join(clauses[MAX_CLAUSES - 1 :])]
    return clauses or [text]
