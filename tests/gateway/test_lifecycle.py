"""A replica's life as an operator sees it, against a real ``toolmgmt serve`` process and a real
``mcp.Client``: the drain on SIGTERM (a long ``run_code`` in flight completes, a new request gets
503 with ``Retry-After``, ``/readyz`` 503, the process exits within the grace, each step
logged), and the logs (JSON lines, one access line per request without its arguments, an
upstream's stderr after its name)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

pytest.importorskip("mcp")
pytest.importorskip("pydantic_monty")

import httpx2  # noqa: E402
from mcp import Client, MCPError  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from toolmgmt_deploy.replica import LocalGateway  # noqa: E402

TOKEN = "support-token-0123456789"
SECRET = "arg-9931-secret"

SLOW_SERVER = textwrap.dedent(
    """
    import sys
    import anyio
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    server = MCPServer("slow")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    async def wait(token: str, seconds: float) -> str:
        \"\"\"Answer after some seconds, saying on stderr that it started.\"\"\"
        print(f"started {token}", file=sys.stderr, flush=True)
        await anyio.sleep(seconds)
        return f"waited {token}"

    server.run()
    """
)


def _config(tmp_path: Path, gateway: str) -> Path:
    script = tmp_path / "slow_server.py"
    script.write_text(SLOW_SERVER)
    config = tmp_path / "gateway.toml"
    config.write_text(
        f'[gateway]\n{gateway}\n\n[gateway.clients.support]\ntoken_env = "LC_TOKEN"\n\n'
        f"[upstreams.slow]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(script))}]\n"
    )
    return config


def _client(url: str) -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60)
    return Client(streamable_http_client(url, http_client=http))


@pytest.mark.timeout(120)
def test_sigterm_drains_a_run_code_in_flight_and_refuses_new_requests(tmp_path: Path) -> None:
    config = _config(tmp_path, 'mode = "code"\nshutdown_grace = 20')
    with LocalGateway(config, env={**os.environ, "LC_TOKEN": TOKEN}) as replica:
        url = replica.url
        assert url is not None and replica.process is not None
        base = url.removesuffix("/mcp")
        seen: dict[str, Any] = {}

        async def scenario() -> str:
            async with _client(url) as client, httpx2.AsyncClient(timeout=30) as http:
                assert (await http.get(f"{base}/readyz")).status_code == 200
                await client.list_tools()  # what mcp.Client checks a result against, kept
                async with anyio.create_task_group() as tasks:
                    results: list[str] = []

                    async def program() -> None:
                        code = "await slow_wait(token='p1', seconds=3)"
                        result = await client.call_tool("run_code", {"code": code})
                        results.append(result.content[0].text)

                    tasks.start_soon(program)
                    with anyio.fail_after(30):  # the program's call reached the upstream
                        while not any("started p1" in line for line in replica.log):
                            await anyio.sleep(0.05)
                    seen["signalled"] = time.monotonic()
                    replica.process.send_signal(signal.SIGTERM)
                    with anyio.fail_after(10):
                        while not any("draining" in line for line in replica.log):
                            await anyio.sleep(0.05)
                    headers = {"Authorization": f"Bearer {TOKEN}"}
                    listing = {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}}
                    refused = await http.post(url, json=listing, headers=headers)
                    seen["refused"] = (refused.status_code, refused.headers.get("retry-after"))
                    seen["message"] = refused.json()["error"]["message"]
                    ready = await http.get(f"{base}/readyz")
                    seen["readyz"] = (ready.status_code, ready.json()["draining"])
                    seen["healthz"] = (await http.get(f"{base}/healthz")).status_code
                return results[0]

        answer = anyio.run(scenario)
        replica.process.wait(30)
        exited = time.monotonic() - seen["signalled"]
    assert "waited p1" in answer  # the program in flight finished across the SIGTERM
    assert seen["refused"] == (503, "2") and "shutting down" in seen["message"]
    assert seen["readyz"] == (503, True) and seen["healthz"] == 200
    assert replica.process.returncode == 0 and exited < 20, (replica.process.returncode, exited)
    log = "".join(replica.log)
    steps = ("SIGTERM: draining", "drained", "stopping the HTTP server", "upstreams", "stopped")
    for step in steps:
        assert step in log, (step, log)


@pytest.mark.timeout(120)
def test_a_call_longer_than_the_grace_is_cut_and_the_process_still_exits(tmp_path: Path) -> None:
    config = _config(tmp_path, "shutdown_grace = 2")
    with LocalGateway(config, env={**os.environ, "LC_TOKEN": TOKEN}) as replica:
        assert replica.url is not None and replica.process is not None
        url = replica.url

        async def scenario() -> float:
            async with _client(url) as client, anyio.create_task_group() as tasks:
                long = {"tool_name": "slow_wait", "arguments": {"token": "p2", "seconds": 120}}

                async def call() -> None:
                    with pytest.raises(MCPError) as cut:
                        await client.call_tool("execute_tool", long)
                    assert "may have run in part" in str(cut.value)

                tasks.start_soon(call)
                with anyio.fail_after(30):
                    while not any("started p2" in line for line in replica.log):
                        await anyio.sleep(0.05)
                signalled = time.monotonic()
                assert replica.process is not None
                replica.process.send_signal(signal.SIGTERM)
                await anyio.to_thread.run_sync(replica.process.wait, 30)
                return time.monotonic() - signalled

        exited = anyio.run(scenario)
    assert replica.process.returncode == 0 and exited < 2 + 8, (exited, replica.log)
    assert any("grace of 2 s is over with 1 request(s)" in line for line in replica.log)


@pytest.mark.timeout(120)
def test_access_log_in_json_names_each_request_and_not_its_arguments(tmp_path: Path) -> None:
    config = _config(tmp_path, "")
    env = {**os.environ, "LC_TOKEN": TOKEN}
    with LocalGateway(config, env=env, args=["--log-format", "json"]) as replica:
        assert replica.url is not None

        async def scenario() -> None:
            async with _client(replica.url) as client:  # type: ignore[arg-type]
                await client.call_tool("discover_tools", {"query": "wait"})
                arguments = {"token": SECRET, "seconds": 0.01}
                await client.call_tool(
                    "execute_tool", {"tool_name": "slow_wait", "arguments": arguments}
                )
                await client.call_tool("execute_tool", {"tool_name": "slow_nothing"})

        anyio.run(scenario)
        assert replica.wait_for('"outcome": "retry"')  # its access line
    lines = [json.loads(line) for line in replica.log if line.strip()]  # every line is JSON
    access = [line for line in lines if line["logger"] == "toolmgmt_gateway.access"]
    calls = [line for line in access if line["method"] == "tools/call"]
    assert [c.get("target") for c in calls] == [None, "slow_wait", None]
    assert all(c["client"] == "support" and c["tool"] for c in calls)
    assert [c["outcome"] for c in calls] == ["success", "success", "retry"]
    assert calls[2]["error"] == "unknown_tool"
    assert all(isinstance(c["duration_ms"], float) and c["level"] == "INFO" for c in calls)
    assert all(c["time"].endswith("Z") for c in lines)
    assert "arguments" not in calls[1] and "result" not in calls[1]
    # The upstream's stderr, tagged with its name; the argument it echoed stays there alone.
    (started,) = [line for line in lines if line.get("upstream") == "slow"]
    assert started["message"] == f"upstream slow: started {SECRET}"
    assert sum(SECRET in json.dumps(line) for line in lines) == 1


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_readyz_follows_the_session_store_and_version_is_behind_the_token(
    mcp_kit: Any, closed_port: int
) -> None:
    from support.mcp_http import serving
    from toolmgmt_gateway import Gateway, parse_config

    from toolmgmt_core import __version__

    text = (
        '[gateway]\ntransport = "http"\nport = 0\n[gateway.metrics]\ntoken = "scraper-0123456789"\n'
        + mcp_kit.stdio_upstream("notes")
        + f'\n[store]\nsessions = "redis://127.0.0.1:{closed_port}/0"\ntimeout = 0.5\n'
    )
    gateway = Gateway(parse_config(text, source="gateway.toml"))
    async with gateway, serving(gateway, token=TOKEN) as url:
        base = url.removesuffix("/mcp")
        async with httpx2.AsyncClient(timeout=30) as http:
            ready = await http.get(f"{base}/readyz")  # no token: a probe
            body = ready.json()
            assert ready.status_code == 503 and body["sessions"] == "down", body
            assert body["upstreams"] == {"notes": "up"} and body["draining"] is False
            assert (await http.get(f"{base}/version")).status_code == 401
            auth = {"Authorization": f"Bearer {TOKEN}"}
            version = (await http.get(f"{base}/version", headers=auth)).json()
            assert version["version"] == __version__ and version["mcp"]
            scraper = {"Authorization": "Bearer scraper-0123456789"}
            metrics = (await http.get(f"{base}/metrics", headers=scraper)).text
    (line,) = [line for line in metrics.splitlines() if line.startswith("toolmgmt_build_info{")]
    assert f'version="{__version__}"' in line and line.endswith(" 1.0")


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_readyz_is_ready_with_its_store_and_says_not_once_draining(
    mcp_kit: Any, redis_url: str
) -> None:
    from support.mcp_http import serving, store_config
    from toolmgmt_gateway import Gateway

    gateway = Gateway(store_config(mcp_kit, redis_url))
    async with gateway, serving(gateway) as url, httpx2.AsyncClient(timeout=30) as http:
        ready = await http.get(url.replace("/mcp", "/readyz"))
        assert ready.status_code == 200 and ready.json()["sessions"] == "up", ready.text
        assert gateway.drain is not None
        gateway.drain.begin()
        assert (await http.get(url.replace("/mcp", "/readyz"))).status_code == 503


@pytest.mark.anyio
async def test_access_log_content_only_when_opted_in(mcp_kit: Any, caplog: Any) -> None:
    import logging

    from toolmgmt_gateway import Gateway, parse_config

    for opted in (False, True):
        text = f"[gateway]\naccess_log_content = {str(opted).lower()}\n"
        gateway = Gateway(parse_config(text + mcp_kit.stdio_upstream("notes"), source="g.toml"))
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="toolmgmt_gateway.access"):
            async with gateway, Client(gateway.server) as client:
                await mcp_kit.execute(client, "notes_echo", token=SECRET)
        (line,) = [r for r in caplog.records if getattr(r, "method", "") == "tools/call"]
        assert (line.client, line.target, line.outcome) == ("stdio", "notes_echo", "success")
        assert (SECRET in line.getMessage()) is opted
        assert (SECRET in getattr(line, "result", "")) is opted


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_readyz_brings_back_an_upstream_that_was_down(mcp_kit: Any, tmp_path: Path) -> None:
    """A replica whose only upstream is down is out of rotation, so no call would reconnect
    it: the probe itself does (at the upstream's reconnect_delay), and the replica comes back."""
    from support.mcp_http import serving
    from toolmgmt_gateway import Gateway, parse_config

    marker = tmp_path / "down"
    marker.write_text("")
    upstream = mcp_kit.stdio_upstream(
        "notes", env={"NOTES_FAIL_IF_EXISTS": str(marker)}, reconnect_delay=0.2
    )
    gateway = Gateway(parse_config("[gateway]\nport = 0\n" + upstream, source="g.toml"))
    async with gateway, serving(gateway) as url, httpx2.AsyncClient(timeout=30) as http:
        down = await http.get(url.replace("/mcp", "/readyz"))
        assert down.status_code == 503 and down.json()["upstreams"] == {"notes": "down"}
        marker.unlink()
        with anyio.fail_after(30):
            while (await http.get(url.replace("/mcp", "/readyz"))).status_code != 200:
                await anyio.sleep(0.2)  # a probe's period


@pytest.mark.anyio
async def test_a_draining_replica_takes_what_continues_a_call_and_refuses_the_rest() -> None:
    from toolmgmt_gateway.lifecycle import Drain

    seen: list[bytes] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append((await receive())["body"])
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})

    drain = Drain(app, path="/mcp", retry_after=2)
    drain.begin()
    bodies = {
        "answer": {"jsonrpc": "2.0", "id": 3, "result": {"action": "accept"}},
        "cancel": {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}},
        "retry": {
            "jsonrpc": "2.0",
            "id": 4,
            "method": "tools/call",
            "params": {"name": "run_code", "requestState": "sealed"},
        },
        "new": {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "x"}},
        "batch": [
            {"jsonrpc": "2.0", "id": 6, "result": {}},
            {"jsonrpc": "2.0", "id": 7, "method": "tools/list"},
        ],
        "garbage": "not json",
    }
    statuses = {}
    for name, body in bodies.items():
        raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        sent: list[dict[str, Any]] = []

        async def receive(raw: bytes = raw) -> dict[str, Any]:
            return {"type": "http.request", "body": raw, "more_body": False}

        async def send(event: dict[str, Any], sent: list[dict[str, Any]] = sent) -> None:
            sent.append(event)

        scope = {"type": "http", "path": "/mcp", "method": "POST", "headers": []}
        await drain(scope, receive, send)
        statuses[name] = sent[0]["status"]
        if sent[0]["status"] == 503:
            assert (b"retry-after", b"2") in sent[0]["headers"]
    assert statuses == {
        "answer": 200, "cancel": 200, "retry": 200, "new": 503, "batch": 503, "garbage": 503
    }  # fmt: skip
    assert len(seen) == 3 and drain.refused == 3 and drain.in_flight == 0


@pytest.mark.parametrize("level", ["info", "warning"])
def test_text_logs_carry_time_level_and_logger_and_follow_the_level(level: str) -> None:
    script = (
        "import logging; from toolmgmt_gateway.logs import configure_logging\n"
        f"configure_logging({level!r}, 'text')\n"
        "logging.getLogger('toolmgmt_gateway.access').info('method=tools/list outcome=ok')\n"
        "logging.getLogger('toolmgmt_mcp').warning('refused', extra={'client': 'support'})\n"
        "logging.getLogger('some_library').info('chatter')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    lines = done.stderr.splitlines()
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"
    expected = [rf"{stamp} WARNING toolmgmt_mcp: client support: refused"]
    if level == "info":
        expected.insert(0, rf"{stamp} INFO toolmgmt_gateway.access: method=tools/list outcome=ok")
    assert len(lines) == len(expected), lines
    assert all(re.fullmatch(p, line) for p, line in zip(expected, lines, strict=True)), lines
