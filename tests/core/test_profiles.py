from __future__ import annotations

import pytest

from toolmgmt_core import ConfigError, Tool, ToolCatalog
from toolmgmt_core._policy.files import load_profile
from toolmgmt_core._policy.profiles import BUILTIN_PROFILES, Profile, get_profile, parse_pattern
from toolmgmt_core._policy.view import PolicyView


def _tool(name: str, **fields) -> Tool:
    return Tool(name, f"{name} does things.", **fields)


TOOLS = [
    _tool("read_file", domain="fs", group="files", annotations={"read_only": True}),
    _tool("write_file", domain="fs", group="files", annotations={"destructive": True}),
    _tool("web_fetch", domain="web", annotations={"read_only": True, "open_world": True}),
    _tool("admin_reset", domain="admin", group="ops", annotations={"destructive": True}),
    _tool("admin_audit", domain="admin", group="ops", annotations={"read_only": True}),
    _tool("crm_search", domain="crm", group="contacts", keywords=("customer", "lookup")),
    _tool("crm_delete", domain="crm", group="contacts", profiles=("support",)),
    _tool("notify", domain="email", group="contacts", profiles=("minimal",)),
]


@pytest.fixture
def catalog() -> ToolCatalog:
    return ToolCatalog(TOOLS)


def _names(profile: Profile, catalog: ToolCatalog) -> list[str]:
    return [t.name for t in catalog if profile.contains(t)]


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("read_file", ["read_file"]),
        ("READ_FILE", ["read_file"]),
        ("admin_*", ["admin_reset", "admin_audit"]),
        ("*_file", ["read_file", "write_file"]),
        ("name:crm_*", ["crm_search", "crm_delete"]),
        ("domain:admin", ["admin_reset", "admin_audit"]),
        ("domain:c*", ["crm_search", "crm_delete"]),
        ("group:contacts", ["crm_search", "crm_delete", "notify"]),
        ("group:crm/contacts", ["crm_search", "crm_delete"]),
        ("keyword:customer", ["crm_search"]),
        ("profile:support", ["crm_delete"]),
        ("readonly", ["read_file", "web_fetch", "admin_audit"]),
        ("destructive", ["write_file", "admin_reset"]),
        ("openworld", ["web_fetch"]),
        ("*", [t.name for t in TOOLS]),
        ("nothing_like_this", []),
    ],
)
def test_pattern_forms(pattern: str, expected: list[str], catalog: ToolCatalog) -> None:
    parsed = parse_pattern(pattern)
    assert [t.name for t in catalog if parsed.matches(t)] == expected


@pytest.mark.parametrize("bad", ["", "   ", "domian:crm", "group:", 3, None])
def test_bad_patterns_name_the_valid_forms(bad) -> None:
    with pytest.raises(ConfigError) as info:
        parse_pattern(bad)
    message = str(info.value)
    assert "domain:NAME" in message or "names no" in message


def test_unknown_prefix_message_names_prefix_and_forms() -> None:
    with pytest.raises(ConfigError, match=r"Unknown pattern prefix 'domian'.*'domain:NAME'"):
        Profile("p", include=["domian:crm"])


def test_builtin_profiles(catalog: ToolCatalog) -> None:
    assert set(BUILTIN_PROFILES) == {"full", "minimal", "readonly"}
    assert _names(get_profile("full"), catalog) == [t.name for t in TOOLS]
    assert _names(get_profile("readonly"), catalog) == ["read_file", "web_fetch", "admin_audit"]
    # minimal: read-only and closed-world, plus tools that declare the profile
    assert _names(get_profile("minimal"), catalog) == ["read_file", "admin_audit", "notify"]
    assert get_profile(None).name == "full"


def test_custom_profile_include_exclude_and_declared_membership(catalog: ToolCatalog) -> None:
    support = Profile("support", include=["domain:crm", "readonly"], exclude=["admin_*", "web_*"])
    assert _names(support, catalog) == ["read_file", "crm_search", "crm_delete"]
    # A tool declaring the profile is in it even without a matching include pattern...
    narrow = Profile("support", include=["crm_search"])
    assert _names(narrow, catalog) == ["crm_search", "crm_delete"]
    # ...but exclusion still wins.
    assert _names(Profile("support", include=["x"], exclude=["crm_delete"]), catalog) == []
    # No include patterns: every tool, minus the excluded ones.
    assert _names(Profile("no_admin", exclude=["domain:admin"]), catalog) == [
        t.name for t in TOOLS if t.domain != "admin"
    ]


def test_unknown_profile_lists_known_ones() -> None:
    custom = Profile("support", include=["domain:crm"])
    with pytest.raises(ConfigError) as info:
        get_profile("suport", [custom])
    assert str(info.value) == (
        "Unknown profile 'suport'. Known profiles: full, minimal, readonly, support."
    )
    assert get_profile("support", {"support": custom}) is custom
    assert get_profile("ReadOnly").name == "readonly"


def test_profile_round_trips_through_dict() -> None:
    profile = Profile(
        "support",
        include=["domain:crm"],
        exclude=["admin_*"],
        description_overrides={"crm_search": "Search only EU customers."},
    )
    again = Profile.from_dict(profile.to_dict())
    assert again == profile
    assert again.to_dict() == {
        "name": "support",
        "include": ["domain:crm"],
        "exclude": ["admin_*"],
        "description_overrides": {"crm_search": "Search only EU customers."},
    }
    with pytest.raises(ConfigError, match=r"unknown key 'inclde'; valid keys: name, include"):
        Profile.from_dict({"name": "x", "inclde": ["a"]})
    with pytest.raises(ConfigError, match="non-empty name"):
        Profile("")
    with pytest.raises(ConfigError, match="description override"):
        Profile("x", description_overrides={"a": ""})


def test_profile_from_file(tmp_path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[profiles.ops]\ninclude = ["domain:admin"]\n')
    assert load_profile(path, "ops").include_patterns[0].text == "domain:admin"
    with pytest.raises(ConfigError, match="Known profiles: full, minimal, ops, readonly"):
        load_profile(path, "opz")


def test_profile_description_override_is_presented(catalog: ToolCatalog) -> None:
    profile = Profile("dev", description_overrides={"read_file": "Read files under src/ only."})
    view = PolicyView(catalog, profile)
    tool = catalog.get("read_file")
    shown = view.present(tool)
    assert shown.description == "Read files under src/ only."
    assert tool.description == "read_file does things."  # the catalog tool is unchanged
    assert view.present(catalog.get("crm_search")) is catalog.get("crm_search")


def test_public_names() -> None:
    import toolmgmt_core

    for name in ("Profile", "Policy", "PolicyView", "Explanation", "ApprovalRequest"):
        assert name in toolmgmt_core.__all__ and hasattr(toolmgmt_core, name)
