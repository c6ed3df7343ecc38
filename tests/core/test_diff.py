from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolmgmt_core import Tool
from toolmgmt_core._cli import main
from toolmgmt_core._lint.diff import Change, diff_catalogs, summarize

BASE = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to find.", "maxLength": 100},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50},
        "sort": {"type": "string", "enum": ["name", "date"]},
    },
    "required": ["query"],
}


def _tool(parameters: dict | None = None, **fields: object) -> Tool:
    return Tool(
        name=str(fields.pop("name", "search")),
        description=str(fields.pop("description", "Search things.")),
        parameters=parameters or BASE,
    )


def _with(prop: str, **changes: object) -> dict:
    props = {**BASE["properties"], prop: {**BASE["properties"][prop], **changes}}
    return {**BASE, "properties": props}


def _only(changes: list[Change]) -> tuple[str, str]:
    assert len(changes) == 1, changes
    return changes[0].level, changes[0].code


@pytest.mark.parametrize(
    ("new", "expected"),
    [
        (_with("limit", maximum=100), ("minor", "constraint-loosened")),
        (_with("limit", maximum=10), ("major", "constraint-tightened")),
        (_with("limit", minimum=5), ("major", "constraint-tightened")),
        (_with("query", maxLength=200), ("minor", "constraint-loosened")),
        (_with("query", pattern="^[a-z]+$"), ("major", "constraint-tightened")),
        (_with("sort", enum=["name", "date", "size"]), ("minor", "enum-widened")),
        (_with("sort", enum=["name"]), ("major", "enum-narrowed")),
        (_with("limit", type="string"), ("major", "type-changed")),
        (_with("limit", type="number"), ("minor", "type-loosened")),
        (_with("query", description="Text to find."), ("patch", "description-changed")),
        ({**BASE, "required": ["query", "limit"]}, ("major", "field-now-required")),
        ({**BASE, "required": []}, ("minor", "field-now-optional")),
        ({**BASE, "additionalProperties": False}, ("major", "constraint-tightened")),
    ],
)
def test_field_changes_are_classified(new: dict, expected: tuple[str, str]) -> None:
    assert _only(diff_catalogs([_tool()], [_tool(new)])) == expected


def test_added_and_removed_fields() -> None:
    optional = {**BASE, "properties": {**BASE["properties"], "page": {"type": "integer"}}}
    assert _only(diff_catalogs([_tool()], [_tool(optional)])) == ("minor", "field-added-optional")
    required = {**optional, "required": ["query", "page"]}
    assert _only(diff_catalogs([_tool()], [_tool(required)])) == ("major", "field-added-required")
    props = {k: v for k, v in BASE["properties"].items() if k != "sort"}
    assert _only(diff_catalogs([_tool()], [_tool({**BASE, "properties": props})])) == (
        "major",
        "field-removed",
    )
    renamed = {**props, "order": BASE["properties"]["sort"]}
    changes = diff_catalogs([_tool()], [_tool({**BASE, "properties": renamed})])
    assert _only(changes) == ("major", "field-renamed") and "'order'" in changes[0].message


def test_nested_changes_carry_a_path() -> None:
    old = {"type": "object", "properties": {"f": {"type": "object", "properties": {}}}}
    new = {
        "type": "object",
        "properties": {
            "f": {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}
        },
    }
    changes = diff_catalogs([_tool(old)], [_tool(new)])
    assert [(c.level, c.path) for c in changes] == [("major", "/f/x")]


def test_tools_added_removed_renamed_and_description() -> None:
    old = [_tool(), _tool(name="gone", parameters={"type": "object", "properties": {}})]
    new = [_tool(name="find"), _tool(name="extra", parameters={"type": "object"})]
    changes = {(c.tool, c.code, c.level) for c in diff_catalogs(old, new)}
    assert changes == {
        ("search", "tool-renamed", "major"),
        ("gone", "tool-removed", "major"),
        ("extra", "tool-added", "minor"),
    }
    only_text = diff_catalogs([_tool()], [_tool(description="Search things well.")])
    assert _only(only_text) == ("patch", "description-changed")
    assert summarize(only_text) == "patch" and summarize([]) is None


def test_worst_changes_come_first() -> None:
    new = {**_with("limit", maximum=100), "required": ["query", "limit"]}
    levels = [c.level for c in diff_catalogs([_tool()], [_tool(new)])]
    assert levels == sorted(levels, key=["major", "minor", "patch"].index)


def test_cli_diff_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = tmp_path / "old.json"
    old.write_text(json.dumps([_tool().to_dict(full=False)]))
    minor = tmp_path / "minor.json"
    minor.write_text(json.dumps([_tool(_with("limit", maximum=100)).to_dict(full=False)]))
    major = tmp_path / "major.json"
    major.write_text(json.dumps([_tool(_with("limit", maximum=5)).to_dict(full=False)]))
    assert main(["diff", str(old), str(minor)]) == 0
    assert "a minor version bump" in capsys.readouterr().out
    assert main(["diff", str(old), str(major), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["bump"] == "major" and data["changes"][0]["path"] == "/limit"
    assert main(["diff", str(old), str(old)]) == 0
    assert "No changes" in capsys.readouterr().out
    assert main(["diff", str(old), str(tmp_path / "missing.json")]) == 2


def test_changes_inside_definitions_are_seen_where_used() -> None:
    def schema(maximum: int, description: str) -> dict:
        return {
            "type": "object",
            "properties": {"page": {"$ref": "#/$defs/Page"}},
            "$defs": {
                "Page": {
                    "type": "object",
                    "description": description,
                    "properties": {"size": {"type": "integer", "maximum": maximum}},
                }
            },
        }

    only_text = diff_catalogs([_tool(schema(10, "A page."))], [_tool(schema(10, "Paging."))])
    assert _only(only_text) == ("patch", "description-changed")
    tighter = diff_catalogs([_tool(schema(10, "A page."))], [_tool(schema(5, "A page."))])
    assert [(c.level, c.path) for c in tighter] == [("major", "/page/size")]
