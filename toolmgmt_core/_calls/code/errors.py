"""What a program is told when the sandbox stops it or refuses it something: a limit, an
exception with its own traceback, a file, network or import it may not use."""

from __future__ import annotations

from typing import Any

from toolmgmt_core._calls.code.limits import CodeLimits
from toolmgmt_core._calls.code.workers import monty

__all__ = ["describe_error", "refusal"]

_TRACEBACK_LINES = 24
_OS_REFUSAL = (
    "{name} is not available: programs here have no file system, network, environment or "
    "processes. Use call_tool for what you need."
)
_IMPORT_REFUSAL = (
    "No module named {module!r} here: programs can import only the sandbox's built-in modules "
    "(asyncio, json, re, math, datetime, ...); reach anything else through call_tool."
)


def describe_error(exc: BaseException, limits: CodeLimits) -> tuple[str, str]:
    """A sandbox error as (kind, text for the model): never the host's data, only the
    program's own traceback."""
    sandbox = monty()
    if isinstance(exc, sandbox.MontySyntaxError):
        return "syntax", exc.display()
    if isinstance(exc, sandbox.MontyCrashedError):
        return "limit", (
            "The program was stopped: its sandbox worker overran its limits "
            f"({limits.seconds:g}s, {limits.memory_bytes:,} bytes) and was replaced."
        )
    if isinstance(exc, sandbox.MontyRuntimeError):
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


def refusal(snap: Any) -> dict[str, str]:
    """The error an OS call (files, network, environment, imports) gets in a program."""
    name = str(snap.function_name)
    if name == "import":
        module = str(snap.args[0]) if snap.args else "?"
        return {
            "exc_type": "ModuleNotFoundError",
            "message": _IMPORT_REFUSAL.format(module=module),
        }
    return {"exc_type": "PermissionError", "message": _OS_REFUSAL.format(name=name)}
