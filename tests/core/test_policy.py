from __future__ import annotations

import asyncio
import json
import warnings
from typing import Any

import pytest

from toolmgmt_core import Approval, ApprovalDeniedError, ConfigError, Tool, ToolCatalog
from toolmgmt_core._calls.approval import ask_approval
from toolmgmt_core._policy.files import PolicyFile, load_policy_file
from toolmgmt_core._policy.profiles import Profile
from toolmgmt_core._policy.steps import ApprovalRequest, Policy
from toolmgmt_core._policy.view import PolicyView

TOOLS = [
    Tool("read_file", "Read a file.", domain="fs", annotations={"read_only": True}),
    Tool("write_file", "Write a file.", domain="fs", annotations={"destructive": True}),
    Tool("admin_reset", "Reset everything.", domain="admin", annotations={"destructive": True}),
    Tool("crm_search", "Search contacts.", domain="crm", keywords=("customer",)),
    Tool("crm_update", "Update a contact.", domain="crm"),
    Tool("web_fetch", "Fetch a URL.", domain="web", annotations={"open_world": True}),
]
META = Tool("tool_search", "Search for tools.", metadata={"meta": True})


@pytest.fixture
def catalog() -> ToolCatalog:
    return ToolCatalog(TOOLS)


def visible(view: PolicyView, catalog: ToolCatalog) -> list[str]:
    return [t.name for t in catalog if view.allows(t)]


def test_deny_wins_and_later_steps_only_narrow(catalog: ToolCatalog) -> None:
    view = PolicyView(
        catalog,
        None,
        [
            Policy("global", deny=["admin_*"]),
            Policy("agent", allow=["domain:crm", "domain:admin", "read_file"]),
            Policy("user", deny=["crm_update"]),
        ],
    )
    assert visible(view, catalog) == ["read_file", "crm_search"]
    # The agent step allows admin_reset, but the global deny already removed it.
    explanation = view.explain("admin_reset")
    assert not explanation
    assert (explanation.step, explanation.pattern) == ("global", "admin_*")
    assert "denied by step 'global'" in explanation.reason
    explanation = view.explain("web_fetch")
    assert explanation.step == "agent" and explanation.pattern is None
    assert "allows only: domain:crm, domain:admin, read_file" in explanation.reason
    assert view.explain("crm_update").step == "user"
    passing = view.explain("crm_search")
    assert passing.allowed and passing.step is None and "passes" in passing.reason


def test_step_without_allow_patterns_is_transparent(catalog: ToolCatalog) -> None:
    view = PolicyView(catalog, "full", [Policy("global"), Policy("user", deny=["web_*"])])
    assert visible(view, catalog) == [t.name for t in TOOLS if t.name != "web_fetch"]


def test_profile_is_the_first_step(catalog: ToolCatalog) -> None:
    view = PolicyView(catalog, "readonly", [Policy("agent", allow=["*"])])
    assert visible(view, catalog) == ["read_file"]
    explanation = view.explain("crm_search")
    assert explanation.step == "profile" and "profile 'readonly'" in explanation.reason


def test_meta_tools_are_never_removed(catalog: ToolCatalog) -> None:
    with pytest.warns(UserWarning, match="only the meta-tools"):  # reported when built
        view = PolicyView(catalog, "readonly", [Policy("global", deny=["*", "tool_search"])])
    assert visible(view, catalog) == []
    assert view.allows(META)
    assert view.present(META) is META
    assert view.explain("read_file").step == "global"


def test_explain_unknown_name(catalog: ToolCatalog) -> None:
    explanation = PolicyView(catalog).explain("nope")
    assert not explanation.exists and not explanation.allowed
    assert str(explanation) == "There is no tool named 'nope' in the catalog."
    assert explanation.to_dict()["exists"] is False


def test_allows_by_name_and_unknown_tools(catalog: ToolCatalog) -> None:
    view = PolicyView(catalog, None, [Policy("global", deny=["write_*"])])
    assert view.allows("read_file") and not view.allows("write_file")
    assert not view.allows("missing")
    assert view("read_file")  # usable as a catalog ``where=`` filter
    outsider = Tool("write_other", "Not in the catalog.")
    assert not view.allows(outsider)
    assert view.allows(Tool("other", "Not in the catalog."))


def test_allows_is_cached_per_catalog_version(catalog: ToolCatalog) -> None:
    view = PolicyView(catalog, None, [Policy("global", deny=["domain:admin"])])
    calls = 0
    original = view._decide

    def counting(tool):
        nonlocal calls
        calls += 1
        return original(tool)

    view._decide = counting  # type: ignore[method-assign]
    for _ in range(5):
        visible(view, catalog)
    assert calls == 0  # decided once for this catalog version, when the view was built
    catalog.add(Tool("admin_new", "New admin tool.", domain="admin"))
    assert not view.allows(catalog.get("admin_new"))
    for _ in range(5):
        visible(view, catalog)
    assert calls == len(TOOLS) + 1  # once more for the new version
    catalog.remove("admin_reset")
    catalog.add(Tool("admin_reset", "Now in crm.", domain="crm"))
    assert view.allows(catalog.get("admin_reset"))


def test_description_overrides_later_step_wins(catalog: ToolCatalog) -> None:
    profile = Profile("p", description_overrides={"read_file": "From profile.", "crm_search": "P"})
    view = PolicyView(
        catalog,
        profile,
        [
            Policy("agent", description_overrides={"read_file": "Only read files under src/."}),
            Policy("user"),
        ],
    )
    shown = view.present(catalog.get("read_file"))
    assert shown.description == "Only read files under src/."
    assert shown.parameters == catalog.get("read_file").parameters
    assert view.present(catalog.get("read_file")) is shown  # cached
    assert view.present(catalog.get("crm_search")).description == "P"
    assert view.explain("read_file").description_from == "agent"
    assert view.filter(catalog)[0].description == "Only read files under src/."


def test_warnings_for_patterns_and_overrides_that_match_nothing(catalog: ToolCatalog) -> None:
    with pytest.warns(UserWarning, match="amdin_"):  # reported when the view is built
        view = PolicyView(
            catalog,
            Profile("p", include=["domain:crm", "domain:nope"]),
            [
                Policy("global", deny=["amdin_*"], description_overrides={"ghost": "x"}),
                Policy("agent", require_approval=["keyword:customer"]),
            ],
        )
    found = view.warnings
    assert found == [
        "Pattern 'domain:nope' in profile 'p' include matches no tool.",
        "Pattern 'amdin_*' in step 'global' deny matches no tool.",
        "Description override for 'ghost' in step 'global' names no tool in the catalog.",
    ]
    # Warned once per message, not on every question.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        visible(view, catalog)
        assert len(view.warnings) == 3
    # Built-in profiles are not linted pattern by pattern.
    assert PolicyView(catalog, "minimal").warnings == []


def test_duplicate_labels_are_refused(catalog: ToolCatalog) -> None:
    with pytest.raises(ConfigError, match="'global' is used twice"):
        PolicyView(catalog, None, [Policy("global"), Policy("global")])
    with pytest.raises(ConfigError, match="'profile' is used twice"):
        PolicyView(catalog, None, [Policy("profile")])
    with pytest.raises(ConfigError, match="label"):
        Policy("")
    with pytest.raises(ConfigError, match="Unknown pattern prefix"):
        Policy("x", deny=["domian:crm"])


def test_unknown_profile_lists_known_ones(catalog: ToolCatalog) -> None:
    with pytest.raises(ConfigError, match="Known profiles: full, minimal, readonly, support"):
        PolicyView(catalog, "nope", profiles=[Profile("support")])
    view = PolicyView(catalog, "support", profiles=[Profile("support", include=["domain:crm"])])
    assert view.with_profile("readonly").profile.name == "readonly"
    assert view.with_profile("support").profile.name == "support"
    with pytest.raises(ConfigError, match="Known profiles"):
        view.with_profile("supprt")


def test_policy_round_trips_through_dict() -> None:
    step = Policy(
        "global",
        allow=["domain:crm"],
        deny=["admin_*"],
        require_approval=["destructive"],
        description_overrides={"a": "b"},
    )
    assert Policy.from_dict(step.to_dict()) == step
    with pytest.raises(ConfigError, match=r"unknown key 'alow'; valid keys: label, allow"):
        Policy.from_dict({"label": "x", "alow": ["a"]})
    with pytest.raises(ConfigError, match="needs a 'label'"):
        Policy.from_dict({"allow": ["a"]})


# -- approval ---------------------------------------------------------------------------------


def _ask(view: PolicyView, tool: Any, arguments: dict[str, Any]) -> Any:
    """What the pipeline does: ask only when the policy says the call needs approval."""
    reason = view.approval_reason(tool)
    return None if reason is None else asyncio.run(ask_approval(view, tool, arguments, reason))


def test_needs_approval(catalog: ToolCatalog) -> None:
    view = PolicyView(catalog, None, [Policy("global", require_approval=["crm_update"])])
    assert view.needs_approval(catalog.get("crm_update"))
    # Destructive tools need approval by default, whether or not an approver is configured.
    assert view.needs_approval(catalog.get("write_file"))
    with_approver = PolicyView(catalog, approval=lambda request: True)
    assert with_approver.needs_approval(catalog.get("write_file"))
    assert not with_approver.needs_approval(catalog.get("read_file"))
    assert not with_approver.needs_approval(META)
    assert with_approver.explain("admin_reset").needs_approval
    # The explicit opt-out: only the steps' require_approval remains.
    steps = [Policy("global", require_approval=["crm_update"])]
    trusting = PolicyView(catalog, None, steps, Approval(destructive=False))
    assert not trusting.needs_approval(catalog.get("write_file"))
    assert trusting.needs_approval(catalog.get("crm_update"))


def test_approval_callbacks_sync_and_async(catalog: ToolCatalog) -> None:
    seen: list[ApprovalRequest] = []

    def sync_approver(request: ApprovalRequest) -> bool:
        seen.append(request)
        return request.arguments.get("path") == "ok.txt"

    async def async_approver(request: ApprovalRequest) -> bool:
        await asyncio.sleep(0)
        return False

    tool = catalog.get("write_file")
    view = PolicyView(catalog, approval=sync_approver)
    _ask(view, tool, {"path": "ok.txt"})
    assert seen[0].tool is tool and "destructive" in seen[0].reason
    with pytest.raises(ApprovalDeniedError, match="refused by the approver") as info:
        _ask(view, tool, {"path": "/etc/passwd"})
    assert info.value.to_dict()["error"] == "approval_denied"
    _ask(view, catalog.get("read_file"), {})  # not needed: no call
    assert len(seen) == 2

    refusing = PolicyView(catalog, approval=async_approver)
    with pytest.raises(ApprovalDeniedError):
        _ask(refusing, tool, {})


def test_approval_fails_closed(catalog: ToolCatalog) -> None:
    def broken(request: ApprovalRequest) -> bool:
        raise RuntimeError("boom")

    tool = catalog.get("admin_reset")
    with pytest.raises(ApprovalDeniedError, match="approval check for 'admin_reset' failed"):
        _ask(PolicyView(catalog, approval=broken), tool, {})
    # "yes-ish" values are not a yes
    with pytest.raises(ApprovalDeniedError):
        _ask(PolicyView(catalog, approval=lambda r: "yes"), tool, {})
    # A step requires approval but there is no approver: refused, not silently run.
    view = PolicyView(catalog, None, [Policy("global", require_approval=["crm_*"])])
    with pytest.raises(ApprovalDeniedError, match="nobody here can give it"):
        _ask(view, catalog.get("crm_search"), {})
    with pytest.raises(ConfigError, match="approval must be a callable"):
        PolicyView(catalog, approval="yes")  # type: ignore[arg-type]


# -- files ------------------------------------------------------------------------------------

GOOD_TOML = """\
profile = "support"

[profiles.support]
include = ["domain:crm", "readonly"]
exclude = ["admin_*"]
description_overrides = { read_file = "Read a file. Only files under src/." }

[[policies]]
label = "global"
deny = ["web_*"]
require_approval = ["destructive"]

[[policies]]
label = "agent"
allow = ["domain:crm", "domain:fs"]
"""


def test_load_toml_and_json_files(tmp_path, catalog: ToolCatalog) -> None:
    toml_path = tmp_path / "policy.toml"
    toml_path.write_text(GOOD_TOML)
    loaded = load_policy_file(toml_path)
    assert isinstance(loaded, PolicyFile)
    assert loaded.profile == "support" and list(loaded.profiles) == ["support"]
    assert [p.label for p in loaded.policies] == ["global", "agent"]

    json_path = tmp_path / "policy.json"
    json_path.write_text(
        json.dumps(
            {
                "profile": "support",
                "profiles": {name: p.to_dict() for name, p in loaded.profiles.items()},
                "policies": [p.to_dict() for p in loaded.policies],
            },
            indent=2,
        )
    )
    again = load_policy_file(json_path)
    assert again.policies == loaded.policies and again.profiles == loaded.profiles

    # A view built from the file uses its default profile and knows its profiles by name.
    view = PolicyView(catalog, policies=toml_path)
    assert view.profile.name == "support"
    assert visible(view, catalog) == ["read_file", "crm_search", "crm_update"]
    assert view.present(catalog.get("read_file")).description.endswith("under src/.")
    assert PolicyView(catalog, "readonly", str(json_path)).profile.name == "readonly"

    # A bare JSON list is a list of steps.
    steps = tmp_path / "steps.json"
    steps.write_text('[{"label": "global", "deny": ["admin_*"]}]')
    assert load_policy_file(steps).policies == [Policy("global", deny=["admin_*"])]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        (
            "syntax.toml",
            '[[policies]]\nlabel = "global"\ndeny = ["admin_*"\n',
            r"syntax\.toml:4: invalid TOML: Unclosed array \(column 1\)\.$",
        ),
        (
            "syntax.json",
            '{\n  "policies": [\n    {"label": "global",}\n  ]\n}',
            r"syntax\.json:3: invalid JSON: Expecting property name .* \(column 24\)\.$",
        ),
        (
            "key.toml",
            '[[policies]]\nlabel = "global"\n\n[[policies]]\nlabel = "agent"\nalow = ["a"]\n',
            r"key\.toml:6: policies\[1\]\.alow: unknown key; valid keys: label, allow",
        ),
        (
            "pattern.json",
            '{"policies": [\n  {"label": "global",\n   "deny": ["admin_*",\n'
            '            "domian:crm"]}\n]}',
            r"pattern\.json:4: policies\[0\]\.deny\[1\]: Unknown pattern prefix 'domian'",
        ),
        (
            "profile.toml",
            '[profiles.ops]\ninclude = ["a"]\n\n[profiles.dev]\ninclude = ["b"]\nexclud = ["c"]\n',
            r"profile\.toml:6: profiles\.dev\.exclud: unknown key; valid keys: include",
        ),
        (
            "default.toml",
            'profile = "suport"\n',
            r"default\.toml:1: profile: Unknown profile 'suport'\. Known profiles: full, minimal",
        ),
        (
            "top.json",
            '{\n  "policies": [],\n  "polices": []\n}',
            r"top\.json:3: polices: unknown key; valid keys: profile, profiles, policies\.$",
        ),
        (
            "type.toml",
            '[[policies]]\nlabel = "global"\ndeny = 3\n',
            r"type\.toml:3: policies\[0\]\.deny: must be a list of patterns, got 3\.$",
        ),
        (
            "policy.yaml",
            "policies: []",
            r"policy\.yaml: unknown format '\.yaml'; use a \.toml or \.json file\.$",
        ),
    ],
)
def test_file_errors_name_file_line_and_problem(tmp_path, name, text, expected) -> None:
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ConfigError, match=expected):
        load_policy_file(path)


def test_missing_file(tmp_path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.toml: cannot read the policy file: no such"):
        load_policy_file(tmp_path / "nope.toml")
