"""What an operator reads of the gateway's telemetry (one conversation over HTTP, recorded):

- a denied call's spans and denials counter name the tool it asked (the model's text never
  names a tool it may not see), the ``execute_tool`` span carries ``gen_ai.tool.call.id``;
- the MCP server span's ``error.type`` is the call's own error code, not ``tool_error``;
- ``mcp.session.id`` is one conversation's, on ``tools/list`` and ``tools/call`` alike;
- ``/metrics``: request durations in seconds buckets, store errors exported from 0, a
  store-health gauge.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("opentelemetry.sdk")
pytest.importorskip("prometheus_client")

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from support.mcp_http import serving  # noqa: E402
from support.otel import OtelKit, global_providers  # noqa: E402
from support.upstreams import TRACED, HttpUpstream, http_upstream  # noqa: E402
from toolmgmt_mcp import Gateway, parse_config  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

TOKEN = "t0k3n-ops-metrics"


@pytest.fixture
def upstream(tmp_path: Path) -> Iterator[HttpUpstream]:
    spans = tmp_path / "upstream-spans.jsonl"
    with http_upstream(TRACED, env={"TRACED_SPANS": str(spans)}) as served:
        yield served


def _config(upstream: HttpUpstream) -> str:
    return (
        '[gateway]\ntransport = "http"\nport = 0\nmetrics = true\n'
        '[policy]\ndeny = ["traced_trace_of_call"]\n'
        f'[upstreams.traced]\nurl = "{upstream.url}"\ntimeout = 20\n'
    )


async def test_an_operator_reads_what_each_request_did(upstream: HttpUpstream) -> None:
    kit = OtelKit()
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with global_providers(kit):
        gateway = Gateway(parse_config(_config(upstream), source="gateway.toml"))
        async with gateway, serving(gateway, token=TOKEN) as url:
            base = url.rsplit("/", 1)[0]
            async with httpx2.AsyncClient(headers=headers) as http:
                before = (await http.get(f"{base}/metrics")).text
            transport = streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers))
            async with Client(transport) as client:
                await client.list_tools()
                denied = await client.call_tool(
                    "execute_tool", {"tool_name": "traced_trace_of_call", "arguments": {}}
                )
                unknown = await client.call_tool(
                    "execute_tool", {"tool_name": "traced_nope", "arguments": {}}
                )
            async with httpx2.AsyncClient(headers=headers) as http:
                after = (await http.get(f"{base}/metrics")).text
    assert denied.is_error and unknown.is_error
    assert json.loads(denied.content[0].text)["error"] == "not_permitted"
    spans = kit.spans()
    # The denied call: named after the tool it asked, to the operator.

    call = next(s for s in spans if s.name == "execute_tool traced_trace_of_call")
    assert call.attributes["gen_ai.tool.name"] == "traced_trace_of_call"
    assert call.attributes["toolmgmt.call.via"] == "execute_tool"
    assert call.attributes["error.type"] == "not_permitted"
    assert call.attributes["gen_ai.tool.call.id"]
    executed = [s for s in spans if s.name.startswith("execute_tool ")]
    assert len(executed) == 2 and all(s.attributes.get("gen_ai.tool.call.id") for s in executed)
    denials = [
        line
        for line in after.splitlines()
        if line.startswith("toolmgmt_policy_denials_total{")
    ]
    assert denials and all('gen_ai_tool_name="traced_trace_of_call"' in x for x in denials)
    # The MCP server spans: the call's own error code, one conversation throughout.
    servers = [s for s in spans if s.kind.name == "SERVER" and s.name.startswith("tools/")]
    kinds = sorted(
        str(s.attributes.get("error.type")) for s in servers if s.name.startswith("tools/call")
    )
    assert kinds == ["not_permitted", "unknown_tool"]
    conversations = {s.attributes.get("mcp.session.id") for s in servers}
    assert len(conversations) == 1 and None not in conversations, conversations
    # /metrics: seconds buckets, store errors from 0, store health.
    assert 'le="0.005"' in after and 'le="5000.0"' not in after
    for operation in ("conversation", "save"):
        label = f'operation="{operation}"'
        assert _value(before, "toolmgmt_gateway_store_errors_total", label) == 0
    assert _value(after, "toolmgmt_gateway_store_up") == 1


def _value(text: str, name: str, label: str = "") -> float:
    """The one sample of ``name`` (with ``label``) in Prometheus text."""
    (value,) = [
        float(line.rpartition(" ")[2])
        for line in text.splitlines()
        if line.startswith(name + "{") and label in line
    ]
    return value


async def test_a_store_that_fails_shows_as_down(upstream: HttpUpstream) -> None:
    closed = "redis://127.0.0.1:9/0"  # nothing listens on the discard port
    store = f'[store]\nsessions = "{closed}"\nevents = "{closed}"\ntimeout = 1\n'
    text = _config(upstream) + store
    gateway = Gateway(parse_config(text, source="gateway.toml"))
    async with gateway, serving(gateway, token=TOKEN) as url:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            base = url.rsplit("/", 1)[0]
            before = (await http.get(f"{base}/metrics")).text
            body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
            answer = await http.post(url, json=body, headers=ACCEPT)
            after = (await http.get(f"{base}/metrics")).text
    assert answer.status_code == 503
    assert _value(before, "toolmgmt_gateway_store_up") == 1
    assert _value(after, "toolmgmt_gateway_store_up") == 0
    assert _value(after, "toolmgmt_gateway_store_errors_total", '"conversation"') == 1
    assert _value(after, "toolmgmt_gateway_store_errors_total", '"save"') == 0
    assert _value(before, "toolmgmt_usage_log_dropped_total") == 0  # the usage log's, from 0


INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "0"},
}
ACCEPT = {"accept": "application/json, text/event-stream"}
