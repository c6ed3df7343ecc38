"""Input examples are checked against the tool's own schema."""

from __future__ import annotations

from toolmgmt_core import Tool
from toolmgmt_core._lint import lint, lint_catalog
from toolmgmt_demo import demo_catalog


def test_input_examples_that_do_not_match_the_schema_are_flagged() -> None:
    parameters = {
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
        "required": ["query"],
    }
    tool = Tool(
        name="crm_search_contacts",
        domain="crm",
        parameters=parameters,
        input_examples=({"query": "patel", "limit": 5}, {"query": "x", "limit": 0}, {}),
    )
    found = [f for f in lint(tool) if f.code == "example-invalid"]
    assert [(f.path, f.message.split(":")[0]) for f in found] == [
        ("/limit", "Input example 2 does not match the schema"),
        ("", "Input example 3 does not match the schema"),
    ]
    assert "'query' is a required property" in found[1].message
    demo = [f for f in lint_catalog(list(demo_catalog())) if f.code == "example-invalid"]
    assert demo == []
