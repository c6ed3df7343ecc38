"""Running a program in pydantic-monty, the sandbox code mode uses.

A program runs in a worker subprocess of a process-wide pool (:mod:`.workers`; a worker that
crashes or overruns its limits is replaced). It has no file system, network, environment,
processes or imports beyond the sandbox's standard library subset: every such call reaches the
host as an OS call and is refused here. What it may do is call the host's two functions,
``call_tool(name, arguments)`` and ``search_tools(query)``, and any visible tool by its name;
each call suspends the worker, and :func:`run_program` answers it through its
:class:`ProgramHost` (the session, which runs it through the call pipeline).

Each call becomes a future in the program and a task on the host, so the calls a program
gathers run at once (at most ``CodeLimits.parallel_calls``); while it waits on them it holds no
worker (:class:`~toolmgmt_core._calls.code.workers.WorkerHold`).

When answering a call raises something that is not a tool's error (a framework's pause, such as
a LangGraph interrupt asking a human to approve the call), the calls still running are let
finish, and the program's snapshot is handed to ``on_pause`` as plain JSON
(:class:`PausedProgram`) before the signal passes on: the calls that paused are kept to run
again, the answered ones with their values. :func:`run_program` with that state resumes there,
so the calls answered before the pause never run again.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolmgmt_core._calls.code.errors import describe_error, refusal
from toolmgmt_core._calls.code.limits import CodeLimits
from toolmgmt_core._calls.code.names import original_arguments
from toolmgmt_core._calls.code.output import ProgramOutput
from toolmgmt_core._calls.code.workers import HOLD_SECONDS, WorkerHold, monty, step

__all__ = [
    "MAX_SNAPSHOT_BYTES",
    "PausedProgram",
    "ProgramHost",
    "ProgramOutcome",
    "ProgramToolError",
    "run_program",
]

MAX_SNAPSHOT_BYTES = 2_000_000
"""Largest worker snapshot a paused program keeps (a larger one cannot pause: it fails)."""

_MAX_CALLS_KEPT = 100_000


class ProgramToolError(Exception):
    """A tool call a program made that failed: raised inside the program as ``exc_type``."""

    def __init__(self, exc_type: str, message: str) -> None:
        super().__init__(message)
        self.exc_type = exc_type
        self.message = message


class ProgramHost(Protocol):
    """What a program's calls reach: the session's tools, through its pipeline."""

    async def call(self, name: str, arguments: Any, index: int) -> Any:
        """The tool's value; raises :class:`ProgramToolError` when the call failed. ``index``
        is the call's number in the program (1 for its first call or search), the same when a
        resumed program runs it again: what an approval of it is bound to."""

    async def search(self, query: Any) -> Any:
        """What a search finds (signatures, as ``tool_search`` answers)."""

    def parameter_names(self, name: str) -> Sequence[str] | None:
        """The parameters of tool ``name`` in order (for positional arguments), or None when
        the session shows no such tool."""


@dataclass
class PausedProgram:
    """A program stopped at a call, as plain JSON (kept with the conversation)."""

    snapshot: str
    """The worker's snapshot at the call, base64."""
    settled: dict[str, Any] = field(default_factory=dict)
    """Calls already answered whose values the program has not taken yet, by call id
    (``{"value": ...}`` or ``{"error": [type, message]}``), and the calls to run again on
    resuming (``{"call": [function, tool name, arguments]}``)."""
    output: list[str] = field(default_factory=list)
    """What the program printed before it paused."""
    calls: int = 0
    """Calls it made so far."""
    approvals: int = 0
    """Approvals the framework answered in this program before the pending one."""

    def to_json(self) -> dict[str, Any]:
        return {
            "snapshot": self.snapshot,
            "settled": self.settled,
            "output": self.output,
            "calls": self.calls,
            "approvals": self.approvals,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PausedProgram:
        """``data`` checked (it comes back from stored state: untrusted).

        Raises:
            ValueError: not a paused program.
        """
        snapshot, settled = data.get("snapshot"), data.get("settled", {})
        output, calls = data.get("output", []), data.get("calls", 0)
        approvals = data.get("approvals", 0)
        if (
            not isinstance(snapshot, str)
            or len(snapshot) > MAX_SNAPSHOT_BYTES * 2
            or not isinstance(settled, dict)
            or not isinstance(output, list)
            or not all(isinstance(o, str) for o in output)
            or not isinstance(calls, int)
            or not isinstance(approvals, int)
            # Not bound by ``calls``: an approved call that pauses inside (a tool's own
            # question) is kept to run again, uncounted, and asked about again when it does.
            or not 0 <= calls <= _MAX_CALLS_KEPT
            or not 0 <= approvals <= _MAX_CALLS_KEPT
        ):
            raise ValueError("not a paused program")
        return cls(snapshot, dict(settled), list(output), calls, approvals)


@dataclass
class ProgramOutcome:
    """How a program ended."""

    text: str
    """What it printed, then its last expression's value (JSON where it is JSON)."""
    error: str | None = None
    """``syntax``, ``exception`` or ``limit`` when it did not finish; ``text`` then says why."""
    calls: int = 0
    """Tool calls and searches it made."""


def _render(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)


def _positional(args: Sequence[Any], kwargs: Mapping[str, Any], names: Sequence[str]) -> Any:
    if len(args) > len(names):
        raise ProgramToolError(
            "TypeError",
            f"takes {len(names)} positional arguments but {len(args)} were given: pass "
            "keyword arguments",
        )
    return {**dict(zip(names, args, strict=False)), **kwargs}


_Call = list[Any]
"""What a call does, as JSON: ``[host function, tool name, arguments]`` (the function
``call_tool`` or ``search_tools``)."""


class _Run:
    """One program's drive through its snapshots (each worker step off the event loop)."""

    def __init__(
        self,
        host: ProgramHost,
        limits: CodeLimits,
        on_pause: Callable[[PausedProgram], Awaitable[None]],
        paused: PausedProgram | None,
        client: str | None,
    ) -> None:
        self.host = host
        self.limits = limits
        self.on_pause = on_pause
        self.output = ProgramOutput(limits.output_chars, paused.output if paused else ())
        self.settled: dict[str, Any] = dict(paused.settled) if paused else {}
        self.calls = paused.calls if paused else 0
        self.tasks: dict[str, asyncio.Future[Any]] = {}
        """Calls running, by call id."""
        self.running: dict[str, _Call] = {}
        """What each running call does (to run it again if the program pauses)."""
        self.slots = asyncio.Semaphore(limits.parallel_calls)
        self.monty = monty()
        stub: dict[str, Any] = {"call_tool": _host_only, "search_tools": _host_only}
        hooks = {"print_callback": self.output.write, "external_lookup": stub}
        self.worker = WorkerHold(limits.to_monty(), hooks, client)

    async def drive(self, snap: Any) -> Any:
        """Answer ``snap`` and the ones after it; the program's end (``MontyComplete``)."""
        sandbox = self.monty
        while not isinstance(snap, sandbox.MontyComplete):
            if isinstance(snap, sandbox.NameLookupSnapshot):
                snap = await step(snap.resume_auto)
            elif isinstance(snap, sandbox.FutureSnapshot):
                snap = await self._settle(snap)
            elif snap.is_os_function:
                snap = await step(snap.resume, refusal(snap))
            else:
                self._start(snap)
                snap = await step(snap.resume, {"future": ...})
        return snap

    def _start(self, snap: Any) -> None:
        """Start the call ``snap`` stands at, its answer kept for the future it becomes."""
        key = str(snap.call_id)
        if key in self.settled:
            return  # answered before a pause: a resumed worker announces the call again
        self.calls += 1
        try:
            if self.calls > self.limits.max_calls:
                raise ProgramToolError(
                    "RuntimeError", f"call limit hit: at most {self.limits.max_calls} calls"
                )
            call = self._what(str(snap.function_name), tuple(snap.args), dict(snap.kwargs))
        except ProgramToolError as exc:
            self.settled[key] = {"error": [exc.exc_type, exc.message]}
            return
        self._run(key, call)

    def _what(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> _Call:
        if name == "call_tool":
            tool = args[0] if args else kwargs.pop("name", None)
            arguments = args[1] if len(args) > 1 else kwargs.pop("arguments", kwargs or None)
            return ["call_tool", tool, arguments]
        if name == "search_tools":
            return ["search_tools", None, args[0] if args else kwargs.get("query")]
        # A name the session does not show still goes to the pipeline, which answers as it
        # would anywhere (not permitted, or the closest names).
        names = self.host.parameter_names(name) or ()
        return ["call_tool", name, _positional(args, original_arguments(kwargs, names), names)]

    def _run(self, key: str, call: _Call) -> None:
        self.running[key] = call
        self.tasks[key] = asyncio.ensure_future(self._answer(int(key) + 1, call))

    async def _answer(self, index: int, call: _Call) -> Any:
        function, name, arguments = call
        async with self.slots:
            if function == "search_tools":
                return await self.host.search(arguments)
            return _parsed(await self.host.call(name, arguments, index))

    async def _settle(self, snap: Any) -> Any:
        """Answer the futures the program waits on, once one of them has its value; the
        worker goes back to the pool while the program waits longer than ``HOLD_SECONDS``."""
        ids = [str(i) for i in snap.pending_call_ids]
        for key in ids:
            entry = self.settled.get(key)
            if isinstance(entry, dict) and "call" in entry:  # paused there: it runs again
                del self.settled[key]
                self.calls += 1
                self._run(key, list(entry["call"]))
        blob: bytes | None = None
        try:
            waiting = [self.tasks[k] for k in ids if k in self.tasks]
            if waiting and not any(k in self.settled for k in ids):
                done, _ = await asyncio.wait(
                    waiting, timeout=HOLD_SECONDS, return_when=asyncio.FIRST_COMPLETED
                )
                if not done:
                    blob = await self.worker.release(snap)
                    await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            stopped = self._collect()
        except asyncio.CancelledError as exc:  # cancelled while it waited: kept as a pause
            for task in self.tasks.values():
                task.cancel()
            stopped = [exc]
        if stopped:
            await self._pause(snap, blob, stopped[0])
        if blob is not None:
            snap = await self.worker.load(blob)
        results = {int(k): self._take(k) for k in ids if k in self.settled or k not in self.tasks}
        return await step(snap.resume, results)

    def _collect(self) -> list[BaseException]:
        """Keep the answers of the calls that ended; what stopped any of them (a framework's
        pause), the call kept to run again."""
        stopped: list[BaseException] = []
        for key, task in list(self.tasks.items()):
            if not task.done():
                continue
            del self.tasks[key]
            call = self.running.pop(key)
            exc = task.exception() if not task.cancelled() else asyncio.CancelledError()
            if exc is None:
                self.settled[key] = {"value": task.result()}
            elif isinstance(exc, ProgramToolError):
                self.settled[key] = {"error": [exc.exc_type, exc.message]}
            else:
                self.settled[key] = {"call": call}
                self.calls -= 1
                stopped.append(exc)
        return stopped

    async def _pause(self, snap: Any, blob: bytes | None, exc: BaseException) -> None:
        """Keep the program where it waits (the calls still running let finish), then raise
        ``exc``, what paused it."""
        if self.tasks:
            await asyncio.wait(list(self.tasks.values()))
            self._collect()
        dumped: bytes = blob if blob is not None else await step(snap.dump)
        if len(dumped) <= MAX_SNAPSHOT_BYTES:
            paused = PausedProgram(
                base64.b64encode(dumped).decode("ascii"),
                dict(self.settled),
                self.output.parts(),
                self.calls,
            )
            await self.on_pause(paused)
        raise exc

    def _take(self, key: str) -> Any:
        answer = self.settled.pop(key, None)
        if not isinstance(answer, dict) or "call" in answer:
            return {"exc_type": "RuntimeError", "message": "this call was never answered"}
        if "error" in answer:
            exc_type, message = answer["error"]
            return {"exc_type": exc_type, "message": message}
        return {"return_value": answer.get("value")}


async def run_program(
    code: str,
    host: ProgramHost,
    limits: CodeLimits,
    *,
    paused: PausedProgram | None = None,
    on_pause: Callable[[PausedProgram], Awaitable[None]],
    client: str | None = None,
) -> ProgramOutcome:
    """Run ``code`` (or resume it from ``paused``) to its end, as a program of ``client`` (the
    caller whose share of the sandbox's workers it uses; None: nobody's).

    Returns:
        The outcome: the program's output, or the error that ended it (syntax, an exception
        inside the program with its traceback, or a limit). A framework's signal raised while
        answering one of its calls passes on, after ``on_pause`` got the paused program.
    """
    run = _Run(host, limits, on_pause, paused, client)
    sandbox = run.monty
    try:
        try:
            if paused is not None:
                try:
                    blob = base64.b64decode(paused.snapshot.encode("ascii"), validate=True)
                    snap = await run.worker.load(blob)
                except (ValueError, RuntimeError, sandbox.MontyError):
                    return ProgramOutcome(
                        "The paused program could not be restored (its snapshot is not one "
                        "this sandbox wrote); run it again.",
                        "exception",
                        run.calls,
                    )
            else:
                snap = await run.worker.start(code)
            snap = await run.drive(snap)
        except sandbox.MontyError as exc:
            kind, text = describe_error(exc, limits)
            return ProgramOutcome(_joined(run.output.text(), text), kind, run.calls)
        return ProgramOutcome(_joined(run.output.text(), _render(snap.output)), None, run.calls)
    finally:
        for task in run.tasks.values():
            task.cancel()
        await run.worker.close()


def _parsed(value: Any) -> Any:
    """A tool's value as a program gets it: a text that is a JSON object or array parsed (an
    MCP server without an ``outputSchema`` answers with its JSON as text)."""
    if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _joined(printed: str, last: str) -> str:
    if printed and last:
        return f"{printed.rstrip()}\n{last}"
    return printed.rstrip() if printed else last


def _host_only(*args: Any, **kwargs: Any) -> Any:  # pragma: no cover - never run: suspends
    raise RuntimeError("answered by the host")
