"""Asking for approval: the manager's callback, or the framework's own way.

Which calls need approval is the policy's decision (:meth:`PolicyView.approval_reason
<toolmgmt_core.PolicyView.approval_reason>`: a step's ``require_approval``, or a destructive
tool). Who is asked is decided here, once, for every integration:

1. the manager's :class:`~toolmgmt_core.Approval` callback, when it has one;
2. else the framework's approver, which the adapter hands down with the call
   (``CallContext.approver``, :mod:`toolmgmt_core._calls.context`): it pauses the run the
   framework's way (LangGraph
   ``interrupt()``, PydanticAI ``ApprovalRequired``) and answers with the human's decision
   when the run resumes;
3. else nobody can say yes, and the call is refused (fail closed).

A code-mode program's calls are asked through their run (a :class:`RunApprover`), which asks
the manager's callback or the framework's approver itself, with the run's identity and sealed
state in the request, and binds the answer to that one call.

An approver that raises refuses the call, unless what it raised is the framework's own pause
(declared with :func:`~toolmgmt_core._runtime.control.passthrough`), which reaches the caller.

A framework's own approval marker is honoured on every path, decided on the resolved tool (the
inner tool of ``call_tool`` or ``execute_tool`` as much as a tool called by name): one the
tool carries (``Tool.metadata["requires_approval"]``, read by the policy), or one the
framework holds apart from the tool (LangChain's ``HumanInTheLoopMiddleware.interrupt_on``),
handed down with the approver (``CallContext(approver=..., requires=...)``).

An approval that a client brings back later (a resumed run, a 2026 retry) is bound to the call
it was given for and used once: :class:`UsedApprovals` (in this process) or a store's
``claim_once`` (shared by replicas) records it, :func:`approval_key` names it, and
:func:`replayed_approval` is the refusal of a second use.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from toolmgmt_core._model.errors import ApprovalDeniedError
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._policy.steps import ApprovalEdit, ApprovalRequest, ApprovalResponse
from toolmgmt_core._policy.view import PolicyView
from toolmgmt_core._runtime.control import reraise_control_flow
from toolmgmt_core._runtime.threads import Pool

__all__ = [
    "USED_KEPT",
    "ApprovalAsker",
    "ApprovalMarker",
    "OnceRecord",
    "RunApprover",
    "UsedApprovals",
    "Verdict",
    "approval_key",
    "ask_approval",
    "call_approval_reason",
    "replayed_approval",
    "who_approves",
]

Verdict = ApprovalEdit | ApprovalResponse | None
"""An approver's yes: None (run the call as it is), an edit or an answer in the tool's place."""

ApprovalAsker = Callable[
    [ApprovalRequest],
    "bool | ApprovalEdit | ApprovalResponse | Awaitable[bool | ApprovalEdit | ApprovalResponse]",
]
"""An approver: True to run the call; False (or ``ApprovalDeniedError``) to refuse it; an
``ApprovalEdit`` or ``ApprovalResponse`` (the human changed the call, or answered it); or a
framework's pause (an exception declared with ``passthrough``) to ask a human first."""


class RunApprover:
    """The approver of a code-mode program's call (:mod:`toolmgmt_core._session.program_runs`):
    asked in place of the manager's callback, which it asks itself (see the module docstring)."""


ApprovalMarker = Callable[[Tool, Mapping[str, Any]], "str | None"]
"""A framework's approval marker held apart from its tools: why a call of a (resolved) tool
with these (validated) arguments needs approval under the framework's own configuration, or
None."""


def call_approval_reason(
    policy: PolicyView,
    tool: Tool,
    arguments: Mapping[str, Any],
    requires: ApprovalMarker | None = None,
) -> str | None:
    """Why this call of the resolved ``tool`` needs approval, or None: the policy's reason
    (:meth:`PolicyView.approval_reason <toolmgmt_core.PolicyView.approval_reason>`, the tool's
    own marker included), else the framework's (``requires``, handed down with the call).
    Every path asks this about the tool that would run, before :func:`ask_approval`."""
    reason = policy.approval_reason(tool)
    if reason is None and requires is not None:
        reason = requires(tool, arguments)
    return reason


def approval_key(conversation: str, tool: str, arguments: Mapping[str, Any], grant: str) -> str:
    """What one approval covers, as a digest: the conversation, the tool, its arguments and
    the grant's own id (a call id, a request state's nonce), so two calls never share one."""
    body = json.dumps([conversation, tool, dict(arguments), grant], sort_keys=True, default=str)
    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()


def replayed_approval(name: str) -> ApprovalDeniedError:
    """The refusal of an approval brought back a second time (a replayed retry or resume)."""
    return ApprovalDeniedError(
        f"This approval of the call to {name!r} was already used, so the call did not run "
        "again: an approval runs its call once. Ask the user to approve it anew.",
        tool_name=name,
    )


_CLAIMS = Pool("claims", 4)
"""Where a store's ``claim_once`` (I/O, within the store's own timeouts) runs."""

USED_KEPT = 100_000
"""Used approvals a process remembers at most (each until it expires), by default."""


class UsedApprovals:
    """Approvals already used in this process: each key is claimed once until it expires.

    Bounded: at most ``limit`` keys are kept (a key past its expiry is dropped when met). A
    key is never dropped before it expires, as what it names could then be used again: when
    ``limit`` keys are all in use, a new claim is refused (fails closed) until one expires.
    Across processes a store's ``claim_once`` does the same, unbounded.

    Args:
        ttl: seconds a used key is remembered (at least the approval's own life).
        limit: keys kept at most (None: :data:`USED_KEPT`).
    """

    def __init__(self, ttl: float, limit: int | None = None) -> None:
        limit = USED_KEPT if limit is None else limit
        if ttl <= 0 or limit < 1:
            raise ValueError(f"ttl must be > 0 and limit >= 1, got ttl={ttl!r}, limit={limit!r}")
        self.ttl = ttl
        self.limit = limit
        self._used: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def claim(self, key: str) -> bool:
        """True the first time ``key`` is claimed within ``ttl``; False after that.

        Raises:
            RuntimeError: ``limit`` keys are in use; nothing can be recorded until one expires.
        """
        now = time.monotonic()
        with self._lock:
            expires = self._used.get(key)
            if expires is not None and expires > now:
                return False
            self._used.pop(key, None)
            while self._used and next(iter(self._used.values())) <= now:
                self._used.popitem(last=False)  # the oldest first: each lives ``ttl``
            if len(self._used) >= self.limit:
                raise RuntimeError(
                    f"{self.limit:,} approvals used in the last {self.ttl:.0f} s are remembered "
                    "already; no more can be recorded until the oldest expires"
                )
            self._used[key] = now + self.ttl
            return True

    def __len__(self) -> int:
        return len(self._used)


class OnceRecord:
    """Where uses are recorded once, each until ``ttl`` passes (``await record(key)``: True the
    first time): a session store's ``claim_once`` (Redis: shared by every process over it, run
    off the event loop), else ``used``, this process's record.

    A record in this process cannot tell whether another process used a key. With ``issuing``
    and no such store, :attr:`issuer` names this process: what it hands out (a sealed state, a
    request state) carries it, and :meth:`foreign` refuses what another process handed out.

    Args:
        store: a session store, with or without ``claim_once``, or None.
        ttl: seconds a use is remembered.
        used: this process's record (None: one of this object's own).
        issuing: name this process when only it records uses.
    """

    def __init__(
        self, store: Any, ttl: float, *, used: UsedApprovals | None = None, issuing: bool = False
    ) -> None:
        self._claim_once = getattr(store, "claim_once", None)
        self.ttl = ttl
        self._used = used if used is not None else UsedApprovals(ttl)
        self.issuer = secrets.token_hex(8) if issuing and self._claim_once is None else None
        """This process's id in what it hands out, or None (a store records uses, or any
        process may take them)."""

    def foreign(self, issuer: Any) -> bool:
        """Whether what names ``issuer`` was handed out by a process other than this one, which
        alone knows whether it was used."""
        return self.issuer is not None and issuer != self.issuer

    async def __call__(self, key: str) -> bool:
        """True the first time ``key`` is recorded within ``ttl``; False after that.

        Raises:
            Exception: the store cannot record it now (or this process's record is full).
        """
        if self._claim_once is not None:
            return bool(await _CLAIMS.run(self._claim_once, key, self.ttl))
        return self._used.claim(key)


def who_approves(policy: PolicyView, approver: ApprovalAsker | None) -> ApprovalAsker | None:
    """Who is asked about a call: the policy's callback, else ``approver`` (the framework's,
    handed down with the call), else nobody (None)."""
    return policy.approval.callback or approver


async def ask_approval(
    policy: PolicyView,
    tool: Tool,
    arguments: Mapping[str, Any],
    reason: str,
    approver: ApprovalAsker | None = None,
) -> Verdict:
    """Ask whoever approves calls of ``tool`` (see the module docstring) about this one.

    Args:
        policy: the session's view (its :class:`~toolmgmt_core.Approval`).
        tool: the tool, as the model sees it.
        arguments: the validated arguments.
        reason: why the call needs approval (``policy.approval_reason(tool)``).
        approver: the framework's approver handed down with the call, asked when the
            policy has no callback of its own.

    Returns:
        None to run the call as it is; an :class:`~toolmgmt_core.ApprovalEdit` (run it with
        other arguments) or :class:`~toolmgmt_core.ApprovalResponse` (answer it without
        running the tool).

    Raises:
        ApprovalDeniedError: the approver said no, failed, or there is none; the message tells
            the model not to retry unchanged.
    """
    name = tool.name
    if not isinstance(approver, RunApprover):  # a program's run asks the callback itself
        approver = who_approves(policy, approver)
    if approver is None:
        raise ApprovalDeniedError(
            f"Calling {name!r} needs approval ({reason}) and nobody here can give it, so it did "
            "not run. Choose another tool or ask the user.",
            tool_name=name,
        )
    request = ApprovalRequest(tool, dict(arguments), reason)
    try:
        decision = approver(request)
        if inspect.isawaitable(decision):
            decision = await decision
    except ApprovalDeniedError:
        raise
    except Exception as exc:
        reraise_control_flow(exc)
        raise ApprovalDeniedError(
            f"The approval check for {name!r} failed ({type(exc).__name__}), so the call "
            "did not run.",
            tool_name=name,
        ) from exc
    if isinstance(decision, ApprovalEdit | ApprovalResponse):
        return decision
    if decision is not True:
        raise ApprovalDeniedError(
            f"The call to {name!r} was refused by the approver and did not run. Do not retry "
            "it unchanged; ask the user or choose another approach.",
            tool_name=name,
        )
    return None
