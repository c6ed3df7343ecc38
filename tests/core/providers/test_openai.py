from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from toolmgmt_core import Tool
from toolmgmt_core._providers import format_tools, strip_strict_nulls
from toolmgmt_core._providers.openai import StrictModeUnsupported, to_strict_schema

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "minLength": 2, "description": "City name"},
        "units": {"enum": ["c", "f"], "default": "c"},
        "when": {"type": "string", "format": "date-time"},
        "site": {"type": "string", "format": "uri"},
        "filters": {
            "type": "object",
            "properties": {"tag": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
        },
        "home": {"$ref": "#/$defs/Place", "description": "Where you live"},
    },
    "required": ["city"],
    "$defs": {"Place": {"type": "object", "properties": {"name": {"type": "string"}}}},
}


def test_strict_rewrite_closes_objects_and_requires_everything() -> None:
    schema, notes = to_strict_schema(SCHEMA)
    props = schema["properties"]
    assert schema["additionalProperties"] is False
    assert schema["required"] == list(props)
    assert props["city"] == {"type": "string", "description": "City name. (at least 2 characters)"}
    assert props["units"]["anyOf"] == [{"enum": ["c", "f"]}, {"type": "null"}]
    assert "default" in props["units"]["description"]
    assert props["when"]["format"] == "date-time"  # a supported format stays
    assert "format" not in props["site"] and "uri" in props["site"]["description"]
    inner = props["filters"]
    assert inner["type"] == ["object", "null"] and inner["additionalProperties"] is False
    assert "anyOf" in inner["properties"]["tag"] and "oneOf" not in str(inner)
    # the non-recursive $ref was inlined, keeping its description
    assert props["home"]["properties"]["name"] == {"type": ["string", "null"]}
    assert props["home"]["description"] == "Where you live"
    assert any("oneOf" in n for n in notes)


def test_strict_output_accepts_what_a_strict_model_sends() -> None:
    schema, _ = to_strict_schema(SCHEMA)
    sent = {
        "city": "Oslo",
        "units": None,
        "when": None,
        "site": None,
        "filters": None,
        "home": {"name": None},
    }
    Draft202012Validator(schema).validate(sent)
    restored = strip_strict_nulls(sent, SCHEMA)
    assert restored == {"city": "Oslo", "home": {}}
    Draft202012Validator(SCHEMA).validate(restored)


def test_recursive_refs_stay_refs_without_siblings() -> None:
    schema, _ = to_strict_schema(
        {
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Node", "description": "Root node"}},
            "required": ["tree"],
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "string"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                    },
                    "required": ["value", "children"],
                }
            },
        }
    )
    node = schema["$defs"]["Node"]
    assert node["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert node["additionalProperties"] is False


@pytest.mark.parametrize(
    ("parameters", "reason"),
    [
        ({"type": "object", "properties": {"x": {}}}, "a value of any type"),
        ({"type": "object", "properties": {"x": {"type": "object"}}}, "no declared properties"),
        (
            {
                "type": "object",
                "properties": {"m": {"type": "object", "additionalProperties": True}},
            },
            "free-form additional properties",
        ),
        ({"type": "object", "properties": {"l": {"type": "array"}}}, "without an items schema"),
    ],
)
def test_unstrictable_schemas_fall_back_with_reason(
    parameters: dict[str, Any], reason: str, check_provider: Any
) -> None:
    with pytest.raises(StrictModeUnsupported, match=reason):
        to_strict_schema(parameters)
    tool = Tool(name="loose", description="Loose.", parameters=parameters)
    for provider in ("openai", "openai-responses"):
        out = format_tools([tool], provider, strict=True)
        check_provider(provider, out["tools"])
        assert reason in out["report"].strict_fallbacks["loose"]
        sent = out["tools"][0]
        assert (sent.get("function") or sent)["strict"] is False


def test_strict_flag_is_set_per_tool(check_provider: Any) -> None:
    tool = Tool(name="t", description="T.", parameters=SCHEMA)
    chat = format_tools([tool], "openai", strict=True)["tools"][0]
    assert chat["function"]["strict"] is True
    plain = format_tools([tool], "openai")["tools"][0]
    assert "strict" not in plain["function"]
    assert plain["function"]["parameters"]["properties"]["city"]["minLength"] == 2
    resp = format_tools([tool], "openai-responses")["tools"][0]
    assert resp["strict"] is False and resp["name"] == "t"
    check_provider("openai-responses", [resp])


def test_responses_native_defers_and_adds_tool_search(check_provider: Any) -> None:
    tools = [
        Tool(name="a", description="A."),
        Tool(name="b", description="B.", defer_loading=True),
    ]
    # Each deferred function on its own (namespaces=False): billed by name and description.
    out = format_tools(tools, "openai-responses", native=True, namespaces=False)
    check_provider("openai-responses", out["tools"])
    assert out["tools"][0] == {"type": "tool_search"}
    assert out["tools"][2]["defer_loading"] is True and "defer_loading" not in out["tools"][1]
    # By default they are grouped in a namespace per domain (billed by its description alone).
    grouped = format_tools(tools, "openai-responses", native=True)
    check_provider("openai-responses", grouped["tools"])
    assert [t["type"] for t in grouped["tools"]] == ["tool_search", "function", "namespace"]
    assert [f["name"] for f in grouped["tools"][2]["tools"]] == ["b"]


def test_responses_namespaces_group_deferred_tools_by_domain(check_provider: Any) -> None:
    tools = [
        Tool(name="help", description="Help."),
        Tool(name="crm.find", description="Find.", domain="crm", group="contacts"),
        Tool(name="crm.deal", description="Deal.", domain="crm", group="deals"),
        Tool(name="mail.send", description="Send.", domain="mail"),
    ]
    tools = [t if t.name == "help" else t.replace(defer_loading=True) for t in tools]
    out = format_tools(tools, "openai-responses", native=True)  # namespaces by default
    explicit = format_tools(tools, "openai-responses", native=True, namespaces=True)
    assert out["tools"] == explicit["tools"]
    check_provider("openai-responses", out["tools"])
    kinds = [t["type"] for t in out["tools"]]
    assert kinds == ["tool_search", "function", "namespace", "namespace"]
    crm = out["tools"][2]
    assert crm["name"] == "crm" and [f["name"] for f in crm["tools"]] == ["crm_find", "crm_deal"]
    assert "contacts, deals" in crm["description"]
    assert out["report"].original_name("crm_find") == "crm.find"


@pytest.mark.parametrize("strict", [True, False])
def test_top_level_union_becomes_one_object(strict: bool, check_provider: Any) -> None:
    tool = Tool(
        name="lookup",
        description="By id or by email.",
        parameters={
            "type": "object",
            "anyOf": [
                {"$ref": "#/$defs/ById"},
                {"type": "object", "properties": {"email": {"type": "string"}}},
            ],
            "$defs": {"ById": {"type": "object", "properties": {"id": {"type": "integer"}}}},
        },
    )
    out = format_tools([tool], "openai", strict=strict)
    check_provider("openai", out["tools"])
    parameters = out["tools"][0]["function"]["parameters"]
    assert "anyOf" not in parameters and set(parameters["properties"]) == {"id", "email"}
    assert out["tools"][0]["function"].get("strict", False) is strict
    assert any("merged into one object" in n for n in out["report"].notes["lookup"])
