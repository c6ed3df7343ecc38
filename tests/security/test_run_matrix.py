"""Every way a program runs against every guard of its run (issue 40, item 9): each cell drives
the path for real and checks what ran (the tools count their runs and keep their arguments).

The path matrix (``test_path_matrix.py``) checks the guards of one call on every way to a tool;
this one checks what belongs to a program's run: a new ``run_code`` call is a fresh run, a paused
run resumes only for its own caller, on any worker, once, from its own sealed state; a yes is
bound to one call. A row is a :class:`RunPath` driver (``start``, ``resume``, ``set_balance``,
``runs``); a cell a path cannot express says why (``n/a: ...``). An adapter adds its row with a
driver of its own::

    python tests/security/test_run_matrix.py            # run every cell, print the table
    python tests/security/test_run_matrix.py --write    # put the table in docs/security.md
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "security.md"
BEGIN, END = "<!-- run-matrix:begin -->", "<!-- run-matrix:end -->"
KEY = "k" * 40
BANK = "b = int(await balance())\nprint(await transfer(amount=b // 2))"
"""Reads a balance, then moves half of it (the move needs approval)."""
TWO_STEPS = "b = int(await balance())\nprint(await transfer(amount=1))"
CLEAN = (
    "import json\nt = await next_target()\nt = json.loads(t) if isinstance(t, str) else t\n"
    "print(await purge(paths=t))"
)
"""Cleans up what ``next_target`` names: ``./cache`` the first time, production after."""
CARRY = 'await wipe(target="staging")\nprint(await confirm(question="go on?"))\n' + "".join(
    f"try:\n    await {call}\nexcept PermissionError:\n    print('refused')\n"
    for call in ("wipe(target='prod-db')", "drop_all()", "purge(paths=['/'])")
)
"""An approved wipe, an upstream's question, then three more destructive calls."""
GATHERED = (
    "import asyncio\n"
    "r = await asyncio.gather(transfer(amount=5), balance(), transfer(amount=7),\n"
    "    transfer(amount=5))\n"
    "print(r[0], r[2], r[3], int(r[1]))"
)
"""Three gathered moves that need approval (two alike) around a read."""
LARGE = 'print(await balance())\nx = "a" * 2_500_000\nprint(await {})'
"""A read, then a call that pauses while the program holds more than a sealed state keeps."""
YES, NO, GO, SWAP = "yes", "no", "go", "swap"
"""Answers: approve, decline, answer an upstream's question, an edit naming another tool."""


@dataclass
class Step:
    """Where a run stands: done (its text), or paused (what was asked, and how to resume)."""

    text: str = ""
    pause: Any = None
    asked: str = ""
    """The question: the tool and its arguments (an approval), or an upstream's question."""


# -- in process ----------------------------------------------------------------------------------


class Ops:
    """The ops upstream's tools (tests/adapters/mcp/servers/ops_server.py) in process."""

    def __init__(self) -> None:
        self.calls: dict[str, list[Any]] = {}
        self.balance = 100
        self.targets = 0

    def catalog(self) -> Any:
        from toolmgmt_core import ToolAnnotations, ToolCatalog

        ops = self

        def balance() -> int:
            """The balance."""
            ops.calls.setdefault("balance", []).append(None)
            return ops.balance

        def transfer(amount: int) -> str:
            """Move money out."""
            ops.calls.setdefault("transfer", []).append(amount)
            return f"moved {amount}"

        def next_target() -> str:
            """The paths to clean up next (a JSON list)."""
            ops.calls.setdefault("next_target", []).append(None)
            ops.targets += 1
            return json.dumps(["./cache"] if ops.targets == 1 else ["/prod", "/backups"])

        def purge(paths: list[str]) -> str:
            """Delete these paths."""
            ops.calls.setdefault("purge", []).append(paths)
            return f"purged {len(paths)}"

        def export_all() -> str:
            """Export every record."""
            ops.calls.setdefault("export_all", []).append(None)
            return "exported"

        catalog = ToolCatalog()
        destructive = ToolAnnotations(destructive=True)
        for function in (balance, next_target, export_all):
            catalog.add_function(function)
        for function in (transfer, purge):
            catalog.add_function(function, annotations=destructive)
        return catalog


class Paused(Exception):  # noqa: N818 - a framework's pause
    """The in-process approver's pause, as a framework's."""


class InProcessPath:
    """``run_code`` in process, a framework's approver pausing each approval; the door keeps
    the sealed state in its own state (``keeps=True``) or leaves it to the conversation."""

    only = {
        "carried_approval": "n/a: no upstream asks questions in process",
    }

    def __init__(self, *, keeps: bool) -> None:
        from toolmgmt_core import Execution, ToolManager
        from toolmgmt_core._stores.base import InMemorySessionStore

        self.keeps = keeps
        self.ops = Ops()
        store = InMemorySessionStore()
        catalog = self.ops.catalog()
        # Two workers over one store, sharing the key that seals paused runs.
        self.workers = [
            ToolManager(catalog, mode="code", session_store=store, execution=Execution(run_key=KEY))
            for _ in range(2)
        ]
        self.calls = 0

    async def _run(
        self,
        code: str,
        call_id: str,
        caller: str,
        answer: str | None,
        state: str | None,
        worker: int = 0,
    ) -> Step:
        from toolmgmt_core import ApprovalEdit
        from toolmgmt_core._calls.context import CallContext
        from toolmgmt_core._runtime.control import passthrough

        asked: list[Any] = []

        def approve(request: Any) -> Any:
            asked.append(request)
            if answer is None or len(asked) > 1:
                raise Paused
            if answer == SWAP:
                return ApprovalEdit(dict(request.arguments), tool_name="export_all")
            return answer == YES

        session = self.workers[worker].session("conversation")
        context = CallContext(
            approver=approve, principal=caller, resume_state=state, keeps_state=self.keeps
        )
        with passthrough(Paused):
            try:
                result = await session.call(
                    "run_code", {"code": code}, call_id=call_id, context=context
                )
            except Paused:
                request = asked[-1]
                question = f"{request.tool.name} {json.dumps(dict(request.arguments))}"
                return Step(pause=(code, call_id, request.resume_state), asked=question)
        return Step(text=str(result.content))

    async def start(self, code: str, caller: str = "ada") -> Step:
        self.calls += 1
        return await self._run(code, f"call-{self.calls}", caller, None, None)

    async def resume(
        self,
        step: Step,
        answer: str,
        *,
        caller: str = "ada",
        other: bool = False,
        tamper: bool = False,
    ) -> Step:
        code, call_id, state = step.pause
        if tamper:
            state = _tampered(state)
            if not self.keeps:  # the door keeps none: the conversation's copy is changed
                await self._tamper_kept(call_id)
        given = state if self.keeps else None
        return await self._run(code, call_id, caller, answer, given, worker=1 if other else 0)

    async def _tamper_kept(self, call_id: str) -> None:
        store = self.workers[0].session_store
        stored = store.load("conversation")
        assert stored is not None
        state = dict(stored.state)
        state["programs"] = {k: _tampered(v) for k, v in state["programs"].items()}
        store.save("conversation", state, version=stored.version)

    async def set_balance(self, amount: int) -> None:
        self.ops.balance = amount

    async def runs(self) -> dict[str, list[Any]]:
        return self.ops.calls


def _tampered(sealed: str) -> str:
    body, tag = sealed.rsplit(".", 1)
    return f"{body[:-2]}{'A' if body[-2] != 'A' else 'B'}{body[-1]}.{tag}"


# -- the MCP gateway -----------------------------------------------------------------------------


def ops_config(extra: str = "") -> Any:
    from support.upstreams import SERVERS
    from toolmgmt_gateway import parse_config

    text = (
        f'[gateway]\nmode = "code"\ntransport = "http"\nport = 0\nstate_key = "{KEY}"\n'
        f"[upstreams.ops]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(ROOT / 'tests/adapters/mcp/servers/ops_server.py'))}]\n"
        f'prefix = ""\n{extra}'
    )
    assert SERVERS.exists()
    return parse_config(text, source="gateway.toml")


class GatewayRunPath:
    """A 2026 MCP client over HTTP calling ``run_code`` at the gateway in code mode; approvals
    and an upstream's questions come back as input-required results, answered by retries
    (``replicas=2``: two gateways sharing a Redis, each retry on the other one)."""

    only = {"edit_swap": "n/a: the question's fields are the call's arguments; no tool to name"}

    def __init__(self, *, replicas: int = 1, redis_url: str | None = None) -> None:
        self.replicas = replicas
        self.redis_url = redis_url
        self.answers: list[str] = []
        """What the client's user answers mid-call (a 2025 client's questions)."""
        self.mode = "auto"

    async def __aenter__(self) -> GatewayRunPath:
        from support.mcp_http import serving
        from toolmgmt_gateway import Gateway

        store = f'[store]\nsessions = "{self.redis_url}"\n' if self.redis_url else ""
        self.stack = AsyncExitStack()
        self.urls = []
        for _ in range(self.replicas):
            gateway = await self.stack.enter_async_context(Gateway(ops_config(store)))
            self.urls.append(await self.stack.enter_async_context(serving(gateway)))
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stack.aclose()

    async def _call(self, caller: str, replica: int, **call: Any) -> Step:
        import httpx2
        import mcp.types as t
        from mcp import Client, MCPError
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {caller}"})
        url = self.urls[replica % len(self.urls)]

        async def elicit(context: Any, params: Any) -> Any:  # 2025: asked mid-call
            answer = self.answers.pop(0) if self.answers else NO
            if answer == GO:
                return t.ElicitResult(action="accept", content={"ok": True})
            return t.ElicitResult(action="accept" if answer == YES else "decline", content={})

        transport = streamable_http_client(url, http_client=http)
        client_mode: Any = self.mode
        async with Client(transport, elicitation_callback=elicit, mode=client_mode) as client:
            try:
                result = await client.session.call_tool(
                    "run_code", allow_input_required=True, **call
                )
            except MCPError as exc:
                return Step(text=f"{exc.error.code} {exc.error.message}")
        if isinstance(result, t.InputRequiredResult):
            asked = " ".join(r.params.message for r in (result.input_requests or {}).values())
            return Step(pause=(call["arguments"], result), asked=asked)
        return Step(text=str(result.content[0].text))

    async def start(self, code: str, caller: str = "ada") -> Step:
        return await self._call(caller, 0, arguments={"code": code})

    async def resume(
        self,
        step: Step,
        answer: str,
        *,
        caller: str = "ada",
        other: bool = False,
        tamper: bool = False,
    ) -> Step:
        import mcp.types as t

        arguments, asked = step.pause
        responses = {}
        for key in asked.input_requests or {}:
            if key == "toolmgmt_approval":
                action = "accept" if answer == YES else "decline"
                responses[key] = t.ElicitResult(action=action, content={})
            else:
                responses[key] = t.ElicitResult(action="accept", content={"ok": True})
        state = asked.request_state
        if tamper:
            state = state[:-3] + ("A" if state[-3] != "A" else "B") + state[-2:]
        replica = 1 if other or self.replicas > 1 else 0
        return await self._call(
            caller, replica, arguments=arguments, input_responses=responses, request_state=state
        )

    async def reset(self) -> None:
        """Start a cell afresh: the upstreams forget their runs."""
        self.answers = []
        for replica in range(self.replicas):
            await self._call("ada", replica, arguments={"code": "await reset()"})

    async def set_balance(self, amount: int) -> None:
        for replica in range(self.replicas):
            await self._call(
                "ada", replica, arguments={"code": f"await set_balance(amount={amount})"}
            )

    async def runs(self) -> dict[str, list[Any]]:
        total: dict[str, list[Any]] = {}
        for replica in range(self.replicas):
            step = await self._call("ada", replica, arguments={"code": "await runs()"})
            value = json.loads(step.text)
            for tool, calls in (json.loads(value) if isinstance(value, str) else value).items():
                total.setdefault(tool, []).extend(calls)
        return total


class LegacyRunPath(GatewayRunPath):
    """A 2025 MCP client over HTTP: approvals and an upstream's questions are asked in the
    middle of the call (elicitation), so a program never waits across requests."""

    _MID_CALL = "n/a: asked in the middle of the call; a program never waits across requests"
    only = {
        "stale_resume": _MID_CALL,
        "cross_caller": _MID_CALL,
        "rerun_across_workers": _MID_CALL,
        "eviction": _MID_CALL,
        "forged_state": _MID_CALL,
        "replayed": _MID_CALL,
        **GatewayRunPath.only,
    }

    def __init__(self) -> None:
        super().__init__()
        self.mode = "legacy"


# -- the guards ----------------------------------------------------------------------------------


def _na(path: Any, guard: str) -> str | None:
    return getattr(path, "only", {}).get(guard)


async def guard_stale_resume(path: Any) -> str:
    if _na(path, "stale_resume"):
        return str(_na(path, "stale_resume"))
    stale = await path.start(BANK)
    assert stale.pause and '"amount": 50' in stale.asked.replace('":50', '": 50'), stale.asked
    await path.set_balance(1000)
    fresh = await path.start(BANK)
    assert fresh.pause and '"amount": 500' in fresh.asked.replace('":500', '": 500'), fresh.asked
    done = await path.resume(fresh, YES)
    ran = await path.runs()
    assert done.text == "moved 500" and ran["transfer"] == [500], (done.text, ran)
    assert len(ran["balance"]) == 2
    return "a fresh run (read again, moved 500); the stale run's call ran 0"


async def guard_cross_caller(path: Any) -> str:
    if _na(path, "cross_caller"):
        return str(_na(path, "cross_caller"))
    paused = await path.start(BANK, caller="ada")
    stolen = await path.resume(paused, YES, caller="mallory")
    assert "transfer" not in await path.runs(), stolen.text
    if "another caller" in stolen.text:
        return "refused (paused by another caller), ran 0"
    assert stolen.text.startswith("-32602 Invalid or expired requestState"), stolen.text
    return "refused: `-32602` (the request state is bound to its caller), ran 0"


async def guard_rerun_across_workers(path: Any) -> str:
    if _na(path, "rerun_across_workers"):
        return str(_na(path, "rerun_across_workers"))
    paused = await path.start(TWO_STEPS)
    done = await path.resume(paused, YES, other=True)
    ran = await path.runs()
    assert done.text == "moved 1", done.text
    assert len(ran["balance"]) == 1 and ran["transfer"] == [1], ran
    return "resumed on another worker: the read before the pause ran once, the move once"


async def guard_carried_approval(path: Any) -> str:
    if _na(path, "carried_approval"):
        return str(_na(path, "carried_approval"))
    answers = [YES, GO, NO, NO, NO]
    path.answers = list(answers)  # a path that asks mid-call answers from these
    step = await path.start(CARRY)
    asked = []
    while step.pause:
        asked.append(step.asked)
        step = await path.resume(step, answers.pop(0))
    ran = await path.runs()
    assert step.text.count("refused") == 3, step.text
    assert ran["wipe"] == ["staging"] and "drop_all" not in ran and "purge" not in ran, ran
    assert len(asked) == 5 or (not asked and not path.answers), (asked, path.answers)
    return "each later destructive call asked on its own (3 declined), ran 0 of them"


async def guard_eviction(path: Any) -> str:
    if _na(path, "eviction"):
        return str(_na(path, "eviction"))
    first = await path.start(CLEAN)
    for n in range(8):
        assert (await path.start(f"await purge(paths=['/tmp/{n}'])")).pause
    done = await path.resume(first, YES)
    ran = await path.runs()
    if "no longer kept" in done.text:
        assert "purge" not in ran and len(ran["next_target"]) == 1, ran
        return "failed closed: no longer kept, run it again; ran 0"
    assert done.text == "purged 1" and ran["purge"] == [["./cache"]], (done.text, ran)
    return "resumed from its own state: purged what was approved (`./cache`), once"


async def guard_edit_swap(path: Any) -> str:
    if _na(path, "edit_swap"):
        return str(_na(path, "edit_swap"))
    paused = await path.start(BANK)
    done = await path.resume(paused, SWAP)
    ran = await path.runs()
    assert "transfer" not in ran and "export_all" not in ran, (done.text, ran)
    if done.text.startswith("ValidationError"):  # LangChain: the interrupt's schema pins it
        return "refused by the interrupt's `response_schema` (not saved), ran 0"
    if "another program" in done.text:  # PydanticAI: run_code's override_args name a program
        return "`override_args` naming another program: refused `program_state`, ran 0"
    assert "never its tool" in done.text, done.text
    return "refused `approval_denied` (an edit never swaps the tool), ran 0"


async def guard_forged_state(path: Any) -> str:
    if _na(path, "forged_state"):
        return str(_na(path, "forged_state"))
    paused = await path.start(BANK)
    forged = await path.resume(paused, YES, tamper=True)
    assert "transfer" not in await path.runs(), forged.text
    if forged.text.startswith("-32602"):
        return "refused: `-32602` (the request state is sealed), ran 0"
    assert "not one this server sealed" in forged.text, forged.text
    return "refused `program_state` (not sealed here), ran 0"


async def guard_replayed(path: Any) -> str:
    """The state a run was resumed from, resumed again with the same yes (on the other worker;
    LangChain: its paused checkpoint, once the run is done)."""
    if _na(path, "replayed"):
        return str(_na(path, "replayed"))
    paused = await path.start(TWO_STEPS)
    done = await path.resume(paused, YES)
    again = await path.resume(paused, YES, other=True)
    ran = await path.runs()
    assert done.text == "moved 1" and ran["transfer"] == [1], (done.text, again.text, ran)
    assert len(ran["balance"]) == 1, ran
    for said, cell in (
        ("resumed already", "refused `program_state` (resumed already), ran once in all"),
        ("no longer kept", "refused `program_state` (no longer kept), ran once in all"),
        ("-32602", "refused: `-32602` (the request state is used), ran once in all"),
        ("already used", "refused `approval_denied` (already used), ran once in all"),
    ):
        if said in again.text:
            return cell
    raise AssertionError(again.text)


async def guard_gathered(path: Any) -> str:
    """Gathered calls that need approval: each is asked about once (the same call twice
    twice), runs once, and the read settled before the pauses reaches the program; each
    resume on the other worker."""
    if _na(path, "gathered"):
        return str(_na(path, "gathered"))
    path.answers = [YES] * 3  # a path that asks mid-call answers from these
    step = await path.start(GATHERED)
    asked: list[str] = []
    while step.pause and len(asked) < 6:
        asked.append(step.asked)
        step = await path.resume(step, YES, other=len(asked) % 2 == 1)
    ran = await path.runs()
    assert step.text == "moved 5 moved 7 moved 5 100", (step.text, asked)
    assert sorted(ran["transfer"]) == [5, 5, 7] and len(ran["balance"]) == 1, ran
    if asked == [""]:  # LiteLLM's approve= answers in place
        return "each asked in place, ran once; the read once"
    if not asked:  # a 2025 client answers mid-call
        assert not path.answers, path.answers
        return "each asked mid-call (3 yeses), ran once; the read once"
    amounts = [re.search(r'"amount": ?(\d+)', question) for question in asked]
    assert sorted(int(a.group(1)) for a in amounts if a) == [5, 5, 7], asked
    return "3 yeses, one per call (two alike); each ran once, the read once, across workers"


async def guard_too_large(path: Any) -> str:
    """A program paused at a call while its state is over what a sealed state holds: the
    call ends there (nothing could carry the program to the answer), never a pause whose
    answer starts the program over; at an approval, and (where an upstream asks across
    requests) at an upstream's question."""
    calls = ["transfer(amount=1)"]
    if not _na(path, "carried_approval") and not isinstance(path, LegacyRunPath):
        calls.append('confirm(question="go")')  # an upstream's question, asked across requests
    for n, call in enumerate(calls, 1):
        step = await path.start(LARGE.format(call))
        if step.pause and not step.asked:  # LiteLLM: its approve= answers when the call runs
            step = await path.resume(step, YES)
        assert not step.pause and "too large to keep" in step.text, step
        ran = await path.runs()
        assert len(ran["balance"]) == n and "transfer" not in ran and "confirm" not in ran, ran
    if len(calls) == 1:
        return "ended at its approval: `program_state` (too large to keep); the read ran once"
    return (
        "ended at its approval and at an upstream's question: `program_state` (too large to "
        "keep); the read ran once each"
    )


_NO_MARKER = "n/a: no approval marker of a framework's own"


async def guard_marker(path: Any) -> str:
    """The framework's own approval marker (LangChain's ``interrupt_on``, PydanticAI's
    ``requires_approval``) pauses a program's call to ``export_all`` as it pauses the call by
    name."""
    if _na(path, "marker"):
        return str(_na(path, "marker"))
    if not hasattr(path, "start_marked"):  # in process, MCP: no marker of a framework's own
        return _NO_MARKER
    paused = await path.start_marked()
    assert paused.pause and paused.asked == "export_all {}", paused
    assert "export_all" not in await path.runs()
    done = await path.resume(paused, YES)
    assert done.text == "exported" and (await path.runs())["export_all"] == [None], done.text
    return f"the program's call paused{getattr(path, 'reviewed', '')}, ran 0; approved: ran once"


@dataclass(frozen=True)
class Guard:
    id: str
    label: str
    check: Callable[[Any], Awaitable[str]]


GUARDS = [
    Guard("stale_resume", "new call, same code", guard_stale_resume),
    Guard("cross_caller", "another caller resumes", guard_cross_caller),
    Guard("rerun_across_workers", "resumed on another worker", guard_rerun_across_workers),
    Guard("carried_approval", "a yes carried past a question", guard_carried_approval),
    Guard("eviction", "8 newer pauses", guard_eviction),
    Guard("edit_swap", "an edit naming another tool", guard_edit_swap),
    Guard("forged_state", "tampered state", guard_forged_state),
    Guard("replayed", "a used state resumed again", guard_replayed),
    Guard("marker", "the framework's own marker", guard_marker),
    Guard("gathered", "gathered calls that need approval", guard_gathered),
    Guard("too_large", "paused holding over 2 MB", guard_too_large),
]


@dataclass(frozen=True)
class RunRow:
    id: str
    label: str
    make: Callable[..., Any]
    needs: tuple[str, ...] = field(default=("pydantic_monty",))
    redis: bool = False


def _door(name: str) -> Callable[[], Any]:
    """A framework adapter's row driver (tests/support/run_doors.py) over the ops tools."""

    def make() -> Any:
        import support.run_doors as doors

        return getattr(doors, name)(Ops(), Step, KEY)

    return make


PATHS = [
    RunRow(
        "in_process",
        "`run_code` in process, the adapter keeps the state",
        lambda: InProcessPath(keeps=True),
    ),
    RunRow(
        "in_process_kept",
        "`run_code` in process, the conversation keeps it",
        lambda: InProcessPath(keeps=False),
    ),
    RunRow(
        "mcp_2025",
        "MCP gateway 2025-11-25 (asked mid-call)",
        lambda **_: LegacyRunPath(),
        needs=("pydantic_monty", "mcp"),
    ),
    RunRow(
        "mcp_2026",
        "MCP gateway 2026-07-28 (request state)",
        lambda **_: GatewayRunPath(),
        needs=("pydantic_monty", "mcp"),
    ),
    RunRow(
        "mcp_2026_replicas",
        "MCP gateway 2026-07-28, two replicas on Redis",
        lambda redis_url: GatewayRunPath(replicas=2, redis_url=redis_url),
        needs=("pydantic_monty", "mcp", "redis"),
        redis=True,
    ),
    RunRow(
        "langchain",
        "LangChain middleware (the LangGraph checkpoint keeps it)",
        _door("LangChainRunPath"),
        needs=("pydantic_monty", "langchain"),
    ),
    RunRow(
        "pydantic_ai",
        "PydanticAI `ManagedToolset` (the message history keeps it)",
        _door("PydanticAIRunPath"),
        needs=("pydantic_monty", "pydantic_ai"),
    ),
    RunRow(
        "litellm",
        "LiteLLM runner (`approve=` answers in place)",
        _door("LiteLLMRunPath"),
        needs=("pydantic_monty", "litellm"),
    ),
]


async def observe(row: RunRow, guard: Guard, gateways: dict[str, Any]) -> str:
    """Drive ``row``'s path under ``guard`` (a gateway path is shared by the cells, each
    starting afresh); the cell's text (the guard asserted its effect)."""
    path = gateways.get(row.id) or row.make()
    if isinstance(path, GatewayRunPath):
        await path.reset()
    return await guard.check(path)


_NA_UPSTREAM = InProcessPath.only["carried_approval"]
_CARRIED = "each later destructive call asked on its own (3 declined), ran 0 of them"
_FRESH = "a fresh run (read again, moved 500); the stale run's call ran 0"
_WORKERS = "resumed on another worker: the read before the pause ran once, the move once"
_OWN_STATE = "resumed from its own state: purged what was approved (`./cache`), once"
EXPECTED: dict[str, dict[str, str]] = {
    "in_process": {
        "stale_resume": _FRESH,
        "cross_caller": "refused (paused by another caller), ran 0",
        "rerun_across_workers": _WORKERS,
        "carried_approval": _NA_UPSTREAM,
        "eviction": _OWN_STATE,
        "edit_swap": "refused `approval_denied` (an edit never swaps the tool), ran 0",
        "forged_state": "refused `program_state` (not sealed here), ran 0",
    },
    "mcp_2026": {
        "stale_resume": _FRESH,
        "cross_caller": "refused: `-32602` (the request state is bound to its caller), ran 0",
        "rerun_across_workers": _WORKERS,
        "carried_approval": _CARRIED,
        "eviction": _OWN_STATE,
        "edit_swap": GatewayRunPath.only["edit_swap"],
        "forged_state": "refused: `-32602` (the request state is sealed), ran 0",
    },
}
_GATHERED = "3 yeses, one per call (two alike); each ran once, the read once, across workers"
_REPLAYED = "refused `program_state` (resumed already), ran once in all"
for _row in ("in_process", "mcp_2026"):
    EXPECTED[_row]["gathered"] = _GATHERED
EXPECTED["in_process"]["replayed"] = _REPLAYED
EXPECTED["mcp_2026"]["replayed"] = _REPLAYED
EXPECTED["in_process_kept"] = {
    **EXPECTED["in_process"],
    "eviction": "failed closed: no longer kept, run it again; ran 0",
}
EXPECTED["mcp_2026_replicas"] = EXPECTED["mcp_2026"]
EXPECTED["mcp_2025"] = {
    **LegacyRunPath.only,
    "carried_approval": _CARRIED,
    "gathered": "each asked mid-call (3 yeses), ran once; the read once",
}
for _row in ("in_process", "in_process_kept", "mcp_2025", "mcp_2026", "mcp_2026_replicas"):
    EXPECTED[_row]["marker"] = _NO_MARKER
_ADAPTER = {
    **EXPECTED["in_process"],
    "cross_caller": "n/a: the framework names no caller; whoever holds its state (thread, "
    "history) owns the run",
    "carried_approval": "n/a: no upstream asks questions here",
    "marker": "the program's call paused, ran 0; approved: ran once",
}
EXPECTED["langchain"] = {
    **_ADAPTER,
    "marker": "the program's call paused (HITL's review of `run_code` approves none of its "
    "calls), ran 0; approved: ran once",
    "edit_swap": "refused by the interrupt's `response_schema` (not saved), ran 0",
}
EXPECTED["pydantic_ai"] = {
    **_ADAPTER,
    "edit_swap": "`override_args` naming another program: refused `program_state`, ran 0",
}
EXPECTED["litellm"] = {
    **{
        guard: "n/a: `approve=` answers in place; a program never waits across calls"
        for guard in EXPECTED["in_process"]
        if guard != "gathered"
    },
    "carried_approval": "n/a: no upstream asks questions here",
    "edit_swap": EXPECTED["in_process"]["edit_swap"],
    "marker": "n/a: LiteLLM has no approval marker",
    "gathered": "each asked in place, ran once; the read once",
}


_LARGE = "ended at its approval: `program_state` (too large to keep); the read ran once"
for _row in EXPECTED:
    EXPECTED[_row]["too_large"] = _LARGE
for _row in ("mcp_2026", "mcp_2026_replicas"):
    EXPECTED[_row]["too_large"] = (
        "ended at its approval and at an upstream's question: `program_state` (too large to "
        "keep); the read ran once each"
    )


# -- the test ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


def _ready(row: RunRow) -> bool:
    import importlib.util

    return all(importlib.util.find_spec(package) for package in row.needs)


@pytest.fixture(scope="module")
async def gateways(request: pytest.FixtureRequest) -> AsyncIterator[dict[str, Any]]:
    """The gateway rows' paths, started once for every cell of the module."""
    async with AsyncExitStack() as stack:
        paths: dict[str, Any] = {}
        for row in PATHS:
            if row.make is not InProcessPath and _ready(row) and row.id.startswith("mcp"):
                redis_url = request.getfixturevalue("redis_server").url if row.redis else None
                made = row.make(redis_url=redis_url) if row.redis else row.make()
                paths[row.id] = await stack.enter_async_context(made)
        yield paths


def _cases(gateway: bool) -> Iterator[Any]:
    for row in PATHS:
        if row.id.startswith("mcp") == gateway:
            for guard in GUARDS:
                yield pytest.param(row, guard, id=f"{row.id}-{guard.id}")


@pytest.mark.anyio
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("row", "guard"), list(_cases(gateway=False)))
async def test_every_run_guard_holds_in_process(row: RunRow, guard: Guard) -> None:
    for package in row.needs:
        pytest.importorskip(package)
    assert await observe(row, guard, {}) == EXPECTED[row.id][guard.id]


@pytest.mark.anyio
@pytest.mark.timeout(120)
@pytest.mark.parametrize(("row", "guard"), list(_cases(gateway=True)))
async def test_every_run_guard_holds_at_the_gateway(
    row: RunRow, guard: Guard, gateways: dict[str, Any]
) -> None:
    for package in row.needs:
        pytest.importorskip(package)
    assert await observe(row, guard, gateways) == EXPECTED[row.id][guard.id]


def render(cells: dict[str, dict[str, str]]) -> str:
    from support.page_table import render_table

    return render_table("path", PATHS, GUARDS, cells)


def test_the_page_shows_the_matrix() -> None:
    from support.page_table import documented

    assert documented(PAGE, BEGIN, END) == render(EXPECTED)


def test_every_cell_is_filled() -> None:
    assert not [(r.id, g.id) for r in PATHS for g in GUARDS if g.id not in EXPECTED[r.id]]


def main() -> None:
    """Write the expected table into the page (``--write``)."""
    from support.page_table import write_table

    if "--write" in sys.argv:
        write_table(PAGE, BEGIN, END, render(EXPECTED))
        print(f"wrote the run matrix to {PAGE.relative_to(ROOT)}")
    else:
        print(render(EXPECTED))


if __name__ == "__main__":
    sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]
    main()
