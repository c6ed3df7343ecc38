"""What real MCP servers publish in older JSON Schema drafts is accepted, rewritten to 2020-12:
draft 4's boolean ``exclusiveMinimum`` (zod's output for ``.positive()``, as pdf-reader-mcp's
``read_pdf`` sends it), tuple ``items``; the lint says what was rewritten."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from toolmgmt_core import InvalidToolError, Tool, ToolCatalog, ToolManager, lint
from toolmgmt_core._model.schema_drafts import NORMALIZED_KEY

# pdf-reader-mcp's read_pdf, as its zod schema is written out for draft 4 (abridged).
READ_PDF: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "type": "object",
    "properties": {
        "sources": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "path": {"type": "string", "description": "A local PDF file."},
                    "pages": {
                        "type": "array",
                        "items": {"type": "integer", "minimum": 0, "exclusiveMinimum": True},
                    },
                },
                "additionalProperties": False,
            },
            "minItems": 1,
        },
        "max_chars": {"type": "number", "maximum": 100000, "exclusiveMaximum": False},
        "range": {"type": "array", "items": [{"type": "integer"}, {"type": "integer"}]},
    },
    "required": ["sources"],
    "additionalProperties": False,
}


def _read_pdf(**arguments: Any) -> str:
    return "ok"


def test_a_draft_4_schema_is_accepted_and_means_what_it_said() -> None:
    original = copy.deepcopy(READ_PDF)
    catalog = ToolCatalog()
    catalog.add(Tool("read_pdf", "Read text from PDF files.", READ_PDF, handler=_read_pdf))
    assert READ_PDF == original  # the caller's dict is left as it was
    tool = catalog.get("read_pdf")
    pages = tool.parameters["properties"]["sources"]["items"]["properties"]["pages"]["items"]
    assert pages == {"type": "integer", "exclusiveMinimum": 0}
    assert "exclusiveMaximum" not in tool.parameters["properties"]["max_chars"]
    assert tool.parameters["properties"]["range"] == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "integer"}],
    }
    assert "$schema" not in tool.parameters  # it says the dialect it is checked as
    session = ToolManager(catalog, "flat").session()
    ok = session.call_sync("read_pdf", {"sources": [{"path": "a.pdf", "pages": [1, 2]}]})
    assert ok.outcome == "success"
    zero = session.call_sync("read_pdf", {"sources": [{"path": "a.pdf", "pages": [0]}]})
    assert zero.outcome == "retry" and zero.error is not None  # 0 is not > 0, as draft 4 said
    assert zero.error.code == "invalid_arguments"
    (finding,) = [f for f in lint(tool) if f.code == "schema-normalized"]
    assert finding.severity == "info"
    assert "exclusiveMinimum true with minimum 0 -> exclusiveMinimum 0" in finding.message
    assert "prefixItems" in finding.message and "draft-04" in finding.message


def test_a_2020_12_schema_is_left_as_it_is() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}},
        "definitions": {"x": {"type": "string"}},
    }
    tool = Tool("count", "Count.", schema)
    assert tool.parameters == schema and NORMALIZED_KEY not in tool.metadata
    assert not [f for f in lint(tool) if f.code == "schema-normalized"]


def test_an_id_keeps_its_dialect_for_the_guard() -> None:
    """A draft-4 ``id`` that moves a reference is still refused (its meaning would change)."""
    schema = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "object",
        "properties": {
            "n": {"type": "integer", "minimum": 1, "exclusiveMinimum": True},
            "inner": {
                "id": "http://example.com/inner.json",
                "type": "object",
                "properties": {"x": {"$ref": "#/definitions/x"}},
                "definitions": {"x": {"type": "string"}},
            },
        },
    }
    with pytest.raises(InvalidToolError, match="id"):
        Tool("moved", "Moved references.", schema)
