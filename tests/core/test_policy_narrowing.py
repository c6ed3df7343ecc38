"""Restored state narrows the configured profile; scoped steps; deciding before a tool exists."""

from __future__ import annotations

import json

import pytest

from toolmgmt_core import (
    Access,
    ConfigError,
    Discovery,
    Policy,
    Profile,
    Tool,
    ToolCatalog,
    ToolManager,
)
from toolmgmt_core._policy.profiles import may_match, parse_pattern
from toolmgmt_core._policy.view import PolicyView


def _catalog() -> ToolCatalog:
    return ToolCatalog(
        [
            Tool("read_file", domain="fs", annotations={"read_only": True}, handler=lambda: "r"),
            Tool("write_file", domain="fs", handler=lambda: "w"),
            Tool("crm_read", domain="crm", annotations={"read_only": True}, handler=lambda: "c"),
        ]
    )


def test_state_chooses_within_the_configured_profile_and_explain_says_so() -> None:
    fs = Profile("fs", include=["domain:fs"])
    manager = ToolManager(
        _catalog(),
        discovery=Discovery(call_unloaded="load"),
        access=Access(profile="readonly", profiles=[fs]),
    )
    session = manager.session({"version": 1, "loaded": [], "profile": "fs"})
    assert [t.name for t in session.visible_tools()] == ["read_file"]  # readonly and fs
    hidden = session.explain("write_file")
    assert not hidden.allowed and hidden.step == "profile"
    assert "configured profile 'readonly'" in hidden.reason
    assert session.to_json()["profile"] == "fs"
    again = manager.session(json.loads(json.dumps(session.to_json())))
    assert [t.name for t in again.visible_tools()] == ["read_file"]
    # The manager's profile is a ceiling: not even set_profile lifts it (a wider profile needs a
    # manager built with it).
    session.set_profile("full")
    assert "write_file" not in [t.name for t in session.visible_tools()]
    assert session.call_sync("write_file", {}).error.code == "not_permitted"
    restored = manager.session(session.to_json())
    assert "write_file" not in [t.name for t in restored.visible_tools()]


@pytest.mark.parametrize(
    "state",
    [
        {"profile": 7},
        {"profile": ["full"]},
        {"loaded": "read_file"},
        {"loaded": ["x" * 2_000]},
        {"version": 2},
        {"unknown_key": 1},
        {"results": {"records": "many"}},
    ],
)
def test_malformed_state_is_refused_clearly(state: dict) -> None:
    manager = ToolManager(_catalog())
    with pytest.raises(ConfigError, match="[Ss]ession state|Result budget state"):
        manager.session({"version": 1, **state})


def test_a_scoped_step_decides_about_its_domain_only() -> None:
    step = Policy("upstream:fs", deny=["*_file", "crm_*"], domain="fs")
    with pytest.warns(UserWarning, match=r"'crm_\*' in step 'upstream:fs' deny matches no tool"):
        view = PolicyView(_catalog(), None, [step])  # linted against its own domain's tools
    assert [t.name for t in _catalog() if view.allows(t)] == ["crm_read"]
    assert Policy.from_dict(step.to_dict()) == step
    with pytest.raises(ConfigError, match="domain must be a domain name"):
        Policy("x", domain="")


@pytest.mark.parametrize(
    ("pattern", "name", "prefix", "expected"),
    [
        ("domain:evil", None, "evil_", True),
        ("domain:notes", None, "evil_", False),
        ("evil_*", None, "evil_", True),
        ("evil_wipe*", None, "evil_", None),  # depends on the rest of the name
        ("notes_*", None, "evil_", False),
        ("*_delete", None, "evil_", None),
        ("readonly", None, "evil_", None),  # known once the tool is
        ("group:evil/*", None, "evil_", None),
        ("group:notes/*", None, "evil_", False),
        ("evil_wipe", "evil_wipe", "evil_", True),
        ("evil_wipe", "EVIL-wipe", "evil_", True),
    ],
)
def test_may_match_before_a_tool_exists(pattern, name, prefix, expected) -> None:
    assert may_match(parse_pattern(pattern), "evil", name, name_prefix=prefix) is expected


def test_may_show_is_false_only_when_every_such_tool_is_hidden() -> None:
    view = PolicyView(ToolCatalog(), "readonly", [Policy("g", deny=["domain:evil", "x_wipe"])])
    assert not view.may_show("evil", name_prefix="evil_")
    assert view.may_show("notes", name_prefix="notes_")  # readonly depends on annotations
    assert not view.may_show("x", "x_wipe", name_prefix="x_")
    allow = PolicyView(ToolCatalog(), None, [Policy("g", allow=["notes_*"])])
    assert not allow.may_show("evil", name_prefix="evil_")
    assert allow.may_show("evil", name_prefix="")  # an empty prefix can expose any name
    only = PolicyView(ToolCatalog(), Profile("p", include=["domain:notes"]))
    assert not only.may_show("evil", name_prefix="evil_")
    assert only.may_show("evil", name_prefix="evil_", profiles=["p"])  # declared by the tool
