"""What a tool schema may hold, and the bounded validator (the attacks themselves are in
tests/security)."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolmgmt_core import InvalidArgumentsError, InvalidToolError, Tool
from toolmgmt_core._calls.validation import validate_arguments
from toolmgmt_core._model.schema_guard import MAX_SCHEMA_DEPTH, check_tool_schema, json_depth
from toolmgmt_core._model.schema_validator import argument_validator

D4 = "http://json-schema.org/draft-04/schema#"
D7 = "http://json-schema.org/draft-07/schema#"

NODE = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
    },
}


@pytest.mark.parametrize(
    "schema",
    [
        # recursion through properties/items (pydantic's recursive models)
        {
            "type": "object",
            "properties": {"tree": {"$ref": "#/$defs/Node"}},
            "$defs": {"Node": NODE},
        },
        # the whole schema, recursively
        {"type": "object", "properties": {"child": {"$ref": "#"}}},
        # anchors, a known dialect, Optional[...] as anyOf with a $ref
        {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "a": {"$ref": "#name"},
                "b": {"anyOf": [{"$ref": "#/$defs/S"}, {"type": "null"}]},
            },
            "$defs": {"S": {"$anchor": "name", "type": "string"}},
        },
        # a local $ref under a nested $id resolves inside that resource
        {
            "type": "object",
            "properties": {
                "a": {"$id": "urn:inner", "$defs": {"x": {"type": "string"}}, "$ref": "#/$defs/x"}
            },
        },
        {
            "type": "object",
            "patternProperties": {"^x_": {"type": "integer"}},
            "additionalProperties": False,
        },
        # a draft-04 root id: the root's own document, whichever dialect reads it
        {
            "$schema": D4,
            "id": "http://example.com/root.json",
            "definitions": {"x": {"type": "string"}},
            "type": "object",
            "properties": {"a": {"$ref": "#/definitions/x"}},
        },
        # a nested $schema naming the root's own dialect
        {"$schema": D7, "type": "object", "properties": {"a": {"$schema": D7, "type": "string"}}},
    ],
)
def test_ordinary_schemas_pass(schema: dict[str, Any]) -> None:
    assert check_tool_schema(schema) is None
    Tool("t", parameters=schema)


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "object", "properties": {"a": {"$ref": "#/$defs/Missing"}}}, "points at nothing"),
        (
            {"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}},
            "only local",
        ),
        ({"type": "object", "properties": {"a": {"$ref": 5}}}, "only local"),
        ({"type": "object", "$ref": "#"}, "cycle"),
        ({"type": "object", "not": {"$ref": "#"}}, "cycle"),
        (
            {"type": "object", "properties": {"s": {"type": "string", "pattern": "(unclosed"}}},
            "does not compile",
        ),
        (
            {"type": "object", "patternProperties": {"^a": {}}, "unevaluatedProperties": False},
            "unevaluatedProperties",
        ),
        ({"$schema": "urn:nobody-knows", "type": "object"}, "unknown $schema"),
        ({"type": "object", "properties": {"a": {"$schema": D7}}}, "may not switch dialect"),
        (
            {"$schema": D7, "type": "object", "$defs": {"a": {"$schema": D4}}},
            "may not switch dialect",
        ),
        (
            {
                "$schema": D4,
                "definitions": {"x": {"type": "string"}},
                "type": "object",
                "properties": {
                    "a": {
                        "id": "sub.json",
                        "definitions": {"x": {"type": "integer"}},
                        "properties": {"b": {"$ref": "#/definitions/x"}},
                    }
                },
            },
            'an "id" above this reference moves it to another document',
        ),
    ],
)
def test_schemas_that_could_fetch_loop_or_hang_are_refused(
    schema: dict[str, Any], problem: str
) -> None:
    assert problem in (check_tool_schema(schema) or "")
    with pytest.raises(InvalidToolError, match="Tool 't': parameters "):
        Tool("t", parameters=schema)


def test_a_schema_too_deep_or_too_large_is_refused_before_anything_recurses() -> None:
    deep: dict[str, Any] = {"type": "object"}
    for _ in range(5_000):  # deeper than the interpreter's recursion limit
        deep = {"type": "object", "properties": {"x": deep}}
    with pytest.raises(InvalidToolError, match=f"nest deeper than {MAX_SCHEMA_DEPTH}"):
        Tool("t", parameters=deep)
    wide = {
        "type": "object",
        "properties": {f"p{i}": {"type": "string", "description": "x" * 200} for i in range(6_000)},
    }
    with pytest.raises(InvalidToolError, match="over the limit"):
        Tool("t", parameters=wide)


@given(
    st.recursive(st.integers(), lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner))
)
def test_json_depth_measures_nesting(value: Any) -> None:
    def depth(v: Any) -> int:
        children = list(v.values()) if isinstance(v, dict) else v if isinstance(v, list) else None
        if children is None:
            return 0
        return 1 + max((depth(c) for c in children), default=0)

    assert json_depth(value, 1_000) == depth(value)


@pytest.mark.parametrize(
    ("items", "unique"),
    [
        ([1, 1.0], False),
        ([True, 1], True),
        ([{"a": [1, 2]}, {"a": [1, 2]}], False),
        ([{"a": 1}, {"a": 2}], True),
        (["1", 1], True),
    ],
)
def test_unique_items_keeps_json_schema_equality(items: list[Any], unique: bool) -> None:
    validator = argument_validator({"type": "array", "uniqueItems": True})
    assert validator.is_valid(items) is unique


def test_a_slow_pattern_answers_invalid_arguments_naming_it_within_its_limit() -> None:
    tool = Tool(
        "t",
        parameters={
            "type": "object",
            "properties": {"s": {"type": "string", "pattern": "^(a|a)*$"}},
        },
    )
    started = time.monotonic()
    with pytest.raises(
        InvalidArgumentsError,
        match=r"could not be checked against the pattern '\^\(a\|a\)\*\$' in time",
    ):
        validate_arguments(tool, {"s": "a" * 40 + "!"})
    assert time.monotonic() - started < 10  # does not hang (the limit is 0.5 s per match)


def test_the_whole_check_stops_at_its_deadline() -> None:
    tool = Tool(
        "t",
        parameters={
            "type": "object",
            "properties": {"rows": {"type": "array", "items": {"type": "integer"}}},
        },
    )
    rows = list(range(200_000))
    assert validate_arguments(tool, {"rows": rows[:10]}, time_limit=5.0) == {"rows": rows[:10]}
    with pytest.raises(InvalidArgumentsError, match="could not be checked in time"):
        validate_arguments(tool, {"rows": rows}, time_limit=0.001)


def test_patterns_keep_re_search_semantics() -> None:
    tool = Tool(
        "t",
        parameters={
            "type": "object",
            "properties": {"s": {"type": "string", "pattern": "b+"}},
            "patternProperties": {"^x_\\d$": {"type": "integer"}},
            "additionalProperties": False,
        },
    )
    assert validate_arguments(tool, {"s": "abbbc", "x_1": 2}) == {"s": "abbbc", "x_1": 2}
    with pytest.raises(InvalidArgumentsError, match="does not match"):
        validate_arguments(tool, {"s": "ccc"})
    with pytest.raises(InvalidArgumentsError, match="unexpected field"):
        validate_arguments(tool, {"x_12": 1})


def test_the_validator_stays_bounded_whatever_dialect_a_subschema_names() -> None:
    """jsonschema's evolve() would swap in a stock validator (stdlib re, no deadline)."""
    validator = argument_validator({"type": "object"})
    for dialect in (D4, D7, "https://json-schema.org/draft/2020-12/schema"):
        assert type(validator.evolve(schema={"$schema": dialect})) is type(validator)
    schema = {"$schema": D7, "properties": {"s": {"pattern": "^(a|a)*$"}, "r": {"$ref": "#"}}}
    tool = Tool("t", parameters={"type": "object", **schema})
    started = time.monotonic()
    with pytest.raises(InvalidArgumentsError, match="could not be checked"):
        validate_arguments(tool, {"r": {"s": "a" * 40 + "!"}})
    assert time.monotonic() - started < 10


@pytest.mark.parametrize(
    ("target", "kind"),
    [
        ("#/properties/b/description", "a string ('the b')"),
        ("#/required", "a list"),
        ("#/properties/b/maxLength", "a int"),
    ],
)
def test_a_reference_to_something_that_is_not_a_schema_is_refused_when_added(
    target: str, kind: str
) -> None:
    # Issue 25: it used to be accepted, and every call then answered tool_unavailable.
    schema = {
        "type": "object",
        "properties": {
            "a": {"$ref": target},
            "b": {"type": "string", "description": "the b", "maxLength": 3},
        },
        "required": ["a"],
    }
    with pytest.raises(InvalidToolError, match=f"points at {re.escape(kind)}, not a schema"):
        Tool("t", parameters=schema)
    boolean = {"properties": {"a": {"$ref": "#/$defs/any"}}, "$defs": {"any": True}}
    assert Tool("t", parameters=boolean).name == "t"  # true and false are schemas
