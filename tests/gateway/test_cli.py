"""``toolmgmt serve``: the gateway over stdio as a subprocess; the missing-extra message."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters  # noqa: E402

from toolmgmt_core._cli import main  # noqa: E402

pytestmark = pytest.mark.timeout(60)


@pytest.mark.anyio
async def test_toolmgmt_serve_over_stdio(mcp_kit: Any, tmp_path: Path) -> None:
    k = mcp_kit
    config = tmp_path / "gateway.toml"
    config.write_text(k.stdio_upstream("notes") + '\n[policy]\ndeny = ["notes_delete_*"]\n')
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "toolmgmt_core._cli", "serve", "--config", str(config)]
    )
    async with Client(params) as client:
        assert [t.name for t in (await client.list_tools()).tools] == [
            "discover_tools",
            "get_tool_schema",
            "execute_tool",
        ]
        error, toc = await k.call(client, "discover_tools", {})
        assert toc["domains"]["notes"]["tools"] == 9  # ten upstream tools, one denied
        assert await k.execute(client, "notes_echo", token="via-stdio") == (
            False,
            "via-stdio",
        )


def test_serve_without_the_extra_names_it(monkeypatch, capsys, tmp_path: Path) -> None:
    packages = ("toolmgmt_mcp", "toolmgmt_gateway")
    for name in [m for m in sys.modules if m.split(".")[0] in packages]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` fails like a missing extra
    assert main(["serve", "--config", str(tmp_path / "g.toml")]) == 2
    assert 'pip install "toolmgmt[gateway]"' in capsys.readouterr().err


def test_serve_reports_a_bad_config(capsys, tmp_path: Path) -> None:
    config = tmp_path / "g.toml"
    config.write_text("[upstreams.a]\ncommand = 'x'\ntimeout = 'soon'\n")
    assert main(["serve", "--config", str(config)]) == 2
    assert (
        f"{config}:3: upstreams.a.timeout: must be a number of seconds" in capsys.readouterr().err
    )


def test_serve_sync_runs_the_gateway_on_uvloop(monkeypatch: pytest.MonkeyPatch) -> None:
    uvloop = pytest.importorskip("uvloop")
    from toolmgmt_gateway import server

    seen: list[tuple[Any, dict[str, Any]]] = []

    async def serve(config: Any, **options: Any) -> None:
        seen.append((type(asyncio.get_running_loop()), options))

    monkeypatch.setattr(server, "serve", serve)
    server.serve_sync(None, transport="http", port=0)  # type: ignore[arg-type]
    assert seen == [(uvloop.Loop, {"transport": "http", "port": 0})]
