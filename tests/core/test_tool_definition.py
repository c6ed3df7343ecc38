"""``tool_to_definition`` is the exact inverse of ``tool_from_dict``, through JSON too."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolmgmt_core._model.names import fold_name
from toolmgmt_core._model.schema import tool_from_dict, tool_to_definition
from toolmgmt_core._model.tool import Tool, ToolAnnotations
from toolmgmt_demo import demo_catalog

text = st.text(max_size=30)
name = st.text(min_size=1, max_size=30).map(str.strip).filter(bool)
# A tool name holds no control character and something visible (Tool refuses the rest).
tool_name = name.filter(lambda n: fold_name(n) and all(c.isprintable() or c == " " for c in n))
json_scalar = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | text
json_value = st.recursive(
    json_scalar | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
property_schema = st.sampled_from(
    [
        {"type": "string"},
        {"type": "integer", "minimum": 0},
        {"type": "array", "items": {"type": "number"}},
        {"type": "string", "enum": ["a", "b"], "description": "one of two"},
        {"type": "object", "properties": {"x": {"type": "boolean"}}, "required": ["x"]},
    ]
)


@st.composite
def parameters(draw: st.DrawFn) -> dict[str, Any]:
    properties = draw(st.dictionaries(name, property_schema, max_size=4))
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if properties and draw(st.booleans()):
        schema["required"] = sorted(draw(st.sets(st.sampled_from(sorted(properties)))))
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    return schema


optional_bool = st.none() | st.booleans()

tools = st.builds(
    Tool,
    name=tool_name,
    description=text,
    parameters=parameters(),
    domain=name,
    group=name,
    keywords=st.lists(text, max_size=3).map(tuple),
    profiles=st.lists(name, max_size=3).map(tuple),
    defer_loading=optional_bool,
    max_result_tokens=st.none() | st.integers(1, 100_000),
    truncation=st.sampled_from([None, "head", "tail", "smart"]),
    annotations=st.builds(
        ToolAnnotations,
        read_only=optional_bool,
        destructive=optional_bool,
        idempotent=optional_bool,
        open_world=optional_bool,
        title=st.none() | text,
    ),
    input_examples=st.lists(st.dictionaries(text, json_value, max_size=3), max_size=2).map(tuple),
    output_schema=st.none() | st.just({}) | st.just({"type": "object"}),
    usage_notes=st.none() | text,
    timeout=st.none() | st.floats(0.001, 3600) | st.integers(1, 600),
    metadata=st.just({}) | st.builds(lambda s: {"strict": s}, st.booleans()),
)


def _same(a: Tool, b: Tool) -> None:
    assert a == b
    assert a.metadata.get("strict") == b.metadata.get("strict")


@settings(max_examples=300, deadline=None)
@given(tools)
def test_a_definition_rebuilds_the_same_tool(tool: Tool) -> None:
    definition = tool_to_definition(tool)
    _same(tool_from_dict(definition), tool)
    # plain JSON: what a store keeps and a replica reads back
    _same(tool_from_dict(json.loads(json.dumps(definition, allow_nan=False))), tool)
    assert tool_to_definition(tool_from_dict(definition)) == definition


@settings(max_examples=100, deadline=None)
@given(tools)
def test_the_definition_is_a_copy(tool: Tool) -> None:
    definition = tool_to_definition(tool)
    definition["parameters"]["properties"]["injected"] = {"type": "string"}
    for example in definition.get("input_examples", []):
        example["injected"] = 1
    assert "injected" not in tool.parameters["properties"]
    assert all("injected" not in example for example in tool.input_examples)


def test_every_demo_tool_round_trips() -> None:
    for tool in demo_catalog():
        _same(tool_from_dict(json.loads(json.dumps(tool_to_definition(tool)))), tool)


def test_unset_fields_are_left_out_and_set_ones_kept() -> None:
    assert tool_to_definition(Tool("ping")) == {
        "name": "ping",
        "description": "",
        "parameters": {"type": "object", "properties": {}},
        "domain": "general",
        "group": "general",
    }
    full = Tool(
        "refund",
        "Refund a charge.",
        domain="payments",
        group="charges",
        keywords=("money back",),
        profiles=("support",),
        defer_loading=False,
        max_result_tokens=500,
        truncation="smart",
        annotations=ToolAnnotations(destructive=True, idempotent=False),
        input_examples=({"charge_id": "ch_1"},),
        output_schema={},
        usage_notes="Partial refunds take an amount.",
        timeout=0,
        metadata={"strict": True, "upstream": "not data"},
    )
    definition = tool_to_definition(full)
    assert definition["defer_loading"] is False
    assert definition["timeout"] == 0
    assert definition["output_schema"] == {}
    assert definition["annotations"] == {"destructiveHint": True, "idempotentHint": False}
    assert definition["strict"] is True
    assert "upstream" not in json.dumps(definition)
    _same(tool_from_dict(definition), full)
