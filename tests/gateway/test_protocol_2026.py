"""The 2026 protocol's details over HTTP, with raw requests as the conformance suite sends them:
JSON Schema 2020-12 and ``x-mcp-header`` kept in the listing, list caching hints, routing headers
trimmed, ``Mcp-Param-*`` headers checked against the listed annotations; an upstream tool with
an invalid annotation left out with the reason; each caller's result budget kept in memory."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
import httpx2  # noqa: E402
import mcp.types as mcp_types  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from support.mcp_http import serving  # noqa: E402
from support.upstreams import CONFORMANCE  # noqa: E402
from toolmgmt_gateway import Gateway, parse_config  # noqa: E402
from toolmgmt_gateway.conversations import principal_key  # noqa: E402
from toolmgmt_mcp.convert import tools_from_listing  # noqa: E402

from toolmgmt_core._stores import InMemorySessionStore  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


async def _post(
    url: str, method: str, params: dict[str, Any] | None = None, **headers: str
) -> tuple[int, dict[str, Any]]:
    """One 2026 request with the standard headers (``headers`` override them, ``_`` for ``-``):
    its HTTP status and JSON-RPC answer. Sent with ``http.client``, which (as browsers and Node
    do) sends a header value with surrounding whitespace as it is."""
    params = {**(params or {}), "_meta": META}
    sent = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
        **({"mcp-name": params["name"]} if "name" in params else {}),
        **{k.replace("_", "-"): v for k, v in headers.items()},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    where = urlsplit(url)

    def post() -> tuple[int, dict[str, Any]]:
        connection = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
        try:
            connection.request("POST", where.path, body=body, headers=sent)
            response = connection.getresponse()
            return response.status, json.loads(response.read())
        finally:
            connection.close()

    return await anyio.to_thread.run_sync(post)


@pytest.fixture
async def gateway_url(mcp_kit: Any) -> Any:
    text = (
        '[gateway]\nalways_on = ["test_*", "json_schema_*"]\nlist_ttl = 30\n'
        + mcp_kit.stdio_upstream("conf", CONFORMANCE, prefix="")
    )
    async with Gateway(parse_config(text)) as gateway, serving(gateway) as url:
        yield url


async def test_the_listing_keeps_schemas_whole_and_says_how_long_to_cache_it(
    gateway_url: str,
) -> None:
    status, answer = await _post(gateway_url, "tools/list")
    assert status == 200
    result = answer["result"]
    assert (result["ttlMs"], result["cacheScope"]) == (30_000, "private")
    tools = {tool["name"]: tool for tool in result["tools"]}
    schema = tools["json_schema_2020_12_tool"]["inputSchema"]
    assert schema["$defs"]["address"]["$anchor"] == "addressDef"
    assert schema["allOf"] == [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}]
    assert {"if", "then", "else", "$schema"} <= set(schema)
    region = tools["test_custom_header"]["inputSchema"]["properties"]["region"]
    assert region["x-mcp-header"] == "Region"


async def test_routing_headers_are_read_without_surrounding_whitespace(gateway_url: str) -> None:
    name = "test_simple_text"
    status, answer = await _post(gateway_url, "tools/call", {"name": name}, mcp_name=f"  {name}\t ")
    assert status == 200, answer
    assert answer["result"]["content"][0]["text"].startswith("This is a simple text")
    status, answer = await _post(
        gateway_url, "tools/call", {"name": name}, mcp_name="test_error_handling"
    )
    assert status == 400 and answer["error"]["code"] == -32020  # a mismatch still is one


async def test_mcp_param_headers_must_match_the_arguments(gateway_url: str) -> None:
    call = {"name": "test_custom_header", "arguments": {"region": "eu-west"}}
    for header, accepted in (
        ("eu-west", True),
        ("=?base64?ZXUtd2VzdA==?=", True),  # "eu-west", base64
        (" eu-west ", True),  # trimmed
        ("us-east", False),
        ("=?base64?ZXUtd2VzdA?=", False),  # bad padding
        (None, False),  # omitted while the argument is there
    ):
        headers = {} if header is None else {"mcp_param_region": header}
        status, answer = await _post(gateway_url, "tools/call", call, **headers)
        if accepted:
            assert status == 200, (header, answer)
            assert answer["result"]["content"][0]["text"] == "region: eu-west"
        else:
            assert status == 400 and "error" in answer, (header, answer)


def test_an_upstream_tool_with_an_invalid_header_annotation_is_left_out(mcp_kit: Any) -> None:
    config = parse_config(mcp_kit.stdio_upstream("conf", CONFORMANCE, prefix=""))
    listed = [
        mcp_types.Tool(
            name=name,
            input_schema={"type": "object", "properties": {"n": {"type": kind, **header}}},
        )
        for name, kind, header in (
            ("fine", "string", {"x-mcp-header": "N"}),
            ("number", "number", {"x-mcp-header": "N"}),  # not allowed on a number
            ("spaced", "string", {"x-mcp-header": "N N"}),  # not a header name
        )
    ]
    tools, skipped = tools_from_listing(
        listed, config.upstreams[0], always_on=(), handler=lambda name, unwrap=False: None
    )
    assert [tool.name for tool in tools] == ["fine"]
    assert tools[0].parameters["properties"]["n"]["x-mcp-header"] == "N"
    reasons = dict(skipped)
    assert set(reasons) == {"number", "spaced"}
    assert all(r.startswith("invalid x-mcp-header annotation") for r in reasons.values())


async def test_in_memory_each_2026_caller_keeps_its_result_budget(mcp_kit: Any) -> None:
    # Without [store], the callers' conversations are kept in this process, keyed as in Redis.
    text = "[gateway]\nsession_result_budget = 5000\n" + mcp_kit.stdio_upstream("notes")
    gateway = Gateway(parse_config(text))
    async with gateway, serving(gateway) as url:
        for caller, calls in (("Bearer ada", 2), ("Bearer bob", 1)):
            headers = {"Authorization": caller}
            transport = streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers))
            async with Client(transport) as client:
                for n in range(calls):
                    assert await mcp_kit.execute(client, "notes_echo", token=f"t{n}") == (
                        False,
                        f"t{n}",
                    )
        store = gateway.manager.session_store
        assert isinstance(store, InMemorySessionStore)
        for caller, calls in (("Bearer ada", 2), ("Bearer bob", 1)):
            stored = store.load(principal_key(caller))
            assert stored is not None and len(stored.state["results"]["records"]) == calls
