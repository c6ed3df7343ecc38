"""Every door a denied tool could slip through, in every mode, on one catalog.

A name that is (or folds to) a denied tool answers ``not_permitted``, so the model stops looking
for it, and names no other hidden tool. Any other name is answered word for word as a session
over the same catalog *without* the denied tools would: it reveals nothing.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import pytest

from toolmgmt_core import (
    Access,
    Auto,
    Discovery,
    Policy,
    Tool,
    ToolCatalog,
    ToolManager,
    ToolSession,
)

HIDDEN = ("admin_reset", "delete_repo", "crm.export all", "Drop_Table")
ran: list[str] = []


def _handler(name: str) -> Callable[..., Any]:
    def run(**kwargs: Any) -> dict[str, Any]:
        ran.append(name)
        return {"ok": name}

    return run


def _tools() -> list[Tool]:
    specs = [
        ("read_file", "Read a text file from the workspace.", "fs", "files", {"read_only": True}),
        ("write_file", "Write a text file in the workspace.", "fs", "files", {}),
        ("crm_search", "Search customer contacts by name or email.", "crm", "contacts", {}),
        ("send_email", "Send an email message to recipients.", "email", "messages", {}),
        ("admin_reset", "Reset every admin setting to factory defaults.", "admin", "ops", {}),
        ("delete_repo", "Delete a code repository permanently.", "code", "repos", {}),
        ("crm.export all", "Export all customer contacts to a file.", "crm", "export", {}),
        ("Drop_Table", "Drop a database table.", "db", "tables", {"destructive": True}),
    ]
    return [
        Tool(
            name,
            description,
            parameters={"type": "object", "properties": {"x": {"type": "string"}}},
            domain=domain,
            group=group,
            annotations=annotations,
            handler=_handler(name),
        )
        for name, description, domain, group, annotations in specs
    ]


POLICIES = [
    Policy("global", deny=["admin_*", "domain:db"]),
    Policy("agent", deny=["delete_repo", "group:crm/export"]),
]
MODES = {
    "search": {"mode": "search"},
    "gateway": {"mode": "gateway"},
    "lazy": {"mode": "lazy"},
    "auto-deferred": {"mode": Auto(threshold_tokens=1)},
    "auto-flat": {"mode": "auto"},
    "search-load": {"mode": "search", "discovery": Discovery(call_unloaded="load")},
}


@functools.cache
def _managers(mode: str) -> tuple[ToolManager, ToolManager]:
    options = MODES[mode]
    guarded = ToolManager(ToolCatalog(_tools()), access=Access(policies=POLICIES), **options)
    clean = ToolCatalog([t for t in _tools() if t.name not in HIDDEN])
    return guarded, ToolManager(clean, **options)


def _sessions(mode: str) -> tuple[ToolSession, ToolSession]:
    """(a session with the policies, a session over a catalog that never had the hidden tools)."""
    guarded, clean = _managers(mode)
    return guarded.session(), clean.session()


def _text(session: ToolSession) -> str:
    return json.dumps([t.to_dict() for t in session.tools()], ensure_ascii=False)


def _asked(session: ToolSession, name: str, arguments: Any) -> list[str]:
    """The tool names a call asks about: its own, or the ones a meta-tool is given."""
    if name not in {t.name for t in session.manager.meta_tools()} or name == "tool_search":
        return [name]
    if isinstance(arguments, str):
        arguments = json.loads(arguments)
    names = arguments.get("tool_names") or []
    names = [names] if isinstance(names, str) else list(names)
    return [n for n in [arguments.get("tool_name"), *names] if isinstance(n, str)]


def _check_refusal(
    result: Any, reference: Any, asked: list[str], catalog: ToolCatalog, hidden: tuple[str, ...]
) -> None:
    """Named hidden tools: not_permitted. Anything else: exactly the clean catalog's answer."""
    named = [n for n in asked if (t := catalog.find(n)) is not None and t.name in hidden]
    if named:
        assert '"not_permitted"' in result.content, result.content
        assert "not permitted" in result.content
    else:
        assert result.content == reference.content


# (label, meta-tool or name, arguments). Each is run in every mode.
CALLS: list[tuple[str, str, Any]] = [
    ("exact name", "admin_reset", {}),
    ("upper case", "ADMIN_RESET", {}),
    ("surrounding space", "  admin_reset ", {}),
    ("hyphenated", "admin-reset", {}),
    ("fullwidth (NFKC)", "ａｄｍｉｎ_ｒｅｓｅｔ", {}),
    ("cyrillic look-alike", "\u0430dmin_reset", {}),
    ("mixed case of a hidden mixed-case name", "drop_table", {}),
    ("exact mixed-case name", "Drop_Table", {}),
    ("provider-shortened name", "crm_export_all", {}),
    ("original dotted name", "crm.export all", {}),
    ("hidden by name in a later step", "delete_repo", {"x": "y"}),
    ("stringified arguments", "delete_repo", '{"x": "y"}'),
    ("execute_tool", "execute_tool", {"tool_name": "admin_reset", "arguments": {}}),
    ("execute_tool, folded name", "execute_tool", {"tool_name": "ADMIN_RESET "}),
    ("execute_tool, provider form", "execute_tool", {"tool_name": "crm_export_all"}),
    ("execute_tool, args beside name", "execute_tool", {"tool_name": "delete_repo", "x": "1"}),
    ("get_tool_schema", "get_tool_schema", {"tool_name": "admin_reset"}),
    ("get_tool_schema, list", "get_tool_schema", {"tool_names": ["delete_repo", "Drop_Table"]}),
    ("load_tool_schema", "load_tool_schema", {"tool_names": ["admin_reset"]}),
    ("load_tool_schema, look-alike", "load_tool_schema", {"tool_names": ["\u0430dmin_reset"]}),
    ("load_tool_schema, string", "load_tool_schema", {"tool_names": "crm_export_all"}),
]


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize(("label", "name", "arguments"), CALLS, ids=[c[0] for c in CALLS])
def test_call_attempt_is_refused_and_reveals_nothing(mode, label, name, arguments) -> None:
    guarded, clean = _sessions(mode)
    before = len(ran)
    result = guarded.call_sync(name, arguments)
    reference = clean.call_sync(name, arguments)
    assert result.is_error, f"{label} in {mode}: {result.content}"
    assert len(ran) == before, f"{label} in {mode} ran a hidden tool"
    asked = _asked(guarded, name, arguments)
    _check_refusal(result, reference, asked, guarded.manager.catalog, HIDDEN)
    asked = name + json.dumps(arguments, ensure_ascii=False)
    for hidden in HIDDEN:
        if hidden not in asked:  # echoing the model's own words reveals nothing
            assert hidden not in result.content


# (label, meta-tool, arguments): discovery must never surface a hidden tool.
LOOKUPS: list[tuple[str, str, dict[str, Any]]] = [
    ("keyword search", "tool_search", {"query": "reset admin settings factory defaults"}),
    ("several queries", "tool_search", {"queries": ["drop database table", "delete repository"]}),
    ("regex over names", "tool_search", {"query": ".*", "method": "regex"}),
    ("regex for one name", "tool_search", {"query": "^admin_", "method": "regex"}),
    ("table of contents", "discover_tools", {}),
    ("hidden domain", "discover_tools", {"domain": "admin"}),
    ("hidden domain, other case", "discover_tools", {"domain": "DB"}),
    ("hidden group", "discover_tools", {"domain": "crm", "group": "export"}),
    ("visible domain", "discover_tools", {"domain": "crm"}),
    ("query", "discover_tools", {"query": "export customer contacts"}),
]


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize(("label", "name", "arguments"), LOOKUPS, ids=[c[0] for c in LOOKUPS])
def test_discovery_never_reveals_hidden_tools(mode, label, name, arguments) -> None:
    guarded, _ = _sessions(mode)
    result = guarded.call_sync(name, arguments)
    text = result.content + _text(guarded)
    asked = json.dumps(arguments)
    for hidden in HIDDEN + ("admin", "Drop", "repo", "db", "export"):
        if hidden not in asked:  # echoing the model's own words reveals nothing
            assert hidden not in text, f"{label} in {mode} revealed {hidden!r}: {result.content}"
    if name == "discover_tools" and mode != "gateway":
        assert result.is_error  # not a meta-tool outside gateway mode
    if mode == "gateway" and "hidden" in label:
        assert result.is_error and "Valid" in result.content


@pytest.mark.parametrize("mode", list(MODES))
def test_listings_and_views_hold_no_hidden_tool(mode) -> None:
    guarded, clean = _sessions(mode)
    visible = {t.name for t in guarded.visible_tools()}
    assert visible == {"read_file", "write_file", "crm_search", "send_email"}
    assert [t.name for t in guarded.tools()] == [t.name for t in clean.tools()]
    assert guarded.usage().flat_tokens == clean.usage().flat_tokens
    for hidden in HIDDEN:
        assert not guarded.is_deferred(hidden)


@pytest.mark.parametrize("mode", ["search", "lazy", "auto-deferred", "search-load"])
def test_restored_state_naming_a_hidden_tool_loads_nothing(mode) -> None:
    manager = ToolManager(ToolCatalog(_tools()), access=Access(policies=POLICIES), **MODES[mode])
    session = manager.session({"version": 1, "loaded": ["admin_reset", "read_file"]})
    assert "admin_reset" not in _text(session)
    before = len(ran)
    result = session.call_sync("admin_reset", {})
    assert result.is_error and result.error is not None and result.error.code == "not_permitted"
    assert len(ran) == before


@pytest.mark.parametrize("mode", list(MODES))
def test_a_loaded_tool_hidden_by_a_profile_switch_is_refused(mode) -> None:
    manager = ToolManager(ToolCatalog(_tools()), access=Access(policies=POLICIES), **MODES[mode])
    session = manager.session()
    session.call_sync("load_tool_schema", {"tool_names": ["write_file"]})
    session.call_sync("tool_search", {"query": "write a text file"})
    ok = session.call_sync(
        "execute_tool" if mode == "gateway" else "write_file",
        ({"tool_name": "write_file", "arguments": {"x": "1"}} if mode == "gateway" else {"x": "1"}),
    )
    assert not ok.is_error, ok.content
    session.set_profile("readonly")
    assert "write_file" not in _text(session)
    for name, arguments in [
        ("write_file", {"x": "1"}),
        ("WRITE_FILE", {}),
        ("execute_tool", {"tool_name": "write_file", "arguments": {"x": "1"}}),
    ]:
        before = len(ran)
        result = session.call_sync(name, arguments)
        assert result.is_error and len(ran) == before
        assert "not permitted" in result.content or "execute_tool" in result.content


def test_meta_tools_survive_a_deny_everything_policy() -> None:
    deny_all = [Policy("global", deny=["*"])]
    for mode, expected in [
        ("search", ["tool_search", "call_tool"]),
        ("gateway", ["discover_tools", "get_tool_schema", "execute_tool"]),
        ("lazy", ["load_tool_schema"]),
    ]:
        with pytest.warns(UserWarning, match="only the meta-tools"):
            session = ToolManager(
                ToolCatalog(_tools()), mode, access=Access(policies=deny_all)
            ).session()
            assert [t.name for t in session.tools()] == expected
        assert session.visible_tools() == []
    gateway = ToolManager(
        ToolCatalog(_tools()), "gateway", access=Access(policies=deny_all)
    ).session()
    toc = gateway.call_sync("discover_tools", {})
    assert not toc.is_error and toc.value == {"domains": {}}
    search = ToolManager(
        ToolCatalog(_tools()), "search", access=Access(policies=deny_all)
    ).session()
    found = search.call_sync("tool_search", {"query": "file"})
    assert not found.is_error and found.value["found"] == {}
    # A policy naming a meta-tool cannot remove it either.
    named = ToolManager(
        ToolCatalog(_tools()),
        "search",
        access=Access(policies=[Policy("global", deny=["tool_search"])]),
    ).session()
    assert named.tools()[0].name == "tool_search"
    assert named.explain("tool_search").allowed


def test_a_catalog_tool_flagged_meta_is_still_under_the_policy() -> None:
    # Only the session's own meta-tools are exempt; a catalog tool's metadata cannot claim it.
    flagged = Tool(
        "admin_wipe",
        "Erase every record.",
        annotations={"destructive": True},
        metadata={"meta": True},
        handler=_handler("admin_wipe"),
    )
    named_like_meta = flagged.replace(name="execute_tool", handler=_handler("execute_tool"))
    catalog = ToolCatalog([*_tools(), flagged, named_like_meta])
    deny = [Policy("global", deny=["admin_*", "execute_tool"])]
    for mode in ("search", "gateway", "lazy"):
        session = ToolManager(catalog, mode, access=Access(policies=deny)).session()
        assert not session.explain("admin_wipe").allowed
        assert {"admin_wipe", "execute_tool"}.isdisjoint(t.name for t in session.visible_tools())
        before = len(ran)
        direct = session.call_sync("admin_wipe", {})
        assert direct.is_error and "not permitted" in direct.content and len(ran) == before
    approving = ToolManager(catalog, "lazy", approval=lambda request: False).session()
    before = len(ran)
    refused = approving.call_sync("admin_wipe", {})
    assert refused.is_error and '"approval_denied"' in refused.content
    assert len(ran) == before


# -- the same doors on the demo catalog -------------------------------------------------------

DEMO_POLICIES = [
    Policy("global", deny=["domain:payments", "destructive"]),
    Policy("agent", deny=["*_delete_*"]),
]
DEMO_HIDDEN = ("payments_get_balance", "files_write_file", "crm_delete_contact")
DEMO_VISIBLE = "crm_search_contacts"
_FULLWIDTH = {ord(c): ord(c) + 0xFEE0 for c in "abcdefghijklmnopqrstuvwxyz"}
_CYRILLIC = str.maketrans({"a": "\u0430", "e": "\u0435", "o": "\u043e", "c": "\u0441"})


def _variants(name: str) -> list[str]:
    return [
        name,
        name.upper(),
        f" {name}\t",
        name.replace("_", "-"),
        name.translate(_FULLWIDTH),
        name.translate(_CYRILLIC),
        name.title(),
    ]


@functools.cache
def _demo() -> tuple[ToolCatalog, ToolCatalog, dict[str, dict[str, Any]]]:
    """(the demo catalog, the same without the tools DEMO_POLICIES hide, example arguments)."""
    import toolmgmt_demo as demo

    catalog = demo.demo_catalog()
    arguments = {t.name: demo.example_arguments(t) for t in catalog}
    view = ToolManager(catalog, access=Access(policies=DEMO_POLICIES)).policy
    return catalog, ToolCatalog([t for t in catalog if view.allows(t)]), arguments


def _demo_managers(mode: str) -> tuple[ToolManager, ToolManager, dict[str, dict[str, Any]]]:
    catalog, clean, arguments = _demo()
    options = {**MODES[mode], "discovery": Discovery(call_unloaded="load")}
    guarded = ToolManager(catalog, access=Access(policies=DEMO_POLICIES), **options)
    return guarded, ToolManager(clean, **options), arguments


@pytest.mark.parametrize("mode", ["search", "gateway", "lazy", "auto-deferred"])
def test_demo_catalog_doors(mode) -> None:
    guarded_manager, clean_manager, arguments = _demo_managers(mode)
    guarded, clean = guarded_manager.session(), clean_manager.session()
    assert set(DEMO_HIDDEN).isdisjoint(t.name for t in guarded.visible_tools())
    # The control: a visible tool goes through every door with the same arguments.
    control = arguments[DEMO_VISIBLE]
    assert not guarded.call_sync(DEMO_VISIBLE, control).is_error
    if mode == "gateway":
        via = {"tool_name": DEMO_VISIBLE, "arguments": control}
        assert not guarded.call_sync("execute_tool", via).is_error
    for hidden in DEMO_HIDDEN:
        for name in _variants(hidden):
            attempts: list[tuple[str, Any]] = [(name, arguments[hidden])]
            if mode == "gateway":
                attempts += [
                    ("execute_tool", {"tool_name": name, "arguments": arguments[hidden]}),
                    ("get_tool_schema", {"tool_name": name}),
                ]
            if mode == "lazy":
                attempts.append(("load_tool_schema", {"tool_names": [name]}))
            for tool_name, args in attempts:
                result = guarded.call_sync(tool_name, args)
                assert result.is_error, f"{tool_name}({args}) in {mode}: {result.content}"
                reference = clean.call_sync(tool_name, args)
                asked = _asked(guarded, tool_name, args)
                _check_refusal(result, reference, asked, guarded.manager.catalog, DEMO_HIDDEN)
                for other in DEMO_HIDDEN:
                    if other not in json.dumps([tool_name, args], ensure_ascii=False):
                        assert other not in result.content
    assert set(DEMO_HIDDEN).isdisjoint(guarded.loaded())
