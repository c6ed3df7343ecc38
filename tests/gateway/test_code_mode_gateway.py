"""The gateway in code mode over HTTP: a 2026 caller's program paused for approval resumes from
its snapshot on the retry that brings the answer (its conversation is kept by its credentials),
so the calls before the paused one run once."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("mcp")
pytest.importorskip("pydantic_monty")

import httpx2  # noqa: E402
import mcp.types as t  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from support.doors.gateway import shop_config  # noqa: E402
from support.mcp_http import serving  # noqa: E402
from toolmgmt_gateway import Gateway  # noqa: E402

PROGRAM = "await lookup_order(order_id='A-1')\nawait cancel_order(order_id='A-1')"


def _text(result: t.CallToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_2026_callers_paused_program_resumes_from_its_snapshot() -> None:
    asked: list[str] = []

    async def elicit(context: Any, params: t.ElicitRequestParams) -> t.ElicitResult:
        asked.append(params.message)
        return t.ElicitResult(action="accept", content={"order_id": "A-1"})

    gateway = Gateway(shop_config('mode = "code"\ntransport = "http"\nport = 0'))
    async with gateway, serving(gateway) as url:
        http = httpx2.AsyncClient(headers={"Authorization": "Bearer ada"})
        async with Client(
            streamable_http_client(url, http_client=http), elicitation_callback=elicit
        ) as client:
            assert client.protocol_version.startswith("2026")
            result = await client.call_tool("run_code", {"code": PROGRAM})
            assert _text(result) == "cancelled A-1" and not result.is_error
            runs = json.loads(_text(await client.call_tool("run_code", {"code": "await runs()"})))
    assert len(asked) == 1 and "cancel_order" in asked[0]
    assert runs == {"lookup_order": 1, "cancel_order": 1}


CALLERS = 'mode = "code"\ntransport = "http"\nport = 0\n[gateway.callers]\n'
CALLERS += 'direct = ["cancel_*"]\nboth = ["lookup_order"]\n'


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_the_caller_choice_holds_at_the_gateway() -> None:
    """``[gateway.callers]``: a direct-only tool is listed and refused from a program; a tool
    no pattern names is called from a program only (neither listed nor callable directly)."""
    gateway = Gateway(shop_config(CALLERS))
    async with gateway, serving(gateway) as url:
        http = httpx2.AsyncClient(headers={"Authorization": "Bearer ada"})
        async with Client(streamable_http_client(url, http_client=http)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"cancel_order", "lookup_order"} <= names and "track_order" not in names
            refused = await client.call_tool("run_code", {"code": PROGRAM})
            assert refused.is_error and "called directly, not from a program" in _text(refused)
            program = "print(await track_order(order_id='A-1'))"
            shipped = await client.call_tool("run_code", {"code": program})
            assert not shipped.is_error, _text(shipped)
            runs = json.loads(_text(await client.call_tool("run_code", {"code": "await runs()"})))
    assert runs == {"lookup_order": 1, "track_order": 1}


def test_the_caller_choice_is_code_modes_alone() -> None:
    from toolmgmt_core import ConfigError

    with pytest.raises(ConfigError, match=r"gateway\.callers.*applies to code mode"):
        shop_config('[gateway.callers]\ndirect = ["cancel_*"]\n')
    with pytest.raises(ConfigError, match=r"gateway\.callers.*Unknown pattern prefix"):
        shop_config('mode = "code"\n[gateway.callers]\ncode = ["x:y"]\n')


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_an_upstream_result_without_output_schema_reaches_the_program_parsed() -> None:
    # The shop's tools publish no outputSchema: runs() answers with its JSON as text, which
    # a program read as a str (got["lookup_order"] raised TypeError).
    gateway = Gateway(shop_config('mode = "code"\ntransport = "http"\nport = 0'))
    code = (
        "await lookup_order(order_id='A-1')\n"
        "got = await runs()\n"
        "[type(got).__name__, got['lookup_order']]"
    )
    async with gateway, serving(gateway) as url:
        http = httpx2.AsyncClient(headers={"Authorization": "Bearer ada"})
        async with Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool("run_code", {"code": code})
    assert not result.is_error, _text(result)
    assert json.loads(_text(result)) == ["dict", 1]
