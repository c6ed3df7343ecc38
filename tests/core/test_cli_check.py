"""``toolmgmt check`` on a policy file, and ``toolmgmt lint``'s exit code on what it cannot read.

A mistake that passes silently is the one a deploy finds: a misspelled name in a deny list
denies nothing, a skipped schema serves nothing. Each is an error here, at its line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolmgmt_core import lint
from toolmgmt_core._cli import main
from toolmgmt_core.integration import tool_from_dict

WEATHER = [
    {
        "name": "weather_get_history",
        "description": "Past weather of a city.",
        "domain": "weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city."}},
            "required": ["city"],
        },
    },
    {
        "name": "weather_get_forecast",
        "description": "The forecast of a city.",
        "domain": "weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city."}},
            "required": ["city", "days"],
        },
    },
    {
        "name": "weather_broken",
        "description": "A tool whose schema is not valid JSON Schema.",
        "parameters": {"type": "object", "properties": {"x": {"type": "bogus"}}},
    },
]

POLICY = """\
[profiles.support]
include = ["domain:weather", "domain:nosuch"]

[[policies]]
label = "global"
deny = ["weather_get_histroy", "weather_purge_*"]
descripton = "a misspelled key"

[[policies]]
label = "agent"
description_overrides = { weather_get_forcast = "The forecast." }
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    catalog = tmp_path / "tools.json"
    catalog.write_text(json.dumps(WEATHER, indent=1), encoding="utf-8")
    policy = tmp_path / "policy.toml"
    policy.write_text(POLICY, encoding="utf-8")
    return str(policy), str(catalog)


def test_check_says_every_problem_of_a_policy_file_at_its_line(
    capsys: pytest.CaptureFixture[str], files: tuple[str, str]
) -> None:
    policy, catalog = files
    code, out, _ = run(capsys, "check", "--config", policy, "--catalog", catalog)
    assert code == 1
    assert out.splitlines() == [
        f"warning: {policy}:2: profiles.support.include[1]: 'domain:nosuch' matches none of the "
        "2 tools.",
        f"error: {policy}:6: policies[0].deny[0]: 'weather_get_histroy' names no tool; did you "
        "mean 'weather_get_history'?",
        f"warning: {policy}:6: policies[0].deny[1]: 'weather_purge_*' matches none of the 2 tools.",
        f"error: {policy}:7: policies[0].descripton: unknown key; valid keys: label, allow, deny, "
        "description_overrides, require_approval, domain, quarantine, quarantine_shadowing, "
        "trusted.",
        f"error: {policy}:11: policies[1].description_overrides.weather_get_forcast: "
        "'weather_get_forcast' names no tool; did you mean 'weather_get_forecast'?",
        f"{policy}: 3 errors, 2 warnings.",
    ]


def test_check_of_a_policy_file_without_a_catalog_says_names_went_unchecked(
    capsys: pytest.CaptureFixture[str], files: tuple[str, str], tmp_path: Path
) -> None:
    good = tmp_path / "good.toml"
    good.write_text('[[policies]]\nlabel = "global"\ndeny = ["weather_get_histroy"]\n')
    code, out, _ = run(capsys, "check", "--config", str(good), "--json")
    assert code == 0
    data = json.loads(out)
    assert data["errors"] == data["warnings"] == 0
    assert data["findings"] == [
        {"severity": "info", "message": f"{good}: tool names not checked: pass --catalog."}
    ]
    _, catalog = files
    code, out, _ = run(capsys, "check", "--config", str(good), "--catalog", catalog, "--json")
    assert code == 1 and json.loads(out)["errors"] == 1


def test_lint_exits_1_on_a_schema_it_could_not_read(
    capsys: pytest.CaptureFixture[str], files: tuple[str, str]
) -> None:
    _, catalog = files
    code, out, err = run(capsys, "lint", "--catalog", catalog, "--severity", "error", "--json")
    assert code == 1
    findings = {(f["tool"], f["code"]) for f in json.loads(out)}
    assert findings == {
        (catalog, "definition-unreadable"),  # weather_broken: skipped, so never checked
        ("weather_get_forecast", "required-unknown"),  # requires 'days', which it lacks
    }
    assert "weather_broken" in err  # the reading's warning, at its line


def test_lint_names_a_required_entry_without_its_property() -> None:
    found = [f for f in lint(tool_from_dict(WEATHER[1])) if f.code == "required-unknown"]
    assert [(f.severity, f.path) for f in found] == [("error", "/")]
    assert "'days'" in found[0].message and "'city'" in found[0].message


def test_check_help_names_what_it_reports(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "check", "--help")
    assert code == 0
    text = " ".join(out.split())
    for words in ("file:line", "--offline", "--catalog", "Exits 1"):
        assert words in text


def test_a_gateway_config_without_the_gateways_check_says_what_to_install(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not read as a policy file (which would call each of its sections an unknown key)."""
    from toolmgmt_core._cli import check

    monkeypatch.setattr(check, "entry_points", lambda group: [])
    config = tmp_path / "gateway.toml"
    config.write_text('[upstreams.notes]\ncommand = "python"\n', encoding="utf-8")
    code, out, err = run(capsys, "check", "--config", str(config))
    assert code == 2 and not out
    assert "is a gateway config, whose check comes with the gateway" in err
