"""Code mode's sandbox: a model's program run in pydantic-monty, its calls answered by the host.

- :mod:`~toolmgmt_core._calls.code.limits`: :class:`CodeLimits`, what a program may use;
- :mod:`~toolmgmt_core._calls.code.signatures`: tools as Python signatures (``tool_search``'s
  answer in code mode), what they return included;
- :mod:`~toolmgmt_core._calls.code.names`: the Python names programs call tools by;
- :mod:`~toolmgmt_core._calls.code.sandbox`: :func:`run_program`, the drive through the worker's
  snapshots, its calls run at once, pausing at a call a framework pauses (:class:`PausedProgram`);
- :mod:`~toolmgmt_core._calls.code.workers`: the worker pool, a program holding a worker only
  while it runs;
- :mod:`~toolmgmt_core._calls.code.output`: printed output kept as its head and tail;
- :mod:`~toolmgmt_core._calls.code.errors`: what a program is told when it is stopped or refused.

pydantic-monty is imported on first use only (``pip install "toolmgmt[code]"``).
"""

from __future__ import annotations

from toolmgmt_core._calls.code.limits import CodeLimits
from toolmgmt_core._calls.code.names import CodeNames, code_names
from toolmgmt_core._calls.code.sandbox import (
    MAX_SNAPSHOT_BYTES,
    PausedProgram,
    ProgramHost,
    ProgramOutcome,
    ProgramToolError,
    run_program,
)
from toolmgmt_core._calls.code.signatures import python_returns, python_signature, python_type
from toolmgmt_core._calls.code.workers import MIN_MONTY_VERSION, require_sandbox

__all__ = [
    "MAX_SNAPSHOT_BYTES",
    "MIN_MONTY_VERSION",
    "CodeLimits",
    "CodeNames",
    "PausedProgram",
    "ProgramHost",
    "ProgramOutcome",
    "ProgramToolError",
    "code_names",
    "python_returns",
    "python_signature",
    "python_type",
    "require_sandbox",
    "run_program",
]
