"""An upstream tool's questions to its user (elicitation, sampling, roots) relayed through the
gateway: to a 2026 client as input-required results whose sealed request state any gateway with
the same key opens, to a 2025 client as requests in the middle of the call; the client asked
only what it declared, and told why when it cannot be asked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("mcp")

import httpx2  # noqa: E402
import mcp.types as t  # noqa: E402
from mcp import Client, MCPError  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from support.mcp_http import ACCEPT, INITIALIZE, serving  # noqa: E402
from support.upstreams import CONFORMANCE, http_upstream  # noqa: E402
from toolmgmt_gateway import Gateway, parse_config  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(90)]

KEY = "k" * 40


@pytest.fixture(scope="module")
def shared_upstream() -> Iterator[str]:
    """The conformance upstream over HTTP, for several gateways at once."""
    with http_upstream(CONFORMANCE) as upstream:
        yield upstream.url


def conformance(mcp_kit: Any, gateway: str = "", url: str | None = None) -> Gateway:
    """A gateway over the conformance upstream (its own stdio process, or the one at ``url``),
    its tools listed by their own names."""
    if url is None:
        upstream = mcp_kit.stdio_upstream("conf", CONFORMANCE, prefix="")
    else:
        upstream = f'[upstreams.conf]\nurl = "{url}"\nprefix = ""\n'
    return Gateway(parse_config(f'[gateway]\nalways_on = ["test_*"]\n{gateway}\n' + upstream))


ASKS = "[upstream 'conf' asks] "
"""How every relayed elicitation starts: the upstream that asks is named (finding 7)."""


class User:
    """The person (and model) behind a client: answers every question, and keeps them (each
    checked to name the upstream that asks, and kept without that name)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def elicit(self, context: Any, params: t.ElicitRequestParams) -> t.ElicitResult:
        assert params.message.startswith(ASKS), params.message
        self.asked.append(params.message.removeprefix(ASKS))
        properties = params.requested_schema["properties"]  # type: ignore[union-attr]
        content = {"name": "Ada", "color": "teal", "ok": True, "value": "v"}
        return t.ElicitResult(action="accept", content={k: content[k] for k in properties})

    async def sample(
        self, context: Any, params: t.CreateMessageRequestParams
    ) -> t.CreateMessageResult:
        assert "from upstream 'conf'" in (params.system_prompt or "")
        self.asked.append(params.messages[0].content.text)  # type: ignore[union-attr]
        answer = t.TextContent(type="text", text="Paris")
        return t.CreateMessageResult(role="assistant", content=answer, model="m")

    async def roots(self, context: Any) -> t.ListRootsResult:
        self.asked.append("roots")
        return t.ListRootsResult(roots=[t.Root(uri="file:///work", name="work")])  # type: ignore[arg-type]

    def client(self, server: Any, mode: str = "auto", **options: Any) -> Client:
        callbacks = {
            "elicitation_callback": self.elicit,
            "sampling_callback": self.sample,
            "list_roots_callback": self.roots,
        }
        return Client(server, mode=mode, **{**callbacks, **options})  # type: ignore[arg-type]


def text(result: t.CallToolResult) -> str:
    return result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # the 2026 protocol, then 2025's
async def test_the_upstreams_questions_reach_the_user_and_the_answers_go_back(
    mcp_kit: Any, mode: str
) -> None:
    user = User()
    async with conformance(mcp_kit) as gw, user.client(gw.server, mode) as client:
        assert (client.protocol_version >= "2026") == (mode == "auto")
        one = await client.call_tool("test_input_required_result_elicitation", {})
        assert text(one) == "Hello, Ada!" and user.asked == ["What is your name?"]
        # Through execute_tool as well, three questions at once, and two rounds.
        three = await client.call_tool(
            "execute_tool",
            {"tool_name": "test_input_required_result_multiple_inputs", "arguments": {}},
        )
        assert text(three) == "Name: Ada; Greeting: Paris; Roots: 1"
        assert sorted(user.asked[1:]) == ["Generate a greeting", "What is your name?", "roots"]
        rounds = await client.call_tool("test_input_required_result_multi_round", {})
        assert text(rounds) == "Multi-round complete for Ada who likes teal"
        kept = await client.call_tool("test_input_required_result_request_state", {})
        assert text(kept) == "state-ok: requestState validated"  # the upstream's state came back
        sampled = await client.call_tool("test_sampling", {"prompt": "Capital of France?"})
        assert text(sampled) == "LLM response: Paris" and user.asked[-1] == "Capital of France?"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_the_client_is_asked_only_what_it_declared(mcp_kit: Any, mode: str) -> None:
    user = User()
    async with conformance(mcp_kit) as gw:
        async with Client(gw.server, mode=mode, sampling_callback=user.sample) as client:  # type: ignore[arg-type]
            # The upstream learns the client's own capabilities: it asks what this one answers.
            result = await client.call_tool("test_input_required_result_capabilities", {})
            assert text(result) == "capabilities-ok: received sample_input"
            # An upstream that asks anyway is not relayed: the client gets -32021 naming what
            # is missing.
            with pytest.raises(MCPError) as refused:
                await client.call_tool("test_input_required_result_list_roots", {})
            assert refused.value.error.code == -32021
            assert refused.value.error.data == {"requiredCapabilities": {"roots": {}}}
        async with Client(gw.server, mode=mode) as bare:  # declares nothing
            with pytest.raises(MCPError) as missing:
                await bare.call_tool("test_missing_capability", {})
            # The upstream's refusal as it is: -32021 naming what is missing (HTTP 400 over
            # HTTP).
            assert missing.value.error.code == -32021
            assert missing.value.error.data == {"requiredCapabilities": {"sampling": {}}}


async def test_request_state_is_sealed_and_bound_to_its_call(mcp_kit: Any) -> None:
    user = User()
    async with (
        conformance(mcp_kit, f'state_key = "{KEY}"') as gw,
        user.client(gw.server) as client,
    ):
        session = client.session
        arguments = {"tool_name": "test_input_required_result_request_state", "arguments": {}}
        asked = await session.call_tool("execute_tool", arguments, allow_input_required=True)
        assert isinstance(asked, t.InputRequiredResult) and asked.request_state
        assert list(asked.input_requests or {}) == ["confirm"]
        state = asked.request_state
        assert state.startswith("v1.") and "conf" not in state  # sealed, not readable
        answers = {"confirm": t.ElicitResult(action="accept", content={"ok": True})}

        async def retry(name: str, arguments: dict[str, Any], state: str) -> Any:
            return await session.call_tool(
                name, arguments, input_responses=answers, request_state=state,
                allow_input_required=True,
            )  # fmt: skip

        tampered = state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")
        other = {**arguments, "arguments": {"extra": 1}}
        for name, args, sent in (
            ("execute_tool", arguments, tampered),  # changed: refused
            ("execute_tool", other, state),  # for other arguments: refused
            ("test_input_required_result_request_state", {}, state),  # another tool: refused
        ):
            with pytest.raises(MCPError) as refused:
                await retry(name, args, sent)
            assert refused.value.error.code == -32602
            assert refused.value.error.message == "Invalid or expired requestState"
        done = await retry("execute_tool", arguments, state)
        assert text(done) == "state-ok: requestState validated"


async def test_a_retry_can_land_on_any_gateway_holding_the_key(
    mcp_kit: Any, shared_upstream: str
) -> None:
    # Replicas: gateways with the same key in front of one upstream (a stdio upstream is a
    # process per gateway, each sealing its own state under a key of its own).
    arguments: dict[str, Any] = {}
    name = "test_input_required_result_multi_round"
    url = shared_upstream
    async with (
        conformance(mcp_kit, f'state_key = "{KEY}"', url) as first,
        conformance(mcp_kit, f'state_key = "new-{KEY},{KEY}"', url) as rotated,
        conformance(mcp_kit, f'state_key = "{"x" * 40}"', url) as stranger,
        User().client(first.server) as a,
        User().client(rotated.server) as b,
        User().client(stranger.server) as c,
    ):
        asked = await a.session.call_tool(name, arguments, allow_input_required=True)
        assert isinstance(asked, t.InputRequiredResult)
        step1 = {"step1": t.ElicitResult(action="accept", content={"name": "Ada"})}
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await c.session.call_tool(
                name, arguments, input_responses=step1, request_state=asked.request_state
            )
        # The rotated gateway opens the old key's state and seals with its new key, which the
        # first gateway cannot open: a key is dropped only once no state sealed with it lives.
        again = await b.session.call_tool(
            name, arguments, input_responses=step1, request_state=asked.request_state,
            allow_input_required=True,
        )  # fmt: skip
        assert isinstance(again, t.InputRequiredResult) and list(again.input_requests or {}) == [
            "step2"
        ]
        step2 = {"step2": t.ElicitResult(action="accept", content={"color": "teal"})}
        with pytest.raises(MCPError, match="Invalid or expired requestState"):
            await a.session.call_tool(
                name, arguments, input_responses=step2, request_state=again.request_state
            )
        done = await b.session.call_tool(
            name, arguments, input_responses=step2, request_state=again.request_state
        )
        assert text(done) == "Multi-round complete for Ada who likes teal"


async def test_answers_sent_without_state_reach_the_upstream(mcp_kit: Any) -> None:
    # A client may answer the questions it expects in its first request (the suite's
    # ignore-extra-params scenario): the answers go on, unknown keys are ignored.
    async with conformance(mcp_kit) as gw, Client(gw.server) as client:
        answers = {
            "user_name": t.ElicitResult(action="accept", content={"name": "Bo"}),
            "unknown": t.ElicitResult(action="accept", content={"x": 1}),
        }
        result = await client.session.call_tool(
            "test_input_required_result_elicitation", {}, input_responses=answers
        )
        assert text(result) == "Hello, Bo!"


async def test_replicas_share_the_state_key_through_the_store(
    mcp_kit: Any, shared_upstream: str, redis_url: str
) -> None:
    # No key configured: with [store] sessions the replicas make one and keep it there. Over
    # HTTP the state is bound to the caller's Authorization header too.
    pytest.importorskip("redis")
    store = f'\n[store]\nsessions = "{redis_url}"\n'
    config = parse_config(
        '[gateway]\nalways_on = ["test_*"]\n'
        f'[upstreams.conf]\nurl = "{shared_upstream}"\nprefix = ""\n' + store
    )
    name = "test_input_required_result_request_state"
    answers = {"confirm": t.ElicitResult(action="accept", content={"ok": True})}
    first, second = Gateway(config), Gateway(config)
    async with first, second, serving(first) as one, serving(second) as two:
        async with User().client(http_client(one, "Bearer ada")) as a:
            asked = await a.session.call_tool(name, {}, allow_input_required=True)
            assert isinstance(asked, t.InputRequiredResult)
        async with User().client(http_client(two, "Bearer bob")) as b:
            with pytest.raises(MCPError, match="Invalid or expired requestState"):
                await b.session.call_tool(
                    name, {}, input_responses=answers, request_state=asked.request_state
                )
        async with User().client(http_client(two, "Bearer ada")) as c:
            done = await c.session.call_tool(
                name, {}, input_responses=answers, request_state=asked.request_state
            )
            assert text(done) == "state-ok: requestState validated"


def http_client(url: str, authorization: str) -> Any:
    """A streamable HTTP transport to ``url`` sending ``authorization``."""
    headers = {"Authorization": authorization}
    return streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers))


async def test_a_2025_clients_answer_reaches_the_replica_that_asked(
    mcp_kit: Any, shared_upstream: str, redis_url: str
) -> None:
    # With [store] sessions a 2025 client's calls are served statelessly; a call that asks
    # gets a back-channel all the same: the question on the call's stream, the answer POSTed
    # to any replica and handed to the one that asked through Redis.
    config = parse_config(
        '[gateway]\nalways_on = ["test_*"]\n'
        f'[upstreams.conf]\nurl = "{shared_upstream}"\nprefix = ""\n'
        f'[store]\nsessions = "{redis_url}"\n'
    )
    first, second = Gateway(config), Gateway(config)
    declared = {"elicitation": {}, "sampling": {}}
    initialize = {**INITIALIZE, "params": {**INITIALIZE["params"], "capabilities": declared}}
    call = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "test_input_required_result_elicitation", "arguments": {}},
    }
    async with first, second, serving(first) as one, serving(second) as two:
        async with httpx2.AsyncClient(timeout=30) as http:
            opened = await http.post(one, json=initialize, headers=ACCEPT)
            mine = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"]}
            async with http.stream("POST", one, json=call, headers=mine) as stream:
                events = _events(stream.aiter_lines())
                question = await anext(events)
                assert question["method"] == "elicitation/create"
                assert question["params"]["message"] == ASKS + "What is your name?"
                assert question["params"]["_meta"]["io.toolmgmt/upstream"] == "conf"
                answer = {
                    "jsonrpc": "2.0",
                    "id": question["id"],
                    "result": {"action": "accept", "content": {"name": "Ada"}},
                }
                # Another caller cannot answer it; the conversation's client can, anywhere.
                other = {**mine, "authorization": "Bearer someone-else"}
                assert (await http.post(two, json=answer, headers=other)).status_code == 404
                assert (await http.post(two, json=answer, headers=mine)).status_code == 202
                result = await anext(events)
            assert result["id"] == 5 and result["result"]["content"][0]["text"] == "Hello, Ada!"

        # A client that declared nothing is not asked: the upstream's question is refused.
        async with Client(one, mode="legacy") as bare:
            with pytest.raises(MCPError) as refused:
                await bare.call_tool("test_input_required_result_elicitation", {})
            assert refused.value.error.code == -32021
        # mcp.Client answers through its callbacks, whichever replica gets the answer.
        async with User().client(two, mode="legacy") as client:
            done = await client.call_tool("test_input_required_result_multiple_inputs", {})
            assert text(done) == "Name: Ada; Greeting: Paris; Roots: 1"


async def _events(lines: Any) -> Any:
    """The JSON-RPC messages of an SSE stream's ``data:`` lines."""
    async for line in lines:
        if line.startswith("data:"):
            yield json.loads(line.removeprefix("data:").strip())
