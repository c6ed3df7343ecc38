"""The MCP adapter on its own (no gateway): an upstream MCP server's tools as catalog tools."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from toolmgmt_mcp import UpstreamConfig, UpstreamManager  # noqa: E402

from toolmgmt_core import ContentResult, ToolCatalog, ToolUnavailableError  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

NOTES = Path(__file__).parent / "servers" / "notes_server.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _notes() -> UpstreamConfig:
    return UpstreamConfig("notes", command=sys.executable, args=(str(NOTES),))


async def test_an_upstreams_tools_enter_the_catalog_and_run_there() -> None:
    catalog = ToolCatalog()
    async with UpstreamManager([_notes()], catalog, always_on=["notes_echo"]) as upstreams:
        status = upstreams.status()[0]
        assert status.connected and "notes_get_note" in status.tools
        echo = catalog.get("notes_echo")
        assert echo.domain == "notes" and echo.defer_loading is False  # listed up front
        result = await echo.handler(token="plain")
        assert isinstance(result, ContentResult) and not result.is_error
        assert result.content[0]["text"] == "plain"


async def test_an_upstream_that_cannot_start_names_itself() -> None:
    catalog = ToolCatalog()
    broken = UpstreamConfig("broken", command=sys.executable, args=("-c", "raise SystemExit(3)"))
    async with UpstreamManager([broken, _notes()], catalog) as upstreams:
        down, up = upstreams.status()
        assert not down.connected and down.error and up.connected  # only that domain is down
        with pytest.raises(ToolUnavailableError, match="'broken'"):
            await upstreams._upstreams["broken"].connect()


@pytest.mark.parametrize("name", ["toolmgmt_mcp", "toolmgmt_mcp.upstreams"])
def test_modules_export_a_sorted_all(name: str) -> None:
    module = importlib.import_module(name)
    assert list(module.__all__) == sorted(module.__all__)
    assert all(hasattr(module, item) for item in module.__all__)


def test_importing_the_adapter_does_not_import_the_gateway() -> None:
    code = "import sys, toolmgmt_mcp; print('toolmgmt_gateway' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
