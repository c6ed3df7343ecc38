"""Every Unicode letter form that reads as a Latin letter folds to a letter it reads as (issue 41,
finding 4: Greek ε, lunate ϵ and Ukrainian є folded to ``c``; negative squared letters, regional
indicators and U+0364 were not folded, so a deny of ``notes_delete_*`` missed them and the
catalog took them beside ``notes_get_note``).

The forms are generated, never listed by hand: each character whose UTS #39 prototype (its own,
or its case partner's) is a Latin letter, and each whose Unicode name says it is a Latin letter
(enclosed, squared, parenthesized, combining, modifier, mathematical, regional indicator, turned
or open forms). Each one, put in place of its letter in ``notes_delete_note`` and
``notes_get_note``, is denied by ``notes_delete_*`` and refused by a catalog that holds
``notes_get_note``."""

from __future__ import annotations

import re
import sys
import unicodedata
from functools import lru_cache

import pytest
from homoglyph.data import load_prototypes

from toolmgmt_core import DuplicateToolError, Policy, PolicyView, Tool, ToolCatalog
from toolmgmt_core._model.names import fold_name

_NAMED = re.compile(
    r"(?:.* )?(?:LATIN|REGIONAL INDICATOR SYMBOL|MODIFIER) (?:.* )?LETTER (?:[A-Z-]+ )*?([A-Z])"
    r"(?: WITH .*)?"
)
_MATH = re.compile(r"MATHEMATICAL .*(?:SMALL|CAPITAL) ([A-Z])")


def _by_data(char: str, prototypes: dict[int, str]) -> set[str]:
    """The letter ``char``'s prototype, or else its case partner's, is (an ``I`` read as ``i``
    or ``l``: UTS #39 gives them one prototype)."""
    for one in (char, char.upper(), char.lower()):
        if len(one) != 1:
            continue
        prototype = "".join(
            c
            for c in unicodedata.normalize("NFD", prototypes.get(ord(one), ""))
            if unicodedata.category(c) != "Mn"
        )
        if len(prototype) == 1 and prototype.isascii() and prototype.isalpha():
            letter = prototype.lower()
            return {"i", "l"} if letter in "il" else {letter}
    return set()


def _by_name(char: str) -> set[str]:
    name = unicodedata.name(char, "")
    if name.startswith("TAG ") or "WITH SMALL LETTER" in name or "SHARP S" in name:
        return set()  # invisible (dropped), digraphs, ß (ss)
    found = _NAMED.fullmatch(name) or _MATH.fullmatch(name)
    if found is None:
        return set()
    letter = found.group(1).lower()
    return {"i", "l"} if letter in "il" else {letter}


@lru_cache(maxsize=1)
def letter_forms() -> dict[str, set[str]]:
    """Each non-ASCII character that reads as a Latin letter -> the letters it reads as."""
    prototypes = load_prototypes()
    forms = {}
    for point in range(0x80, sys.maxunicode + 1):
        char = chr(point)
        if unicodedata.category(char) in ("Cn", "Co", "Cs"):
            continue
        letters = _by_data(char, prototypes) | _by_name(char)
        if letters:
            forms[char] = letters
    return forms


def test_the_sweep_covers_the_forms_the_issue_found() -> None:
    forms = letter_forms()
    assert len(forms) > 2000
    for char in "εϵΕ🅳🅴🅻🆃\U0001f1e9\U0001f1ea\u0364ɛ⒟ⓓ𝐝":
        assert char in forms, char


def test_every_letter_form_folds_to_a_letter_it_reads_as() -> None:
    wrong = {
        f"U+{ord(c):04X} {unicodedata.name(c)}": fold_name(c)
        for c, letters in letter_forms().items()
        if fold_name(c) not in letters
    }
    assert not wrong, f"{len(wrong)} forms fold elsewhere: {dict(list(wrong.items())[:20])}"


def _in_place(name: str, char: str, letters: set[str]) -> list[str]:
    """``name`` with each occurrence of a letter ``char`` reads as replaced by it, one at a
    time (of ``i`` and ``l``, which UTS #39 reads alike, the one it folds to)."""
    if letters == {"i", "l"}:
        letters = {fold_name(char)}
    out = []
    for index, here in enumerate(name):
        if here in letters:  # a combining letter stands above the letter before it
            out.append(name[:index] + char + name[index + 1 :])
    return out


def test_no_letter_form_passes_a_deny_or_sits_beside_its_original() -> None:
    catalog = ToolCatalog()
    catalog.add(Tool(name="notes_delete_note", description="Delete a note.", domain="notes"))
    catalog.add(Tool(name="notes_get_note", description="Read a note.", domain="notes"))
    view = PolicyView(catalog, "full", [Policy("deny", deny=["notes_delete_*"])])
    passed, registered = [], []
    for char, letters in letter_forms().items():
        for name in _in_place("notes_delete_note", char, letters):
            tool = Tool(name=name, description="Delete a note.", domain="notes")
            if view.allows(tool):
                passed.append(name)
        for name in _in_place("notes_get_note", char, letters):
            try:
                catalog.add(Tool(name=name, description="Read a note.", domain="notes"))
            except DuplicateToolError:
                continue
            registered.append(name)
            catalog.remove(name)
    assert not passed and not registered, (passed[:10], registered[:10])


@pytest.mark.parametrize(
    "name",
    [
        "notes_dεlete_note",  # Greek ε
        "notes_dϵlete_note",  # lunate ϵ
        "notes_dєlete_note",  # Ukrainian є
        "notes_🅳🅴🅻🅴🆃🅴_note",  # negative squared
        "notes_\U0001f1e9\U0001f1ea\U0001f1f1\U0001f1ea\U0001f1f9\U0001f1ea_note",  # regional
        "notes_d\u0364lete_note",  # a combining small e above the d
    ],
)
def test_the_six_forms_the_issue_ran_fold_to_their_letters(name: str) -> None:
    assert fold_name(name) == "notes_delete_note"
