"""The gateway's approver: a call that needs approval asks the client's user, through MCP
elicitation.

Which calls need approval, and what a yes, an edit or a no does, is the core's
(:mod:`toolmgmt_core._calls.approval`); this module only asks the MCP way and reads the answer.
The question is a form-mode elicitation whose fields are the call's arguments, filled in with
the model's values (those the elicitation schema can carry: strings, numbers, booleans, enums):

- ``accept`` with the values unchanged: the call runs;
- ``accept`` with a field changed: it runs with the user's values (an edit: validated by the
  session again, and the model's result says what ran);
- ``decline`` or ``cancel``: it does not run, and the model is told so.

How it is asked depends on the client that made the call (its :class:`~toolmgmt_gateway.questions.
Relay`):

- a 2026 client (:class:`~toolmgmt_gateway.questions.ReturnToClient`): the call ends with an
  input-required result carrying the question (:class:`ApprovalAsked`); the client's retry
  brings the answer, and the request state (sealed by the SDK's boundary, bound to this call and
  caller) proves it answers this question. When the approved call's upstream asks questions of
  its own, the yes travels on in the next round's sealed state, so it is not asked again;
- a 2025 client with a back-channel (:class:`~toolmgmt_gateway.questions.AskClient`): an
  ``elicitation/create`` request in the middle of the call;
- a client that cannot be asked (no elicitation capability, or a 2025 connection without a
  back-channel): the call is refused, with a message saying why.

``[gateway] approve_destructive = false`` stays the operator's explicit opt-out (destructive
tools then run without a question), and an ``Approval`` callback given to the manager is asked
instead of the client.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from typing import Any

import mcp.types as mcp_types
from mcp.shared.message import ServerMessageMetadata

from toolmgmt_core import ApprovalDeniedError, ApprovalEdit, ApprovalRequest
from toolmgmt_core.integration import (
    ApprovalAsker,
    CallPaused,
    OnceRecord,
    approval_key,
    dumps_compact,
    replayed_approval,
)
from toolmgmt_gateway.admission import waiting_on_upstream
from toolmgmt_gateway.questions import (
    PROGRAM_KEY,
    STATE_VERSION,
    AskClient,
    Relay,
    ReturnToClient,
)
from toolmgmt_gateway.state_keys import STATE_TTL

__all__ = [
    "APPROVAL_KEY",
    "ApprovalAsked",
    "approval_claimer",
    "approval_form",
    "client_approver",
    "verdict_of",
]

APPROVAL_KEY = "toolmgmt_approval"
"""The key of the approval question among an input-required result's requests."""

_FORMATS = frozenset({"email", "uri", "date", "date-time"})
_KEPT = {
    "string": ("title", "description", "minLength", "maxLength", "enum", "enumNames", "oneOf"),
    "number": ("title", "description", "minimum", "maximum"),
    "integer": ("title", "description", "minimum", "maximum"),
    "boolean": ("title", "description"),
}
_SHOWN = 400
"""Characters of the arguments shown in the question's text when its form's fields carry what
is cut."""
_SHOWN_IN_FULL = 4_000
"""Characters of the arguments no field carries (a list of paths, an object) the question's text
shows at most: always in full, as nothing else shows them; a call whose are longer is refused
without asking."""


class ApprovalAsked(CallPaused):
    """A 2026 client is asked for approval: the call ends with this input-required result.

    The core's pause (:class:`~toolmgmt_core.integration.CallPaused`), like the questions'
    :class:`~toolmgmt_gateway.questions.InputRequired`: the call ends paused, and the gateway
    answers with :meth:`result`.
    """

    def __init__(
        self, question: mcp_types.ElicitRequest, request: ApprovalRequest, issuer: str | None = None
    ) -> None:
        super().__init__(f"approval asked for {request.tool.name!r}")
        self.question = question
        self.tool = request.tool.name
        self.binding = _binding(request)
        self.issuer = issuer
        """The process whose record alone can tell whether the yes was used (:class:`
        OnceRecord`), or None."""

    def result(self, program: str | None = None) -> mcp_types.InputRequiredResult:
        """The input-required result: the question, and a request state naming the call it
        asks about (its tool, the digest of its arguments and, for a program's call, its run
        and place in it), this question's own id and, in code mode, the paused program's sealed
        state (all sealed by the SDK's boundary on the way out)."""
        state = {"v": STATE_VERSION, **self.binding, "n": secrets.token_hex(16)}
        if self.issuer is not None:
            state["h"] = self.issuer
        if program is not None:
            state[PROGRAM_KEY] = program
        return mcp_types.InputRequiredResult(
            input_requests={APPROVAL_KEY: self.question},
            request_state=json.dumps(state, separators=(",", ":")),
        )


def _field(schema: Any, value: Any) -> dict[str, Any] | None:
    """An argument's schema as an elicitation field (a primitive or a multi-select of
    strings), with the model's value as its default; None when it cannot be one."""
    if not isinstance(schema, Mapping):
        return None
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        if not (isinstance(items, Mapping) and items.get("type") == "string" and items.get("enum")):
            return None
        field: dict[str, Any] = {"type": "array", "items": dict(items)}
        for key in ("title", "description", "minItems", "maxItems"):
            if key in schema:
                field[key] = schema[key]
    elif isinstance(kind, str) and kind in _KEPT:
        field = {"type": kind, **{k: schema[k] for k in _KEPT[kind] if k in schema}}
        if kind == "string" and schema.get("format") in _FORMATS:
            field["format"] = schema["format"]
    else:
        return None
    if value is not None:
        field["default"] = value
    return field


def _fields(request: ApprovalRequest) -> dict[str, dict[str, Any]]:
    """The call's arguments a form can carry, as its fields."""
    parameters = request.tool.parameters
    properties = parameters.get("properties") if isinstance(parameters, Mapping) else None
    fields: dict[str, dict[str, Any]] = {}
    for name, argument in (properties or {}).items():
        field = _field(argument, request.arguments.get(name))
        if field is not None:
            fields[name] = field
    return fields


def _shown(request: ApprovalRequest, fields: Mapping[str, Any]) -> str:
    """The call's arguments as the question's text shows them: all of them when short, else
    every one no field carries, in full (the fields show the rest).

    Raises:
        ApprovalDeniedError: those are too long to show in full; nothing is asked.
    """
    shown = dumps_compact(dict(request.arguments))
    if len(shown) <= _SHOWN:
        return shown
    unseen = {k: v for k, v in request.arguments.items() if k not in fields}
    text = dumps_compact(unseen)
    if len(text) > _SHOWN_IN_FULL:
        raise _refused(
            request,
            f"its arguments that no field of the question can show are {len(text):,} "
            f"characters long, more than the {_SHOWN_IN_FULL:,} a question shows in full (a "
            "user approves only what they see): do less in one call",
        )
    return (
        f"{text} (the rest are the form's fields)" if len(unseen) < len(request.arguments) else text
    )


def approval_form(request: ApprovalRequest) -> mcp_types.ElicitRequest:
    """The question about ``request``: a form of the call's arguments the user can accept as
    they are, change, or decline; the arguments no field carries shown in full in its text.

    Raises:
        ApprovalDeniedError: those arguments are too long to show in full.
    """
    fields = _fields(request)
    required = [n for n in request.tool.parameters.get("required") or [] if n in fields]
    shown = _shown(request, fields)
    message = (
        f"Allow the call to {request.tool.name!r}? It needs approval ({request.reason}). "
        f"Arguments: {shown}. Accept to run it (change a field to run it with your value); "
        "decline to refuse it."
    )
    schema: dict[str, Any] = {"type": "object", "properties": fields}
    if required:
        schema["required"] = required
    return mcp_types.ElicitRequest(
        params=mcp_types.ElicitRequestFormParams(message=message, requested_schema=schema)
    )


def verdict_of(answer: mcp_types.ElicitResult, request: ApprovalRequest) -> bool | ApprovalEdit:
    """The core's verdict from the user's answer: True (run it), an :class:`ApprovalEdit` (run
    it with the fields the user changed).

    Raises:
        ApprovalDeniedError: the user declined or dismissed the question.
    """
    name = request.tool.name
    if answer.action == "decline":
        raise ApprovalDeniedError(
            f"The user declined the call to {name!r}, so it did not run. Do not retry it "
            "unless the user asks.",
            tool_name=name,
        )
    if answer.action != "accept":
        raise ApprovalDeniedError(
            f"The user dismissed the approval of the call to {name!r} without answering, so it "
            "did not run. Ask the user before trying it again.",
            tool_name=name,
        )
    fields = _fields(request)  # what the form asked; anything else in the answer is ignored
    changed = {
        key: value
        for key, value in (answer.content or {}).items()
        if key in fields and request.arguments.get(key) != value
    }
    if not changed:
        return True
    return ApprovalEdit({**request.arguments, **changed})


def _refused(request: ApprovalRequest, why: str) -> ApprovalDeniedError:
    name = request.tool.name
    return ApprovalDeniedError(
        f"Calling {name!r} needs approval ({request.reason}), and {why}, so it did not run. "
        "Choose another tool or ask the user.",
        tool_name=name,
    )


def _can_elicit(relay: Relay) -> bool:
    """Whether the client declared form-mode elicitation (an empty ``elicitation`` is form)."""
    declared = (relay.declared or {}).get("elicitation")
    if not isinstance(declared, Mapping):
        return False
    return not declared or "form" in declared


def _binding(request: ApprovalRequest) -> dict[str, Any]:
    """What an approval is bound to: the tool, the digest of the full arguments and, for a
    program's call, its run and its place in the run."""
    return {
        "q": request.tool.name,
        "d": request.arguments_digest,
        "r": request.run_id,
        "i": request.call_index,
    }


def _binds(state: Any, request: ApprovalRequest) -> bool:
    """Whether a request state's approval (or question) is about this very call."""
    if not isinstance(state, Mapping):
        return False
    return all(state.get(key) == value for key, value in _binding(request).items())


def _granted(
    verdict: bool | ApprovalEdit, request: ApprovalRequest, issuer: str | None
) -> dict[str, Any]:
    """A yes as it travels in a 2026 request state (sealed; bound to the call and, without a
    shared store, to the process that records its use)."""
    granted = (
        {"args": dict(verdict.arguments)} if isinstance(verdict, ApprovalEdit) else {"ok": True}
    )
    return {**granted, **_binding(request), **({"h": issuer} if issuer is not None else {})}


def _from_granted(granted: Any) -> bool | ApprovalEdit | None:
    if not isinstance(granted, Mapping):
        return None
    if isinstance(granted.get("args"), Mapping):
        return ApprovalEdit(dict(granted["args"]))
    return True if granted.get("ok") is True else None


async def _use_once(
    relay: ReturnToClient, request: ApprovalRequest, nonce: Any, issuer: Any
) -> None:
    """Record the approval a retry brings as used (its question's id, bound by the sealed
    state to this caller, tool and arguments): the first retry runs the call, a replay of it
    (a client retrying after a 502, an attacker re-sending it, on any replica) runs nothing.
    Without a shared store, only the process that asked (``issuer``) can record it.

    Raises:
        ApprovalDeniedError: the approval was used already, or its use cannot be recorded.
    """
    name = request.tool.name
    if not isinstance(nonce, str) or relay.claim is None:
        raise _refused(request, "the approval this retry brings cannot be bound to one call")
    if isinstance(relay.claim, OnceRecord) and relay.claim.foreign(issuer):
        raise _refused(
            request,
            "the approval was given through another gateway process (another replica, or "
            "this one before a restart), which alone knows whether it was used; replicas "
            "honour each other's approvals with a shared [store] sessions",
        )
    key = approval_key("", name, _binding(request), nonce)
    try:
        first = await relay.claim(key)
    except Exception as exc:  # the store is down: fail closed, nothing ran
        raise _refused(request, f"its approval could not be recorded as used ({exc})") from exc
    if not first:
        raise replayed_approval(name)


def approval_claimer(store: Any) -> OnceRecord:
    """How this gateway records an approval as used: in the session store shared by the
    replicas (its atomic ``claim_once``, off the event loop), else in this process (each key
    kept as long as a request state lives), when each approval it asks names this process
    (``issuer``) and one another process asked is refused."""
    return OnceRecord(store, STATE_TTL, issuing=True)


def client_approver(relay: Relay) -> ApprovalAsker:
    """The approver of one call: asks the client behind ``relay`` (see the module docstring).

    A 2026 yes is kept on the relay (``relay.approved``) for the state of a later round.
    """

    async def approve(request: ApprovalRequest) -> bool | ApprovalEdit:
        if isinstance(relay, ReturnToClient):
            return await _answered_by_retry(relay, request)
        if not relay.can_ask:
            raise _refused(
                request,
                "this client cannot be asked: over the 2025 protocol the gateway asks its user "
                "with an elicitation request, which needs a back-channel to the client",
            )
        if not _can_elicit(relay):
            raise _refused(
                request, "this client cannot ask its user (it declared no elicitation capability)"
            )
        assert isinstance(relay, AskClient)
        question = approval_form(request)
        try:
            async with waiting_on_upstream(relay.turn):  # the user's think time: not our work
                answer = await relay.session.send_request(
                    question,
                    mcp_types.ElicitResult,
                    metadata=ServerMessageMetadata(related_request_id=relay.request_id),
                )
        except Exception as exc:  # the client refused the request, or went away
            raise _refused(request, f"the client did not answer the question ({exc})") from exc
        return verdict_of(answer, request)

    return approve


async def _answered_by_retry(
    relay: ReturnToClient, request: ApprovalRequest
) -> bool | ApprovalEdit:
    """A 2026 call: the yes its sealed state carries, the answer its retry brings (either used
    once: :func:`_use_once`), or the question (:class:`ApprovalAsked`)."""
    state = relay.state or {}
    # A yes carried from an earlier round counts only for the very call it was given for (a
    # question answered for an upstream carries no approval of any other call).
    carried = state.get("a")
    granted = _from_granted(carried) if _binds(carried, request) else None
    given = carried if isinstance(carried, Mapping) else {}
    if granted is None and _binds(state, request) and APPROVAL_KEY in (relay.responses or {}):
        answer = mcp_types.ElicitResult.model_validate(relay.responses[APPROVAL_KEY])
        granted = verdict_of(answer, request)
        given = state
    issuer = getattr(relay.claim, "issuer", None)
    if granted is not None:
        await _use_once(relay, request, given.get("n"), given.get("h"))
        relay.approved = _granted(granted, request, issuer)
        return granted
    if not _can_elicit(relay):
        raise _refused(
            request, "this client cannot ask its user (it declared no elicitation capability)"
        )
    raise ApprovalAsked(approval_form(request), request, issuer)
