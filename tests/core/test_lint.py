from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

import pytest

from toolmgmt_core import Tool
from toolmgmt_core._cli import main
from toolmgmt_core._lint import CODES, Finding, lint, lint_catalog

# toolmgmt_core._lint is also the name of the exported function, so fetch the module itself
lint_module = importlib.import_module("toolmgmt_core._lint")

GOOD = Tool(
    name="search_contacts",
    description="Search CRM contacts by name or email. Use it when the user names a person.",
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Name or email to look for."},
            "limit": {"type": "integer", "description": "Most results.", "default": 10},
        },
        "required": ["query"],
    },
    domain="crm",
)


def _codes(findings: list[Finding]) -> set[str]:
    return {f.code for f in findings}


def test_a_good_tool_has_no_warnings() -> None:
    findings = lint(GOOD)
    assert [f for f in findings if f.severity != "info"] == []
    assert all(f.code in CODES for f in findings)


def test_names() -> None:
    tool = Tool(name="ContactsHelper", description=GOOD.description)
    codes = _codes(lint(tool))
    assert {"name-not-lowercase", "name-not-verb-led", "name-not-namespaced"} <= codes
    assert "name-mapped" in _codes(lint(Tool(name="crm.search contacts", domain="crm")))
    assert "name-not-verb-led" not in _codes(lint(Tool(name="crm_search_contacts")))


@pytest.mark.parametrize(
    ("description", "code", "severity"),
    [
        ("", "description-missing", "error"),
        ("Contacts tool.", "description-vague", "warning"),
        ("A helper for the contacts database of the company.", "description-vague", "warning"),
        ("Returns the contacts stored in the CRM database.", "description-no-when", "info"),
        ("Search contacts. Use it when asked. " + "x" * 1100, "description-too-long", "warning"),
    ],
)
def test_descriptions(description: str, code: str, severity: str) -> None:
    findings = [f for f in lint(GOOD.replace(description=description)) if f.code == code]
    assert findings and findings[0].severity == severity and findings[0].hint


def test_parameters() -> None:
    tool = GOOD.replace(
        name="create_contact",
        parameters={
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "Contact id."},
                "status": {"type": "string", "description": "One of 'lead' or 'customer'."},
                "note": {"type": "string"},
                "address": {
                    "type": "object",
                    "description": "Postal address.",
                    "properties": {"city": {"type": "string", "description": "City."}},
                },
            },
            "required": ["id", "status"],
        },
    )
    by_code: dict[str, list[Finding]] = {}
    for finding in lint(tool):
        by_code.setdefault(finding.code, []).append(finding)
    assert by_code["server-generated-field"][0].path == "/id"
    assert by_code["server-generated-field"][0].severity == "warning"
    assert by_code["parameter-unconstrained"][0].path == "/status"
    assert by_code["parameter-no-description"][0].path == "/note"
    assert {f.path for f in by_code["optional-no-default"]} >= {"/note", "/address"}
    assert by_code["required-missing"][0].path == "/address"
    enum_status = tool.parameters["properties"]["status"] | {"enum": ["lead", "customer"]}
    fixed = tool.replace(
        parameters={
            **tool.parameters,
            "properties": {**tool.parameters["properties"], "status": enum_status},
        }
    )
    assert "parameter-unconstrained" not in _codes(lint(fixed))


def test_provider_incompatibilities() -> None:
    union = GOOD.replace(
        parameters={
            "type": "object",
            "anyOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"type": "object", "properties": {"b": {"type": "string"}}, "required": ["b"]},
            ],
        }
    )
    codes = _codes(lint(union))
    assert "anthropic-rewritten" in codes
    loose = GOOD.replace(
        parameters={"type": "object", "properties": {"blob": {"description": "Anything."}}}
    )
    findings = {f.code: f for f in lint(loose)}
    assert "a value of any type" in findings["openai-not-strict"].message
    assert findings["gemini-rewritten"].severity == "info"
    broken = GOOD.replace()
    # Tool() refuses a dangling $ref (schema_guard); lint must still report one that got in.
    dangling = {"type": "object", "properties": {"x": {"$ref": "#/$defs/Nope"}}}
    object.__setattr__(broken, "parameters", dangling)
    errors = {f.code for f in lint(broken) if f.severity == "error"}
    assert {"anthropic-incompatible", "openai-incompatible", "gemini-incompatible"} <= errors


def test_siblings_must_be_told_apart() -> None:
    a = GOOD
    b = GOOD.replace(
        name="find_contacts",
        description="Search CRM contacts by name or email. Use it when the user names people.",
    )
    findings = [f for f in lint_catalog([a, b]) if f.code == "description-sibling"]
    assert {f.tool for f in findings} == {"search_contacts", "find_contacts"}
    b_fixed = b.replace(description=b.description + " Use search_contacts instead for one.")
    c = a.replace(description=a.description + " Not for bulk lookups: use find_contacts.")
    assert not [f for f in lint_catalog([c, b_fixed]) if f.code == "description-sibling"]


def _write(path: Path, tools: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps(tools))
    return str(path)


def test_cli_lint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _write(tmp_path / "good.json", [GOOD.to_dict(full=False)])
    assert main(["lint", "--catalog", good, "--severity", "warning"]) == 0
    assert "No findings" in capsys.readouterr().out
    bad = _write(tmp_path / "bad.json", [{"name": "x", "description": ""}])
    assert main(["lint", "--catalog", bad, "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data[0]["code"] == "description-missing" and data[0]["severity"] == "error"
    assert main(["lint", "--catalog", bad]) == 1


def test_catalog_too_big_for_openai() -> None:
    tools = [GOOD.replace(name=f"search_contacts_{i}") for i in range(130)]
    findings = [f for f in lint_catalog(tools, providers=("openai",)) if f.tool == "(catalog)"]
    assert [f.code for f in findings] == ["openai-too-many-tools"]
    assert "130 tools" in findings[0].message
