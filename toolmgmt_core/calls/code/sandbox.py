"""Running a program in pydantic-monty, the sandbox code mode uses.

A program runs in a worker subprocess of a process-wide pool (created on first use; a worker
that crashes or overruns its limits is replaced). It has no file system, network, environment,
processes or imports beyond the sandbox's standard library subset: every such call reaches the
host as an OS call and is refused here. What it may do is call the host's two functions,
``call_tool(name, arguments)`` and ``search_tools(query)``, and any visible tool by its name;
each call suspends the worker, and :func:`run_program` answers it through its
:class:`ProgramHost` (the session, which runs it through the call pipeline).

When answering a call raises something that is not a tool's error (a framework's pause, such as
a LangGraph interrupt asking a human to approve the call), the worker's snapshot at that call is
handed to ``on_pause`` as plain JSON (:class:`PausedProgram`) before the signal passes on;
:func:`run_program` with that state resumes at the same call, so the calls made before it never
run again.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import json
import threading
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolmgmt_core.calls.code.limits import CodeLimits
from toolmgmt_core.compat import require_version

__all__ = [
    "MAX_SNAPSHOT_BYTES",
    "MIN_MONTY_VERSION",
    "PausedProgram",
    "ProgramHost",
    "ProgramOutcome",
    "ProgramToolError",
    "require_sandbox",
    "run_program",
]

MIN_MONTY_VERSION = "1.4"
"""The oldest pydantic-monty code mode runs on (the worker pool, snapshots, ``load_snapshot``)."""
_CHECKED = False

MAX_SNAPSHOT_BYTES = 2_000_000
"""Largest worker snapshot a paused program keeps (a larger one cannot pause: it fails)."""

_TRACEBACK_LINES = 24
_MAX_CALLS_KEPT = 100_000
_OS_REFUSAL = (
    "{name} is not available: programs here have no file system, network, environment or "
    "processes. Use call_tool for what you need."
)
_IMPORT_REFUSAL = (
    "No module named {module!r} here: programs can import only the sandbox's built-in modules "
    "(asyncio, json, re, math, datetime, ...); reach anything else through call_tool."
)


class ProgramToolError(Exception):
    """A tool call a program made that failed: raised inside the program as ``exc_type``."""

    def __init__(self, exc_type: str, message: str) -> None:
        super().__init__(message)
        self.exc_type = exc_type
        self.message = message


class ProgramHost(Protocol):
    """What a program's calls reach: the session's tools, through its pipeline."""

    async def call(self, name: str, arguments: Any) -> Any:
        """The tool's value; raises :class:`ProgramToolError` when the call failed."""

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
    """Calls already answered whose values the program has not taken yet, by call id."""
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
            # At most one approval per call made: a replay never asks for more answers.
            or not 0 <= approvals <= calls <= _MAX_CALLS_KEPT
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


_POOL: Any = None
_POOL_LOCK = threading.Lock()


def require_sandbox() -> None:
    """Check that pydantic-monty can be imported (code mode checks it when it is chosen).

    Raises:
        ImportError: it is not installed; the message names the extra.
    """
    _monty()


def _monty() -> Any:
    try:
        import pydantic_monty
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            'Code mode runs programs in the pydantic-monty sandbox, which is not installed: '
            'pip install "toolmgmt[code]"'
        ) from exc
    global _CHECKED
    if not _CHECKED:
        # The bindings' distribution: pydantic-monty itself is a metapackage over it.
        require_version("pydantic-monty-client", MIN_MONTY_VERSION, "code")
        _CHECKED = True
    return pydantic_monty


def _pool() -> Any:
    """The process's worker pool, started on first use and closed at exit."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            monty = _monty()
            pool = monty.Monty(
                min_processes=1,
                max_processes=4,
                checkout_timeout=30.0,
                request_timeout=60.0,  # a backstop: the limits stop a program long before
                max_checkouts_per_worker=500,
            )
            pool.__enter__()
            atexit.register(pool.__exit__, None, None, None)
            _POOL = pool
        return _POOL


def _render(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)


def _describe(exc: BaseException, limits: CodeLimits) -> tuple[str, str]:
    """A sandbox error as (kind, text for the model): never the host's data, only the
    program's own traceback."""
    monty = _monty()
    if isinstance(exc, monty.MontySyntaxError):
        return "syntax", exc.display()
    if isinstance(exc, monty.MontyCrashedError):
        return "limit", (
            "The program was stopped: its sandbox worker overran its limits "
            f"({limits.seconds:g}s, {limits.memory_bytes:,} bytes) and was replaced."
        )
    if isinstance(exc, monty.MontyRuntimeError):
        first = exc.display("type-msg")
        kind = first.split(":", 1)[0].strip()
        if kind == "TimeoutError" and "limit" in first:
            return "limit", f"Time limit hit: the program ran over {limits.seconds:g}s. {first}"
        if kind == "MemoryError":
            return "limit", f"Memory limit hit ({limits.memory_bytes:,} bytes). {first}"
        if kind == "RecursionError":
            return "limit", (f"Recursion limit hit (depth {limits.recursion_depth}). {first}")
        if "suspension" in first.lower():
            return "limit", f"Call limit hit: at most {limits.max_calls} calls. {first}"
        # What was raised first (a budget cuts the tail), then where: the program's traceback.
        lines = exc.display().splitlines()[:-1]
        if len(lines) > _TRACEBACK_LINES:
            half = _TRACEBACK_LINES // 2
            lines = [
                *lines[:half],
                f"  ... {len(lines) - _TRACEBACK_LINES} lines ...",
                *lines[-half:],
            ]
        return "exception", "\n".join([first, *lines])
    return "exception", f"The program failed: {type(exc).__name__}."


def _positional(args: Sequence[Any], kwargs: Mapping[str, Any], names: Sequence[str]) -> Any:
    if len(args) > len(names):
        raise ProgramToolError(
            "TypeError",
            f"takes {len(names)} positional arguments but {len(args)} were given: pass "
            "keyword arguments",
        )
    return {**dict(zip(names, args, strict=False)), **kwargs}


class _Run:
    """One program's drive through its snapshots (each worker step off the event loop)."""

    def __init__(
        self,
        host: ProgramHost,
        limits: CodeLimits,
        on_pause: Callable[[PausedProgram], Awaitable[None]],
        paused: PausedProgram | None,
    ) -> None:
        self.host = host
        self.limits = limits
        self.on_pause = on_pause
        self.output: list[str] = list(paused.output) if paused else []
        self.settled: dict[str, Any] = dict(paused.settled) if paused else {}
        self.calls = paused.calls if paused else 0
        self.printed = sum(len(o) for o in self.output)
        self.monty = _monty()

    def printer(self, stream: str, text: str) -> None:
        room = self.limits.output_chars - self.printed
        if room > 0:
            self.output.append(text[:room])
        self.printed += len(text)

    async def answer(self, snap: Any) -> Any:
        """The next snapshot after answering ``snap`` (a call, a name, or pending futures)."""
        monty = self.monty
        if isinstance(snap, monty.NameLookupSnapshot):
            return await asyncio.to_thread(snap.resume_auto)
        if isinstance(snap, monty.FutureSnapshot):
            results = {i: self._settled(i) for i in snap.pending_call_ids}
            return await asyncio.to_thread(snap.resume, results)
        if snap.is_os_function:
            name = str(snap.function_name)
            if name == "import":
                module = str(snap.args[0]) if snap.args else "?"
                error = {
                    "exc_type": "ModuleNotFoundError",
                    "message": _IMPORT_REFUSAL.format(module=module),
                }
            else:
                error = {"exc_type": "PermissionError", "message": _OS_REFUSAL.format(name=name)}
            return await asyncio.to_thread(snap.resume, error)
        await self._call(snap)
        return await asyncio.to_thread(snap.resume, {"future": ...})

    def _settled(self, call_id: int) -> Any:
        answer = self.settled.pop(str(call_id), None)
        if answer is None:
            return {"exc_type": "RuntimeError", "message": "this call was never answered"}
        if "error" in answer:
            exc_type, message = answer["error"]
            return {"exc_type": exc_type, "message": message}
        return {"return_value": answer.get("value")}

    async def _call(self, snap: Any) -> None:
        """Run the call ``snap`` stands at, keeping its answer for the future it becomes."""
        key = str(snap.call_id)
        if key in self.settled:
            return  # answered before a pause: a resumed worker announces the call again
        self.calls += 1
        name, args, kwargs = str(snap.function_name), tuple(snap.args), dict(snap.kwargs)
        try:
            if self.calls > self.limits.max_calls:
                raise ProgramToolError(
                    "RuntimeError", f"call limit hit: at most {self.limits.max_calls} calls"
                )
            if name == "call_tool":
                tool = args[0] if args else kwargs.pop("name", None)
                arguments = args[1] if len(args) > 1 else kwargs.pop("arguments", kwargs or None)
                value = await self.host.call(tool, arguments)
            elif name == "search_tools":
                query = args[0] if args else kwargs.get("query")
                value = await self.host.search(query)
            else:
                # A name the session does not show still goes to the pipeline, which answers
                # as it would anywhere (not permitted, or the closest names).
                names = self.host.parameter_names(name) or ()
                value = await self.host.call(name, _positional(args, kwargs, names))
            self.settled[key] = {"value": value}
        except ProgramToolError as exc:
            self.settled[key] = {"error": [exc.exc_type, exc.message]}
        except BaseException:
            # A framework's pause (or a cancellation): keep the program at this call.
            self.calls -= 1
            blob = await asyncio.to_thread(snap.dump)
            if len(blob) <= MAX_SNAPSHOT_BYTES:
                paused = PausedProgram(
                    base64.b64encode(blob).decode("ascii"),
                    dict(self.settled),
                    list(self.output),
                    self.calls,
                )
                await self.on_pause(paused)
            raise


async def run_program(
    code: str,
    host: ProgramHost,
    limits: CodeLimits,
    *,
    paused: PausedProgram | None = None,
    on_pause: Callable[[PausedProgram], Awaitable[None]],
) -> ProgramOutcome:
    """Run ``code`` (or resume it from ``paused``) to its end.

    Returns:
        The outcome: the program's output, or the error that ended it (syntax, an exception
        inside the program with its traceback, or a limit). A framework's signal raised while
        answering one of its calls passes on, after ``on_pause`` got the paused program.
    """
    run = _Run(host, limits, on_pause, paused)
    monty = run.monty
    pool = _pool()
    stub: dict[str, Any] = {"call_tool": _host_only, "search_tools": _host_only}
    session = await asyncio.to_thread(
        pool.checkout,
        script_name="program.py",
        limits=limits.to_monty(),
        os_policy={"sleep": "zero"},
    )
    await asyncio.to_thread(session.__enter__)
    try:
        try:
            if paused is not None:
                try:
                    blob = base64.b64decode(paused.snapshot.encode("ascii"), validate=True)
                    snap = await asyncio.to_thread(
                        session.load_snapshot,
                        blob,
                        print_callback=run.printer,
                        external_lookup=stub,
                    )
                except (ValueError, RuntimeError, monty.MontyError):
                    return ProgramOutcome(
                        "The paused program could not be restored (its snapshot is not one "
                        "this sandbox wrote); run it again.",
                        "exception",
                        run.calls,
                    )
            else:
                snap = await asyncio.to_thread(
                    session.feed_start, code, print_callback=run.printer, external_lookup=stub
                )
            while not isinstance(snap, monty.MontyComplete):
                snap = await run.answer(snap)
        except monty.MontyError as exc:
            kind, text = _describe(exc, limits)
            return ProgramOutcome(_joined(run.output, text), kind, run.calls)
        return ProgramOutcome(_joined(run.output, _render(snap.output)), None, run.calls)
    finally:
        await asyncio.to_thread(session.__exit__, None, None, None)


def _joined(output: Sequence[str], last: str) -> str:
    printed = "".join(output)
    if printed and last:
        return f"{printed.rstrip()}\n{last}"
    return printed.rstrip() if printed else last


def _host_only(*args: Any, **kwargs: Any) -> Any:  # pragma: no cover - never run: suspends
    raise RuntimeError("answered by the host")
