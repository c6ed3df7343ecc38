"""Issue 32, finding 4: names decorated with accents, overlays, small capitals or stroked letters
are one name with the plain one, for deny, allow, lookup, the look-alike refusal and
suggestions alike (the gateway's push: tests/stores/test_catalog_lookalikes.py)."""

from __future__ import annotations

import fnmatch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolmgmt_core import (
    Access,
    Discovery,
    DuplicateToolError,
    Policy,
    Tool,
    ToolCatalog,
    ToolManager,
)
from toolmgmt_core._model.names import fold_name, fold_pattern, fold_text

LOOKALIKES = {
    "e acute, precomposed": "notes_d\u00e9lete_w",
    "e and a combining acute": "notes_de\u0301lete_w",
    "e grave": "notes_d\u00e8lete_w",
    "e macron": "notes_d\u0113lete_w",
    "e diaeresis": "notes_d\u00eblete_w",
    "e ogonek": "notes_d\u0119lete_w",
    "e cedilla": "notes_d\u0229lete_w",
    "small capital E": "notes_d\u1d07lete_w",
    "a combining tilde": "notes_de\u0303lete_w",
    "a long stroke overlay": "notes_de\u0336lete_w",
    "a long solidus overlay": "notes_de\u0338lete_w",
    "l with a stroke": "notes_de\u0142ete_w",
    "l with a middle dot": "notes_de\u0140ete_w",
}
"""The names of the finding: each one reads as ``notes_delete_w``."""

CASES = pytest.mark.parametrize("name", LOOKALIKES.values(), ids=list(LOOKALIKES))


@CASES
def test_each_lookalike_folds_to_the_plain_name(name: str) -> None:
    assert fold_name(name) == "notes_delete_w"
    assert fnmatch.fnmatchcase(fold_name(name), fold_pattern("notes_delete_*"))


@pytest.mark.filterwarnings("ignore:No catalog tool passes")
@CASES
def test_a_deny_keeps_each_lookalike_from_running_in_process(name: str) -> None:
    ran: list[str] = []
    catalog = ToolCatalog([Tool(name, "Delete a note.", handler=lambda: ran.append(name))])
    session = ToolManager(
        catalog,
        "lazy",
        discovery=Discovery(call_unloaded="load"),
        access=Access(policies=[Policy("global", deny=["notes_delete_*"])]),
    ).session()
    for called in (name, "notes_delete_w"):
        result = session.call_sync(called)
        assert result.is_error and result.error.code == "not_permitted", called
    assert ran == []
    assert not session.explain(name).allowed
    assert session.explain(name).pattern == "notes_delete_*"


@CASES
def test_each_lookalike_is_refused_beside_the_real_tool(name: str) -> None:
    catalog = ToolCatalog([Tool("notes_delete_w", "Delete a note.")])
    with pytest.raises(DuplicateToolError, match="is the same name as 'notes_delete_w'"):
        catalog.add(Tool(name, "Delete a note, but mine."))
    assert catalog.names() == ["notes_delete_w"]


def test_folding_is_consistent_between_accents() -> None:
    """Before, two of these were accepted beside the plain name and the third refused as the
    first's look-alike (through a provider's form, not the fold)."""
    catalog = ToolCatalog([Tool("notes_get_note", "Read a note.")])
    for name in ("notes_g\u00e9t_note", "notes_get_not\u0117", "notes_g\u0113t_note"):
        with pytest.raises(DuplicateToolError, match="same name as 'notes_get_note'"):
            catalog.add(Tool(name, "Read a note."))
    assert catalog.find("notes_g\u00e9t_note") is catalog.get("notes_get_note")


_DECORATIONS = st.sampled_from(
    ["\u0301", "\u0300", "\u0304", "\u0308", "\u0328", "\u0327", "\u0303", "\u0336", "\u0338"]
)
_SWAPS = {"e": ["\u1d07", "\u0435"], "l": ["\u0142", "\u0140", "1"], "o": ["\u043e", "0"]}


@st.composite
def _decorated(draw: st.DrawFn) -> tuple[str, str]:
    """A plain snake_case name and a look-alike of it: marks added, letters swapped."""
    plain = draw(st.from_regex(r"[a-z]{1,6}(_[a-z]{1,6}){0,3}", fullmatch=True))
    out = []
    for char in plain:
        swaps = _SWAPS.get(char, [])
        out.append(draw(st.sampled_from([char, *swaps])) if swaps else char)
        if char.isalpha() and draw(st.booleans()):
            out.append(draw(_DECORATIONS))
    return plain, "".join(out)


@given(_decorated())
def test_every_listed_lookalike_is_caught(pair: tuple[str, str]) -> None:
    plain, lookalike = pair
    assert fold_name(lookalike) == fold_name(plain)
    assert fnmatch.fnmatchcase(fold_name(lookalike), fold_pattern(plain))


@given(st.text(max_size=30))
def test_folding_is_idempotent(text: str) -> None:
    folded = fold_name(text)
    assert fold_name(folded) == folded.strip()
    once = fold_text(text)
    assert fold_text(once) == once
