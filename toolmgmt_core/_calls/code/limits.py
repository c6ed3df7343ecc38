"""What a program may use: :class:`CodeLimits`, the sandbox's resource limits for code mode."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolmgmt_core._model.errors import ConfigError

__all__ = ["CodeLimits"]


@dataclass(frozen=True)
class CodeLimits:
    """The limits of one ``run_code`` program (each enforced inside the sandbox's worker
    process; a worker that overruns them is killed and replaced).

    Usage::

        Code(limits=CodeLimits(seconds=2.0, memory_bytes=32 * 2**20))

    The sandbox has no file system, network, environment, processes or imports beyond its
    own standard library subset: nothing here grants them.
    """

    seconds: float = 5.0
    """Execution time of the program itself (the sandbox's clock stops while a tool runs)."""
    memory_bytes: int = 64 * 2**20
    """Heap the program may hold (tool values handed to it included)."""
    recursion_depth: int = 200
    """Deepest call stack inside the program."""
    max_calls: int = 100
    """Tool calls and searches one program may make."""
    gc_interval: int | None = 100_000
    """Collect garbage every this many allocations (bounds what a reference cycle holds)."""
    output_chars: int = 200_000
    """Printed output kept: past it, its first and last halves are kept, with a line where
    the rest was cut and one at the end saying how much (the result budget then cuts what the
    model gets)."""
    parallel_calls: int = 8
    """Calls one program runs at once (``asyncio.gather``, tasks); more wait for one to end."""

    def __post_init__(self) -> None:
        for name in (
            "memory_bytes",
            "recursion_depth",
            "max_calls",
            "output_chars",
            "parallel_calls",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(
                    f"CodeLimits({name}=...) must be a positive whole number, got {value!r}."
                )
        seconds = self.seconds
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds <= 0:
            raise ConfigError(
                f"CodeLimits(seconds=...) must be a positive number, got {seconds!r}."
            )
        interval = self.gc_interval
        if interval is not None and (
            isinstance(interval, bool) or not isinstance(interval, int) or interval < 1
        ):
            raise ConfigError(
                "CodeLimits(gc_interval=...) must be a positive whole number or None, got "
                f"{interval!r}."
            )

    def to_monty(self) -> dict[str, Any]:
        """The limits as pydantic-monty's ``ResourceLimits``."""
        limits: dict[str, Any] = {
            "max_feed_duration_secs": float(self.seconds),
            "max_memory": self.memory_bytes,
            "max_recursion_depth": self.recursion_depth,
            # Each call is two round trips (the future, then its value), name lookups one.
            "max_suspensions": self.max_calls * 2 + 16,
            "max_total_sleep_secs": float(self.seconds),
        }
        if self.gc_interval is not None:
            limits["gc_interval"] = self.gc_interval
        return limits
