"""A real Prometheus (Debian's ``prometheus`` binary, on a free loopback port) scrapes a gateway
replica's ``/metrics`` (``[gateway.metrics]``, behind its own credential, which the MCP token is
not), and a PromQL query over its HTTP API returns the calls the replica ran."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("prometheus_client")

import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from support.upstreams import COUNTER, http_upstream  # noqa: E402
from toolmgmt_deploy import LocalPrometheus  # noqa: E402
from toolmgmt_deploy.replica import LocalGateway  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

TOKEN = "mcp-t0ken-9c1e"
SCRAPER = "scrape-only-t0ken-5d2f"
CALLS = 5


async def test_prometheus_scrapes_a_replica_and_counts_its_calls(
    prometheus_binary: str, tmp_path: Path
) -> None:
    with http_upstream(COUNTER) as upstream:
        config = tmp_path / "gateway.toml"
        config.write_text(
            f'[gateway]\ntoken = "{TOKEN}"\n[gateway.metrics]\ntoken_env = "SCRAPER"\n'
            f'[upstreams.counter]\nurl = "{upstream.url}"\n'
        )
        env = {**os.environ, "SCRAPER": SCRAPER}
        with LocalGateway(config, start_timeout=60, env=env) as replica:
            assert replica.url is not None and replica.metrics_token == SCRAPER
            headers = {"Authorization": f"Bearer {TOKEN}"}
            transport = streamable_http_client(
                replica.url, http_client=httpx2.AsyncClient(headers=headers)
            )
            async with Client(transport) as client:
                for n in range(CALLS):
                    arguments = {"tool_name": "counter_bump", "arguments": {"key": f"k{n}"}}
                    result = await client.call_tool("execute_tool", arguments)
                    assert json.loads(result.content[0].text)["runs"] == 1
                await client.call_tool("discover_tools", {"query": "bump a counter"})
            with LocalPrometheus(
                [replica.address], token=TOKEN, binary=prometheus_binary
            ) as refused:  # the MCP token: 403, so the target is down
                with pytest.raises(TimeoutError, match="403"):
                    refused.wait_for_scrape(timeout=8)
            with LocalPrometheus(
                [replica.address], token=replica.metrics_token, binary=prometheus_binary
            ) as prometheus:
                (target,) = prometheus.wait_for_scrape()
                assert target["labels"]["job"] == "toolmgmt-gateway"
                calls = prometheus.query(
                    "sum(gen_ai_execute_tool_duration_seconds_count"
                    '{gen_ai_tool_name="counter_bump"})'
                )
                up = prometheus.query('toolmgmt_gateway_upstream_up{upstream="counter"}')
                searches = prometheus.query("sum(toolmgmt_searches_total)")
    assert [float(sample["value"][1]) for sample in calls] == [CALLS]
    assert [float(sample["value"][1]) for sample in up] == [1]
    assert [float(sample["value"][1]) for sample in searches] == [1]
