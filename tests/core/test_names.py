"""The one folding of names: what it forgives, what it keeps, and that everything uses it."""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import toolmgmt_core._model.names as names_module
from toolmgmt_core import (
    Access,
    Discovery,
    DuplicateToolError,
    Policy,
    Tool,
    ToolCatalog,
    ToolManager,
)
from toolmgmt_core._catalog.tool_catalog import normalize_name
from toolmgmt_core._model.names import fold_name, fold_pattern, name_forms
from toolmgmt_core._policy.profiles import parse_pattern
from toolmgmt_core._search.fuzzy import fold_name as fuzzy_fold_name


@pytest.mark.parametrize(
    "spelling",
    [
        "files_delete",
        "FILES_DELETE",
        "  files_delete\t",
        "files-delete",
        "files delete",
        "Files Delete",
        "ｆｉｌｅｓ＿ｄｅｌｅｔｅ",  # fullwidth (NFKC)
        "files\u200b_delete",  # a zero-width space
        "files\u00ad_delete",  # a soft hyphen
        "files\u2013delete",  # an en dash
        "files\u00a0delete",  # a no-break space
        "files.delete",  # separators: . / : and runs of them
        "files/delete",
        "files:delete",
        "files . delete",
        "files__delete",
        "files\ufe0f_delete",  # a variation selector (default-ignorable, not Cf)
        "files\u034f_delete",  # the combining grapheme joiner
        "files\u3164_delete",  # a Hangul filler
        # unicode look-alikes (UTS #39 skeletons), which NFKC keeps apart
        "f\u0131les_delete",  # a dotless i
        "files_d\u0435lete",  # a Cyrillic e
        "fi\u217cesdelete".replace("s", "s_", 1),  # a small roman numeral fifty (NFKC: l)
        "files_de1ete",  # the digit one
        "files_de|ete",
        "files\u02d7delete",  # a modifier minus sign: its prototype is "-", a separator
        "files\u0660delete",  # an Arabic-Indic zero: its prototype is "."
        "\u0192iles_delete",  # f with a hook
        "\U0001d41fi\U0001d425es_delete",  # mathematical bold (NFKC)
    ],
)
def test_spellings_of_one_name_fold_alike(spelling: str) -> None:
    assert fold_name(spelling) == "files_delete"


@pytest.mark.parametrize(
    ("lookalike", "name"),
    [
        ("\u0430dmin", "admin"),  # Cyrillic a
        ("n\u043etes_delete_all", "notes_delete_all"),  # Cyrillic o
        ("notes_d\u0435lete_all", "notes_delete_all"),  # Cyrillic e
        ("\u0455ecrets_read", "secrets_read"),  # Cyrillic dze
        ("secrets_r\u0435\u0430d", "secrets_read"),
        ("\u13a0ata_export", "data_export"),  # Cherokee A, drawn as a D
        ("m\u0430il_send", "mail_send"),
        ("d\u0251ta_export", "data_export"),  # Latin alpha
        ("data_exp\u03bfrt", "data_export"),  # Greek omicron
        ("t\u043el_v0", "tol_vo"),  # the digit zero and the letter o
    ],
)
def test_unicode_lookalikes_fold_to_one_skeleton(lookalike: str, name: str) -> None:
    assert fold_name(lookalike) == fold_name(name)


def test_what_stays_distinct() -> None:
    # Separators at the ends stay, so "files_*" still covers "files_" and "files.".
    assert fold_name("files.") == fold_name("files_") == "files_" != fold_name("files")
    # UTS #39 folds "rn" and "m"; an ASCII confusion a glob set cannot hold, kept apart
    assert fold_name("rnail_send") != fold_name("mail_send") == "mail_send"
    assert fold_name("\u0271ail") == fold_name("m\u0326ail")  # m with a hook: m, and its hook
    assert fold_name("files_delete") != fold_name("files_deletes")
    assert fold_name("\u8bfb\u53d6\u6587\u4ef6") == "\u8bfb\u53d6\u6587\u4ef6"  # CJK stays


def test_the_lookalikes_of_ascii_are_the_data_s() -> None:
    from homoglyph.data import load_prototypes

    data = {chr(point): proto for point, proto in load_prototypes().items() if point < 128}
    for char, proto in names_module._ASCII_LOOKALIKES.items():
        assert char in data
        assert fold_name(f"a{char}b") == f"a{proto}b"  # as the full folding gives it
    assert set(data) - set(names_module._ASCII_LOOKALIKES) == {"I", "m"}  # case; rn kept apart


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=30))
def test_the_ascii_shortcut_agrees_with_the_full_folding(text: str) -> None:
    slow = text.strip()
    for _ in range(4):
        slow = names_module._fold_pass(slow)
    while "__" in slow:
        slow = slow.replace("__", "_")
    assert fold_name(text) == slow


@given(st.text(max_size=20))
def test_a_fold_folds_to_itself(text: str) -> None:
    folded = fold_name(text)
    assert fold_name(folded) == folded.strip()


def test_a_set_in_a_pattern_matches_what_its_members_fold_to() -> None:
    assert fnmatch.fnmatchcase(fold_name("report_v1"), fold_pattern("report_v[0-9]"))
    assert fnmatch.fnmatchcase(fold_name("report_v0"), fold_pattern("report_v[0-9]"))
    assert not fnmatch.fnmatchcase(fold_name("report_vx"), fold_pattern("report_v[0-9]"))
    assert fnmatch.fnmatchcase(fold_name("report_vx"), fold_pattern("report_v[!0-9]"))
    assert fnmatch.fnmatchcase(fold_name("admin_mode"), fold_pattern("ad[m]in_*"))
    assert fnmatch.fnmatchcase(fold_name("ADMIN_b"), fold_pattern("admin_[a-c]"))


@given(st.text(min_size=1, max_size=30))
def test_every_name_a_provider_sends_is_one_of_the_forms(text: str) -> None:
    """Lookup reaches a tool by its provider names too (resolve_provider_name), so policy
    patterns and registration compare those: name_forms must hold each one, folded."""
    from toolmgmt_core._model.provider_names import NAME_RULES, provider_name

    for rules in NAME_RULES.values():
        sent = provider_name(text, rules)
        if sent != "tool" or text.casefold() == "tool":  # "tool": nothing was left to send
            assert fold_name(sent) in name_forms(text), (text, sent)


@pytest.mark.filterwarnings("ignore:No catalog tool passes")
@pytest.mark.parametrize(
    "registered", ["files.delete", "files_delete.", "files_deleteé", "files\u0301_delete"]
)
def test_a_deny_covers_every_name_lookup_runs_the_tool_by(registered: str) -> None:
    ran: list[str] = []
    catalog = ToolCatalog([Tool(registered, handler=lambda: ran.append("ran"))])
    session = ToolManager(
        catalog,
        discovery=Discovery(call_unloaded="load"),
        access=Access(policies=[Policy("g", deny=["files_delete"])]),
    ).session()
    for called in ("files_delete", registered):
        assert session.call_sync(called).is_error
    assert not ran and not session.explain(registered).allowed
    with pytest.raises(DuplicateToolError, match="same name"):
        ToolCatalog([Tool("files_delete")]).add(Tool(registered))


def test_group_patterns_keep_their_domain_and_group_apart() -> None:
    tool = Tool("t", domain="crm", group="contacts")
    assert parse_pattern("group:crm/contacts").matches(tool)
    assert parse_pattern("group:CRM/*").matches(tool)
    assert not parse_pattern("group:crm/deals").matches(tool)
    assert not parse_pattern("group:crm_contacts").matches(tool)  # the group alone is compared


def test_one_function_under_every_old_name() -> None:
    assert normalize_name is fold_name and fuzzy_fold_name is fold_name


@pytest.mark.parametrize(
    ("pattern", "name", "matches"),
    [
        ("Files-Delete", "files_delete", True),
        ("files_*", "FILES-delete", True),
        ("admin_[a-c]*", "admin_beta", True),  # a range keeps its dash
        ("admin_[a-c]*", "admin_delta", False),
        ("admin_[!a-c]*", "admin_delta", True),
        ("ｆｉｌｅｓ_*", "files_x", True),
        ("x[", "x[", True),  # an unclosed bracket is a literal, as in fnmatch
    ],
)
def test_patterns_fold_as_names_do(pattern: str, name: str, matches: bool) -> None:
    assert fnmatch.fnmatchcase(fold_name(name), fold_pattern(pattern)) is matches
    assert parse_pattern(pattern).matches(Tool(name)) is matches


@pytest.mark.filterwarnings("ignore:No catalog tool passes")
def test_registration_lookup_policy_and_explain_agree() -> None:
    catalog = ToolCatalog([Tool("Files Delete", handler=lambda: "ran")])
    with pytest.raises(
        DuplicateToolError, match="'files-delete' is the same name as 'Files Delete'"
    ):
        catalog.add(Tool("files-delete"))
    assert catalog.find("files_delete") is catalog.get("Files Delete")
    session = ToolManager(
        catalog,
        discovery=Discovery(call_unloaded="load"),
        access=Access(policies=[Policy("global", deny=["files_delete"])]),
    ).session()
    assert not session.explain("FILES_DELETE").allowed
    assert session.explain("FILES_DELETE").pattern == "files_delete"
    assert session.call_sync("files_delete").error.code == "not_permitted"


def test_add_many_refuses_look_alikes_within_one_batch_atomically() -> None:
    catalog = ToolCatalog([Tool("keep")])
    with pytest.raises(DuplicateToolError, match="same name"):
        catalog.add_many([Tool("send_mail"), Tool("Send-Mail")])
    assert catalog.names() == ["keep"]
    catalog.remove("keep")
    catalog.add(Tool("KEEP"))  # the folded name is free again after a removal
    assert catalog.find("keep").name == "KEEP"


def test_names_must_hold_something_visible() -> None:
    from toolmgmt_core import InvalidToolError

    for bad in ("\u200b", "a\nb", "tab\there\x00"):
        with pytest.raises(InvalidToolError, match="control character or nothing visible"):
            Tool(bad)


def test_description_overrides_are_found_by_folded_name() -> None:
    catalog = ToolCatalog([Tool("read_file", "Read a file.")])
    overrides = {"Read-File": "Read a file under src/ only."}
    session = ToolManager(
        catalog, access=Access(policies=[Policy("agent", description_overrides=overrides)])
    )
    assert session.session().visible_tools()[0].description == overrides["Read-File"]


def test_the_cli_skips_a_look_alike_with_a_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from toolmgmt_core._cli import main

    path = tmp_path / "tools.json"
    path.write_text(json.dumps([{"name": "calculate_bmi"}, {"name": "calculate_BMI"}]))
    assert main(["report", "--catalog", str(path), "--json"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["summary"]["tools"] == 1
    assert "skipped tool #2 (calculate_BMI): the name 'calculate_BMI' is already used" in err
    assert "(tool #1 (calculate_bmi))" in err
