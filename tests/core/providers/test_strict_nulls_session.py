"""OpenAI strict mode's nulls for left-out optional fields are dropped before validation."""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator

from toolmgmt_core import InvalidArgumentsError, Tool, ToolCatalog, ToolManager
from toolmgmt_core._calls.validation import validate_arguments
from toolmgmt_core._providers import format_tools, strip_strict_nulls

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1},
        "cursor": {"type": ["string", "null"]},
        "sort": {"$ref": "#/$defs/Sort"},
        "window": {
            "anyOf": [
                {
                    "type": "object",
                    "properties": {
                        "start": {"type": "string"},
                        "end": {"type": "string"},
                    },
                    "required": ["start"],
                    "additionalProperties": False,
                },
                {"type": "null"},
            ]
        },
        "filters": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "value": {"type": "string"}},
                "required": ["field"],
            },
        },
    },
    "required": ["query"],
    "additionalProperties": False,
    "$defs": {"Sort": {"type": "string", "enum": ["new", "old"]}},
}


def _session(seen: list[dict[str, Any]], parameters: dict[str, Any] = SCHEMA) -> Any:
    def handler(**kwargs: Any) -> dict[str, Any]:
        seen.append(kwargs)
        return {"ok": True}

    tool = Tool(name="find_tickets", description="Find tickets.", parameters=parameters)
    catalog = ToolCatalog([tool.replace(handler=handler)])
    return ToolManager(catalog, always_on=["find_tickets"]).session()


def test_strict_model_nulls_reach_the_handler_as_left_out_fields() -> None:
    request = format_tools([Tool(name="find_tickets", parameters=SCHEMA)], "openai", strict=True)
    strict_schema = request["tools"][0]["function"]["parameters"]
    assert request["tools"][0]["function"]["strict"] is True
    # What a strict model sends: every field, null for the ones it leaves out.
    sent = {
        "query": "refund",
        "limit": None,
        "cursor": None,
        "sort": None,
        "window": {"start": "2026-01-01", "end": None},
        "filters": [{"field": "state", "value": None}],
    }
    assert not list(Draft202012Validator(strict_schema).iter_errors(sent))

    seen: list[dict[str, Any]] = []
    result = _session(seen).call_sync("find_tickets", sent)

    assert not result.is_error, result.content
    assert seen == [
        {
            "query": "refund",
            "cursor": None,  # its own schema accepts null: kept
            "window": {"start": "2026-01-01"},
            "filters": [{"field": "state"}],
        }
    ]


def test_null_for_a_required_field_still_fails_with_its_own_message() -> None:
    seen: list[dict[str, Any]] = []
    result = _session(seen).call_sync("find_tickets", {"query": None, "limit": None})
    assert result.is_error and not seen
    assert "query: expected string, got null." in result.content  # not "got null null"
    assert "limit" not in result.content


def test_nested_required_null_is_kept_and_reported() -> None:
    seen: list[dict[str, Any]] = []
    result = _session(seen).call_sync("find_tickets", {"query": "x", "window": {"start": None}})
    assert result.is_error and not seen
    assert "window" in result.content


@pytest.mark.parametrize(
    ("schema", "arguments"),
    [
        # a value of any type accepts null
        ({"type": "object", "properties": {"a": {}}}, {"a": None}),
        # a map's values are not fields: a null there is the caller's data, reported
        (
            {"type": "object", "properties": {"m": {"additionalProperties": {"type": "string"}}}},
            {"m": {"k": None}},
        ),
        # dropping would break minProperties
        (
            {"type": "object", "properties": {"a": {"type": "string"}}, "minProperties": 1},
            {"a": None},
        ),
    ],
)
def test_nulls_that_are_not_left_out_optionals_are_kept(
    schema: dict[str, Any], arguments: dict[str, Any]
) -> None:
    tool = Tool(name="t", parameters=schema)
    valid = not list(Draft202012Validator(schema).iter_errors(arguments))
    if valid:
        assert validate_arguments(tool, arguments) == arguments
    else:
        with pytest.raises(InvalidArgumentsError, match="null|None"):
            validate_arguments(tool, arguments)


def test_repair_false_keeps_nulls() -> None:
    tool = Tool(name="t", parameters={"type": "object", "properties": {"a": {"type": "string"}}})
    assert validate_arguments(tool, {"a": None}) == {}
    with pytest.raises(InvalidArgumentsError, match="expected string, got null"):
        validate_arguments(tool, {"a": None}, repair=False)


def test_strip_strict_nulls_keeps_nulls_that_the_schema_accepts() -> None:
    schema = {
        "type": "object",
        "properties": {
            "anything": {"description": "Any JSON value."},
            "not_text": {"not": {"type": "string"}},
            "text": {"type": "string"},
            "ref": {"$ref": "#/$defs/Maybe"},
        },
        "$defs": {"Maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]}},
    }
    arguments = {"anything": None, "not_text": None, "text": None, "ref": None}
    assert strip_strict_nulls(arguments, schema) == {
        "anything": None,
        "not_text": None,
        "ref": None,
    }
