from __future__ import annotations

from typing import Any

import pytest

from toolmgmt_core import ProviderError, Tool
from toolmgmt_core._providers import format_tools
from toolmgmt_core._providers.anthropic import to_anthropic_schema


def _tool(name: str, defer: bool | None = None) -> Tool:
    return Tool(
        name=name,
        description=f"Does {name}.",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}},
        defer_loading=defer,
    )


def test_top_level_union_is_merged_into_one_object(check_provider: Any) -> None:
    tool = Tool(
        name="lookup",
        description="Find a user by id or by email.",
        parameters={
            "type": "object",
            "oneOf": [
                {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]},
                {
                    "type": "object",
                    "properties": {"email": {"type": "string"}, "id": {"type": "integer"}},
                    "required": ["email"],
                },
            ],
        },
    )
    out = format_tools([tool], "anthropic")
    check_provider("anthropic", out["tools"])
    schema = out["tools"][0]["input_schema"]
    assert set(schema["properties"]) == {"id", "email"}
    assert "required" not in schema  # neither field is required in every variant
    assert "{id} or {email}" in schema["description"]
    assert out["report"].notes["lookup"]


def test_top_level_all_of_is_merged() -> None:
    schema, notes = to_anthropic_schema(
        {
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
            ]
        }
    )
    assert schema["type"] == "object" and set(schema["properties"]) == {"a", "b"}
    assert schema["required"] == ["a", "b"] and notes


def test_non_object_union_is_refused() -> None:
    with pytest.raises(ProviderError, match="not an object schema"):
        to_anthropic_schema({"anyOf": [{"type": "string"}, {"type": "integer"}]})


@pytest.mark.parametrize(("search", "kind"), [("bm25", "bm25"), ("regex", "regex")])
def test_native_defers_and_adds_search_tool(search: Any, kind: str, check_provider: Any) -> None:
    tools = [_tool("always", defer=False), _tool("later_a", True), _tool("later_b", True)]
    out = format_tools(tools, "anthropic", native=True, tool_search=search, cache_control=True)
    check_provider("anthropic", out["tools"])
    assert out["tools"][0] == {
        "type": f"tool_search_tool_{kind}_20251119",
        "name": f"tool_search_tool_{kind}",
    }
    by_name = {t["name"]: t for t in out["tools"][1:]}
    assert by_name["later_a"]["defer_loading"] is True
    assert "defer_loading" not in by_name["always"]
    # the cache breakpoint sits on the last tool loaded up front, never on a deferred one
    assert by_name["always"]["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in by_name["later_b"]
    assert out["report"].deferred == ["later_a", "later_b"]


def test_native_never_defers_every_tool() -> None:
    out = format_tools([_tool("a", True), _tool("b", True)], "anthropic", native=True)
    flags = [t.get("defer_loading", False) for t in out["tools"] if "input_schema" in t]
    assert flags == [False, True]
    assert out["report"].deferred == ["b"]


def test_without_native_nothing_is_deferred() -> None:
    out = format_tools([_tool("a", True), _tool("b")], "anthropic")
    assert all("defer_loading" not in t for t in out["tools"])
    assert all(t.get("type") is None for t in out["tools"])


def test_unknown_search_kind_is_refused() -> None:
    with pytest.raises(ProviderError, match="bm25, regex"):
        format_tools([_tool("a", True), _tool("b")], "anthropic", native=True, tool_search="x")  # type: ignore[arg-type]
