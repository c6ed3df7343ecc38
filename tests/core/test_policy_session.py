"""Policies through a ToolManager and its sessions: profiles, switching, overrides, approval."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from toolmgmt_core import (
    Access,
    Approval,
    ApprovalDeniedError,
    ApprovalRequest,
    ConfigError,
    Discovery,
    Explanation,
    Policy,
    Profile,
    Search,
    Tool,
    ToolCatalog,
    ToolManager,
    ToolSession,
)

ran: list[tuple[str, dict[str, Any]]] = []


def _handler(name: str):
    def run(**kwargs: Any) -> dict[str, Any]:
        ran.append((name, kwargs))
        return {"done": name}

    return run


SCHEMA = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "opts": {"type": "object"}},
    "required": ["path"],
}


def make_catalog() -> ToolCatalog:
    specs = [
        ("read_file", "Read a text file. Returns its content.", "fs", {"read_only": True}),
        ("list_files", "List files in a folder.", "fs", {"read_only": True}),
        ("write_file", "Write a text file, replacing it.", "fs", {"destructive": True}),
        ("search_contacts", "Search customer contacts by name.", "crm", {"read_only": True}),
        ("update_contact", "Update a customer contact.", "crm", {}),
        ("fetch_url", "Fetch a web page by URL.", "web", {"read_only": True, "open_world": True}),
    ]
    return ToolCatalog(
        Tool(name, text, SCHEMA, domain=domain, annotations=notes, handler=_handler(name))
        for name, text, domain, notes in specs
    )


def names(tools: list[Tool]) -> list[str]:
    return [t.name for t in tools]


# -- configuration ----------------------------------------------------------------------------


def test_manager_profile_and_policies(tmp_path) -> None:
    with pytest.warns(UserWarning, match="Pattern 'web_\\*' in step 'global' deny matches no"):
        manager = ToolManager(
            make_catalog(),
            "search",
            access=Access(profile="readonly", policies=[Policy("global", deny=["web_*"])]),
        )
    session = manager.session()
    assert names(session.visible_tools()) == [
        "read_file",
        "list_files",
        "search_contacts",
        "fetch_url",
    ]
    assert manager.policy.profile.name == "readonly"
    with pytest.raises(ConfigError, match="Unknown profile 'redonly'. Known profiles: full"):
        ToolManager(make_catalog(), access="redonly")
    path = tmp_path / "policy.toml"
    path.write_text('profile = "minimal"\n[[policies]]\nlabel = "global"\ndeny = ["list_*"]\n')
    from_file = ToolManager(make_catalog(), access=Access(policies=path)).session()
    assert names(from_file.visible_tools()) == ["read_file", "search_contacts"]
    assert from_file.profile == "minimal"
    bad = tmp_path / "bad.json"
    bad.write_text('{"policies": [{"label": "g", "deny": ["domian:fs"]}]}')
    with pytest.raises(
        ConfigError, match=r"bad\.json:1: policies\[0\]\.deny\[0\]: Unknown pattern prefix"
    ):
        ToolManager(make_catalog(), access=Access(policies=str(bad)))


def test_session_explain() -> None:
    manager = ToolManager(
        make_catalog(), "gateway", access=Access(policies=[Policy("agent", allow=["domain:fs"])])
    )
    session = manager.session()
    meta = session.explain("execute_tool")
    assert isinstance(meta, Explanation) and meta.allowed and "meta-tool" in meta.reason
    hidden = session.explain("update_contact")
    assert not hidden and hidden.step == "agent"
    assert "it allows only: domain:fs" in str(hidden)
    assert session.explain("READ_FILE").tool_name == "read_file"
    assert session.explain("READ_FILE").allowed
    assert not session.explain("no_such_tool").exists


# -- profile switching ------------------------------------------------------------------------


def test_profile_switch_mid_conversation_applies_from_the_next_step() -> None:
    support = Profile("support", include=["domain:crm"])
    manager = ToolManager(
        make_catalog(),
        Search(appends=True),
        access=Access(profiles=[support]),
        approval=Approval(destructive=False),
    )
    session, other = manager.session(), manager.session()
    session.call_sync("tool_search", {"query": "write a text file"})
    session.call_sync("tool_search", {"query": "update customer contact"})
    assert {"write_file", "update_contact"} <= set(names(session.tools()))
    assert not session.call_sync("write_file", {"path": "a.txt"}).is_error

    session.set_profile("support")
    assert session.profile == "support"
    step = names(session.tools())
    assert "write_file" not in step and "update_contact" in step
    refused = session.call_sync("write_file", {"path": "a.txt"})
    assert refused.is_error and refused.error is not None
    assert refused.error.code == "not_permitted"
    assert session.explain("write_file").step == "profile"
    # Other sessions of the manager keep their own profile.
    assert other.profile == "full"
    assert "write_file" in names(other.visible_tools())

    # The choice is part of the session's JSON state.
    state = json.loads(json.dumps(session.to_json()))
    assert state["profile"] == "support"
    restored = manager.session(state)
    assert restored.profile == "support" and names(restored.tools()) == step

    # Switching back brings the loaded tool back, in its original place.
    session.set_profile("full")
    assert "write_file" in names(session.tools())
    assert "profile" not in session.to_json()
    assert not session.call_sync("write_file", {"path": "a.txt"}).is_error

    with pytest.raises(ConfigError, match="Known profiles: full, minimal, readonly, support"):
        session.set_profile("suport")
    assert session.profile == "full"


def test_an_unregistered_custom_profile_is_not_restored_from_state() -> None:
    manager = ToolManager(make_catalog(), "lazy")
    session = manager.session()
    session.set_profile(Profile("files", include=["domain:fs"], exclude=["write_*"]))
    assert names(session.visible_tools()) == ["read_file", "list_files"]
    state = session.to_json()
    assert state["profile"] == "files"  # the name only: an inline profile is never read back
    with pytest.raises(ConfigError, match="not one of this manager's profiles"):
        ToolSession.from_json(manager, json.dumps(state))
    inline = {**state, "profile": {"name": "files", "include": ["domain:fs"]}}
    with pytest.raises(ConfigError, match="not one of this manager's profiles"):
        ToolSession.from_json(manager, inline)
    with pytest.raises(ConfigError, match="Known profiles|manager's profiles"):
        ToolSession.from_json(manager, {"version": 1, "loaded": [], "profile": "nope"})
    # Known to the manager, it round-trips.
    known = ToolManager(
        make_catalog(), "lazy", access=Access(profiles=[Profile("files", include=["domain:fs"])])
    )
    restored = ToolSession.from_json(known, {"version": 1, "loaded": [], "profile": "files"})
    assert sorted(names(restored.visible_tools())) == ["list_files", "read_file", "write_file"]


def test_sessions_switching_to_one_profile_share_its_view() -> None:
    manager = ToolManager(make_catalog())
    first, second = manager.session(), manager.session()
    first.set_profile("readonly")
    second.set_profile("readonly")
    assert first.policy is second.policy is not manager.policy
    first.set_profile("full")
    assert first.policy is manager.policy


# -- description overrides --------------------------------------------------------------------

OVERRIDE = "Read a text file under src/ only."


def _overridden(mode: str | Search, **options: Any) -> ToolSession:
    policies = [Policy("agent", description_overrides={"read_file": OVERRIDE})]
    return ToolManager(make_catalog(), mode, access=Access(policies=policies), **options).session()


def _description(tools: list[Tool], name: str) -> str:
    return next(t.description for t in tools if t.name == name)


def test_overrides_in_search_mode() -> None:
    stable = _overridden("search").call_sync("tool_search", {"query": "read a text file"})
    assert stable.value["found"]["read_file"]["description"] == OVERRIDE
    session = _overridden(Search(appends=True))
    hits = session.call_sync("tool_search", {"query": "read a text file"}).value
    assert hits["found"]["read_file"] == OVERRIDE
    assert _description(session.tools(), "read_file") == OVERRIDE
    assert _description(session.visible_tools(), "read_file") == OVERRIDE
    regex = session.call_sync("tool_search", {"query": "^read_", "method": "regex"}).value
    assert regex["found"]["read_file"] == OVERRIDE
    # The catalog's tool is unchanged.
    assert session.manager.catalog.get("read_file").description.startswith("Read a text file.")


def test_overrides_in_gateway_mode() -> None:
    session = _overridden("gateway")
    listing = session.call_sync("discover_tools", {"domain": "fs"}).value
    assert listing["groups"]["general"]["read_file"] == OVERRIDE
    found = session.call_sync("discover_tools", {"query": "read file"}).value
    assert found["tools"]["read_file"] == OVERRIDE
    schema = session.call_sync("get_tool_schema", {"tool_name": "read_file"}).value
    assert schema["description"] == OVERRIDE and schema["parameters"] == SCHEMA


def test_overrides_in_lazy_and_flat_modes() -> None:
    lazy = _overridden("lazy")
    assert _description(lazy.tools(), "read_file") == OVERRIDE
    loaded = lazy.call_sync("load_tool_schema", {"tool_names": ["read_file"]}).value
    assert loaded["tools"][0]["description"] == OVERRIDE
    flat = _overridden("auto")
    assert flat.mode == "flat"
    assert _description(flat.tools(), "read_file") == OVERRIDE


# -- approval ---------------------------------------------------------------------------------


def test_approval_refusal_is_reported_to_the_model_and_nothing_runs() -> None:
    asked: list[ApprovalRequest] = []

    def approver(request: ApprovalRequest) -> bool:
        asked.append(request)
        return request.arguments["path"].startswith("src/")

    manager = ToolManager(
        make_catalog(), "search", discovery=Discovery(call_unloaded="load"), approval=approver
    )
    session = manager.session()
    before = len(ran)
    refused = session.call_sync("write_file", {"path": "/etc/passwd"})
    assert refused.is_error and isinstance(refused.error, ApprovalDeniedError)
    assert refused.value["error"] == "approval_denied" and refused.value["kind"] == "call"
    assert "refused by the approver" in refused.content
    assert len(ran) == before
    # Arguments are validated (and a stringified object repaired) before the approver sees them.
    ok = session.call_sync("write_file", '{"path": "src/a.py", "opts": "{\\"mode\\": \\"w\\"}"}')
    assert not ok.is_error, ok.content
    assert asked[-1].arguments == {"path": "src/a.py", "opts": {"mode": "w"}}
    assert ran[-1] == ("write_file", {"path": "src/a.py", "opts": {"mode": "w"}})
    # Read-only tools are not asked about.
    session.call_sync("read_file", {"path": "x"})
    assert len(asked) == 2


def test_async_approval_through_execute_tool() -> None:
    async def approver(request: ApprovalRequest) -> bool:
        await asyncio.sleep(0)
        return request.tool.name != "update_contact"

    policies = [Policy("global", require_approval=["domain:crm"])]
    manager = ToolManager(
        make_catalog(), "gateway", access=Access(policies=policies), approval=approver
    )
    session = manager.session()
    denied = session.call_sync(
        "execute_tool", {"tool_name": "update_contact", "arguments": {"path": "p"}}
    )
    assert denied.is_error and denied.error is not None
    assert denied.error.code == "approval_denied"
    allowed = session.call_sync(
        "execute_tool", {"tool_name": "search_contacts", "arguments": {"path": "p"}}
    )
    assert not allowed.is_error and allowed.value == {"done": "search_contacts"}
    assert session.explain("update_contact").needs_approval


def test_set_profile_cannot_lift_the_managers_profile() -> None:
    """The manager's profile is a ceiling: ``set_profile("full")`` on a session of a
    ``readonly`` manager used to widen it (a write tool's error went from ``not_permitted`` to
    ``tool_not_loaded``, and a search could then load it)."""
    manager = ToolManager(make_catalog(), "search", access="readonly")
    session = manager.session()
    session.set_profile("full")
    assert session.call_sync("write_file", {"path": "a"}).error.code == "not_permitted"
    found = session.call_sync("tool_search", {"query": "write a text file"}).value["found"]
    assert "write_file" not in found
    assert "write_file" not in names(session.visible_tools())


def test_required_approval_without_an_approver_refuses() -> None:
    manager = ToolManager(
        make_catalog(),
        "search",
        discovery=Discovery(call_unloaded="load"),
        access=Access(policies=[Policy("global", require_approval=["read_file"])]),
    )
    result = manager.session().call_sync("read_file", {"path": "a"})
    assert result.is_error and "nobody here can give it" in result.content
    # Destructive tools too, by default (fail closed, at every door) ...
    refused = manager.session().call_sync("write_file", {"path": "a"})
    assert refused.is_error and refused.error.code == "approval_denied"
    # ... unless the deployer opts out, explicitly.
    trusting = ToolManager(
        make_catalog(),
        "search",
        discovery=Discovery(call_unloaded="load"),
        approval=Approval(destructive=False),
    )
    assert not trusting.session().call_sync("write_file", {"path": "a"}).is_error


def test_always_on_tool_hidden_by_policy_is_reported_and_not_listed() -> None:
    with pytest.warns(UserWarning, match="always_on names write_file, which the profile"):
        manager = ToolManager(
            make_catalog(), "search", always_on=["read_file", "write_file"], access="readonly"
        )
    assert names(manager.session().tools()) == ["tool_search", "call_tool", "read_file"]


def test_a_custom_manager_profile_is_known_by_name() -> None:
    manager = ToolManager(make_catalog(), access=Profile("fs", include=["domain:fs"]))
    session = manager.session()
    session.set_profile("readonly")
    session.set_profile("fs")
    assert session.policy is manager.policy
    session.set_profile("readonly")
    assert manager.session(session.to_json()).profile == "readonly"
    with pytest.raises(ConfigError, match="Known profiles: fs, full, minimal, readonly"):
        session.set_profile("nope")
