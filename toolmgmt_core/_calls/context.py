"""What travels with one call: the :class:`CallContext` each integration hands to the pipeline.

An integration (an adapter, the MCP gateway, a plain ``session.call``) knows things about the call
it runs that the core cannot: the provider's call id, who asks a human for approval the framework's
way, which client called. It puts them in one small object and passes it down, like a request
object: the pipeline reads what it needs (the call id, the approver) and hands the object to a tool
handler that asks for it (a keyword parameter named :data:`CONTEXT_PARAMETER`), so nothing is read
back from module globals far below where it was set. What only an integration's own handlers read
(the gateway's relay to its client, PydanticAI's run) travels under a typed :class:`Slot` the
integration defines, so this type names no integration::

    context = CallContext(call_id="call_1", approver=ask_the_human)
    result = await session.call("send_email", {"to": "a@b.c"}, context=context)

A framework's control-flow signals are the one exception: they must pass through any code
between a tool and the framework (a summariser, a listener), so they stay declared with
:func:`~toolmgmt_core._runtime.control.passthrough`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from toolmgmt_core._calls.approval import ApprovalAsker, ApprovalMarker
from toolmgmt_core._model.signatures import CONTEXT_PARAMETER

__all__ = ["CONTEXT_PARAMETER", "NO_CONTEXT", "CallContext", "Slot", "takes_context"]


T = TypeVar("T")


class Slot(Generic[T]):
    """A typed key for something one integration carries with its calls, which the core never reads
    (the gateway's relay to its client, PydanticAI's run). The integration that defines a slot puts
    the value in (``CallContext(slots={RUN: run})``) and its handlers read it back typed
    (``context.get(RUN)``); two slots never collide, whatever their names.

    Args:
        name: what the slot holds, for ``repr``.
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Slot({self.name!r})"


_NO_SLOTS: Mapping[Slot[Any], Any] = MappingProxyType({})


@dataclass(frozen=True)
class CallContext:
    """What one call carries from its integration down to the tool that runs (see the module
    docstring). Every field is optional; :meth:`replace` derives a changed copy."""

    call_id: str | None = None
    """The provider's id of the call (names its result in ``clearable_results``)."""
    approver: ApprovalAsker | None = None
    """Who asks the human the framework's way when the manager has no approval callback of
    its own (None: nobody, so a call that needs approval is refused)."""
    requires: ApprovalMarker | None = None
    """The framework's own approval configuration, held apart from its tools (LangChain's
    ``interrupt_on``), asked about the resolved tool besides the policy."""
    listed_only: bool = False
    """Whether the integration's protocol lets a model call only the names it was listed, exactly
    (an MCP ``tools/call``): any other name is refused with
    :class:`~toolmgmt_core.ToolNotListedError` before anything else (nothing folded, nothing
    loaded on the way), which the integration answers with its protocol's error."""
    client: str | None = None
    """The calling client's name, where the integration knows one (the MCP gateway): its log lines
    and its share of code mode's workers are named after it."""
    principal: str | None = None
    """Who calls, as the integration knows them (the gateway: a digest of the caller's credentials
    or its client's name; None: nobody in particular). Set by the integration; a code-mode program's
    paused run is bound to it and resumes only for the same principal."""
    resume_state: str | None = None
    """Set by the integration when it resumes a ``run_code`` call whose program paused: the sealed
    run state the core handed out with the pause (:attr:`ApprovalRequest.resume_state
    <toolmgmt_core.ApprovalRequest.resume_state>`, or ``CallPaused.resume_state`` for the
    gateway), kept meanwhile in the framework's state. The core reads it: it checks the seal,
    the expiry, the conversation, the principal and the code before anything runs, and the
    program carries on from its paused call (the calls before it never run again). None:
    ``run_code`` starts a fresh run."""
    keeps_state: bool = False
    """Whether the integration keeps a paused program's sealed state in its own state and hands it
    back as :attr:`resume_state` (the gateway does). False: the core keeps the sealed state
    for the integration in this process, by the call's :attr:`call_id` within the conversation, so a
    framework that resumes the same tool call in this process finds it (a fresh worker or
    process does not: an integration that can keeps the state itself)."""
    from_program: bool = False
    """Whether a program made the call (code mode's ``run_code``; a ``tool_use`` block whose
    ``caller`` is Anthropic's code execution): a tool only the model calls directly is then
    refused, and a tool only programs call may run (:class:`~toolmgmt_core.Callers`)."""

    slots: Mapping[Slot[Any], Any] = dataclasses.field(
        default_factory=lambda: _NO_SLOTS, hash=False
    )
    """What an integration carries for its own handlers, each under a typed key of its own
    (:class:`Slot`): the core passes it down unread. Read with :meth:`get`."""

    def get(self, slot: Slot[T]) -> T | None:
        """What this call carries under ``slot`` (None: nothing)."""
        value: T | None = self.slots.get(slot)
        return value

    def replace(self, **changes: Any) -> CallContext:
        """A copy with ``changes`` (field names as keywords)."""
        return dataclasses.replace(self, **changes)


NO_CONTEXT = CallContext()
"""The context of a call whose integration carries nothing."""


def takes_context(handler: Callable[..., Any]) -> bool:
    """Whether ``handler`` declares the :data:`CONTEXT_PARAMETER` keyword."""
    try:
        return _declares(handler)
    except TypeError:  # not hashable: look every time
        return _declares.__wrapped__(handler)


@functools.lru_cache(maxsize=1024)
def _declares(handler: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(handler).parameters
    except (TypeError, ValueError):  # a builtin without a signature takes no context
        return False
    return CONTEXT_PARAMETER in parameters
