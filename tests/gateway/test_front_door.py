"""The gateway's front door over real HTTP: one token per client (its profile, its deny, its
conversations), the admission limit (503 with ``Retry-After`` before anything runs), a
deadline on reading each request (real sockets: slow headers, slow bodies, idle connections),
and a call whose record the session store did not take, said in ``_meta``."""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
import httpx2  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from support.mcp_http import ACCEPT, INITIALIZE, LIST, serving  # noqa: E402
from toolmgmt_gateway import Gateway, parse_config  # noqa: E402
from toolmgmt_gateway.clients import ClientAuth  # noqa: E402
from toolmgmt_gateway.conversations import principal_key  # noqa: E402

from toolmgmt_core._model.errors import ConfigError  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

SUPPORT = "support-token-0123456789"
OPS = "ops-token-0123456789abcdef"
MODERN = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
}


@pytest.fixture
def tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FD_SUPPORT", SUPPORT)
    monkeypatch.setenv("FD_OPS", OPS)


def _config(
    mcp_kit: Any, gateway: str = "", clients: str = "", tail: str = "", profile: str = "readonly"
) -> Any:
    """Two clients: ``support`` (``profile``, no ``notes_get_*``; ``clients`` more keys) and
    ``ops`` (the gateway's profile); ``gateway`` more ``[gateway]`` keys, ``tail`` more tables."""
    text = (
        f'[gateway]\ntransport = "http"\nport = 0\n{gateway}\n'
        f'[gateway.clients.support]\ntoken_env = "FD_SUPPORT"\nprofile = "{profile}"\n'
        'deny = ["notes_get_*"]\n'
        f'{clients}\n[gateway.clients.ops]\ntoken_env = "FD_OPS"\n\n'
        + mcp_kit.stdio_upstream("notes")
        + tail
    )
    return parse_config(text, source="gateway.toml")


def _client(url: str, token: str, mode: str = "auto") -> Client:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    return Client(streamable_http_client(url, http_client=http), mode=mode)  # type: ignore[arg-type]


def _call(tool: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": "execute_tool", "arguments": {"tool_name": tool, "arguments": arguments}}
    return {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {**params, "_meta": META}}


def _modern(token: str | None) -> dict[str, str]:
    auth = {"authorization": f"Bearer {token}"} if token else {}
    routing = {"mcp-method": "tools/call", "mcp-name": "execute_tool"}
    return {**ACCEPT, "mcp-protocol-version": MODERN, **routing, **auth}


# -- the configuration --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "line", "problem"),
    [
        ("[gateway.clients.a]\nprofile = 'readonly'\n", 1, "gateway.clients.a: needs its token"),
        ("[gateway.clients.a]\ntoken = 'short'\n", 2, "gateway.clients.a.token: the token is 5"),
        (
            "[gateway.clients.a]\ntoken = 'x' \nprofile = 'redonly'\n".replace("'x' ", f"'{OPS}'"),
            3,
            "gateway.clients.a.profile: Unknown profile 'redonly'. Known profiles: full",
        ),
        (
            f"[gateway.clients.a]\ntoken = '{OPS}'\n[gateway.clients.b]\ntoken = '{OPS}'\n",
            4,
            "gateway.clients.b.token: the same token as client 'a'; each needs its own.",
        ),
        (
            f"[gateway.clients.a]\ntoken = '{OPS}'\ndeny = ['mail_*']\n",
            3,
            "gateway.clients.a.deny: 'mail_*' can match no tool",
        ),
        (
            f"[gateway.clients.a]\ntoken = '{OPS}'\nrole = 'x'\n",
            3,
            "gateway.clients.a.role: unknown key; valid keys: deny, max_active, max_requests, "
            "max_sessions, metrics, profile, token",
        ),
        (f"[gateway.clients.'a b']\ntoken = '{OPS}'\n", 1, 'gateway.clients."a b": a client\'s'),
        (
            f"[gateway]\ntoken = 'one'\n[gateway.clients.a]\ntoken = '{OPS}'\n",
            2,
            "gateway.token: set token (one for everyone) or clients (one each), not both.",
        ),
        ("[gateway]\nheader_timeout = 0\n", 2, "gateway.header_timeout: must be a number of"),
        ("[gateway]\nmax_requests = -1\n", 2, "gateway.max_requests: must be a whole number"),
    ],
)
def test_client_tables_are_checked_with_file_line_and_key(
    mcp_kit: Any, extra: str, line: int, problem: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(extra + mcp_kit.stdio_upstream("notes"), source="g.toml")
    assert str(caught.value).startswith(f"g.toml:{line}: {problem}")


def test_clients_read_their_tokens_from_the_environment(mcp_kit: Any, tokens: None) -> None:
    config = _config(mcp_kit, clients="max_requests = 3")
    support, ops = config.gateway.clients
    assert (support.name, support.token, support.profile) == ("support", SUPPORT, "readonly")
    assert support.deny == ("notes_get_*",) and support.max_requests == 3
    assert (ops.name, ops.token, ops.profile, ops.max_requests) == ("ops", OPS, None, None)
    assert SUPPORT not in repr(config.gateway) and OPS not in repr(config.gateway)


def test_tokens_are_compared_in_constant_time_against_every_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import hmac

    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", counting)
    auth = ClientAuth(None, {"a": "a" * 20, "b": "b" * 20, "c": "c" * 20})
    assert auth.identify(b"Bearer " + b"a" * 20) == "a"  # the first one matches: 3 compared
    assert auth.identify(b"bearer " + b"c" * 20) == "c"
    assert auth.identify(b"Bearer " + b"a" * 19) is None
    assert auth.identify(b"Basic " + b"a" * 20) is None
    assert len(compared) == 9  # every client each time, digests of one length
    assert {len(a) for a, _ in compared} == {32}


# -- clients over HTTP ------------------------------------------------------------------------


async def test_each_client_sees_and_runs_what_its_profile_and_deny_allow(
    mcp_kit: Any, tokens: None
) -> None:
    seen: list[tuple[str | None, str]] = []

    def client_listeners(client: str) -> list[Any]:  # the per-client metrics hook
        return [lambda event: seen.append((client, type(event).__name__))]

    gateway = Gateway(_config(mcp_kit), client_listeners=client_listeners)
    async with gateway, serving(gateway) as url:
        async with httpx2.AsyncClient(timeout=30) as http:
            for token in (None, "wrong", SUPPORT[:-1], f"{SUPPORT} x"):
                body = _call("notes_echo", token="t")
                refused = await http.post(url, json=body, headers=_modern(token))
                assert refused.status_code == 401, token
            lower = {**_modern(None), "authorization": f"bearer {OPS}"}  # the scheme's case
            assert (
                await http.post(url, json=_call("notes_echo", token="t"), headers=lower)
            ).json()["result"]["content"][0]["text"] == "t"
        async with _client(url, SUPPORT) as support, _client(url, OPS) as ops:
            error, toc = await mcp_kit.call(support, "discover_tools", {"query": "note"})
            listed = json.dumps(toc)
            assert "notes_list_notes" in listed
            assert "notes_get_note" not in listed and "notes_delete_note" not in listed
            for tool in ("notes_get_note", "notes_delete_note"):
                error, value = await mcp_kit.execute(support, tool, title="a")
                assert error and value["error"] == "not_permitted", value
            error, value = await mcp_kit.execute(ops, "notes_get_note", title="nothing")
            assert value.get("error") != "not_permitted"
    assert {name for name, _ in seen} == {"support", "ops"}
    # Each client's listener hears its own calls: support's two refusals, none of ops'.
    assert [name for name, kind in seen if kind == "PolicyDenied"] == ["support", "support"]
    assert ("ops", "CallFinished") in seen


async def test_a_call_names_its_client_to_its_tool_and_its_request_span(
    mcp_kit: Any, tokens: None
) -> None:
    """The client's name travels with the call, read from the request (no ambient state): a
    tool that takes the call's context reads it, the request's span carries it, and a call
    served by the gateway's own token names nobody."""
    from support.otel import OtelKit, global_providers

    from toolmgmt_core import CallContext
    from toolmgmt_core.integration import NO_CONTEXT

    def whoami(toolmgmt_context: CallContext = NO_CONTEXT) -> str:
        """Say which client called."""
        return toolmgmt_context.client or "nobody"

    kit = OtelKit()
    with global_providers(kit):
        async with Gateway(_config(mcp_kit)) as gateway, serving(gateway) as url:
            gateway.catalog.add_function(whoami)
            async with httpx2.AsyncClient(timeout=30) as http:
                answers = [
                    (await http.post(url, json=_call("whoami"), headers=_modern(token))).json()
                    for token in (OPS, SUPPORT)
                ]
    texts = [a["result"]["content"][0]["text"] for a in answers]
    assert texts[0] == "ops", answers[0]
    assert json.loads(texts[1])["error"] == "not_permitted"  # support's readonly profile
    calls = [s for s in kit.spans() if s.name == "tools/call execute_tool"]
    assert [s.attributes.get("toolmgmt.client") for s in calls] == ["ops", "support"]
    assert [s.attributes.get("error.type") for s in calls] == [None, "not_permitted"]


def test_the_log_filter_names_the_client_a_line_was_logged_for() -> None:
    """``%(client_note)s``: the client a log call passed (``extra``), else nobody."""
    from toolmgmt_gateway.clients import ClientLogFilter

    formatter = logging.Formatter("%(name)s: %(client_note)s%(message)s")
    lines = []
    for extra in ({"client": "support"}, {"client": None}, {}):
        record = logging.LogRecord("toolmgmt_mcp", logging.WARNING, __file__, 1, "m", (), None)
        record.__dict__.update(extra)
        assert ClientLogFilter().filter(record)
        lines.append((formatter.format(record), record.client))  # type: ignore[attr-defined]
    assert lines == [
        ("toolmgmt_mcp: client support: m", "support"),
        ("toolmgmt_mcp: m", ""),
        ("toolmgmt_mcp: m", ""),
    ]


async def test_a_conversation_belongs_to_the_client_that_opened_it(
    mcp_kit: Any, tokens: None
) -> None:
    async with Gateway(_config(mcp_kit)) as gateway, serving(gateway) as url:
        async with httpx2.AsyncClient(timeout=30) as http:
            ops = {**ACCEPT, "authorization": f"Bearer {OPS}"}
            opened = await http.post(url, json=INITIALIZE, headers=ops)
            session = opened.headers["mcp-session-id"]
            mine = {**ops, "mcp-session-id": session}
            assert (await http.post(url, json=LIST, headers=mine)).status_code == 200
            theirs = {**mine, "authorization": f"Bearer {SUPPORT}"}
            refused = await http.post(url, json=LIST, headers=theirs)
            assert refused.status_code == 404 and "Session not found" in refused.text
            assert (await http.delete(url, headers=theirs)).status_code == 404
            assert (await http.delete(url, headers=mine)).status_code in (200, 204)


async def test_with_a_store_a_conversation_is_keyed_by_its_client_name(
    mcp_kit: Any, tokens: None, redis_url: str
) -> None:
    redis = pytest.importorskip("redis")
    tail = f'\n[store]\nsessions = "{redis_url}"\nsession_ttl = 60\n'
    config = _config(mcp_kit, gateway="session_result_budget = 5000", tail=tail)
    async with Gateway(config) as gateway, serving(gateway) as url:
        async with httpx2.AsyncClient(timeout=30) as http:
            ops = {**ACCEPT, "authorization": f"Bearer {OPS}"}
            session = (await http.post(url, json=INITIALIZE, headers=ops)).headers["mcp-session-id"]
            theirs = {**ops, "mcp-session-id": session, "authorization": f"Bearer {SUPPORT}"}
            assert (await http.post(url, json=LIST, headers=theirs)).status_code == 404
            answered = await http.post(
                url, json=_call("notes_echo", token="k"), headers=_modern(OPS)
            )
            assert answered.status_code == 200
        with redis.Redis.from_url(redis_url) as raw:
            keys = {k.decode() for k in raw.keys("toolmgmt:session:{mcp-p-*}")}
        # A 2026 caller's conversation: under its client's name, not its token.
        assert keys == {"toolmgmt:session:{" + principal_key("client:ops") + "}"}


# -- admission -----------------------------------------------------------------------------------


async def test_past_its_share_or_the_replica_limit_a_request_gets_503_and_runs_nothing(
    mcp_kit: Any, tokens: None, caplog: pytest.LogCaptureFixture
) -> None:
    config = _config(mcp_kit, "max_requests = 2", clients="max_requests = 1", profile="full")
    caplog.set_level(logging.WARNING, logger="toolmgmt_mcp")
    async with Gateway(config) as gateway, serving(gateway) as url:
        async with httpx2.AsyncClient(timeout=30) as http:

            async def slow(token: str, key: str) -> None:
                body = _call("notes_slow_echo", token=key, delay=1.5)
                answers[key] = await http.post(url, json=body, headers=_modern(token))

            answers: dict[str, Any] = {}
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(slow, SUPPORT, "s1")
                await anyio.sleep(0.4)
                over = await http.post(
                    url, json=_call("notes_echo", token="s2"), headers=_modern(SUPPORT)
                )
                other = await http.post(
                    url, json=_call("notes_echo", token="o1"), headers=_modern(OPS)
                )
                tasks.start_soon(slow, OPS, "o2")
                await anyio.sleep(0.4)
                full = await http.post(
                    url, json=_call("notes_echo", token="o3"), headers=_modern(OPS)
                )
            health = await http.get(url.replace("/mcp", "/healthz"))
    assert over.status_code == 503 and over.headers["retry-after"] == "2"  # [store] timeout 2 s
    message = over.json()["error"]["message"]
    assert "client 'support' is at its share of this replica (1 requests at once)" in message
    assert "nothing of this request ran" in message
    assert other.status_code == 200 and "o1" in other.text  # another client is served
    assert full.status_code == 503 and "its limit of 2 requests" in full.json()["error"]["message"]
    assert {k: v.status_code for k, v in answers.items()} == {"s1": 200, "o2": 200}
    assert health.status_code == 200  # the health check is never refused
    assert "client support: refused 1 request(s) with 503" not in caplog.text  # no CLI filter
    assert "refused 1 request(s) with 503: client 'support' is at its share" in caplog.text


async def test_past_max_sessions_a_new_session_gets_503_with_retry_after(
    mcp_kit: Any, tokens: None
) -> None:
    config = _config(mcp_kit, gateway="max_sessions = 1", tail="\n[store]\ntimeout = 3.5\n")
    async with Gateway(config) as gateway, serving(gateway) as url:
        async with httpx2.AsyncClient(timeout=30) as http:
            ops = {**ACCEPT, "authorization": f"Bearer {OPS}"}
            first = await http.post(url, json=INITIALIZE, headers=ops)
            second = await http.post(url, json=INITIALIZE, headers=ops)
    assert first.status_code == 200
    assert second.status_code == 503 and second.headers["retry-after"] == "4"
    assert "Too many open sessions" in second.text


# -- reading deadline, real sockets ----------------------------------------------------------------


async def _closed_by_server(stream: Any, within: float) -> bool:
    """Whether the server closes ``stream`` within ``within`` seconds (EOF or a reset)."""
    with anyio.move_on_after(within):
        try:
            while await stream.receive(65536):
                pass
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
            pass
        return True
    return False


async def test_the_reading_deadline_cuts_slow_requests_not_slow_answers(
    mcp_kit: Any, tokens: None
) -> None:
    """(500 slow connections at once: docs/security.md, attack 14a.)"""
    config = _config(mcp_kit, gateway="header_timeout = 1")
    async with Gateway(config) as gateway, serving(gateway) as url:
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        slow = await anyio.connect_tcp("127.0.0.1", port)
        await slow.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and no more
        started = time.monotonic()
        async with httpx2.AsyncClient(timeout=30) as http:
            # A call longer than the deadline is the app's time, not cut; the kept-alive
            # connection then serves a second request.
            body = _call("notes_slow_echo", token="long", delay=1.6)
            long = await http.post(url, json=body, headers=_modern(OPS))
            quick = _call("notes_echo", token="again")
            again = await http.post(url, json=quick, headers=_modern(OPS))
        cut = await _closed_by_server(slow, 3.0)
        took = time.monotonic() - started
        await slow.aclose()
    assert long.status_code == 200 and "long" in long.text
    assert again.status_code == 200 and "again" in again.text
    assert cut and took < 4, took


def test_each_client_gets_half_a_replica_unless_its_table_says(mcp_kit: Any, tokens: None) -> None:
    from toolmgmt_gateway.admission import client_shares, retry_after

    assert client_shares(_config(mcp_kit).gateway) == {"support": 32, "ops": 32}
    shares = client_shares(_config(mcp_kit, "max_requests = 10", "max_requests = 3").gateway)
    assert shares == {"support": 3, "ops": 5}
    assert client_shares(_config(mcp_kit, "max_requests = 0").gateway) == {}  # no limit at all
    assert (retry_after(0.2), retry_after(2.0), retry_after(2.5)) == (1, 2, 3)


def test_the_served_gateway_names_the_client_in_its_log(
    mcp_kit: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``toolmgmt serve`` (its log format): a line logged while serving a client names it."""
    from toolmgmt_deploy.replica import LocalGateway

    config = tmp_path / "gateway.toml"
    config.write_text(
        '[gateway]\nmax_requests = 4\n[gateway.clients.support]\ntoken_env = "FD_SUPPORT"\n'
        'max_requests = 1\n[gateway.clients.ops]\ntoken_env = "FD_OPS"\n\n'
        + mcp_kit.stdio_upstream("notes")
    )
    env = {**os.environ, "FD_SUPPORT": SUPPORT, "FD_OPS": OPS}
    with LocalGateway(config, env=env) as replica:
        url = replica.url
        assert url is not None

        async def scenario() -> int:
            async with httpx2.AsyncClient(timeout=30) as http:
                async with anyio.create_task_group() as tasks:
                    slow = _call("notes_slow_echo", token="s", delay=1.5)
                    tasks.start_soon(lambda: http.post(url, json=slow, headers=_modern(SUPPORT)))
                    await anyio.sleep(0.5)
                    quick = _call("notes_echo", token="x")
                    over = await http.post(url, json=quick, headers=_modern(SUPPORT))
                return over.status_code

        assert anyio.run(scenario) == 503
        deadline = time.monotonic() + 10
        while not any("refused" in line for line in replica.log) and time.monotonic() < deadline:
            time.sleep(0.05)
    (line,) = [line for line in replica.log if "refused" in line and "with 503" in line]
    assert "WARNING toolmgmt_mcp: client support: refused 1 request(s) with 503" in line, line
