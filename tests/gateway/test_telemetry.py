"""The gateway in traces and metrics.

- One trace: an MCP client's call, through the gateway (over HTTP), to the upstream (over HTTP,
  a process that records its own spans) is one trace: the client's ``traceparent`` in
  ``params._meta`` goes into the gateway's span of the request, the core's ``execute_tool``
  span, the gateway's request to the upstream, and the upstream's span of it. It holds with the
  gateway recording spans and with a replica that has no SDK (the context passes through).
- The gateway's span of each request follows the MCP conventions.
- ``[gateway] metrics = true`` serves ``GET /metrics`` in Prometheus text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")
pytest.importorskip("opentelemetry.sdk")

import anyio  # noqa: E402
import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from support.mcp_http import serving  # noqa: E402
from support.otel import OtelKit, global_providers, span_text  # noqa: E402
from support.upstreams import TRACED, HttpUpstream, http_upstream  # noqa: E402
from toolmgmt_deploy.replica import LocalGateway  # noqa: E402
from toolmgmt_gateway import Gateway, parse_config  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SECRET = "acct-7781-secret"
SCRAPER = "scrape-only-0123456789abcdef"


@pytest.fixture
def traced(tmp_path: Path) -> Iterator[tuple[HttpUpstream, Path]]:
    """The traced upstream over HTTP, writing its spans to a file."""
    spans = tmp_path / "upstream-spans.jsonl"
    with http_upstream(TRACED, env={"TRACED_SPANS": str(spans)}) as upstream:
        yield upstream, spans


def _config(upstream: HttpUpstream, extra: str = "") -> str:
    return (
        f'[gateway]\ntransport = "http"\nport = 0\n{extra}\n'
        f'[upstreams.traced]\nurl = "{upstream.url}"\ntimeout = 20\n'
    )


def _upstream_spans(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def _call(url: str, token: str | None = None) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    transport = streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers))
    async with Client(transport) as client:
        arguments = {"tool_name": "traced_trace_of_call", "arguments": {"label": SECRET}}
        result = await client.call_tool("execute_tool", arguments)
        return dict(json.loads(result.content[0].text))


async def test_one_trace_from_client_through_gateway_to_upstream(
    traced: tuple[HttpUpstream, Path],
) -> None:
    upstream, spans_file = traced
    kit = OtelKit()
    with global_providers(kit):  # the MCP SDK's spans (client and gateway) use the global one
        gateway = Gateway(parse_config(_config(upstream), source="gateway.toml"))
        async with gateway, serving(gateway) as url:
            with kit.tracer.start_as_current_span("user request") as root:
                answer = await _call(url)
    trace_id = format(root.get_span_context().trace_id, "032x")
    assert answer["trace_id"] == trace_id  # the upstream tool itself ran in the trace
    ours = {s.name: s for s in kit.spans()}
    by_id = {format(s.context.span_id, "016x"): s.name for s in kit.spans()}
    upstream_spans = _upstream_spans(spans_file)  # its connection's set-up is its own trace
    in_trace = [s["name"] for s in upstream_spans if s["trace_id"] == trace_id]
    assert in_trace == ["tools/call trace_of_call"]
    names = {s.name for s in kit.spans() if format(s.context.trace_id, "032x") == trace_id}
    chain = {"user request", "MCP send tools/call execute_tool", "tools/call execute_tool"}
    assert (
        chain | {"execute_tool traced_trace_of_call", "MCP send tools/call trace_of_call"} <= names
    )
    # client -> gateway request -> toolmgmt's call -> gateway's upstream request -> upstream
    server = ours["tools/call execute_tool"]
    call = next(s for s in kit.spans() if s.name == "execute_tool traced_trace_of_call")
    outgoing = ours["MCP send tools/call trace_of_call"]
    assert by_id[format(server.parent.span_id, "016x")] == "MCP send tools/call execute_tool"
    assert call.parent.span_id == server.context.span_id
    assert outgoing.parent.span_id == call.context.span_id
    (upstream_server,) = [s for s in upstream_spans if s["name"] == "tools/call trace_of_call"]
    assert upstream_server["parent_id"] == format(outgoing.context.span_id, "016x")
    # The gateway's span of the request, after the MCP conventions.
    assert server.kind.name == "SERVER"
    assert server.attributes["mcp.method.name"] == "tools/call"
    assert server.attributes["gen_ai.tool.name"] == "execute_tool"
    assert server.attributes["gen_ai.operation.name"] == "execute_tool"
    assert server.attributes["mcp.session.id"] == call.attributes["gen_ai.conversation.id"]
    assert "jsonrpc.request.id" in server.attributes and "mcp.protocol.version" in server.attributes
    assert SECRET not in span_text(kit.spans())


async def test_a_replica_without_an_sdk_passes_the_trace_on(
    traced: tuple[HttpUpstream, Path], tmp_path: Path
) -> None:
    upstream, spans_file = traced
    config = tmp_path / "gateway.toml"
    config.write_text(_config(upstream))
    kit = OtelKit()
    with LocalGateway(config, start_timeout=60) as replica:  # its own process: no SDK there
        assert replica.url is not None
        with global_providers(kit), kit.tracer.start_as_current_span("user request") as root:
            answer = await _call(replica.url)
    trace_id = format(root.get_span_context().trace_id, "032x")
    assert answer["trace_id"] == trace_id
    (upstream_server,) = [
        s for s in _upstream_spans(spans_file) if s["name"] == "tools/call trace_of_call"
    ]
    assert upstream_server["trace_id"] == trace_id
    # No gateway span recorded anywhere: the upstream's parent is the client's own request.
    client_send = next(s for s in kit.spans() if s.name == "MCP send tools/call execute_tool")
    assert upstream_server["parent_id"] == format(client_send.context.span_id, "016x")


async def test_metrics_are_served_in_prometheus_text(traced: tuple[HttpUpstream, Path]) -> None:
    upstream, _ = traced
    metrics = f'[gateway.metrics]\ntoken = "{SCRAPER}"\n'
    config = parse_config(_config(upstream) + metrics, source="gateway.toml")
    gateway = Gateway(config)
    async with gateway, serving(gateway, token="t0k3n-metrics") as url:
        for _ in range(3):
            await _call(url, token="t0k3n-metrics")
        async with Client(
            streamable_http_client(
                url,
                http_client=httpx2.AsyncClient(headers={"Authorization": "Bearer t0k3n-metrics"}),
            )
        ) as client:
            await client.call_tool("discover_tools", {"query": "which trace"})
            await client.call_tool("execute_tool", {"tool_name": "traced_nope", "arguments": {}})
        base = url.rsplit("/", 1)[0]
        async with httpx2.AsyncClient() as http:
            refused = await http.get(f"{base}/metrics")
            forbidden = await http.get(
                f"{base}/metrics", headers={"Authorization": "Bearer t0k3n-metrics"}
            )
            response = await http.get(
                f"{base}/metrics", headers={"Authorization": f"Bearer {SCRAPER}"}
            )
    assert refused.status_code == 401  # no token
    assert forbidden.status_code == 403  # the MCP token is not the metrics credential
    assert "[gateway.metrics] token" in forbidden.json()["message"]
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    samples = _samples(text)
    tool = 'gen_ai_tool_name="traced_trace_of_call"'
    assert samples[("gen_ai_execute_tool_duration_seconds_count", tool)] == 3
    assert samples[("toolmgmt_searches_total", 'toolmgmt_search_engine="bm25"')] == 1
    assert samples[("toolmgmt_gateway_upstream_up", 'upstream="traced"')] == 1
    assert samples[("toolmgmt_gateway_upstream_tools", 'upstream="traced"')] == 1
    assert samples[("toolmgmt_gateway_conversations_active", "")] >= 1
    assert ("toolmgmt_gateway_hung_threads", "") in samples
    assert any(k[0] == "mcp_server_operation_duration_seconds_count" for k in samples)
    errors = [v for k, v in samples.items() if "error_type=" in k[1] and "duration" in k[0]]
    assert errors  # the unknown tool's call, with its error.type
    assert (
        "# TYPE toolmgmt_gateway_store_errors_total counter" in text or "store_errors" not in text
    )
    assert SECRET not in text


async def test_requests_are_counted_per_client(
    traced: tuple[HttpUpstream, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``[gateway.clients]``, each MCP request's duration carries its client's name (and
    never a token); a gateway without clients labels none."""
    upstream, _ = traced
    tokens = {"support": "support-metrics-0123456789", "ops": "ops-metrics-0123456789ab"}
    clients = ""
    for name, token in tokens.items():
        monkeypatch.setenv(f"TEL_{name.upper()}", token)
        clients += f'[gateway.clients.{name}]\ntoken_env = "TEL_{name.upper()}"\n'
    clients += "metrics = true\n"  # ops reads /metrics; support may not
    text = _config(upstream, "metrics = true") + clients
    gateway = Gateway(parse_config(text, source="gateway.toml"))
    async with gateway, serving(gateway) as url:
        await _call(url, token=tokens["support"])
        await _call(url, token=tokens["support"])
        await _call(url, token=tokens["ops"])
        async with httpx2.AsyncClient() as http:
            response = await http.get(
                url.rsplit("/", 1)[0] + "/metrics",
                headers={"Authorization": f"Bearer {tokens['ops']}"},
            )
            forbidden = await http.get(
                url.rsplit("/", 1)[0] + "/metrics",
                headers={"Authorization": f"Bearer {tokens['support']}"},
            )
    # Another client's token reads nobody's series (nor the names of tools it cannot see).
    assert forbidden.status_code == 403 and "toolmgmt_client" not in forbidden.text
    calls: dict[str, float] = {}
    for line in response.text.splitlines():
        if line.startswith("mcp_server_operation_duration_seconds_count{") and (
            'mcp_method_name="tools/call"' in line
        ):
            client = line.split('toolmgmt_client="', 1)[1].split('"', 1)[0]
            calls[client] = calls.get(client, 0.0) + float(line.rpartition(" ")[2])
    assert calls == {"support": 2, "ops": 1}
    assert not any(token in response.text for token in tokens.values())


def _samples(text: str) -> dict[tuple[str, str], float]:
    """Prometheus samples by (name, the label that matters here), summed over other labels."""
    found: dict[tuple[str, str], float] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, _, value = line.rpartition(" ")
        name, _, labels = head.partition("{")
        keys = [""]
        for label in labels.rstrip("}").split(","):
            if label.startswith(("gen_ai_tool_name=", "upstream=", "toolmgmt_search_engine=")):
                keys.append(label)
            elif label.startswith("error_type="):
                keys.append(label)
        for key in set(keys):
            found[(name, key)] = found.get((name, key), 0.0) + float(value)
    return found


async def test_store_errors_are_counted(traced: tuple[HttpUpstream, Path]) -> None:
    """A session store that cannot be reached: each refused request is one store error."""
    upstream, _ = traced
    closed = "redis://127.0.0.1:9/0"  # nothing listens on the discard port
    text = _config(upstream, "metrics = true") + f'[store]\nsessions = "{closed}"\ntimeout = 1\n'
    gateway = Gateway(parse_config(text, source="gateway.toml"))
    async with gateway, serving(gateway) as url:
        async with httpx2.AsyncClient() as http:
            body = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "0"},
                },
            }
            headers = {"accept": "application/json, text/event-stream"}
            for _ in range(2):
                answer = await http.post(url, json=body, headers=headers)
                assert answer.status_code == 503
            with anyio.fail_after(10):
                metrics = await http.get(url.rsplit("/", 1)[0] + "/metrics")
    assert 'toolmgmt_gateway_store_errors_total{operation="conversation"' in metrics.text
    line = next(
        x for x in metrics.text.splitlines() if x.startswith("toolmgmt_gateway_store_errors_total{")
    )
    assert float(line.rsplit(" ", 1)[1]) == 2


async def test_every_replica_writes_its_usage_log_to_the_store(
    traced: tuple[HttpUpstream, Path], redis_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    upstream, _ = traced
    text = _config(upstream) + f'[store]\nevents = "{redis_url}"\n'
    gateway = Gateway(parse_config(text, source="gateway.toml"))
    async with gateway, serving(gateway) as url:
        await _call(url)
        assert gateway._event_log is not None and gateway._event_log.flush(20)
    from toolmgmt_core._cli import main

    assert (
        main(["usage", "--store", redis_url, "--json", "--catalog", "toolmgmt_demo:demo_catalog"])
        == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert report["tools"]["traced_trace_of_call"]["calls"] == 1
    assert "execute_tool" not in report["tools"]  # a call is the tool's that ran
    assert SECRET not in json.dumps(report)


def test_the_settings_are_checked() -> None:
    from toolmgmt_core import ConfigError

    base = '[upstreams.a]\nurl = "http://127.0.0.1:1/mcp"\n'
    assert parse_config("[gateway]\nmetrics = true\n" + base).gateway.metrics
    assert not parse_config(base).gateway.metrics
    with pytest.raises(ConfigError, match="metrics"):
        parse_config('[gateway]\nmetrics = "yes"\n' + base)
    # Behind tokens, /metrics needs its own credential, named at the key's line.
    token = 'token = "gateway-token-0123456789"\n'
    with pytest.raises(ConfigError, match=r"gateway.toml:3: gateway.metrics: .*own credential"):
        parse_config("[gateway]\n" + token + "metrics = true\n" + base, source="gateway.toml")
    scraped = parse_config(
        "[gateway]\n" + token + '[gateway.metrics]\ntoken = "scrape-0123456789abcdef"\n' + base
    ).gateway
    assert scraped.metrics and scraped.metrics_token == "scrape-0123456789abcdef"
    with pytest.raises(ConfigError, match="gateway.metrics: .*needs its token"):
        parse_config("[gateway.metrics]\n" + base.replace("[", "\n[", 1))
    with pytest.raises(ConfigError, match="gateway.metrics.color: unknown key"):
        parse_config('[gateway.metrics]\ncolor = "x"\n' + base)
    with pytest.raises(ConfigError, match="Redis URL .* or a PostgreSQL DSN"):
        parse_config(base + '[store]\nevents = "mysql://x"\n')
    config = parse_config(base + '[store]\nevents = "postgresql://u@127.0.0.1/db"\n')
    assert config.store.events == "postgresql://u@127.0.0.1/db"


@pytest.mark.parametrize("noted", ["not_permitted", None])
async def test_a_failed_call_s_span_names_the_code_its_handler_noted(noted: str | None) -> None:
    """The handler notes its answer's error code on the request's context, which reaches it
    through a middleware that rewrites the context; without a note, ``tool_error``."""
    import dataclasses

    from mcp.server.context import ServerRequestContext
    from toolmgmt_gateway.telemetry import RequestSpans, describe_outcome

    async def handler(ctx: Any) -> dict[str, Any]:
        describe_outcome(ctx, noted)
        return {"content": [], "isError": True}

    async def rewriting(ctx: Any) -> Any:  # as the SDK's request-state boundary does
        return await handler(dataclasses.replace(ctx, params={**ctx.params, "seen": True}))

    request = ServerRequestContext(
        session=None,  # type: ignore[arg-type]
        lifespan_context={},
        protocol_version="2026-07-28",
        method="tools/call",
        params={"name": "execute_tool"},
    )
    kit = OtelKit()
    with global_providers(kit):
        await RequestSpans()(request, rewriting)
    (span,) = [s for s in kit.spans() if s.name == "tools/call execute_tool"]
    assert span.attributes["error.type"] == (noted or "tool_error")
    describe_outcome(request, "not_permitted")  # a context RequestSpans did not make: no note
