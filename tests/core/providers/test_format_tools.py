from __future__ import annotations

import json
from typing import Any

import pytest

from toolmgmt_core import ProviderError, Tool, ToolCatalog
from toolmgmt_core._providers import (
    PROVIDERS,
    clear_format_cache,
    format_tools,
    strip_strict_nulls,
)
from toolmgmt_core._session.manager import ToolManager

ALL = ["anthropic", "openai", "openai-responses", "gemini"]


def _tool(name: str, **params: Any) -> Tool:
    properties = params or {"query": {"type": "string", "description": "What to look for."}}
    return Tool(
        name=name,
        description=f"{name} does a thing. Use it when asked.",
        parameters={"type": "object", "properties": properties, "required": list(properties)[:1]},
    )


def _sent_names(provider: str, tools: list[dict[str, Any]]) -> list[str]:
    if provider == "gemini":
        return [d["name"] for t in tools for d in t["function_declarations"]]
    if provider == "openai":
        return [t["function"]["name"] for t in tools]
    return [t["name"] for t in tools if "name" in t and not t.get("type", "").startswith("tool_s")]


@pytest.mark.parametrize("provider", ALL)
def test_every_provider_gets_valid_tools(provider: str, check_provider: Any) -> None:
    tools = [_tool("search_docs"), _tool("crm.contacts.search"), _tool("x" * 90)]
    out = format_tools(tools, provider)
    check_provider(provider, out["tools"])
    report = out["report"]
    assert sorted(report.name_map.values()) == sorted(t.name for t in tools)
    assert sorted(_sent_names(provider, out["tools"])) == sorted(report.name_map)
    assert report.name_map["crm_contacts_search"] == "crm.contacts.search"
    assert report.original_name("search_docs") == "search_docs"


@pytest.mark.parametrize("provider", ALL)
def test_one_bad_tool_is_reported_not_fatal(provider: str, check_provider: Any) -> None:
    bad = Tool(name="broken", description="Has a dangling reference.")
    # Tool() refuses a dangling $ref (schema_guard); a formatter must still survive one that
    # got in some other way, so it is put in place behind the check's back.
    dangling = {"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}}
    object.__setattr__(bad, "parameters", dangling)
    if provider == "anthropic":  # Anthropic takes $ref as is; break its top level instead
        bad = Tool(
            name="broken",
            description="Top-level union of non-objects.",
            parameters={"type": "object", "anyOf": [{"type": "string"}]},
        )
    out = format_tools([_tool("good_one"), bad], provider)
    check_provider(provider, out["tools"])
    assert _sent_names(provider, out["tools"]) == ["good_one"]
    assert "broken" in out["report"].skipped and out["report"].skipped["broken"]


def test_unknown_provider_names_valid_ones() -> None:
    with pytest.raises(ProviderError, match="anthropic, gemini, openai, openai-responses"):
        format_tools([_tool("a")], "mistral")
    assert PROVIDERS == ("anthropic", "gemini", "openai", "openai-responses")


def test_non_tools_are_refused_clearly() -> None:
    with pytest.raises(TypeError, match="Tool objects"):
        format_tools([{"name": "x"}], "openai")
    with pytest.raises(TypeError, match="list of Tool objects or a session"):
        format_tools(42, "openai")


def test_duplicate_names_are_skipped() -> None:
    out = format_tools([_tool("a"), _tool("a")], "openai")
    assert len(out["tools"]) == 1 and "a" in out["report"].skipped


def test_openai_limit_fails_clearly_and_responses_native_defers() -> None:
    tools = [_tool(f"tool_{i}") for i in range(130)]
    with pytest.raises(ProviderError, match=r"130 tools.*at most 128.*native=True"):
        format_tools(tools, "openai")
    with pytest.raises(ProviderError, match="130 tools"):
        format_tools(tools, "openai-responses")
    out = format_tools(tools, "openai-responses", native=True)
    loaded = [t for t in out["tools"] if t["type"] == "function" and not t.get("defer_loading")]
    assert len(loaded) == 127
    assert out["tools"][0] == {"type": "tool_search"}
    assert out["report"].deferred == ["tool_127", "tool_128", "tool_129"]


def test_allowed_tools_choice_keeps_tool_list() -> None:
    tools = [_tool("a"), _tool("b.c"), _tool("d")]
    full = format_tools(tools, "openai")
    out = format_tools(tools, "openai", allowed=["b.c"])
    assert out["tools"] == full["tools"]
    assert out["tool_choice"] == {
        "type": "allowed_tools",
        "allowed_tools": {
            "mode": "auto",
            "tools": [{"type": "function", "function": {"name": "b_c"}}],
        },
    }
    resp = format_tools(tools, "openai-responses", allowed=["a", "d"], allowed_mode="required")
    assert resp["tool_choice"]["tools"] == [
        {"type": "function", "name": "a"},
        {"type": "function", "name": "d"},
    ]
    assert resp["tool_choice"]["mode"] == "required"
    gem = format_tools(tools, "gemini", allowed=["a"])
    assert gem["tool_config"] == {
        "function_calling_config": {"mode": "VALIDATED", "allowed_function_names": ["a"]}
    }
    with pytest.raises(ProviderError, match="not in this request: zzz"):
        format_tools(tools, "openai", allowed=["zzz"])
    with pytest.raises(ProviderError, match="Anthropic has no allowed-tools"):
        format_tools(tools, "anthropic", allowed=["a"])


def test_cache_hits_on_unchanged_tools_and_misses_on_changes() -> None:
    clear_format_cache()
    tools = [_tool(f"tool_{i}") for i in range(50)]
    first = format_tools(tools, "gemini")
    assert first["report"].cached is False
    again = format_tools(list(tools), "gemini")
    assert again["report"].cached is True
    assert again["tools"] == first["tools"]
    changed = [*tools[:-1], tools[-1].replace(description="Something else entirely.")]
    third = format_tools(changed, "gemini")
    assert third["report"].cached is False
    decl = third["tools"][0]["function_declarations"][-1]
    assert decl["description"] == "Something else entirely."
    # an option is part of the key
    assert format_tools(tools, "gemini", gemini_json_schema=True)["report"].cached is False


def test_a_repeated_step_is_served_from_the_cache() -> None:
    # How much cheaper a cached step is, is bench/formatting.py's to say; here: it is cached.
    clear_format_cache()
    tools = [
        _tool(f"tool_{i}", a={"type": ["string", "null"]}, b={"oneOf": [{"type": "integer"}]})
        for i in range(200)
    ]
    cold = format_tools(tools, "openai-responses", strict=True, native=True)
    warm = [format_tools(tools, "openai-responses", strict=True, native=True) for _ in range(3)]
    assert cold["report"].cached is False
    assert all(w["report"].cached is True and w["tools"] == cold["tools"] for w in warm)


def test_results_do_not_leak_mutations_into_the_cache() -> None:
    tools = [_tool("a")]
    out = format_tools(tools, "openai")
    out["tools"].append({"junk": True})
    assert len(format_tools(tools, "openai")["tools"]) == 1


def test_strip_strict_nulls_restores_left_out_optionals() -> None:
    schema = {
        "type": "object",
        "properties": {
            "q": {"type": "string"},
            "limit": {"type": "integer"},
            "cursor": {"type": ["string", "null"]},
            "filter": {"type": "object", "properties": {"tag": {"type": "string"}}},
        },
        "required": ["q"],
    }
    args = {"q": "x", "limit": None, "cursor": None, "filter": {"tag": None}}
    assert strip_strict_nulls(args, schema) == {"q": "x", "cursor": None, "filter": {}}


def _catalog() -> ToolCatalog:
    catalog = ToolCatalog()
    for i in range(12):
        catalog.add(_tool(f"crm.tool_{i}"))
    return catalog


@pytest.mark.parametrize("provider", ["anthropic", "openai-responses"])
def test_session_native_mode_defers_unloaded_tools(provider: str, check_provider: Any) -> None:
    session = ToolManager(_catalog(), mode="search").session()
    loaded = session.tools()
    visible = session.visible_tools()
    out = format_tools(session, provider, native=True)
    check_provider(provider, out["tools"])
    report = out["report"]
    loaded_names = {t.name for t in loaded}
    visible_names = {t.name for t in visible}
    # Nothing is loaded yet: every visible tool is deferred (Anthropic keeps one loaded); the
    # provider's search replaces tool_search.
    assert set(report.deferred) <= visible_names
    assert len(report.deferred) >= len(visible_names) - 1
    assert not loaded_names & {t.get("name") for t in out["tools"]}
    search = out["tools"][0]
    if provider == "anthropic":
        assert search["type"] == "tool_search_tool_bm25_20251119"
    else:
        assert search == {"type": "tool_search"}
    if provider == "anthropic":  # Anthropic refuses a request in which every tool is deferred
        assert any(t.get("name") and not t.get("defer_loading") for t in out["tools"][1:])


@pytest.mark.parametrize("provider", ["anthropic", "openai-responses"])
def test_a_tool_the_provider_loaded_natively_runs_when_called(provider: str) -> None:
    # The provider's own search loads a deferred tool; the model then calls it by its sent name.
    catalog = ToolCatalog()
    for i in range(12):
        catalog.add(_tool(f"crm.tool_{i}").replace(handler=lambda query, i=i: {"tool": i}))
    session = ToolManager(catalog, mode="search").session()
    before = session.call_sync("crm.tool_3", {"query": "x"})
    assert before.is_error and "tool_search" in before.content  # not sent at all yet
    out = format_tools(session, provider, native=True)
    sent = {v: k for k, v in out["report"].name_map.items()}["crm.tool_3"]
    tools_before = session.tools()
    result = session.call_sync(sent, {"query": "x"})
    assert not result.is_error and result.value == {"tool": 3}
    assert session.tools() == tools_before  # the list (and the provider's cache) holds
    # Without native loading a deferred tool still needs a search first.
    plain = ToolManager(catalog, mode="search").session()
    format_tools(plain, provider)
    assert plain.call_sync(sent, {"query": "x"}).is_error


def test_session_non_native_sends_only_tools() -> None:
    session = ToolManager(_catalog(), mode="search").session()
    out = format_tools(session, "openai")
    assert sorted(out["report"].name_map.values()) == sorted(t.name for t in session.tools())
    assert not out["report"].deferred


def test_native_without_provider_support_leaves_deferred_out() -> None:
    session = ToolManager(_catalog(), mode="search").session()
    out = format_tools(session, "gemini", native=True)
    assert "crm.tool_0" in out["report"].skipped
    assert "native deferred loading" in out["report"].skipped["crm.tool_0"]


def test_native_search_replaces_the_meta_tools_never_two_search_tools() -> None:
    from toolmgmt_core import ToolManager
    from toolmgmt_demo import demo_catalog

    session = ToolManager(demo_catalog(), mode="search").session()
    assert "tool_search" in [t.name for t in session.tools()]
    anthropic = format_tools(session, "anthropic", native=True)["tools"]
    names = [t.get("name") for t in anthropic]
    assert "tool_search" not in names
    assert sum(1 for t in anthropic if str(t.get("type", "")).startswith("tool_search")) == 1
    responses = format_tools(session, "openai-responses", native=True)["tools"]
    assert "tool_search" not in [t.get("name") for t in responses]
    assert sum(1 for t in responses if t.get("type") == "tool_search") == 1
    # Without native search, toolmgmt's own meta-tool stays.
    plain = format_tools(session, "anthropic")["tools"]
    assert "tool_search" in [t.get("name") for t in plain]


def test_the_whole_answer_is_json() -> None:
    """``format_tools``'s answer goes through ``json.dumps`` as it is (its report a dict whose
    keys are its attributes), fresh or from the cache."""
    tools = [Tool(name="lookup", description="Look a thing up.", parameters={"type": "object"})]
    for provider in ("anthropic", "openai", "openai-responses", "gemini"):
        for _ in range(2):  # the second from the cache
            out = format_tools(tools, provider)
            again = json.loads(json.dumps(out))
            assert again["report"] == out["report"].to_dict()
            assert out["report"]["name_map"] is out["report"].name_map
    assert again["report"]["cached"] is True
    assert repr(out["report"]).startswith("FormatReport({'provider': 'gemini'")
