"""``toolmgmt check --config gateway.toml``: one config with one of each mistake, every one said
at its line in one run, against a real upstream MCP server started as ``serve`` would."""

from __future__ import annotations

import json
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from toolmgmt_core._cli import main
from toolmgmt_core._cli.check import CHECK_GROUP

SERVERS = Path(__file__).resolve().parents[1] / "adapters" / "mcp" / "servers"

WEATHER_SERVER = f"""\
import sys
sys.path.insert(0, {str(SERVERS)!r})
import raw_server

TOOLS = [
    {{"name": "get_history", "description": "Past weather of a city.",
      "inputSchema": {{"type": "object", "properties": {{"city": {{"type": "string"}}}},
                      "required": ["city"]}}}},
    {{"name": "get_forecast", "description": "The forecast of a city.",
      "inputSchema": {{"type": "object", "properties": {{"city": {{"type": "string"}}}},
                      "required": ["city", "days"]}}}},
    {{"name": "broken", "description": "A tool whose schema is not valid JSON Schema.",
      "inputSchema": {{"type": "object", "properties": {{"x": {{"type": "bogus"}}}}}}}},
]
raw_server.main(lambda request: raw_server.answer(request, TOOLS))
"""

CONFIG = f"""\
[gateway]
transport = "http"
tokn = "a misspelled key"
token = "short"
metrics = true
always_on = ["weather_get_*"]

[policy]
deny = ["weather_get_histroy", "weather_purge_*"]

[upstreams.weather]
command = {json.dumps(sys.executable)}
args = ["weather_server.py"]
"""


@pytest.fixture(autouse=True)
def gateway_check(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gateway's check as the installed package registers it (pyproject.toml), for a
    venv installed before the entry point was added."""
    if any(e.name == "gateway" for e in entry_points(group=CHECK_GROUP)):
        return
    site = tmp_path_factory.mktemp("site")
    info = site / "toolmgmt_check_test-0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toolmgmt-check-test\nVersion: 0\n")
    (info / "entry_points.txt").write_text(
        f"[{CHECK_GROUP}]\ngateway = toolmgmt_gateway.config_check:check_gateway_config\n"
    )
    monkeypatch.syspath_prepend(str(site))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_check_says_every_mistake_of_a_gateway_config_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "weather_server.py").write_text(WEATHER_SERVER, encoding="utf-8")
    config = tmp_path / "gateway.toml"
    config.write_text(CONFIG, encoding="utf-8")
    code, out = run(capsys, "check", "--config", str(config))
    assert code == 1
    lines = out.splitlines()
    assert lines[-1] == f"{config}: 6 errors, 2 warnings."
    said = [line.split(": ", 3)[:3] for line in lines[:-1]]
    assert said == [
        ["error", f"{config}:3", "gateway.tokn"],  # an unknown key
        ["warning", f"{config}:4", "gateway.token"],  # a token written in the file
        ["error", f"{config}:4", "gateway.token"],  # a weak one
        ["error", f"{config}:5", "gateway.metrics"],  # /metrics without its own credential
        ["error", f"{config}:9", "policy.deny[0]"],  # an exact name matching no tool
        ["warning", f"{config}:9", "policy.deny[1]"],  # a pattern matching none
        ["error", f"{config}:11", "upstreams.weather"],  # an invalid schema: skipped
        ["error", f"{config}:11", "upstreams.weather"],  # required naming no property
    ]
    assert "'weather_get_histroy' names no tool; did you mean 'weather_get_history'?" in out
    assert "its tool 'broken' is skipped (not served)" in out
    assert "requires 'days', which is not among its properties" in out
    assert "the token is 5 characters; it needs at least 16" in out


def test_check_offline_starts_no_upstream_and_says_names_went_unchecked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text(
        CONFIG.replace('tokn = "a misspelled key"\n', "")
        .replace('token = "short"\n', 'token_env = "WEATHER_GATEWAY_TOKEN"\n')
        .replace("metrics = true\n", "")
        .replace('"weather_server.py"', '"no_such_server.py"'),
        encoding="utf-8",
    )
    code, out = run(capsys, "check", "--config", str(config), "--offline", "--json")
    data = json.loads(out)
    assert data["findings"] == [
        {"severity": "info", "message": f"{config}: tool names not checked (--offline)."},
        {
            "severity": "error",
            "message": f"{config}:3: gateway.token_env: environment variable "
            "'WEATHER_GATEWAY_TOKEN' is not set or empty.",
        },
    ]
    assert code == 1


def test_check_an_open_http_gateway_off_loopback_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "gateway.json"
    config.write_text(
        json.dumps(
            {
                "gateway": {"transport": "http", "host": "0.0.0.0"},
                "upstreams": {"weather": {"command": "python"}},
            },
            indent=1,
        ),
        encoding="utf-8",
    )
    code, out = run(capsys, "check", "--config", str(config), "--offline")
    assert code == 1
    assert out.splitlines()[1] == (
        f"error: {config}:3: gateway.transport: an HTTP gateway on 0.0.0.0 without a token: "
        'anyone who reaches it can call its tools; set token_env = "VARIABLE" (or '
        "[gateway.clients])."
    )


def test_the_reader_says_the_sections_after_a_problem_too() -> None:
    """Before, one unknown key hid every check after the upstreams (deny, clients, /metrics)."""
    from toolmgmt_gateway.config_file import parse_config

    from toolmgmt_core import ConfigError

    text = CONFIG.replace('token = "short"\n', 'token = "a-token-long-enough-here"\n')
    with pytest.raises(ConfigError) as caught:
        parse_config(text, source="gateway.toml")
    assert [line.split(": ")[:2] for line in str(caught.value).splitlines()] == [
        ["gateway.toml:3", "gateway.tokn"],
        ["gateway.toml:5", "gateway.metrics"],
    ]


def test_check_says_a_bad_companion_floor_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 44: ``[learning] companion_principals`` is read like ``min_principals``: a floor
    under 1, and a misspelled key, are said at their line."""
    config = tmp_path / "gateway.toml"
    learning = '[upstreams.weather]\ncommand = "python"\n[learning]\nenabled = true\n'
    for line, said in (
        ("companion_principals = 0", "must be a whole number from 1 to 1000, got 0."),
        ("companion_principal = 2", "unknown key; valid keys: companion_principals, destructive"),
    ):
        config.write_text(f"{learning}{line}\n", encoding="utf-8")
        code, out = run(capsys, "check", "--config", str(config), "--offline")
        assert code == 1
        assert f"error: {config}:5: learning.{line.split()[0]}: {said}" in out, out
