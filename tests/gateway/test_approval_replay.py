"""One accepted 2026 approval runs its destructive call once (issue 32, finding 3).

Re-sending the same retry (``requestState`` plus ``inputResponses``) ran the tool again each
time, on both replicas and through HAProxy. Each approval question now carries its own id in
the sealed state, recorded as used when a retry brings the yes: in the process without a
``[store]``, atomically in Redis (``SET NX``) with one, so two replicas cannot both honour it.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
import mcp.types as t  # noqa: E402
from mcp import Client  # noqa: E402
from support.doors.gateway import shop_config  # noqa: E402
from toolmgmt_gateway import Gateway  # noqa: E402
from toolmgmt_gateway.approval import APPROVAL_KEY  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

CANCEL = {"tool_name": "cancel_order", "arguments": {"order_id": "A-1"}}
YES = {APPROVAL_KEY: t.ElicitResult(action="accept", content={"order_id": "A-1"})}
SERVERS = Path(__file__).resolve().parents[1] / "adapters" / "mcp" / "servers"
SHOP_SERVER = SERVERS / "shop_server.py"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


async def _elicit(context: Any, params: t.ElicitRequestParams) -> t.ElicitResult:
    return t.ElicitResult(action="accept", content={})


def _client(target: Any) -> Client:
    return Client(target, mode="auto", elicitation_callback=_elicit)  # type: ignore[arg-type]


def _text(result: Any) -> str:
    return result.content[0].text  # type: ignore[no-any-return]


async def _runs(client: Client) -> int:
    answer = await client.call_tool("execute_tool", {"tool_name": "runs", "arguments": {}})
    return int(json.loads(_text(answer)).get("cancel_order", 0))


async def test_a_replayed_2026_retry_runs_nothing_and_says_the_approval_was_used() -> None:
    async with Gateway(shop_config()) as gateway, _client(gateway.server) as client:
        session = client.session
        paused = await session.call_tool("execute_tool", CANCEL, allow_input_required=True)
        assert isinstance(paused, t.InputRequiredResult)
        state = paused.request_state
        done = await session.call_tool(
            "execute_tool", CANCEL, input_responses=YES, request_state=state
        )
        assert not done.is_error and await _runs(client) == 1
        for _ in range(3):
            again = await session.call_tool(
                "execute_tool", CANCEL, input_responses=YES, request_state=state
            )
            error = json.loads(_text(again))
            assert again.is_error and error["error"] == "approval_denied"
            assert "already used" in error["message"]
        assert await _runs(client) == 1
        # A new question is a new approval: asked again, it runs once more.
        fresh = await session.call_tool("execute_tool", CANCEL, allow_input_required=True)
        assert isinstance(fresh, t.InputRequiredResult) and fresh.request_state != state
        await session.call_tool(
            "execute_tool", CANCEL, input_responses=YES, request_state=fresh.request_state
        )
        assert await _runs(client) == 2


async def test_an_edited_2026_approval_is_bound_to_the_edit_and_used_once() -> None:
    edit = {APPROVAL_KEY: t.ElicitResult(action="accept", content={"order_id": "A-7"})}
    async with Gateway(shop_config()) as gateway, _client(gateway.server) as client:
        session = client.session
        paused = await session.call_tool("execute_tool", CANCEL, allow_input_required=True)
        state = paused.request_state  # type: ignore[union-attr]
        done = await session.call_tool(
            "execute_tool", CANCEL, input_responses=edit, request_state=state
        )
        assert not done.is_error and "A-7" in _text(done)
        again = await session.call_tool(
            "execute_tool", CANCEL, input_responses=edit, request_state=state
        )
        assert again.is_error and "already used" in _text(again)
        assert await _runs(client) == 1


# -- two replicas behind HAProxy, sharing Redis -------------------------------------------------


@pytest.fixture(scope="module")
def replicas(
    redis_server: Any, haproxy_binary: str, tmp_path_factory: Any
) -> Iterator[SimpleNamespace]:
    from support.upstreams import http_upstream
    from toolmgmt_deploy import LocalHAProxy
    from toolmgmt_deploy.replica import LocalGateway

    folder = tmp_path_factory.mktemp("replay")
    with http_upstream(SHOP_SERVER) as upstream:
        config = folder / "gateway.toml"
        config.write_text(
            "[gateway]\n"
            "[upstreams.shop]\n"
            f'url = "{upstream.url}"\n'
            'prefix = ""\n'
            "timeout = 30\n\n"
            "[store]\n"
            f'sessions = "{redis_server.url}"\n'
            f'session_prefix = "replay{time.time_ns()}:"\n'
        )
        gateways = [LocalGateway(config) for _ in range(2)]
        balancer: Any = None
        try:
            with ThreadPoolExecutor(2) as pool:
                list(pool.map(LocalGateway.start, gateways))
            balancer = LocalHAProxy([g.address for g in gateways], binary=haproxy_binary).start()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                states = balancer.server_states()
                if len(states) == 2 and all(s.startswith("UP") for s in states.values()):
                    break
                time.sleep(0.05)
            yield SimpleNamespace(url=f"{balancer.url}/mcp", upstream=upstream.url)
        finally:
            if balancer is not None:
                balancer.close()
            for gateway in gateways:
                gateway.stop()


async def test_twenty_concurrent_replays_across_two_replicas_run_the_tool_once(
    replicas: SimpleNamespace,
) -> None:
    async with _client(replicas.url) as client:
        paused = await client.session.call_tool("execute_tool", CANCEL, allow_input_required=True)
        assert isinstance(paused, t.InputRequiredResult)
        state = paused.request_state
        outcomes: list[bool] = []

        async def retry() -> None:
            async with _client(replicas.url) as own:  # its own connection: HAProxy spreads them
                result = await own.session.call_tool(
                    "execute_tool", CANCEL, input_responses=YES, request_state=state
                )
                outcomes.append(not result.is_error)

        with anyio.fail_after(120):
            async with anyio.create_task_group() as group:
                for _ in range(20):
                    group.start_soon(retry)
    async with Client(replicas.upstream) as direct:
        ran = json.loads(_text(await direct.call_tool("runs", {}))).get("cancel_order", 0)
    assert ran == 1, f"the tool ran {ran} times from one approval"
    assert outcomes.count(True) == 1 and len(outcomes) == 20
    print(f"20 concurrent replays across 2 replicas: the tool ran {ran} time", file=sys.stderr)


async def test_a_replica_without_a_shared_store_never_honours_another_replicas_approval() -> None:
    # One state_key, no [store]: each replica records the approvals used in its own memory, so
    # none can tell whether another used one; a retry sent again to another replica (after a 502
    # behind a load balancer, or once a restarted gateway is back) must not run the call twice.
    async with Gateway(shop_config()) as first, Gateway(shop_config()) as second:
        async with _client(first.server) as client, _client(second.server) as other:
            paused = await client.session.call_tool(
                "execute_tool", CANCEL, allow_input_required=True
            )
            state = paused.request_state  # type: ignore[union-attr]
            done = await client.session.call_tool(
                "execute_tool", CANCEL, input_responses=YES, request_state=state
            )
            again = await other.session.call_tool(
                "execute_tool", CANCEL, input_responses=YES, request_state=state
            )
            ran = [await _runs(client), await _runs(other)]
    assert not done.is_error and again.is_error, _text(again)
    error = json.loads(_text(again))
    assert error["error"] == "approval_denied" and "another gateway process" in error["message"]
    assert ran == [1, 0]
