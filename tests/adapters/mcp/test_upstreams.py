"""The MCP adapter on its own (no gateway): an upstream MCP server's tools as catalog tools."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from toolmgmt_mcp import Upstream, UpstreamConfig, UpstreamManager  # noqa: E402

from toolmgmt_core import (  # noqa: E402
    ContentResult,
    ToolCatalog,
    ToolExecutionError,
    ToolUnavailableError,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

NOTES = Path(__file__).parent / "servers" / "notes_server.py"
SHOP = Path(__file__).parent / "servers" / "shop_server.py"
STALE = Path(__file__).parent / "servers" / "stale_server.py"


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
            await upstreams.by_name["broken"].connect()


async def test_an_upstreams_question_abandons_the_call_when_nothing_relays_it() -> None:
    shop = UpstreamConfig("shop", command=sys.executable, args=(str(SHOP),))
    catalog = ToolCatalog()
    async with UpstreamManager([shop], catalog) as upstreams:
        assert upstreams.status()[0].protocol_version == "2026-07-28"  # questions are results
        with pytest.raises(ToolExecutionError, match="asked its user for input during"):
            await catalog.get("shop_ask_human").handler(question="which order?")
        assert upstreams.status()[0].connected  # the call failed, not the upstream


async def test_a_call_the_upstream_calls_stale_is_listed_again_and_sent_once_more() -> None:
    stale = UpstreamConfig("stale", command=sys.executable, args=(str(STALE),))
    catalog = ToolCatalog()
    async with UpstreamManager([stale], catalog) as upstreams:
        assert upstreams.status()[0].protocol_version == "2026-07-28"  # the retry is 2026's
        result = await catalog.get("stale_lookup").handler()
        assert not result.is_error and result.structured == "found on call 2"


class _Hooks(UpstreamManager):
    """A service on top of the adapter, through its public hooks only (as the gateway's
    ``GatewayUpstreams``): one upstream left stopped, one tool held back."""

    async def admit(self, upstream: Upstream, listed: list[Any]) -> list[Any]:
        return [item for item in listed if item.name != "delete_note"]

    def not_started(self, upstream: Upstream) -> str | None:
        return "left stopped" if upstream.config.name == "idle" else None


async def test_a_service_overrides_the_hooks() -> None:
    catalog = ToolCatalog()
    idle = UpstreamConfig("idle", command=sys.executable, args=(str(NOTES),))
    async with _Hooks([_notes(), idle], catalog) as upstreams:
        notes, stopped = upstreams.status()
        assert "notes_get_note" in notes.tools and "notes_delete_note" not in notes.tools
        assert catalog.find("notes_delete_note") is None
        assert not stopped.connected and stopped.error == "left stopped"
        assert catalog.find("idle_get_note") is None


@pytest.mark.parametrize("name", ["toolmgmt_mcp", "toolmgmt_mcp.upstreams"])
def test_modules_export_a_sorted_all(name: str) -> None:
    module = importlib.import_module(name)
    assert list(module.__all__) == sorted(module.__all__)
    assert all(hasattr(module, item) for item in module.__all__)


def test_importing_the_adapter_does_not_import_the_gateway() -> None:
    code = "import sys, toolmgmt_mcp; print('toolmgmt_gateway' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
