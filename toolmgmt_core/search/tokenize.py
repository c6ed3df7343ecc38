"""Turning tool names, descriptions and queries into search terms."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["split_identifier", "stem", "tokenize"]

# A word boundary inside an identifier: lower->Upper, ACRONYMWord, letter<->digit.
_CAMEL = re.compile(
    r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])|(?<=[A-Za-z])(?=\d)|(?<=\d)(?=[A-Za-z])"
)
_NON_WORD = re.compile(r"[^0-9A-Za-z]+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)

_STOPWORDS = frozenset(
    """a an and are as at be by for from has have i in is it its me my of on or our please
    the their them then this to us was we what when where which will with you your can could
    would should do does did get given""".split()
)


def split_identifier(name: str) -> list[str]:
    """Split an identifier into lowercase words: snake_case, camelCase, dots, dashes, digits.

    >>> split_identifier("getHTTPResponse_v2.fetch")
    ['get', 'http', 'response', 'v', '2', 'fetch']
    """
    words: list[str] = []
    for chunk in _NON_WORD.split(name):
        if chunk:
            words.extend(part.lower() for part in _CAMEL.split(chunk) if part)
    return words


def stem(word: str) -> str:
    """A light, predictable suffix stripper (plural and verb endings).

    Deliberately conservative: it maps ``emails``/``emailing``/``emailed`` to ``email`` and
    ``queries`` to ``query`` but leaves short words alone, so that rare technical terms survive.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, repl, min_len in (
        ("ies", "y", 5),
        ("sses", "ss", 5),
        ("ing", "", 6),
        ("ed", "", 5),
        ("es", "", 5),
        ("s", "", 4),
    ):
        if word.endswith(suffix) and len(word) >= min_len:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            if suffix == "es" and not word.endswith(("ches", "shes", "xes", "sses", "zes")):
                continue
            base = word[: len(word) - len(suffix)] + repl
            if suffix in ("ing", "ed") and len(base) >= 4 and base[-1] == base[-2]:
                base = base[:-1]  # running -> run(n), stopped -> stop(p)
            return base
    return word


def tokenize(text: str, *, stopwords: bool = True) -> list[str]:
    """Search terms of ``text``: identifiers split, lowercased, stemmed, stop words dropped."""
    terms: list[str] = []
    for word in _WORD.findall(text):
        for part in split_identifier(word) if not word.isdigit() else [word]:
            if stopwords and part in _STOPWORDS:
                continue
            terms.append(stem(part))
    return terms


def tokenize_many(texts: Iterable[str]) -> list[str]:
    """:func:`tokenize` over several texts, concatenated."""
    out: list[str] = []
    for text in texts:
        out.extend(tokenize(text))
    return out
