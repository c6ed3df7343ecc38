"""Hypothesis-generated JSON Schemas: every provider's output is valid, or the tool is reported."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolmgmt_core._model.tool import Tool
from toolmgmt_core._providers import clear_format_cache, format_tools
from toolmgmt_core._providers.openai import StrictModeUnsupported, to_strict_schema

_names = st.sampled_from(["a", "b", "city", "limit", "tags", "user id", "x.y", "when"])

_leaf = st.one_of(
    st.fixed_dictionaries(
        {"type": st.just("string")},
        optional={
            "minLength": st.integers(0, 5),
            "maxLength": st.integers(5, 50),
            "pattern": st.just("^[a-z]+$"),
            "format": st.sampled_from(["email", "uri", "date-time", "uuid", "hostname"]),
            "description": st.text(max_size=20),
            "default": st.text(max_size=5),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["integer", "number"])},
        optional={
            "minimum": st.integers(-5, 0),
            "maximum": st.integers(1, 99),
            "exclusiveMinimum": st.integers(-9, -6),
            "multipleOf": st.just(2),
            "default": st.integers(0, 3),
        },
    ),
    st.just({"type": "boolean"}),
    st.just({"type": ["string", "null"]}),
    st.just({"type": ["integer", "string"]}),
    st.lists(st.integers(0, 9), min_size=1, max_size=4, unique=True).map(lambda v: {"enum": v}),
    st.lists(st.text(max_size=4), min_size=1, max_size=4, unique=True).map(
        lambda v: {"type": "string", "enum": v}
    ),
    st.sampled_from([{"const": "fixed"}, {}, {"description": "anything"}]),
)


def _object(
    children: st.SearchStrategy[Any], max_size: int, **optional: st.SearchStrategy[Any]
) -> st.SearchStrategy[Any]:
    """An object schema: up to ``max_size`` properties, maybe some required, ``optional`` keys."""
    return st.dictionaries(_names, children, max_size=max_size).flatmap(
        lambda props: st.fixed_dictionaries(
            {"type": st.just("object"), "properties": st.just(props)},
            optional={
                "required": st.lists(st.sampled_from(sorted(props)), unique=True)
                if props
                else st.just([]),
                **optional,
            },
        )
    )


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    obj = _object(
        children, 4, additionalProperties=st.sampled_from([False, True, {"type": "string"}])
    )
    return st.one_of(
        obj,
        st.fixed_dictionaries({"type": st.just("array"), "items": children}),
        st.just({"type": "array"}),
        st.lists(children, min_size=1, max_size=3).map(lambda v: {"anyOf": v}),
        st.lists(children, min_size=1, max_size=3).map(lambda v: {"oneOf": v}),
        st.tuples(obj, obj).map(lambda p: {"allOf": list(p)}),
        children.map(lambda c: {"type": "array", "items": c, "minItems": 1, "uniqueItems": True}),
    )


_schema = st.recursive(_leaf, _containers, max_leaves=8)

_parameters = _object(
    _schema,
    5,
    **{"$defs": st.just({"Item": {"type": "object", "properties": {"n": {"type": "string"}}}})},
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parameters=_parameters, strict=st.booleans())
def test_generated_schemas_are_valid_for_every_provider(
    parameters: dict[str, Any], strict: bool, check_provider: Any
) -> None:
    clear_format_cache()
    tool = Tool(name="generated.tool", description="A generated tool.", parameters=parameters)
    for provider in ("anthropic", "openai", "openai-responses", "gemini"):
        out = format_tools([tool], provider, strict=strict)
        # generated schemas are all formattable: nothing may be left out
        assert not out["report"].skipped
        check_provider(provider, out["tools"])


@settings(max_examples=80, deadline=None)
@given(parameters=_parameters)
def test_strict_rewrite_is_strict_or_says_why(
    parameters: dict[str, Any], check_provider: Any
) -> None:
    try:
        schema, _ = to_strict_schema(parameters)
    except StrictModeUnsupported as exc:
        assert str(exc)
        return
    tool = {"type": "function", "function": {"name": "t", "parameters": schema, "strict": True}}
    check_provider("openai", [tool])


@settings(max_examples=40, deadline=None)
@given(parameters=_parameters)
def test_formatting_never_changes_the_tool(parameters: dict[str, Any]) -> None:
    tool = Tool(name="t", parameters=parameters)
    before = copy.deepcopy(dict(tool.parameters))
    for provider in ("anthropic", "openai", "gemini"):
        format_tools([tool], provider, strict=True)
    assert dict(tool.parameters) == before
