from __future__ import annotations

from typing import Any

from google.genai import types as gtypes

from toolmgmt_core import Tool
from toolmgmt_core._providers import format_tools
from toolmgmt_core._providers.gemini import to_gemini_schema


def test_json_schema_becomes_openapi_subset() -> None:
    schema, notes = to_gemini_schema(
        {
            "type": "object",
            "properties": {
                "mode": {"const": "fast"},
                "size": {"type": ["integer", "null"], "minimum": 1},
                "level": {"type": "integer", "enum": [1, 2, 3]},
                "kind": {"enum": ["a", 2]},
                "meta": {"type": "object", "additionalProperties": {"type": "string"}},
                "owner": {"$ref": "#/$defs/User"},
                "either": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                "id": {"type": "string", "format": "uuid"},
            },
            "required": ["mode", "ghost"],
            "$defs": {
                "User": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "boss": {"$ref": "#/$defs/User"}},
                }
            },
        }
    )
    assert schema is not None
    props = schema["properties"]
    assert props["mode"] == {"type": "STRING", "enum": ["fast"], "format": "enum"}
    assert props["size"] == {"type": "INTEGER", "minimum": 1, "nullable": True}
    assert props["level"]["type"] == "INTEGER" and "enum" not in props["level"]
    assert "One of: 1, 2, 3" in props["level"]["description"]
    assert props["kind"]["enum"] == ["a", "2"]
    assert props["meta"]["type"] == "STRING" and "JSON" in props["meta"]["description"]
    boss = props["owner"]["properties"]["boss"]
    assert "recursive" in boss["description"]
    assert props["either"] == {"type": "STRING", "nullable": True}
    assert "format" not in props["id"] and "uuid" in props["id"]["description"]
    assert schema["required"] == ["mode"]
    assert any("recursive" in n for n in notes)
    gtypes.Schema.model_validate(schema)


def test_tool_without_arguments_leaves_parameters_out(check_provider: Any) -> None:
    out = format_tools([Tool(name="ping", description="Ping.")], "gemini")
    check_provider("gemini", out["tools"])
    assert out["tools"][0]["function_declarations"][0] == {"name": "ping", "description": "Ping."}


def test_json_schema_mode(check_provider: Any) -> None:
    params = {"type": "object", "properties": {"x": {"const": 1}}, "$defs": {}}
    out = format_tools([Tool(name="t", parameters=params)], "gemini", gemini_json_schema=True)
    check_provider("gemini", out["tools"])
    assert out["tools"][0]["function_declarations"][0]["parametersJsonSchema"] == params


def test_names_start_with_letter_or_underscore(check_provider: Any) -> None:
    out = format_tools([Tool(name="3d.render")], "gemini")
    check_provider("gemini", out["tools"])
    assert out["report"].name_map == {"_3d_render": "3d.render"}


def test_exponential_ref_inlining_is_refused_not_hung() -> None:
    defs: dict[str, Any] = {"L0": {"type": "string"}}
    for i in range(1, 20):  # each level uses the one below twice: 2**19 leaves when inlined
        prev = {"$ref": f"#/$defs/L{i - 1}"}
        defs[f"L{i}"] = {"type": "object", "properties": {"a": prev, "b": prev}}
    tool = Tool(
        name="deep",
        parameters={"type": "object", "properties": {"x": {"$ref": "#/$defs/L19"}}, "$defs": defs},
    )
    out = format_tools([tool], "gemini")
    assert "grows past" in out["report"].skipped["deep"]
    assert format_tools([tool], "gemini", gemini_json_schema=True)["tools"]
