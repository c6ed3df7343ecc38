from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolmgmt_core._model.provider_names import (
    build_name_map,
    provider_name,
    resolve_provider_name,
)

_ANTHROPIC = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_GEMINI = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$")


def test_valid_names_are_unchanged() -> None:
    assert provider_name("search_contacts", "anthropic") == "search_contacts"
    assert provider_name("get-weather", "gemini") == "get-weather"


def test_rejected_characters_are_mapped() -> None:
    assert provider_name("crm.search contacts", "openai") == "crm_search_contacts"
    assert provider_name("1password.lookup", "gemini") == "_1password_lookup"


def test_long_names_are_shortened_with_a_stable_hash() -> None:
    long_a = "x" * 80 + "_alpha"
    long_b = "x" * 80 + "_beta"
    a, b = provider_name(long_a, "anthropic"), provider_name(long_b, "anthropic")
    assert len(a) == 64 and len(b) == 64
    assert a != b
    assert a == provider_name(long_a, "anthropic")


def test_collisions_inside_one_request_get_hashes() -> None:
    mapping = build_name_map(["a.b", "a b", "a_b"], "openai")
    sent = list(mapping.to_original)
    assert len(set(sent)) == 3
    assert mapping.provider_name("a_b") == "a_b"
    for original in ("a.b", "a b"):
        assert mapping.original(mapping.provider_name(original)) == original
    assert mapping.renamed and "a_b" not in mapping.renamed


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ValueError, match="Duplicate tool names"):
        build_name_map(["x", "x"])


def test_unknown_provider_names_the_valid_ones() -> None:
    with pytest.raises(ValueError, match="anthropic, gemini, openai"):
        provider_name("x", "mistral")


def test_resolve_provider_name() -> None:
    candidates = ["crm.search contacts", "mail.send", "y" * 90]
    assert resolve_provider_name("crm_search_contacts", candidates) == "crm.search contacts"
    assert resolve_provider_name("mail.send", candidates) == "mail.send"
    assert resolve_provider_name(provider_name("y" * 90), candidates) == "y" * 90
    assert resolve_provider_name("nothing_here", candidates) is None
    # ambiguous without the hash: both map to a_b
    assert resolve_provider_name("a_b", ["a.b", "a b"]) is None
    hashed = build_name_map(["a.b", "a b"]).provider_name("a.b")
    assert resolve_provider_name(hashed, ["a.b", "a b"]) == "a.b"


@given(st.lists(st.text(min_size=1, max_size=120), min_size=1, max_size=8, unique=True))
def test_name_maps_are_valid_unique_and_reversible(originals: list[str]) -> None:
    for provider, pattern in (("anthropic", _ANTHROPIC), ("gemini", _GEMINI)):
        mapping = build_name_map(originals, provider)
        sent = [mapping.provider_name(n) for n in originals]
        assert all(pattern.match(s) for s in sent), sent
        assert len(set(sent)) == len(sent)
        assert [mapping.original(s) for s in sent] == originals
        for original, s in zip(originals, sent, strict=True):
            assert resolve_provider_name(s, originals) in (original, None)
