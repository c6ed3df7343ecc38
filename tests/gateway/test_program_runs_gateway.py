"""Code mode at the gateway over MCP 2026-07-28 (HTTP, a real MCP client): a program's run has
an identity and its own sealed state, which rides in the request state (issue 40, items 1-3).
Each test drives an upstream whose tools count their runs (``ops_server.py``)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest

pytest.importorskip("mcp")
pytest.importorskip("pydantic_monty")

import httpx2  # noqa: E402
import mcp.types as t  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from support.mcp_http import serving  # noqa: E402
from support.upstreams import SERVERS  # noqa: E402
from toolmgmt_gateway import Gateway, parse_config  # noqa: E402
from toolmgmt_gateway.conversations import principal_key  # noqa: E402

from toolmgmt_core._calls.code import PausedProgram, ProgramToolError, run_program  # noqa: E402
from toolmgmt_core._calls.code.limits import CodeLimits  # noqa: E402

YES = {"toolmgmt_approval": t.ElicitResult(action="accept", content={})}


def ops_config() -> Any:
    text = (
        '[gateway]\nmode = "code"\ntransport = "http"\nport = 0\n'
        f'state_key = "{"k" * 40}"\n'
        f"[upstreams.ops]\ncommand = {json.dumps(sys.executable)}\n"
        f'args = [{json.dumps(str(SERVERS / "ops_server.py"))}]\nprefix = ""\n'
    )
    return parse_config(text, source="gateway.toml")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def gateway_url() -> AsyncIterator[tuple[Gateway, str]]:
    gateway = Gateway(ops_config())
    async with gateway, serving(gateway) as url:
        yield gateway, url


def client(url: str, token: str | None = None, answer: Any = None) -> Client:
    """A 2026 client (``token``: its Authorization, None: anonymous); ``answer`` answers its
    user's questions (None: declines)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers)

    async def elicit(context: Any, params: t.ElicitRequestParams) -> t.ElicitResult:
        if answer is None:
            return t.ElicitResult(action="decline")
        return await answer(params)

    return Client(streamable_http_client(url, http_client=http), elicitation_callback=elicit)


def text(result: Any) -> str:
    return str(result.content[0].text)


async def runs(session: Any) -> dict[str, Any]:
    found = await session.call_tool("run_code", {"code": "await runs()"})
    value = json.loads(text(found))
    return json.loads(value) if isinstance(value, str) else value


async def paused(session: Any, code: str) -> t.InputRequiredResult:
    result = await session.call_tool("run_code", {"code": code}, allow_input_required=True)
    assert isinstance(result, t.InputRequiredResult), result
    return result


def question(result: t.InputRequiredResult) -> str:
    return str(result.input_requests["toolmgmt_approval"].params.message)


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_an_approval_carried_through_a_question_approves_no_other_call() -> None:
    asked: list[str] = []

    async def answer(params: t.ElicitRequestParams) -> t.ElicitResult:
        asked.append(params.message)
        if "'wipe'" in params.message and "staging" in params.message:
            return t.ElicitResult(action="accept", content={"target": "staging"})
        if "Go on?" in params.message:
            return t.ElicitResult(action="accept", content={"ok": True})
        return t.ElicitResult(action="decline")

    code = 'await wipe(target="staging")\nprint(await confirm(question="go on?"))\n' + "".join(
        f"try:\n    await {call}\nexcept PermissionError:\n    print('refused')\n"
        for call in ("wipe(target='prod-db')", "drop_all()", "purge(paths=['/'])")
    )
    async with gateway_url() as (_, url), client(url, "ada", answer) as ada:
        result = await ada.call_tool("run_code", {"code": code})
        ran = await runs(ada)
    assert text(result).count("refused") == 3, text(result)
    assert ran.get("wipe") == ["staging"] and "drop_all" not in ran and "purge" not in ran
    # Each later destructive call was asked about on its own.
    assert [m for m in asked if "prod-db" in m] and [m for m in asked if "'drop_all'" in m]
    assert [m for m in asked if "'purge'" in m]


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_newer_pauses_never_restart_a_program_under_its_old_approval() -> None:
    code = (  # a result is text or parsed JSON, whichever the gateway hands a program
        "import json\nt = await next_target()\nt = json.loads(t) if isinstance(t, str) else t\n"
        "print(await purge(paths=t))"
    )
    async with gateway_url() as (_, url), client(url, "ada") as ada:
        first = await paused(ada.session, code)
        for n in range(8):  # more paused programs in the conversation than it used to keep
            await paused(ada.session, f"await purge(paths=['/tmp/{n}'])")
        done = await ada.session.call_tool(
            "run_code", {"code": code}, input_responses=YES, request_state=first.request_state
        )
        ran = await runs(ada.session)
    assert text(done) == "purged 1", text(done)
    assert ran["next_target"] == [None] and ran["purge"] == [["./cache"]]


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_new_run_code_call_with_the_same_code_is_a_fresh_run() -> None:
    code = "b = int(await balance())\nprint(await transfer(amount=b // 2))"
    async with gateway_url() as (_, url), client(url, "ada") as ada:
        stale = await paused(ada.session, code)
        assert "50" in question(stale)
        await ada.session.call_tool("run_code", {"code": "await set_balance(amount=1000)"})
        fresh = await paused(ada.session, code)
        assert '"amount":500' in question(fresh), question(fresh)
        done = await ada.session.call_tool(
            "run_code", {"code": code}, input_responses=YES, request_state=fresh.request_state
        )
        ran = await runs(ada.session)
    assert text(done) == "moved 500"
    assert ran["transfer"] == [500] and ran["balance"] == [None, None]


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_second_anonymous_caller_never_resumes_the_first_callers_program() -> None:
    async def accept(params: t.ElicitRequestParams) -> t.ElicitResult:
        return t.ElicitResult(action="accept", content={"target": "a-db"})

    code = 'print(await stamp())\nprint(await wipe(target="a-db"))'
    async with gateway_url() as (_, url), client(url) as first, client(url, None, accept) as other:
        pause = await paused(first.session, code)
        theirs = await other.call_tool("run_code", {"code": code})
        assert text(theirs) == "stamp 2\nwiped a-db", text(theirs)  # a run of its own
        mine = await first.session.call_tool(
            "run_code", {"code": code}, input_responses=YES, request_state=pause.request_state
        )
        ran = await runs(first.session)
    assert text(mine) == "stamp 1\nwiped a-db", text(mine)
    assert ran["stamp"] == [None, None] and ran["wipe"] == ["a-db", "a-db"]


class _Stop(Exception):
    pass


class _Host:
    """Pauses a program at its first call (to take a real snapshot for the forgery)."""

    async def call(self, name: str, arguments: Any, index: int) -> Any:
        raise _Stop

    async def search(self, query: Any) -> Any:
        raise ProgramToolError("RuntimeError", "no search")

    def parameter_names(self, name: str) -> list[str]:
        return ["target"] if name == "wipe" else []


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_forged_program_with_the_right_code_digest_never_runs() -> None:
    other = 'await wipe(target="x")\nawait export_all()'
    kept: list[PausedProgram] = []

    async def keep(program: PausedProgram) -> None:
        kept.append(program)

    with pytest.raises(_Stop):
        await run_program(other, _Host(), CodeLimits(), on_pause=keep)
    victim = "print(int(await balance()))"
    digest = hashlib.sha256(victim.encode()).hexdigest()[:32]

    async def accept(params: t.ElicitRequestParams) -> t.ElicitResult:
        return t.ElicitResult(action="accept", content={"target": "x"})

    async with gateway_url() as (gateway, url), client(url, "eve", accept) as eve:
        await eve.call_tool("run_code", {"code": "1"})
        # Someone who can write the conversation's state plants the other program's snapshot
        # under the victim code's digest.
        store, key = gateway.manager.session_store, principal_key("Bearer eve")
        stored = await asyncio.to_thread(store.load, key)
        state = dict(stored.state) if stored is not None else {"version": 1, "mode": "code"}
        state["programs"] = {digest: kept[0].to_json()}
        await asyncio.to_thread(store.save, key, state, version=stored.version if stored else 0)
        result = await eve.call_tool("run_code", {"code": victim})
        ran = await runs(eve)
    assert text(result) == "100", text(result)
    assert "wipe" not in ran and "export_all" not in ran
    assert base64.b64decode(kept[0].snapshot)  # a real snapshot was planted


def test_paused_programs_are_sealed_with_the_replicas_state_key() -> None:
    from toolmgmt_gateway.state_keys import SharedKeyCodec, run_state_key

    from toolmgmt_core._calls.code.runs import RunSeal
    from toolmgmt_core._stores.base import InMemorySessionStore

    assert run_state_key(ops_config()) == "k" * 40  # the configured key, first of them
    store = InMemorySessionStore()
    replicas = [SharedKeyCodec(store), SharedKeyCodec(store)]  # no key configured
    unkeyed = parse_config(
        f"[upstreams.ops]\ncommand = {json.dumps(sys.executable)}\n", source="gateway.toml"
    )
    keys = [run_state_key(unkeyed, replica) for replica in replicas]
    assert keys[0]() == keys[1]() == replicas[1].key()  # one key, made by the first
    assert replicas[0].unseal(replicas[1].seal(b"x")) == b"x"
    assert RunSeal(keys[0])._keys() == RunSeal(keys[1])._keys()


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_an_answer_to_an_upstreams_question_reaches_the_call_that_asked() -> None:
    # Two gathered calls of one tool each ask their user; the answer given to one question is
    # handed to the call that asked it, not to whichever of the two asks again first.
    code = (
        "import asyncio\n"
        'r = await asyncio.gather(confirm(question="staging"), confirm(question="prod"))\n'
        'print(r[0], "|", r[1])'
    )
    async with gateway_url() as (_, url), client(url, "ada") as ada:
        for _ in range(3):  # the calls run again in either order
            step = await paused(ada.session, code)
            asked = []
            while isinstance(step, t.InputRequiredResult) and len(asked) < 4:
                message = str(step.input_requests["go"].params.message)
                asked.append(message)
                ok = t.ElicitResult(action="accept", content={"ok": "staging" in message})
                step = await ada.session.call_tool(
                    "run_code",
                    {"code": code},
                    input_responses={"go": ok},
                    request_state=step.request_state,
                    allow_input_required=True,
                )
            assert sorted(m.split("] ")[-1] for m in asked) == ["Go on? (prod)", "Go on? (staging)"]
            assert text(step) == "confirmed: True | confirmed: False", (text(step), asked)


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_question_to_a_program_too_large_to_keep_never_restarts_it() -> None:
    # The program's state is over the sealed snapshot's limit when the upstream asks: nothing
    # can carry it to the retry, so the call ends there rather than the retry starting the
    # program over (its calls before the question running a second time).
    code = 'print(await stamp())\nx = "a" * 2_500_000\nprint(await confirm(question="go"))'
    async with gateway_url() as (_, url), client(url, "ada") as ada:
        first = await ada.session.call_tool("run_code", {"code": code}, allow_input_required=True)
        ran = await runs(ada.session)
    assert isinstance(first, t.CallToolResult) and first.is_error, first
    assert "too large to keep" in text(first) and "run it again" not in text(first), text(first)
    assert ran["stamp"] == [None] and "confirm" not in ran


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_used_approval_is_never_forgotten_for_newer_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Without a store the used approvals and resumed states are kept in the process, bounded:
    # newer ones filling the bound must not push out one still replayable (its request state
    # lives 10 minutes), or replaying it after a flood runs the approved wipe again.
    import toolmgmt_core._calls.approval as approval

    monkeypatch.setattr(approval, "USED_KEPT", 3)
    code = 'print(await wipe(target="a-db"))'
    async with gateway_url() as (_, url), client(url, "ada") as ada:
        first = await paused(ada.session, code)
        again = {"code": code}
        done = await ada.session.call_tool(
            "run_code", again, input_responses=YES, request_state=first.request_state
        )
        assert text(done) == "wiped a-db", text(done)
        for n in range(3):  # newer approvals, each used: the bound is full
            flood = f'print(await wipe(target="t{n}"))'
            step = await paused(ada.session, flood)
            await ada.session.call_tool(
                "run_code", {"code": flood}, input_responses=YES, request_state=step.request_state
            )
        replay = await ada.session.call_tool(
            "run_code", again, input_responses=YES, request_state=first.request_state
        )
        ran = await runs(ada.session)
    assert replay.is_error and "resumed already" in text(replay), text(replay)
    assert ran["wipe"].count("a-db") == 1, ran


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_an_approval_shows_every_argument_its_form_cannot_carry() -> None:
    # A list of paths is no form field: the question's text is all the user sees of it, so
    # it is never cut where the model put what matters last; past what a question shows in
    # full, nothing is asked and nothing runs.
    asked: list[str] = []

    async def accept(params: t.ElicitRequestParams) -> t.ElicitResult:
        asked.append(params.message)
        return t.ElicitResult(action="accept", content={})

    hidden = [f"./cache/{n:04}" for n in range(40)] + ["/prod"]
    flood = [f"./cache/{n:05}" for n in range(300)] + ["/backups"]
    async with gateway_url() as (_, url), client(url, "ada", accept) as ada:
        shown = await ada.call_tool("run_code", {"code": f"print(await purge(paths={hidden}))"})
        refused = await ada.call_tool("run_code", {"code": f"await purge(paths={flood})"})
        ran = await runs(ada)
    assert text(shown) == "purged 41" and len(asked) == 1 and '"/prod"' in asked[0], asked
    assert "PermissionError" in text(refused) and "shows in full" in text(refused)
    assert ran["purge"] == [hidden] and len(asked) == 1


@pytest.mark.anyio
@pytest.mark.timeout(120)
async def test_a_replica_without_a_shared_store_never_resumes_another_replicas_program() -> None:
    # Two replicas with one state_key but no [store]: each records the programs it resumed in
    # its own memory, so neither can tell whether the other resumed one already; a retry replayed
    # on the other (a client retrying after a 502 behind a load balancer) must not run the
    # approved wipe again.
    code = 'print(await wipe(target="prod"))'
    async with AsyncExitStack() as stack:
        urls = []
        for _ in range(2):
            gateway = await stack.enter_async_context(Gateway(ops_config()))
            urls.append(await stack.enter_async_context(serving(gateway)))
        async with client(urls[0], "ada") as ada:
            first = await paused(ada.session, code)
            again = {"code": code}
            done = await ada.session.call_tool(
                "run_code", again, input_responses=YES, request_state=first.request_state
            )
        async with client(urls[1], "ada") as other:
            replay = await other.session.call_tool(
                "run_code", again, input_responses=YES, request_state=first.request_state
            )
            ran = [await runs(other.session)]
        async with client(urls[0], "ada") as ada:
            ran.append(await runs(ada.session))
    assert text(done) == "wiped prod"
    assert replay.is_error and "another process" in text(replay), text(replay)
    assert [r.get("wipe") for r in ran] == [None, ["prod"]]
