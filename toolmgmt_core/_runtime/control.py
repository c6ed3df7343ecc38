"""A framework's control flow through toolmgmt: signals that pass, approval it asks for.

Agent frameworks steer a run with exceptions raised from inside a tool: LangGraph pauses with
``GraphInterrupt`` (from ``interrupt()``), PydanticAI asks for approval with ``ApprovalRequired``,
defers a call with ``CallDeferred`` and sends the model a retry prompt with ``ModelRetry``.
toolmgmt turns a tool's failures into results for the model, so it must catch exceptions, but
never these. The core knows no framework: an adapter declares its framework's signals for the
calls it runs, and every broad ``except`` in the core starts with :func:`reraise_control_flow`::

    with passthrough(ApprovalRequired, CallDeferred, ModelRetry):
        result = await session.call(name, arguments)

The declaration is scoped to the call (a context variable), so the same tool run where no
framework would catch the signal (the MCP gateway, a plain ``session.call``) gets a tool error
instead. ``BaseException`` signals that are not ``Exception`` (``asyncio.CancelledError``,
``KeyboardInterrupt``, ``SystemExit``, ``GeneratorExit``) always pass.

Approval is asked the framework's way through :mod:`toolmgmt_core._calls.approval`.

The core has one signal of its own, :class:`CallPaused`: a call whose caller must answer a
question first (the MCP gateway's 2026 clients, asked an upstream's question or an approval,
answer on their next request). It passes every broad ``except`` as a declared signal does,
wherever it is raised (a tool's handler, an approver, a program's call), and the call pipeline
ends the call with it: the call's outcome is ``paused``, which the integration maps to its
protocol's form. It never reaches the integration as an exception.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = [
    "CallPaused",
    "control_flow_types",
    "is_control_flow",
    "is_pause",
    "passthrough",
    "reraise_control_flow",
]

_PASSTHROUGH: ContextVar[tuple[type[BaseException], ...]] = ContextVar(
    "toolmgmt_passthrough", default=()
)


class CallPaused(Exception):  # noqa: N818 - an outcome, not an error
    """The call paused: its caller must answer a question first (see the module docstring).

    Raised where the question arises; the call pipeline turns it into the call's outcome,
    ``paused`` (:attr:`~toolmgmt_core.ToolResult.paused` holds it): no result is shaped,
    counted or learned from. An integration's subclass carries what the integration asks its caller
    with.
    """

    resume_state: str | None = None
    """Set by the core when the pause came from a call a code-mode program made: the run's
    sealed state, paused at that call. The integration (the MCP gateway) keeps it with the question
    it asks (its request state) and hands it back as ``CallContext.resume_state`` with the
    answer; None for any other call."""


@contextlib.contextmanager
def passthrough(*types: type[BaseException]) -> Iterator[None]:
    """Within this block, exceptions of ``types`` raised by tools, approvers or summarisers
    reach the caller unchanged instead of becoming tool errors. Blocks nest (types add up).

    Raises:
        TypeError: something in ``types`` is not an exception class.
    """
    for kind in types:
        if not (isinstance(kind, type) and issubclass(kind, BaseException)):
            raise TypeError(f"passthrough() takes exception classes, got {kind!r}.")
    token = _PASSTHROUGH.set((*_PASSTHROUGH.get(), *types))
    try:
        yield
    finally:
        _PASSTHROUGH.reset(token)


def control_flow_types() -> tuple[type[BaseException], ...]:
    """The exception types declared by the :func:`passthrough` blocks around this point."""
    return _PASSTHROUGH.get()


def is_control_flow(exc: BaseException) -> bool:
    """Whether ``exc`` belongs to the framework (or the interpreter), not to the tool."""
    return (
        not isinstance(exc, Exception)
        or isinstance(exc, CallPaused)
        or isinstance(exc, _PASSTHROUGH.get())
    )


def is_pause(exc: BaseException) -> bool:
    """Whether ``exc`` pauses a call that its answer resumes: the core's :class:`CallPaused`
    or a framework's own signal (a LangGraph interrupt, a PydanticAI deferral). A cancellation
    or an interpreter's exit is control flow but no pause: nothing is kept to resume."""
    return isinstance(exc, Exception) and is_control_flow(exc)


def reraise_control_flow(exc: BaseException) -> None:
    """Raise ``exc`` again when it is control flow; call first in every broad ``except``."""
    if is_control_flow(exc):
        raise exc
