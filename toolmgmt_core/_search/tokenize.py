"""Turning tool names, descriptions and queries into search terms."""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import chain

import numpy as np

__all__ = [
    "STOPWORDS",
    "WordRows",
    "split_identifier",
    "stem",
    "tokenize",
    "tokenize_batch",
    "tokenize_document",
    "tokenize_many",
    "tokenize_rows",
]

# A word boundary inside an identifier: lower->Upper, ACRONYMWord, letter<->digit.
_CAMEL = re.compile(
    r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])|(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])"
)
# Anything that is neither a letter nor a digit separates words (underscores, dots, dashes...).
_NON_WORD = re.compile(r"[\W_]+")

STOPWORDS = frozenset(
    """a an and are as at be by for from has have i in is it its me my of on or our please
    the their them then this to us was we what when where which will with you your can could
    would should do does did get given""".split()
)
"""English function words dropped from documents and queries alike (they carry no topic)."""


def split_identifier(name: str) -> list[str]:
    """Split an identifier (or any text) into lowercase words.

    snake_case, camelCase, PascalCase, ACRONYMWords, dots, dashes, spaces and letter/digit
    boundaries all separate words; every letter and digit is kept, nothing else is.

    >>> split_identifier("getHTTPResponse_v2.fetch")
    ['get', 'http', 'response', 'v', '2', 'fetch']
    """
    words: list[str] = []
    for chunk in _NON_WORD.split(name):
        if chunk:
            for part in _CAMEL.split(chunk):
                if part.isascii():
                    words.append(part.lower())
                elif part:
                    # Lowercasing may add combining marks (U+0130 -> "i" + U+0307): keep only
                    # letters and digits, so that splitting the output again changes nothing.
                    folded = "".join(c for c in part.lower() if c.isalnum())
                    if folded:
                        words.append(folded)
    return [w for w in words if w]


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light, predictable suffix stripper (plural and verb endings).

    Deliberately conservative: it maps ``emails``/``emailing``/``emailed`` to ``email`` but
    leaves short words alone, so that rare technical terms survive. A final ``y`` after a
    consonant and a final ``ie`` both become ``i`` (as in Porter's stemmer), so that the
    forms of one word meet whichever way its plural is spelt: ``query``/``queries``/
    ``queried`` -> ``queri``, ``movie``/``movies`` -> ``movi``, ``copy``/``copies``/
    ``copying`` -> ``copi``. A full Porter/Snowball stemmer measured no better on the BFCL dev
    split and conflates more technical words (``calculation``/``calculus``), so this one
    stays. Cached: a catalog's vocabulary is small next to its word count, which makes
    indexing 100k tools cheap.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    base = word
    for suffix, repl, min_len in (
        ("ies", "i", 5),
        ("sses", "ss", 5),
        ("ing", "", 6),
        ("ed", "", 5),
        ("es", "", 5),
        ("s", "", 4),
    ):
        if word.endswith(suffix) and len(word) >= min_len:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                break
            if suffix == "es" and not word.endswith(("ches", "shes", "xes", "sses", "zes")):
                continue
            base = word[: len(word) - len(suffix)] + repl
            if suffix in ("ing", "ed") and len(base) >= 4 and base[-1] == base[-2]:
                base = base[:-1]  # running -> run(n), stopped -> stop(p)
            break
    if len(base) >= 4 and base.endswith("y") and base[-2] not in "aeiou":
        return base[:-1] + "i"  # query, queried and queries meet at queri
    if len(base) >= 5 and base.endswith("ie"):
        return base[:-1]  # movie and movies meet at movi
    return base


def tokenize(text: str, *, stopwords: bool = True) -> list[str]:
    """Search terms of ``text``: identifiers split, lowercased, stemmed, stop words dropped."""
    if not stopwords:
        return [stem(part) for part in split_identifier(text)]
    return list(_tokenize_query(text))


@lru_cache(maxsize=4096)
def _tokenize_query(text: str) -> tuple[str, ...]:
    # Cached: agents repeat queries, and a split request re-tokenizes its clauses.
    return tuple(tokenize_document(text))


_WORD = re.compile(r"[^\W_]+")
_WORD_TERMS: dict[str, tuple[str, ...]] = {}
_WORD_CACHE_SIZE = 500_000


def _word_terms(word: str) -> tuple[str, ...]:
    terms = tuple(stem(p) for p in split_identifier(word) if p not in STOPWORDS)
    if len(_WORD_TERMS) >= _WORD_CACHE_SIZE:
        _WORD_TERMS.clear()
    _WORD_TERMS[word] = terms
    return terms


def tokenize_document(text: str) -> list[str]:
    """:func:`tokenize` without the per-text cache, for indexing many texts once each.

    Words are analysed once each and remembered (a catalog repeats its words endlessly), so
    the cost per text is one regex scan plus a dictionary look-up per word: indexing 100,000
    tools takes a few seconds instead of a minute.
    """
    words = _WORD.findall(text)
    found = list(map(_WORD_TERMS.get, words))  # no Python-level loop while words are known
    if None in found:
        found = [f if f is not None else _word_terms(w) for f, w in zip(found, words, strict=True)]
    return list(chain.from_iterable(found))  # type: ignore[arg-type]


_SEPARATOR = "\x00"
_BATCH_WORD = re.compile(r"[^\W_]+|\x00")


def tokenize_batch(texts: Sequence[str]) -> tuple[np.ndarray, list[str]]:
    """:func:`tokenize_document` over many texts at once: (text position per term, terms).

    One regex scan over all the texts joined, each distinct word analysed once, and the
    expansion of words into terms done with numpy: no Python loop per word or per text, which
    is what makes indexing 100,000 tools fast.
    """
    joined = _SEPARATOR.join(texts)
    if joined.count(_SEPARATOR) != max(len(texts) - 1, 0):  # a text holds the separator
        per_text = [tokenize_document(t) for t in texts]
        positions = np.repeat(np.arange(len(texts)), [len(t) for t in per_text])
        return positions, list(chain.from_iterable(per_text))
    words = _BATCH_WORD.findall(joined)
    distinct = list(dict.fromkeys(words))
    expansions = [
        () if w == _SEPARATOR else (_WORD_TERMS.get(w) or _word_terms(w)) for w in distinct
    ]
    word_ids = np.fromiter(
        map({w: i for i, w in enumerate(distinct)}.__getitem__, words),
        dtype=np.int64,
        count=len(words),
    )
    is_separator = np.zeros(len(distinct), dtype=bool)
    if _SEPARATOR in distinct:
        is_separator[distinct.index(_SEPARATOR)] = True
    text_of_word = np.cumsum(is_separator[word_ids])  # separators before each word
    sizes = np.fromiter(map(len, expansions), dtype=np.int64, count=len(expansions))
    starts = np.cumsum(sizes) - sizes
    per_word = sizes[word_ids]
    total = int(per_word.sum())
    first = np.repeat(starts[word_ids], per_word)
    offset = np.arange(total) - np.repeat(np.cumsum(per_word) - per_word, per_word)
    pool = np.empty(int(sizes.sum()), dtype=object)  # gather in numpy: no int per term
    pool[:] = list(chain.from_iterable(expansions))
    terms: list[str] = pool[first + offset].tolist()
    return np.repeat(text_of_word, per_word), terms


class WordRows(dict[str, tuple[int, ...]]):
    """Word to the vocabulary rows of its terms, for :func:`tokenize_rows`; a word not seen
    yet is analysed on look-up, and its new terms join :attr:`vocab` with the next rows."""

    def __init__(self) -> None:
        super().__init__()
        self.vocab: dict[str, int] = {}
        """Term to row, in order of first occurrence."""

    def __missing__(self, word: str) -> tuple[int, ...]:
        vocab = self.vocab
        terms = _WORD_TERMS.get(word) or _word_terms(word)
        rows = tuple(vocab.setdefault(t, len(vocab)) for t in terms)
        self[word] = rows
        return rows


def tokenize_rows(texts: Iterable[str], words: WordRows) -> tuple[array[int], array[int]]:
    """:func:`tokenize_document` over many texts, straight to vocabulary rows: (how many terms
    each text has, every term's row, text after text).

    Pass one ``words`` for all the texts of a catalog (every field): each distinct word is
    analysed once, and no string or int object is made per term, only per distinct word, so
    indexing 100,000 tools keeps 4 bytes a term rather than a list of strings.
    """
    rows: array[int] = array("i")
    counts: array[int] = array("i")
    rows_of = words.__getitem__  # a known word costs a dict look-up in C, no Python call
    findall = _WORD.findall
    extend = rows.extend
    for text in texts:
        before = len(rows)
        extend(chain.from_iterable(map(rows_of, findall(text))))
        counts.append(len(rows) - before)
    return counts, rows


def tokenize_many(texts: Iterable[str]) -> list[str]:
    """:func:`tokenize` over several texts, concatenated."""
    out: list[str] = []
    for text in texts:
        out.extend(tokenize(text))
    return out
