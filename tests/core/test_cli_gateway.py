"""``toolmgmt ... --catalog gateway.toml``: the tools of a gateway config's upstream MCP servers."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("toolmgmt_gateway")

from toolmgmt_core._cli import main  # noqa: E402

SERVER = textwrap.dedent(
    '''
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("weather")

    @server.tool()
    def get_forecast(city: str, days: int = 3) -> str:
        """Get the weather forecast for a city for the next days."""
        return f"{city}: sunny for {days} days"

    @server.tool()
    def get_air_quality(city: str) -> str:
        """Get the air quality index of a city."""
        return f"{city}: 42"

    if __name__ == "__main__":
        server.run()
    '''
)


@pytest.fixture
def server_script(tmp_path: Path) -> Path:
    path = tmp_path / "weather_server.py"
    path.write_text(SERVER, encoding="utf-8")
    return path


def test_toml_gateway_config_lists_its_upstreams_tools(
    tmp_path: Path, server_script: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "gateway.toml"
    config.write_text(
        f"[upstreams.weather]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(server_script))}]\n\n"
        '[upstreams.broken]\ncommand = "/nonexistent/toolmgmt-test-binary"\n',
        encoding="utf-8",
    )
    code = main(["search", "weather", "forecast", "--catalog", str(config), "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    results = json.loads(captured.out)["results"]
    assert results[0]["name"] == "weather_get_forecast" and results[0]["domain"] == "weather"
    assert f"warning: {config}: upstream 'broken' is unavailable" in captured.err


def test_json_gateway_config_and_a_config_without_tools(
    tmp_path: Path, server_script: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "gateway.json"
    upstream = {"command": sys.executable, "args": [str(server_script)]}
    config.write_text(json.dumps({"upstreams": {"weather": upstream}}), encoding="utf-8")
    assert main(["browse", "--catalog", str(config), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(d["domain"], d["tools"]) for d in data["domains"]] == [("weather", 2)]

    dead = tmp_path / "dead.toml"
    dead.write_text('[upstreams.gone]\ncommand = "/nonexistent/toolmgmt-test-binary"\n')
    assert main(["report", "--catalog", str(dead)]) == 2
    assert f"{dead}: no tools: none of its 1 upstreams listed any." in capsys.readouterr().err


def test_bad_gateway_config_names_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[upstreams.x\ncommand = 1\n", encoding="utf-8")
    assert main(["report", "--catalog", str(config)]) == 2
    assert str(config) in capsys.readouterr().err


NOISY = "import sys\nprint('UPSTREAM BANNER ' * 40, file=sys.stderr, flush=True)\n"


def test_usage_over_a_gateway_config_keeps_the_upstreams_stderr_out(
    tmp_path: Path, server_script: Path
) -> None:
    """The upstreams are started to list their tools; what they print is not the report's."""
    import subprocess

    from toolmgmt_demo.usage import record_demo_usage

    noisy = tmp_path / "noisy_server.py"
    noisy.write_text(NOISY + server_script.read_text(encoding="utf-8"), encoding="utf-8")
    config = tmp_path / "gateway.toml"
    config.write_text(
        f"[upstreams.weather]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(noisy))}]\n\n"
        '[upstreams.broken]\ncommand = "/nonexistent/toolmgmt-test-binary"\n',
        encoding="utf-8",
    )
    log = tmp_path / "usage.jsonl"
    record_demo_usage(log)
    script = Path(sys.executable).parent / "toolmgmt"
    done = subprocess.run(
        [str(script), "usage", str(log), "--catalog", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "UPSTREAM BANNER" not in done.stdout + done.stderr
    assert "weather_get_forecast" in done.stdout  # the upstream's tools were read
    assert f"warning: {config}: upstream 'broken' is unavailable" in done.stderr

    dead = tmp_path / "dead.toml"  # nothing to report on: what the upstream said is shown
    dead.write_text(
        f"[upstreams.gone]\ncommand = {json.dumps(sys.executable)}\n"
        "args = ['-c', \"import sys; sys.exit('UPSTREAM FAILED: no such database')\"]\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [str(script), "usage", str(log), "--catalog", str(dead)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and "no tools" in done.stderr
    assert "UPSTREAM FAILED: no such database" in done.stderr
