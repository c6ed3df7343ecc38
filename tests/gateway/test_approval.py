"""The gateway asks the client's user before a destructive call, through MCP elicitation: a
2026 client gets an input-required result (its answer comes with the retry, under sealed request
state), a 2025 client an ``elicitation/create`` request in the middle of the call; a client that
cannot be asked is refused, saying why; ``approve_destructive = false`` and a manager's own
approver still decide as they say. The cross-door table has the plain approve, deny, edit and
pause (``tests/adapters/test_cross_door.py``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("mcp")

import mcp.types as t  # noqa: E402
from mcp import Client, MCPError  # noqa: E402
from support.doors.gateway import shop_config  # noqa: E402
from toolmgmt_gateway import Gateway  # noqa: E402
from toolmgmt_gateway.approval import (  # noqa: E402
    APPROVAL_KEY,
    approval_form,
    client_approver,
    verdict_of,
)
from toolmgmt_gateway.questions import AskClient, Relay  # noqa: E402

from toolmgmt_core import (  # noqa: E402
    Approval,
    ApprovalDeniedError,
    ApprovalEdit,
    ApprovalRequest,
    Tool,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

MODES = ["auto", "legacy"]  # the 2026 protocol, then 2025's
CANCEL = {"tool_name": "cancel_order", "arguments": {"order_id": "A-1"}}


class User:
    """Answers the gateway's approval with ``verdict``, and the upstream's "Why?"."""

    def __init__(self, verdict: t.ElicitResult | None = None) -> None:
        self.verdict = verdict or t.ElicitResult(action="accept", content={"order_id": "A-1"})
        self.asked: list[t.ElicitRequestParams] = []

    async def elicit(self, context: Any, params: t.ElicitRequestParams) -> t.ElicitResult:
        self.asked.append(params)
        if params.message == "[upstream 'shop' asks] Why?":  # named: not the gateway's
            return t.ElicitResult(action="accept", content={"reason": "moved away"})
        if params.message.startswith("Allow the call to 'close_account'"):
            return t.ElicitResult(action="accept", content={"account_id": "ac_1"})
        return self.verdict

    def client(self, server: Any, mode: str) -> Client:
        return Client(server, mode=mode, elicitation_callback=self.elicit)  # type: ignore[arg-type]


def text(result: t.CallToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


async def runs(client: Client) -> dict[str, int]:
    answer = await client.call_tool("execute_tool", {"tool_name": "runs", "arguments": {}})
    return json.loads(text(answer))


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_that_cannot_ask_its_user_is_refused_saying_why(mode: str) -> None:
    async with Gateway(shop_config()) as gateway, Client(gateway.server, mode=mode) as bare:
        result = await bare.call_tool("execute_tool", CANCEL)
        error = json.loads(text(result))
        assert result.is_error and error["error"] == "approval_denied"
        assert "it declared no elicitation capability" in error["message"]
        assert "did not run" in error["message"]
        assert "cancel_order" not in await runs(bare)


@pytest.mark.parametrize("mode", MODES)
async def test_the_operators_opt_out_and_a_managers_approver_decide_without_the_client(
    mode: str,
) -> None:
    user = User()
    config = shop_config("approve_destructive = false")
    async with Gateway(config) as gateway, user.client(gateway.server, mode) as client:
        assert not (await client.call_tool("execute_tool", CANCEL)).is_error
        assert (await runs(client))["cancel_order"] == 1 and user.asked == []

    seen: list[ApprovalRequest] = []

    def operator(request: ApprovalRequest) -> bool:
        seen.append(request)
        return False

    refused = Gateway(shop_config(), approval=Approval(callback=operator))
    async with refused as gateway, user.client(gateway.server, mode) as client:
        result = await client.call_tool("execute_tool", CANCEL)
        assert json.loads(text(result))["error"] == "approval_denied"
        assert [r.tool.name for r in seen] == ["cancel_order"] and user.asked == []


@pytest.mark.parametrize("mode", MODES)
async def test_an_approved_call_whose_upstream_asks_too_is_approved_once(mode: str) -> None:
    # 2026: the yes travels in the sealed state of the upstream's round, so the retry that
    # brings the upstream's answer is not asked about again.
    user = User()
    call = {"tool_name": "close_account", "arguments": {"account_id": "ac_1"}}
    async with Gateway(shop_config()) as gateway, user.client(gateway.server, mode) as client:
        result = await client.call_tool("execute_tool", call)
        assert text(result) == "closed ac_1: moved away"
        messages = [q.message.split("?")[0] for q in user.asked]
        assert messages == ["Allow the call to 'close_account'", "[upstream 'shop' asks] Why"]
        assert (await runs(client))["close_account"] == 1


async def test_a_2026_approval_answers_only_the_call_it_was_asked_about() -> None:
    user = User()
    async with Gateway(shop_config()) as gateway, user.client(gateway.server, "auto") as client:
        session = client.session
        paused = await session.call_tool("execute_tool", CANCEL, allow_input_required=True)
        assert isinstance(paused, t.InputRequiredResult) and paused.request_state
        assert list(paused.input_requests or {}) == [APPROVAL_KEY]
        yes = {APPROVAL_KEY: t.ElicitResult(action="accept", content={"order_id": "A-1"})}
        other = {"tool_name": "cancel_order", "arguments": {"order_id": "A-9"}}
        # Sealed for one call and caller: another call's retry is refused by the boundary.
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await session.call_tool(
                "execute_tool", other, input_responses=yes, request_state=paused.request_state
            )
        # A yes without the gateway's state answers no question: it is asked again.
        again = await session.call_tool(
            "execute_tool", CANCEL, input_responses=yes, allow_input_required=True
        )
        assert isinstance(again, t.InputRequiredResult)
        assert "cancel_order" not in await runs(client)
        done = await session.call_tool(
            "execute_tool", CANCEL, input_responses=yes, request_state=paused.request_state
        )
        assert not done.is_error and (await runs(client))["cancel_order"] == 1


def _request(**arguments: Any) -> ApprovalRequest:
    parameters = {
        "type": "object",
        "properties": {
            "order_id": {"type": "string", "description": "The order.", "format": "email"},
            "count": {"type": "integer", "minimum": 1},
            "mode": {"type": "string", "enum": ["soft", "hard"]},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
            "notes": {"type": "array", "items": {"type": "string"}},
            "options": {"type": "object", "properties": {"x": {"type": "integer"}}},
            "maybe": {"type": ["string", "null"]},
        },
        "required": ["order_id", "options"],
    }
    tool = Tool("cancel_order", "Cancel an order.", parameters)
    return ApprovalRequest(tool, arguments, "the tool is annotated destructive")


def test_the_question_is_a_form_of_the_arguments_the_protocol_can_carry() -> None:
    request = _request(order_id="a@b.c", count=2, options={"x": 1}, tags=["a"])
    params = approval_form(request).params
    assert isinstance(params, t.ElicitRequestFormParams)
    schema = params.requested_schema
    assert schema["properties"] == {
        "order_id": {
            "type": "string",
            "description": "The order.",
            "format": "email",
            "default": "a@b.c",
        },
        "count": {"type": "integer", "minimum": 1, "default": 2},
        "mode": {"type": "string", "enum": ["soft", "hard"]},
        "tags": {
            "type": "array",
            "items": {"type": "string", "enum": ["a", "b"]},
            "default": ["a"],
        },
    }  # a free list, an object and a nullable union cannot be a form field: left as they are
    assert schema["required"] == ["order_id"]
    assert "'cancel_order'" in params.message and '"options":{"x":1}' in params.message


def test_the_users_answer_is_the_cores_verdict() -> None:
    request = _request(order_id="A-1", options={"x": 1})
    same = t.ElicitResult(action="accept", content={"order_id": "A-1", "maybe": None})
    assert verdict_of(same, request) is True
    changed = t.ElicitResult(action="accept", content={"order_id": "A-2"})
    assert verdict_of(changed, request) == ApprovalEdit({"order_id": "A-2", "options": {"x": 1}})
    for action, words in (("decline", "declined"), ("cancel", "dismissed")):
        with pytest.raises(ApprovalDeniedError, match=words):
            verdict_of(t.ElicitResult(action=action), request)  # type: ignore[arg-type]


async def test_a_2025_client_without_a_back_channel_is_refused_saying_why() -> None:
    approve = client_approver(Relay({"elicitation": {}}))
    with pytest.raises(ApprovalDeniedError, match="needs a back-channel"):
        await approve(_request(order_id="A-1", options={}))
    url_only = client_approver(AskClient({"elicitation": {"url": {}}}))
    with pytest.raises(ApprovalDeniedError, match="declared no elicitation capability"):
        await url_only(_request(order_id="A-1", options={}))
