"""Tokenizing: identifier splitting (with properties), stemming, stop words, caching."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolmgmt_core._search import split_identifier, stem, tokenize
from toolmgmt_core._search.tokenize import tokenize_batch, tokenize_document

identifiers = st.text(
    alphabet=st.sampled_from("abcxyzABCXYZ0129_.-/ :"), min_size=0, max_size=40
) | st.from_regex(r"[a-z]+([A-Z][a-z]+|_[a-z0-9]+|\.[a-z]+|[A-Z]{2,4}[0-9]?)*", fullmatch=True)
any_text = st.text(max_size=60)


def _letters_and_digits(text: str) -> str:
    # lowercase letter by letter, dropping marks that lowercasing adds (U+0130 -> i + U+0307)
    return "".join(low for c in text if c.isalnum() for low in c.lower() if low.isalnum())


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("getHTTPResponse_v2.fetch", ["get", "http", "response", "v", "2", "fetch"]),
        ("send_email", ["send", "email"]),
        ("sendEmail", ["send", "email"]),
        ("SendEmail", ["send", "email"]),
        ("math.factorial", ["math", "factorial"]),
        ("list-open-PR", ["list", "open", "pr"]),
        ("parseJSONBody", ["parse", "json", "body"]),
        ("base64Encode", ["base", "64", "encode"]),
        ("café_Über", ["café", "über"]),
        ("__init__", ["init"]),
        ("", []),
    ],
)
def test_split_identifier_examples(name: str, words: list[str]) -> None:
    assert split_identifier(name) == words


@settings(max_examples=300, deadline=None)
@given(identifiers | any_text)
def test_split_identifier_never_loses_letters_or_digits(text: str) -> None:
    words = split_identifier(text)
    # casefold both sides: only context-dependent forms differ (Greek final sigma)
    assert "".join(words).casefold() == _letters_and_digits(text).casefold()


@settings(max_examples=300, deadline=None)
@given(identifiers | any_text)
def test_split_identifier_gives_lowercase_words_of_letters_and_digits(text: str) -> None:
    for word in split_identifier(text):
        assert word and word == word.lower()
        assert all(c.isalnum() for c in word)


@settings(max_examples=300, deadline=None)
@given(identifiers | any_text)
def test_split_identifier_is_idempotent_on_its_output(text: str) -> None:
    words = split_identifier(text)
    assert split_identifier(" ".join(words)) == words
    assert split_identifier("_".join(words)) == words


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("emails", "email"),
        ("emailing", "email"),
        ("emailed", "email"),
        ("queries", "queri"),  # a final consonant-y and -ie become i: query/queries meet
        ("query", "queri"),
        ("queried", "queri"),
        ("movies", "movi"),
        ("movie", "movi"),
        ("copying", "copi"),
        ("play", "play"),  # a vowel before the y: left alone
        ("running", "run"),
        ("stopped", "stop"),
        ("matches", "match"),
        ("status", "status"),
        ("analysis", "analysis"),
        ("gas", "gas"),  # short words are left alone
        ("v2", "v2"),
    ],
)
def test_stem(word: str, expected: str) -> None:
    assert stem(word) == expected


def test_tokenize_drops_stop_words_and_stems() -> None:
    assert tokenize("Send the invoices to my customers") == ["send", "invoice", "customer"]
    assert tokenize("Send the invoices", stopwords=False) == ["send", "the", "invoice"]
    assert tokenize("getWeatherForecasts for 3 cities") == ["weather", "forecast", "3", "citi"]
    assert tokenize("") == []


@settings(max_examples=200, deadline=None)
@given(any_text | identifiers)
def test_document_and_query_tokenizing_agree(text: str) -> None:
    # documents go through a per-word cache, queries through a per-text cache: same terms
    assert tokenize_document(text) == tokenize(text)
    assert tokenize(text) == tokenize(text)  # cached result is not shared mutable state


@settings(max_examples=150, deadline=None)
@given(st.lists(any_text | identifiers, max_size=8))
def test_batch_tokenizing_equals_text_by_text(texts: list[str]) -> None:
    positions, terms = tokenize_batch(texts)
    expected = [(i, term) for i, text in enumerate(texts) for term in tokenize_document(text)]
    assert list(zip(positions.tolist(), terms, strict=True)) == expected
