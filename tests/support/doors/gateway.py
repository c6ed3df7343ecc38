"""The MCP gateway's door: a ``Gateway`` over the shop as an upstream MCP server (a subprocess,
``tests/adapters/mcp/servers/shop_server.py``), called by an ``mcp.Client`` speaking the 2025
protocol (``modern=False``) or the 2026 one, whose user answers elicitation requests; the model
sees ``CallToolResult``s of ``execute_tool``."""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import AsyncExitStack
from typing import Any

import anyio
import httpx2
import mcp.types as t
import pytest
import redis
from mcp import Client
from toolmgmt_deploy import LocalRedis, find_redis_server
from toolmgmt_gateway import Gateway, parse_config
from toolmgmt_gateway.approval import APPROVAL_KEY

from support.doors import EDIT_NOTE, Outcomes, answered, cut_reference, ran
from support.doors.shop import (
    CODE_CANCEL,
    CODE_LOOKUP,
    CODE_REFUND,
    DENIED,
    MAX_RESULT_TOKENS,
    ORDER,
)
from support.mcp_http import ACCEPT, INITIALIZE, serving
from support.upstreams import SERVERS

__all__ = ["GatewayDoor", "shop_config"]

SHOP_SERVER = SERVERS / "shop_server.py"
STATE_KEY = "s" * 40


ASKED = "[upstream 'shop' asks] Which order?"
"""The shop's question as the user sees it: the gateway names the upstream that asks."""


def shop_config(extra: str = "", store: str = "") -> Any:
    """A gateway over the shop server (stdio, its tools by their own names), the shop's policy
    and budget; ``extra`` goes into ``[gateway]``, ``store`` after the upstream."""
    deny = ", ".join(json.dumps(p) for p in DENIED)
    text = (
        f'[gateway]\nmax_result_tokens = {MAX_RESULT_TOKENS}\nstate_key = "{STATE_KEY}"\n{extra}\n'
        f"[policy]\ndeny = [{deny}]\n"
        f"[upstreams.shop]\ncommand = {json.dumps(sys.executable)}\n"
        f'args = [{json.dumps(str(SHOP_SERVER))}]\nprefix = ""\n{store}'
    )
    return parse_config(text, source="gateway.toml")


def _text(result: t.CallToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


def _form(result: t.CallToolResult) -> str:
    flag = "true" if result.is_error else "false"
    return answered(f"`CallToolResult(isError={flag})`", _text(result))


class GatewayDoor:
    """A gateway and one client; the client's user answers the gateway's questions with
    :attr:`verdict` and the upstream's with the order id."""

    def __init__(self, *, modern: bool) -> None:
        self.modern = modern
        self.mode = "auto" if modern else "legacy"
        self.verdict = t.ElicitResult(action="accept", content={"order_id": ORDER})
        self.asked: list[t.ElicitRequestParams] = []
        self.outcomes = Outcomes()

    async def __aenter__(self) -> GatewayDoor:
        self.stack = AsyncExitStack()
        self.gateway = await self.stack.enter_async_context(
            Gateway(shop_config(), listeners=[self.outcomes])
        )
        self.client = await self._client(self.gateway.server)
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stack.aclose()

    async def _client(self, server: Any) -> Client:
        client = Client(server, mode=self.mode, elicitation_callback=self._elicit)  # type: ignore[arg-type]
        await self.stack.enter_async_context(client)
        expected = "2026" if self.modern else "2025"
        assert client.protocol_version.startswith(expected), client.protocol_version
        return client

    async def _elicit(self, context: Any, params: t.ElicitRequestParams) -> t.ElicitResult:
        self.asked.append(params)
        if params.message == ASKED:  # the upstream's own question, naming it
            return t.ElicitResult(action="accept", content={"order_id": ORDER})
        return self.verdict

    async def _execute(
        self, name: str, args: Any, client: Client | None = None
    ) -> t.CallToolResult:
        call = {"tool_name": name, "arguments": args}
        return await (client or self.client).call_tool("execute_tool", call)

    async def _runs(self, client: Client | None = None) -> dict[str, int]:
        return json.loads(_text(await self._execute("runs", {}, client)))

    # -- outcomes ---------------------------------------------------------------------------

    async def success(self) -> str:
        return _form(await self._execute("lookup_order", {"order_id": ORDER}))

    async def invalid_arguments(self) -> str:
        answers = [await self._execute("lookup_order", {"order_id": 5}) for _ in range(3)]
        forms = {_form(r) for r in answers}
        assert len(forms) == 1, forms
        return f"{forms.pop()} at every repeat (the client sets the limit)"

    async def unknown_tool(self) -> str:
        return _form(await self._execute("lookup_ordr", {"order_id": ORDER}))

    async def denied_tool(self) -> str:
        result = await self._execute("refund_order", {"order_id": ORDER})
        assert (await self._runs()).get("refund_order", 0) == 0
        return _form(result)

    async def failed(self) -> str:
        return _form(await self._execute("ship_order", {"order_id": ORDER}))

    async def truncated(self) -> str:
        result = await self._execute("order_report", {"order_id": ORDER})
        assert _text(result) == cut_reference()
        return f"{_form(result)}, the core's cut"

    # -- approval ---------------------------------------------------------------------------

    async def _approval(self, verdict: t.ElicitResult) -> str:
        self.verdict = verdict
        result = await self._execute("cancel_order", {"order_id": ORDER})
        [question] = self.asked
        assert question.requested_schema["properties"]["order_id"]["default"] == ORDER  # type: ignore[index]
        self.answer = result
        return f"{_form(result)}, {ran((await self._runs()).get('cancel_order', 0))}"

    async def approval_pause(self) -> str:
        if not self.modern:
            await self._approval(t.ElicitResult(action="decline"))
            return (
                "`elicitation/create` to the client in the middle of the call: a form of its "
                "arguments"
            )
        call = {"tool_name": "cancel_order", "arguments": {"order_id": ORDER}}
        paused = await self.client.session.call_tool(
            "execute_tool", call, allow_input_required=True
        )
        assert isinstance(paused, t.InputRequiredResult), paused
        [(key, question)] = (paused.input_requests or {}).items()
        assert key == APPROVAL_KEY and question.method == "elicitation/create"
        assert (await self._runs()).get("cancel_order", 0) == 0
        return "`InputRequiredResult`: an `elicitation/create` form of its arguments, sealed state"

    async def approval_approve(self) -> str:
        outcome = await self._approval(t.ElicitResult(action="accept", content={"order_id": ORDER}))
        return f'`ElicitResult(action="accept")`: {outcome}'

    async def approval_deny(self) -> str:
        outcome = await self._approval(t.ElicitResult(action="decline"))
        return f'`ElicitResult(action="decline")`: {outcome}'

    async def approval_edit(self) -> str:
        edited = t.ElicitResult(action="accept", content={"order_id": "A-2"})
        outcome = await self._approval(edited)
        assert _text(self.answer).startswith(EDIT_NOTE), _text(self.answer)
        return f"`accept` with a field changed: {outcome} with it, the result says so"

    # -- code mode ----------------------------------------------------------------------------

    async def _code(self, code: str) -> t.CallToolResult:
        gateway = await self.stack.enter_async_context(
            Gateway(shop_config('mode = "code"'), listeners=[self.outcomes])
        )
        client = await self._client(gateway.server)
        self.code_client = client
        return await client.call_tool("run_code", {"code": code})

    async def code_success(self) -> str:
        result = await self._code(CODE_LOOKUP)
        assert _text(result) == f"order {ORDER}: shipped", _text(result)
        return f"{_form(result)}: what the program printed"

    async def code_denied(self) -> str:
        result = await self._code(CODE_REFUND)
        assert "PermissionError" in _text(result)
        return f"{_form(result)}: `PermissionError` raised inside the program"

    async def code_approval(self) -> str:
        self.verdict = t.ElicitResult(action="accept", content={"order_id": ORDER})
        result = await self._code(CODE_CANCEL)
        [question] = self.asked
        assert "cancel_order" in question.message, question.message
        counted = await self.code_client.call_tool("run_code", {"code": "await runs()"})
        runs = json.loads(_text(counted))
        how = "an input-required result" if self.modern else "`elicitation/create` mid-call"
        return (
            f"{how} asks about the program's call; accepted: {_form(result)}, "
            f"{ran(runs.get('cancel_order', 0))}"
        )

    # -- state and control flow ---------------------------------------------------------------

    async def restore(self) -> str:
        if self.modern:
            return await self._restore_sealed_approval()
        return await self._restore_conversation()

    async def _restore_sealed_approval(self) -> str:
        if find_redis_server() is None:
            pytest.skip("no engine: redis-server is not installed (apt-get install redis-server)")
        engine = self.stack.enter_context(LocalRedis())
        # Only a store the gateways share records whether an approval was used, so only then
        # does a fresh one honour an approval another asked.
        config = shop_config(store=f'[store]\nsessions = "{engine.url}"\n')
        first = await self.stack.enter_async_context(Gateway(config, listeners=[self.outcomes]))
        call = {"tool_name": "cancel_order", "arguments": {"order_id": ORDER}}
        asking = await self._client(first.server)
        paused = await asking.session.call_tool("execute_tool", call, allow_input_required=True)
        assert isinstance(paused, t.InputRequiredResult)
        fresh = Gateway(config, listeners=[self.outcomes])
        await self.stack.enter_async_context(fresh)
        client = await self._client(fresh.server)
        answer = {APPROVAL_KEY: t.ElicitResult(action="accept", content={"order_id": ORDER})}
        done = await client.call_tool(
            "execute_tool", call, input_responses=answer, request_state=paused.request_state
        )
        assert not done.is_error, _text(done)
        assert (await self._runs(client)).get("cancel_order") == 1
        assert not self.asked
        return (
            "a fresh gateway over the same `[store] sessions` takes the paused call's sealed "
            "`requestState`: ran once"
        )

    async def _restore_conversation(self) -> str:
        if find_redis_server() is None:
            pytest.skip("no engine: redis-server is not installed (apt-get install redis-server)")
        engine = self.stack.enter_context(LocalRedis())
        store = f'[store]\nsessions = "{engine.url}"\nsession_ttl = 60\n'
        config = shop_config('transport = "http"\nport = 0', store)
        urls = []
        for _ in range(2):  # one gateway, then a fresh one over the same Redis
            gateway = await self.stack.enter_async_context(
                Gateway(config, listeners=[self.outcomes])
            )
            urls.append(await self.stack.enter_async_context(serving(gateway)))
        async with httpx2.AsyncClient(timeout=30) as http:
            opened = await http.post(urls[0], json=INITIALIZE, headers=ACCEPT)
            headers = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"]}
            schema = _request(2, "get_tool_schema", {"tool_name": "track_order"})
            assert (await http.post(urls[0], json=schema, headers=headers)).status_code == 200
            call = _request(
                3, "execute_tool", {"tool_name": "track_order", "arguments": {"order_id": ORDER}}
            )
            answer = await http.post(urls[1], json=call, headers=headers)
        assert answer.status_code == 200 and "out for delivery" in answer.text, answer.text
        with redis.Redis.from_url(engine.url) as raw:
            [key] = raw.keys("toolmgmt:session:{mcp-*}")
            state = json.loads(raw.hget(key, "s"))
        assert state["loaded"] == ["track_order"] and len(state["results"]["records"]) == 1
        return (
            "a fresh gateway over the same `[store] sessions` continues the conversation "
            "(`Mcp-Session-Id`) with what it loaded"
        )

    async def control_pause(self) -> str:
        result = await self._execute("ask_human", {"question": "Which order?"})
        assert _text(result) == "the user says: A-1" and [q.message for q in self.asked] == [ASKED]
        if self.modern:
            return (
                "the upstream's `InputRequiredResult` goes to the client (sealed state); its "
                "retry completes the call"
            )
        return "the upstream's `elicitation/create` goes to the client in the middle of the call"

    async def cancellation(self) -> str:
        task = asyncio.ensure_future(self._execute("wait_order", {"order_id": ORDER}))
        with anyio.fail_after(30):
            while not (await self._runs()).get("wait_order"):
                await asyncio.sleep(0.02)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            cancelled = True
        else:
            cancelled = False
        assert cancelled
        with anyio.fail_after(30):
            while not (await self._runs()).get("wait_order cancelled"):
                await asyncio.sleep(0.02)
        return "the client's `notifications/cancelled` cancels the upstream call"


def _request(number: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params}
