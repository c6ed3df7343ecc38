"""ToolManager and ToolSession: search mode, the stable tool list, state, usage, resolution."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolmgmt_core import (
    Approval,
    Auto,
    ConfigError,
    Discovery,
    Execution,
    Search,
    Tool,
    ToolCatalog,
    ToolManager,
    ToolResult,
    ToolSession,
    Usage,
)

APPENDS = Search(appends=True)
"""Search mode whose found tools join the list (the default keeps the list as it is)."""

DOMAINS = {
    "email": ["send_email", "list_emails", "delete_email", "forward_email"],
    "calendar": ["create_event", "list_events", "cancel_event"],
    "crm": ["search_contacts", "create_contact", "update_contact", "delete_contact"],
    "files": ["read_file", "write_file", "list_files"],
    "weather": ["get_weather_forecast"],
}


def _handler(name: str):
    def handler(**kwargs):
        return {"tool": name, "args": kwargs}

    return handler


def make_catalog() -> ToolCatalog:
    catalog = ToolCatalog()
    for domain, names in DOMAINS.items():
        for name in names:
            verb, _, noun = name.partition("_")
            catalog.add(
                Tool(
                    name=name,
                    description=f"{verb.capitalize()} {noun.replace('_', ' ')} in {domain}.",
                    parameters={
                        "type": "object",
                        "properties": {"id": {"type": "string", "description": "Identifier."}},
                    },
                    domain=domain,
                    group=noun.split("_")[-1],
                    handler=_handler(name),
                )
            )
    return catalog


@pytest.fixture
def catalog() -> ToolCatalog:
    return make_catalog()


SHARED_CATALOG = make_catalog()
"""For property tests that do not change the catalog."""


def serialised(session: ToolSession) -> str:
    return json.dumps([t.to_dict(full=False) for t in session.tools()])


def names(session: ToolSession) -> list[str]:
    return [t.name for t in session.tools()]


# -- configuration ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda c: ToolManager(c, mode="turbo"), "Valid modes: search, gateway, lazy, flat, auto"),
        (lambda c: Discovery(call_unloaded="ignore"), r"call_unloaded=...\) must be 'error' or"),
        (lambda c: Discovery(max_results=0), r"max_results=...\) must be a positive whole number"),
        (lambda c: Discovery(max_active=-1), r"max_active=...\) must be"),
        (lambda c: Auto(threshold_share=1.5), "threshold_share"),
        (lambda c: Execution(timeout=0), r"Execution\(timeout=...\) must be a positive number"),
        (lambda c: ToolManager(c, discovery={"max_results": 3}), r"discovery must be a Discovery"),
        (lambda c: ToolManager(c, access=3), "access must be an Access, a profile name"),
        (lambda c: Approval(callback="yes"), "approval must be a callable"),
        (lambda c: ToolManager(c, listeners=["log"]), "A listener must be a callable"),
    ],
)
def test_bad_configuration_is_refused_clearly(catalog, make, message) -> None:
    with pytest.raises(ConfigError, match=message):
        make(catalog)


def test_always_on_may_name_a_tool_that_joins_later(catalog) -> None:
    """A framework's tools join the catalog on first use (PydanticAI's wrapped toolsets), so
    always_on may name one before it is there: a warning with the closest names, then it is
    listed from the step it exists."""
    with pytest.warns(UserWarning, match="not in the catalog yet.*Closest: send_email"):
        manager = ToolManager(catalog, always_on=["send_emial", "later_tool"])
    assert "later_tool" not in names(manager.session())
    catalog.add(Tool(name="later_tool", description="Joins later.", handler=lambda: "here"))
    assert "later_tool" in names(manager.session())
    with pytest.raises(ConfigError, match="give tool names"):
        ToolManager(catalog, always_on=[""])


def test_manager_needs_a_catalog() -> None:
    with pytest.raises(ConfigError, match="needs a ToolCatalog"):
        ToolManager([Tool(name="x")])  # type: ignore[arg-type]


# -- search mode ------------------------------------------------------------------------------


def test_initial_list_is_meta_tool_then_always_on(catalog) -> None:
    session = ToolManager(catalog, always_on=["read_file", "send_email"]).session()
    assert names(session) == ["tool_search", "call_tool", "read_file", "send_email"]
    assert session.tools()[0].metadata["meta"] is True
    assert session.is_deferred("create_event")
    assert not session.is_deferred("read_file")
    assert len(session.visible_tools()) == len(catalog)


def test_search_loads_found_tools_for_the_next_step(catalog) -> None:
    session = ToolManager(catalog, mode=APPENDS).session()
    result = session.call_sync("tool_search", {"query": "send email"})
    assert not result.is_error
    assert "send_email" in result.value["found"]
    assert "send_email" in result.value["added"]
    assert "send_email" in names(session)
    assert session.loaded() == result.value["added"]
    assert not session.is_deferred("send_email")


def test_tool_list_before_a_load_is_an_exact_prefix_of_the_list_after(catalog) -> None:
    session = ToolManager(
        catalog,
        mode=APPENDS,
        always_on=["get_weather_forecast"],
        discovery=Discovery(max_results=2),
    ).session()
    before = serialised(session)
    session.call_sync("tool_search", {"query": "email"})
    middle = serialised(session)
    session.call_sync("tool_search", {"queries": ["calendar event", "contacts"]})
    after = serialised(session)
    assert middle != before and after != middle
    assert middle[:-1].startswith(before[:-1])  # the JSON list minus its closing bracket
    assert after[:-1].startswith(middle[:-1])
    now = [t.to_dict(full=False) for t in session.tools()]
    assert now[: len(json.loads(middle))] == json.loads(middle)


def test_re_searching_loaded_tools_returns_them_without_error(catalog) -> None:
    session = ToolManager(catalog, mode=APPENDS).session()
    first = session.call_sync("tool_search", {"query": "send email"})
    again = session.call_sync("tool_search", {"query": "send email"})
    assert not again.is_error
    assert again.value["found"] == first.value["found"]
    assert "added" not in again.value
    assert names(session).count("send_email") == 1


def test_search_returns_always_on_tools_without_loading_them(catalog) -> None:
    session = ToolManager(catalog, always_on=["send_email"]).session()
    result = session.call_sync("tool_search", {"query": "send email"})
    assert "send_email" in result.value["found"]
    assert "send_email" not in session.loaded()


def test_max_results_per_query(catalog) -> None:
    session = ToolManager(catalog, discovery=Discovery(max_results=2)).session()
    result = session.call_sync("tool_search", {"query": "email"})
    assert len(result.value["found"]) == 2
    several = session.call_sync("tool_search", {"queries": ["email", "contact"]})
    assert len(several.value["found"]) == 4
    assert any("contact" in n for n in several.value["found"])


def test_min_score_drops_weak_hits(catalog) -> None:
    scores = [h.score for h in catalog.search("delete contact", limit=5)]
    assert len(scores) > 1 and scores[0] > scores[-1]
    session = ToolManager(catalog, discovery=Discovery(min_score=scores[0])).session()
    result = session.call_sync("tool_search", {"query": "delete contact"})
    assert list(result.value["found"]) == ["delete_contact"]
    nothing = ToolManager(catalog, discovery=Discovery(min_score=1e9)).session()
    empty = nothing.call_sync("tool_search", {"query": "delete contact"})
    assert empty.value["found"] == {} and "No tool matched" in empty.value["note"]
    assert "Domains: calendar, crm, email, files, weather" in empty.value["note"]
    assert nothing.loaded() == []


def test_max_active_caps_the_list_with_a_clear_message(catalog) -> None:
    session = ToolManager(
        catalog, mode=APPENDS, discovery=Discovery(max_active=3, max_results=5)
    ).session()
    result = session.call_sync("tool_search", {"query": "email"})
    assert len(result.value["added"]) == 3
    assert result.value["not_added"]
    assert "active tool limit (3) is reached" in result.value["note"]
    assert len(session.loaded()) == 3
    later = session.call_sync("tool_search", {"query": "calendar event"})
    assert "added" not in later.value and later.value["not_added"]
    direct = session.call_sync(later.value["not_added"][0], {})
    assert "active tool limit (3)" in direct.error.message, "not 'search first' again"


def test_regex_search(catalog) -> None:
    session = ToolManager(catalog).session()
    result = session.call_sync("tool_search", {"query": "^delete_", "method": "regex"})
    assert set(result.value["found"]) == {"delete_email", "delete_contact"}
    bad = session.call_sync("tool_search", {"query": "(unclosed", "method": "regex"})
    assert bad.is_error and "does not compile" in bad.error.message


def test_search_without_query_is_an_explicit_error(catalog) -> None:
    session = ToolManager(catalog).session()
    result = session.call_sync("tool_search", {})
    assert result.is_error and result.error.code == "invalid_arguments"
    assert '"query"' in result.error.message
    wrong_method = session.call_sync("tool_search", {"query": "x", "method": "semantic"})
    assert 'expected one of "keyword", "regex"' in wrong_method.error.message


def test_queries_given_as_a_json_string_are_repaired(catalog) -> None:
    session = ToolManager(catalog).session()
    result = session.call_sync("tool_search", {"queries": '["weather", "files"]'})
    assert "get_weather_forecast" in result.value["found"]


# -- calling tools ------------------------------------------------------------------------------


def test_calling_an_unloaded_tool_says_to_search_first(catalog) -> None:
    session = ToolManager(catalog).session()
    result = session.call_sync("create_event", {"id": "1"})
    assert result.is_error and result.error.code == "tool_not_loaded"
    assert "tool_search" in result.error.message
    session.call_sync("tool_search", {"query": "create calendar event"})
    ok = session.call_sync("create_event", {"id": "1"})
    assert ok.value == {"tool": "create_event", "args": {"id": "1"}}


def test_call_unloaded_load_loads_and_runs(catalog) -> None:
    session = ToolManager(catalog, discovery=Discovery(call_unloaded="load")).session()
    before = serialised(session)
    result = session.call_sync("create_event", {"id": "7"})
    assert result.value["tool"] == "create_event"
    assert session.loaded() == ["create_event"]
    assert serialised(session)[:-1].startswith(before[:-1])


def test_call_unloaded_load_respects_max_active(catalog) -> None:
    session = ToolManager(
        catalog, mode=APPENDS, discovery=Discovery(call_unloaded="load", max_active=1)
    ).session()
    assert not session.call_sync("create_event", {}).is_error
    refused = session.call_sync("cancel_event", {})
    assert refused.is_error and "active tool limit (1)" in refused.error.message


def test_unknown_name_gets_closest_visible_names(catalog) -> None:
    session = ToolManager(catalog).session()
    result = session.call_sync("send_emails", {})
    assert result.error.code == "unknown_tool"
    assert result.error.suggestions[0] == "send_email"
    assert "Closest: send_email" in result.error.message


def test_folded_and_provider_shortened_names_resolve(catalog) -> None:
    catalog.add(Tool(name="crm.search contacts v2", handler=lambda: "dotted"))
    session = ToolManager(catalog, always_on=["send_email", "crm.search contacts v2"]).session()
    assert session.call_sync(" Send_Email ", {}).value["tool"] == "send_email"
    assert session.call_sync("ｓｅｎｄ_ｅｍａｉｌ", {}).value["tool"] == "send_email"  # NFKC
    assert session.call_sync("crm_search_contacts_v2", {}).value == "dotted"


def test_meta_tool_names_resolve_forgivingly(catalog) -> None:
    session = ToolManager(catalog).session()
    assert not session.call_sync("Tool_Search", {"query": "files"}).is_error


def test_internal_bug_does_not_escape(catalog, monkeypatch) -> None:
    session = ToolManager(catalog, always_on=["send_email"]).session()

    def broken(*args, **kwargs):
        raise AttributeError("bug")

    monkeypatch.setattr(session.pipeline, "shape", broken)
    result = session.call_sync("send_email", {})
    assert result.is_error and result.error.code == "tool_unavailable"


def test_async_call_in_a_running_loop(catalog) -> None:
    session = ToolManager(catalog).session()

    async def main() -> ToolResult:
        found, _ = await asyncio.gather(
            session.call("tool_search", {"query": "weather"}),
            session.call("tool_search", {"query": "files"}),
        )
        assert isinstance(found, ToolResult)
        return await session.call("get_weather_forecast", {"id": "paris"})

    assert asyncio.run(main()).value["args"] == {"id": "paris"}


def test_call_sync_inside_a_running_loop(catalog) -> None:
    session = ToolManager(catalog, always_on=["read_file"]).session()

    async def main() -> ToolResult:
        return session.call_sync("read_file", {"id": "a"})

    assert asyncio.run(main()).value["tool"] == "read_file"


# -- defer_loading and always-on --------------------------------------------------------------


def test_defer_loading_false_is_always_listed(catalog) -> None:
    catalog.replace(catalog.get("list_files").replace(defer_loading=False))
    session = ToolManager(catalog, always_on=["send_email"]).session()
    assert names(session) == ["tool_search", "call_tool", "send_email", "list_files"]


def test_removed_always_on_tool_is_skipped(catalog) -> None:
    manager = ToolManager(catalog, always_on=["send_email"])
    catalog.remove("send_email")
    assert names(manager.session()) == ["tool_search", "call_tool"]


# -- the cache-stable search (the default) ------------------------------------------------------


def test_stable_search_answers_with_definitions_and_never_changes_the_list(catalog) -> None:
    session = ToolManager(catalog, always_on=["read_file"]).session()
    before = serialised(session)
    found = session.call_sync("tool_search", {"queries": ["send email", "calendar event"]})
    assert set(found.value) == {"found", "note"} and "call_tool" in found.value["note"]
    entry = found.value["found"]["send_email"]
    assert entry["parameters"] == catalog.get("send_email").parameters
    assert entry["description"] == catalog.get("send_email").description
    ran = session.call_sync("call_tool", {"tool_name": "send_email", "arguments": {"id": "1"}})
    assert ran.value == {"tool": "send_email", "args": {"id": "1"}}
    direct = session.call_sync("create_event", {"id": "2"})  # a found tool, called directly
    assert direct.value == {"tool": "create_event", "args": {"id": "2"}}
    assert serialised(session) == before
    assert "send_email" in session.loaded() and not session.layout().appended


def test_stable_search_refuses_a_direct_call_of_a_tool_it_never_gave(catalog) -> None:
    session = ToolManager(catalog).session()
    refused = session.call_sync("delete_contact", {"id": "1"})
    assert refused.outcome == "retry"
    assert "tool_search" in refused.error.message and "call_tool(" in refused.error.message
    # call_tool runs any tool the session may see, as execute_tool does in gateway mode
    ran = session.call_sync("call_tool", {"tool_name": "delete_contact", "arguments": {}})
    assert ran.value == {"tool": "delete_contact", "args": {}}


def test_call_tool_forgives_arguments_beside_the_name_and_refuses_itself(catalog) -> None:
    session = ToolManager(catalog).session()
    beside = session.call_sync("call_tool", {"tool_name": "read_file", "id": "x"})
    assert beside.value == {"tool": "read_file", "args": {"id": "x"}}
    nested = session.call_sync("call_tool", {"tool_name": "call_tool", "arguments": {}})
    assert nested.is_error and "tool_search" in nested.error.message


def test_stable_search_loads_come_back_from_a_transcript(catalog) -> None:
    from toolmgmt_core._session.history import loaded_names

    session = ToolManager(catalog).session()
    found = session.call_sync("tool_search", {"query": "send email"})
    names_found = list(found.value["found"])
    assert loaded_names([("tool_search", found.content)]) == names_found
    references = [{"type": "tool_reference", "tool_name": n} for n in names_found]
    assert loaded_names([("tool_search", references)]) == names_found
    appended = ToolManager(catalog, mode=APPENDS).session()
    summaries = appended.call_sync("tool_search", {"query": "send email"})
    again = appended.call_sync("tool_search", {"query": "send email"})  # found, none added
    assert (
        loaded_names([("tool_search", summaries.content), ("tool_search", again.content)])
        == (summaries.value["added"])
    )


# -- state --------------------------------------------------------------------------------------


def test_state_round_trips_through_json(catalog) -> None:
    manager = ToolManager(catalog, discovery=Discovery(max_results=2))
    session = manager.session()
    session.call_sync("tool_search", {"query": "email"})
    session.call_sync("tool_search", {"query": "contact"})
    state = json.loads(json.dumps(session.to_json()))
    restored = manager.session(state)
    assert restored.loaded() == session.loaded()
    assert serialised(restored) == serialised(session)
    assert ToolSession.from_json(manager, json.dumps(state)).loaded() == session.loaded()
    assert restored.to_json() == session.to_json()


def test_restored_state_with_removed_tool(catalog) -> None:
    manager = ToolManager(catalog, mode=APPENDS)
    session = manager.session({"version": 1, "loaded": ["send_email", "gone_tool"]})
    assert names(session) == ["tool_search", "send_email"]
    assert session.to_json()["loaded"] == ["send_email", "gone_tool"]


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ([], "must be a JSON object"),
        ("{not json", "not valid JSON"),
        ({"version": 9}, "version 9 is not supported"),
        ({"loaded": "send_email"}, "must be a list of tool names"),
    ],
)
def test_bad_state_is_refused_clearly(catalog, state, message) -> None:
    with pytest.raises(ConfigError, match=message):
        ToolSession.from_json(ToolManager(catalog), state)


def test_sessions_do_not_share_loaded_tools(catalog) -> None:
    manager = ToolManager(catalog)
    one, two = manager.session(), manager.session()
    one.call_sync("tool_search", {"query": "email"})
    assert two.loaded() == [] and names(two) == ["tool_search", "call_tool"]


# -- usage ----------------------------------------------------------------------------------------


def test_usage_compares_with_the_flat_catalog(catalog) -> None:
    manager = ToolManager(catalog, mode=APPENDS)
    session = manager.session()
    usage = session.usage()
    assert isinstance(usage, Usage)
    assert usage.flat_tokens == catalog.definition_tokens()
    assert usage.definition_tokens == catalog.definition_tokens(session.tools())
    assert usage.listed_tools == 1 and usage.visible_tools == len(catalog)
    session.call_sync("tool_search", {"query": "email"})
    grown = session.usage()
    assert grown.definition_tokens > usage.definition_tokens
    assert grown.loaded_tools == len(session.loaded())
    assert grown.saved_tokens == grown.flat_tokens - grown.definition_tokens
    assert 0 < grown.share < 1
    assert grown.to_dict()["saved_tokens"] == grown.saved_tokens


def test_session_names_are_exported_from_the_package() -> None:
    import toolmgmt_core

    for name in ("ToolManager", "ToolSession", "ToolResult", "Usage"):
        assert name in toolmgmt_core.__all__


WORDS = ["email", "send", "contact", "calendar", "event", "file", "weather", "delete", "list"]
ALL_NAMES = [n for names in DOMAINS.values() for n in names]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(
        st.one_of(
            st.tuples(st.just("search"), st.lists(st.sampled_from(WORDS), min_size=1, max_size=3)),
            st.tuples(st.just("call"), st.sampled_from(ALL_NAMES)),
        ),
        max_size=8,
    ),
    max_results=st.integers(1, 4),
    max_active=st.none() | st.integers(1, 6),
    call_unloaded=st.sampled_from(["error", "load"]),
)
def test_the_tool_list_only_ever_grows_by_appending(
    steps, max_results, max_active, call_unloaded
) -> None:
    manager = ToolManager(
        SHARED_CATALOG,
        mode=APPENDS,
        always_on=["read_file"],
        discovery=Discovery(
            max_results=max_results, max_active=max_active, call_unloaded=call_unloaded
        ),
    )
    session = manager.session()
    before = [t.to_dict(full=False) for t in session.tools()]
    for kind, value in steps:
        if kind == "search":
            result = session.call_sync("tool_search", {"queries": value})
        else:
            result = session.call_sync(value, {})
        assert result.content
        now = [t.to_dict(full=False) for t in session.tools()]
        assert now[: len(before)] == before
        before = now
    names_now = [t["name"] for t in before]
    assert len(names_now) == len(set(names_now))
    assert names_now[:2] == ["tool_search", "read_file"]
    assert names_now[2:] == session.loaded()
    if max_active is not None:
        assert len(session.loaded()) <= max_active
    assert manager.session(session.to_json()).tools() == session.tools()
