"""Schema ingestion properties: every accepted shape of one definition gives the same Tool."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolmgmt_core import Tool, ToolCatalog
from toolmgmt_core._model.schema import tool_from_dict

names = st.from_regex(r"[A-Za-z][A-Za-z0-9_.\-]{0,40}", fullmatch=True)
words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=80)
leaf_types = st.sampled_from(["string", "integer", "number", "boolean"])


@st.composite
def properties(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in draw(
        st.lists(st.from_regex(r"[a-z][a-zA-Z0-9_]{0,15}", fullmatch=True), max_size=5, unique=True)
    ):
        kind = draw(st.sampled_from(["leaf", "enum", "array", "object"] if depth < 2 else ["leaf"]))
        prop: dict[str, Any]
        if kind == "leaf":
            prop = {"type": draw(leaf_types)}
        elif kind == "enum":
            prop = {
                "type": "string",
                "enum": draw(st.lists(words, min_size=1, max_size=4, unique=True)),
            }
        elif kind == "array":
            prop = {"type": "array", "items": {"type": draw(leaf_types)}}
        else:
            prop = {"type": "object", "properties": draw(properties(depth + 1))}
        if draw(st.booleans()):
            prop["description"] = draw(words)
        out[key] = prop
    return out


@st.composite
def definitions(draw: st.DrawFn) -> dict[str, Any]:
    props = draw(properties())
    schema: dict[str, Any] = {"type": "object", "properties": props}
    required = draw(st.lists(st.sampled_from(sorted(props)), unique=True)) if props else []
    if required:
        schema["required"] = required
    return {"name": draw(names), "description": draw(words), "parameters": schema}


def _shapes(plain: dict[str, Any]) -> dict[str, dict[str, Any]]:
    schema = plain["parameters"]
    return {
        "plain": dict(plain),
        "openai_chat": {"type": "function", "function": dict(plain)},
        "openai_responses": {"type": "function", **plain, "strict": False},
        "anthropic": {
            "name": plain["name"],
            "description": plain["description"],
            "input_schema": schema,
        },
        "mcp": {"name": plain["name"], "description": plain["description"], "inputSchema": schema},
    }


@settings(max_examples=150, deadline=None)
@given(definitions())
def test_every_shape_gives_the_same_tool(plain: dict[str, Any]) -> None:
    tools = {shape: tool_from_dict(d) for shape, d in _shapes(plain).items()}
    reference = tools["plain"]
    assert reference.name == plain["name"]
    assert reference.description == plain["description"]
    assert dict(reference.parameters) == plain["parameters"]
    for shape, tool in tools.items():
        assert tool == reference, shape


@settings(max_examples=60, deadline=None)
@given(definitions(), st.sampled_from(["crm", "files"]))
def test_shapes_ingest_alike_through_the_catalog(plain: dict[str, Any], domain: str) -> None:
    for shape, definition in _shapes(plain).items():
        catalog = ToolCatalog()
        report = catalog.add_schemas([definition], domain=domain)
        assert report.added == [plain["name"]], shape
        tool = catalog.get(plain["name"])
        assert tool.domain == domain
        assert tool == Tool(
            name=plain["name"],
            description=plain["description"],
            parameters=plain["parameters"],
            domain=domain,
        )
