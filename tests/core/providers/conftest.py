"""Validators that check formatted tools with the providers' own SDK types."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from anthropic.types import (
    CodeExecutionTool20250825Param,
    CodeExecutionTool20260120Param,
    CodeExecutionTool20260521Param,
    ToolParam,
    ToolSearchToolBm25_20251119Param,
    ToolSearchToolRegex20251119Param,
)
from google.genai import types as gtypes
from jsonschema import Draft7Validator
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam, NamespaceToolParam, ToolSearchToolParam
from openai.types.responses.namespace_tool_param import ToolFunction
from openai.types.shared_params import FunctionDefinition
from pydantic import TypeAdapter

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_GEMINI_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$")
_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}
# Draft 7's meta-schema checks the same keywords here and is far faster than 2020-12's
# ($dynamicRef resolution), which keeps the whole-pool tests quick.
_META = Draft7Validator(Draft7Validator.META_SCHEMA)


def check_schema(schema: Any) -> None:
    errors = list(_META.iter_errors(schema))
    assert not errors, errors[0].message


STRICT_KEYWORDS = {
    "type", "properties", "required", "additionalProperties", "items", "enum", "const",
    "anyOf", "$ref", "$defs", "description", "pattern", "format", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
}  # fmt: skip
GEMINI_KEYWORDS = {
    "type", "format", "description", "nullable", "enum", "items", "properties", "required",
    "minItems", "maxItems", "minimum", "maximum", "anyOf", "minLength", "maxLength", "pattern",
    "minProperties", "maxProperties",
}  # fmt: skip


def _validate(kind: Any, value: Any) -> None:
    if kind not in _ADAPTERS:
        _ADAPTERS[kind] = TypeAdapter(kind)
    adapter = _ADAPTERS[kind]
    adapter.validate_python(value, strict=True)
    unknown = set(value) - set(kind.__annotations__)
    assert not unknown, f"keys unknown to {kind.__name__}: {unknown}"


_CODE_EXECUTION = {
    "code_execution_20250825": CodeExecutionTool20250825Param,
    "code_execution_20260120": CodeExecutionTool20260120Param,
    "code_execution_20260521": CodeExecutionTool20260521Param,
}


def check_anthropic(tools: list[dict[str, Any]]) -> None:
    for tool in tools:
        kind = tool.get("type")
        if kind == "tool_search_tool_bm25_20251119":
            _validate(ToolSearchToolBm25_20251119Param, tool)
            continue
        if kind == "tool_search_tool_regex_20251119":
            _validate(ToolSearchToolRegex20251119Param, tool)
            continue
        if kind in _CODE_EXECUTION:
            _validate(_CODE_EXECUTION[kind], tool)
            continue
        _validate(ToolParam, tool)
        assert _NAME.match(tool["name"]), tool["name"]
        schema = tool["input_schema"]
        assert schema["type"] == "object"
        assert not {"anyOf", "oneOf", "allOf"} & set(schema)
        check_schema(schema)
        assert not (tool.get("defer_loading") and "cache_control" in tool)


def check_openai(tools: list[dict[str, Any]]) -> None:
    for tool in tools:
        _validate(ChatCompletionFunctionToolParam, tool)
        _validate(FunctionDefinition, tool["function"])
        assert _NAME.match(tool["function"]["name"])
        check_schema(tool["function"]["parameters"])
        if tool["function"].get("strict"):
            assert_strict(tool["function"]["parameters"])


def check_responses(tools: list[dict[str, Any]]) -> None:
    for tool in tools:
        if tool["type"] == "tool_search":
            _validate(ToolSearchToolParam, tool)
            continue
        if tool["type"] == "namespace":
            _validate(NamespaceToolParam, tool)
            assert _NAME.match(tool["name"])
            for inner in tool["tools"]:
                _validate(ToolFunction, inner)
                assert _NAME.match(inner["name"]) and inner["defer_loading"] is True
            continue
        _validate(FunctionToolParam, tool)
        assert _NAME.match(tool["name"])
        check_schema(tool["parameters"])
        if tool["strict"]:
            assert_strict(tool["parameters"])


def check_gemini(tools: list[dict[str, Any]]) -> None:
    for tool in tools:
        assert set(tool) == {"function_declarations"}
        gtypes.Tool.model_validate(tool)
        for declaration in tool["function_declarations"]:
            gtypes.FunctionDeclaration.model_validate(declaration)
            assert _GEMINI_NAME.match(declaration["name"])
            if "parameters" in declaration:
                assert declaration["parameters"]["type"] == "OBJECT"
                assert_gemini_subset(declaration["parameters"])


def assert_gemini_subset(node: dict[str, Any], path: str = "") -> None:
    unknown = set(node) - GEMINI_KEYWORDS
    assert not unknown, f"{path}: keywords outside Gemini's subset: {unknown}"
    kind = node.get("type")
    if "anyOf" in node:
        for i, sub in enumerate(node["anyOf"]):
            assert_gemini_subset(sub, f"{path}/anyOf/{i}")
        return
    assert kind in {"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"}, (path, kind)
    if "enum" in node:
        assert kind == "STRING" and all(isinstance(v, str) for v in node["enum"]), path
    if kind == "OBJECT":
        assert node.get("properties"), f"{path}: OBJECT without properties"
        assert set(node.get("required", [])) <= set(node["properties"]), path
        for name, sub in node["properties"].items():
            assert_gemini_subset(sub, f"{path}/{name}")
    else:
        assert "properties" not in node and "required" not in node, path
    if kind == "ARRAY":
        assert isinstance(node.get("items"), dict), f"{path}: ARRAY without items"
        assert_gemini_subset(node["items"], f"{path}/items")


def assert_strict(node: Any, path: str = "", root: bool = True) -> None:
    """Every object closed, every property required, only strict-mode keywords."""
    assert isinstance(node, dict), path
    unknown = set(node) - STRICT_KEYWORDS
    assert not unknown, f"{path}: keywords strict mode rejects: {unknown}"
    if "$ref" in node:
        assert set(node) == {"$ref"}, f"{path}: $ref with siblings"
        return
    if root:
        assert node["type"] == "object" and "anyOf" not in node
        for name, sub in node.get("$defs", {}).items():
            assert_strict(sub, f"$defs/{name}", root=False)
    kinds = node.get("type")
    kinds = set(kinds) if isinstance(kinds, list) else {kinds}
    if "object" in kinds:
        assert node.get("additionalProperties") is False, f"{path}: object not closed"
        assert set(node.get("required", [])) == set(node.get("properties", {})), path
        for name, sub in node.get("properties", {}).items():
            assert_strict(sub, f"{path}/{name}", root=False)
    if "array" in kinds:
        assert_strict(node["items"], f"{path}/items", root=False)
    for i, sub in enumerate(node.get("anyOf", [])):
        assert_strict(sub, f"{path}/anyOf/{i}", root=False)
    if node.get("format") is not None:
        assert node["format"] in {
            "date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"
        }  # fmt: skip


CHECKS: dict[str, Callable[[list[dict[str, Any]]], None]] = {
    "anthropic": check_anthropic,
    "openai": check_openai,
    "openai-responses": check_responses,
    "gemini": check_gemini,
}


@pytest.fixture(scope="session")
def check_provider() -> Callable[[str, list[dict[str, Any]]], None]:
    """Validate formatted tools for a provider with its SDK types and structural rules."""

    def check(provider: str, tools: list[dict[str, Any]]) -> None:
        CHECKS[provider](tools)

    return check
