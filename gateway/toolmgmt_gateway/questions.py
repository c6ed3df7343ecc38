"""An upstream tool's questions to its user (elicitation, sampling, roots), relayed through the
gateway to the client that made the call, and the answers back.

An upstream that speaks the 2026 protocol asks by answering a call with an input-required
result (SEP-2322): its questions, and its own request state. What the gateway does with them
depends on the client that made the call, whose relay the gateway hands down with the call (in
its :class:`~toolmgmt_core._calls.context.CallContext`):

- :class:`ReturnToClient`, a 2026 client: the call pauses with :class:`InputRequired` (the
  core's ``paused`` outcome), which the gateway answers as its own input-required result. The
  upstream's request state travels in the gateway's, which the SDK's request-state boundary
  seals (authenticated encryption under the gateway's key) and binds to the tool, its
  arguments and the caller, so any replica can take the client's retry:
  :meth:`ReturnToClient.resume` hands the answers and the upstream's state back to the
  upstream call they belong to.
- :class:`AskClient`, a 2025 client with a back-channel (stdio, the SDK's stateful HTTP, the
  gateway's own stream in the shared service: :mod:`toolmgmt_gateway.exchange`): each question goes
  to the client as the 2025 request (``elicitation/create``, ``sampling/createMessage``,
  ``roots/list``) on the call's own stream, and the call goes on with the answers upstream,
  round after round.
- :class:`Relay`, a 2025 client without a back-channel (one that declared no capability a
  question needs, in the shared service): nothing can be asked; no capability is declared
  upstream, so an upstream that would ask refuses the call itself (``-32021``).

Either way the upstream learns only the capabilities the client declared (:meth:`Relay.
capabilities`, put on each 2026 upstream call by :func:`callers_capabilities`): it never asks
what the client cannot answer. An upstream that refuses a call for a capability the client lacks
(``-32021``), or asks a question the client did not declare it can answer, ends the gateway's
call with that error (:class:`MissingCapability`).

Every question names the upstream that asks (:func:`attribute_questions`): in its ``_meta``
(:data:`UPSTREAM_META`), an elicitation's message starts with ``[upstream 'notes' asks]``, and
a sampling request's system prompt says whose request it is, so that a user never takes an
upstream's question for the gateway's own. An elicitation asking for a password, a token, an
API key or a secret is not relayed (the call fails, saying why) unless the upstream's
``allow_secret_questions`` says so: an upstream has no business collecting credentials through
the gateway's users.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast

import mcp.types as mcp_types
from mcp import Client
from mcp.shared.message import ServerMessageMetadata
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    RequestParamsMeta,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from toolmgmt_mcp.sdk_internals import keep_meta_key

from toolmgmt_core import ToolExecutionError
from toolmgmt_core.integration import CallPaused, arguments_digest
from toolmgmt_gateway.admission import waiting_on_upstream

__all__ = [
    "AskClient",
    "InputRequired",
    "MAX_ROUNDS",
    "MissingCapability",
    "PROGRAM_KEY",
    "Relay",
    "ReturnToClient",
    "STATE_VERSION",
    "UPSTREAM_META",
    "asks_for_secret",
    "attribute_questions",
    "callers_capabilities",
    "forward_capabilities",
]

MAX_ROUNDS = 10
"""Rounds of questions one call may take before the gateway gives up (the SDK's default)."""

_CAPABILITY_OF = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}
"""The client capability each kind of question needs."""
_RELAYED = tuple(_CAPABILITY_OF.values())
"""The client capabilities a question can need: the ones the gateway forwards upstream."""
STATE_VERSION = 1
"""The shape of the gateway's own request state (``v``), checked when a retry brings it back."""
PROGRAM_KEY = "p"
"""The key of a paused program's sealed state in the gateway's request state."""


UPSTREAM_META = "io.toolmgmt/upstream"
"""The ``_meta`` key naming the upstream a result or a question comes from."""

_SECRET = re.compile(
    r"\b(pass(?:word|phrase|code)?s?|pwd|tokens?|api keys?|apikeys?|secrets?|credentials?|"
    r"private keys?|access keys?|otp|one time (?:code|password)s?|2fa|mfa)\b",
    re.IGNORECASE,
)


def asks_for_secret(params: Mapping[str, Any]) -> str | None:
    """The words of an elicitation (its message, its fields' names, titles and descriptions)
    that ask for a credential, or None. A field of ``format: password`` counts too."""
    texts = [str(params.get("message") or "")]
    schema = params.get("requestedSchema")
    properties = schema.get("properties") if isinstance(schema, Mapping) else None
    for name, field_schema in (properties or {}).items():
        texts.append(str(name))
        if isinstance(field_schema, Mapping):
            texts += [str(field_schema.get(k) or "") for k in ("title", "description")]
            if field_schema.get("format") == "password":
                return f"field {name!r} (format: password)"
    for text in texts:
        match = _SECRET.search(re.sub(r"[_\-.]+", " ", text))
        if match:
            return repr(match.group(0))
    return None


def attribute_questions(
    upstream: str, tool: str, asked: mcp_types.InputRequiredResult, *, allow_secrets: bool
) -> mcp_types.InputRequiredResult:
    """``asked`` with each question naming ``upstream`` (see the module's docstring).

    Raises:
        ToolExecutionError: an elicitation asks for a credential and ``allow_secrets`` is off.
    """
    requests: dict[str, Any] = {}
    for key, request in (asked.input_requests or {}).items():
        data = request.model_dump(mode="json", by_alias=True, exclude_none=True)
        params = data.setdefault("params", {})
        params["_meta"] = {**(params.get("_meta") or {}), UPSTREAM_META: upstream}
        if request.method == "elicitation/create":
            secret = None if allow_secrets else asks_for_secret(params)
            if secret is not None:
                raise ToolExecutionError(
                    f"Upstream {upstream!r} asked its user for a credential ({secret}) during "
                    f"{tool!r}; the gateway does not relay such questions, so the call was "
                    "stopped. A user never gives a password, token or key to a tool's question; "
                    f"an operator who trusts this upstream with them sets "
                    f"allow_secret_questions = true in [upstreams.{upstream}].",
                    tool_name=tool,
                )
            params["message"] = f"[upstream {upstream!r} asks] {params.get('message', '')}"
        elif request.method == "sampling/createMessage":
            note = (
                f"[This request comes from upstream {upstream!r} through the gateway, not from "
                "the gateway or the user.]"
            )
            prompt = params.get("systemPrompt")
            params["systemPrompt"] = f"{note}\n{prompt}" if prompt else note
        requests[key] = type(request).model_validate(data)
    return asked.model_copy(update={"input_requests": requests})


class InputRequired(CallPaused):
    """An upstream asked questions that go back to the 2026 client as an input-required result.

    The core's pause (:class:`~toolmgmt_core.integration.CallPaused`): the call ends paused,
    and the gateway answers with :meth:`result`.
    """

    def __init__(
        self, asked: mcp_types.InputRequiredResult, upstream: str, tool: str, arguments: Any = None
    ) -> None:
        super().__init__(f"upstream {upstream!r} asked for input during {tool!r}")
        self.asked = asked
        self.upstream = upstream
        self.tool = tool
        self.digest = arguments_digest(arguments or {})
        """The digest of the call's arguments: the answers go to that call alone."""

    def result(
        self, approved: Mapping[str, Any] | None = None, program: str | None = None
    ) -> mcp_types.InputRequiredResult:
        """The gateway's own input-required result: the upstream's questions, and a request
        state holding the upstream's (the SDK's boundary seals it on the way out), the sealed
        state of the program the question paused (``program``; code mode) and, when the user
        approved the call in an earlier round, that yes (:mod:`toolmgmt_gateway.approval`:
        bound to that one call), so the next round does not ask again."""
        state: dict[str, Any] = {"v": STATE_VERSION, "u": self.upstream, "t": self.tool}
        state["d"] = self.digest
        if self.asked.request_state is not None:
            state["s"] = self.asked.request_state
        if program is not None:
            state[PROGRAM_KEY] = program
        if approved is not None:
            # A fresh id each round: the yes it carries is used once, by this round's retry.
            state["a"] = {**approved, "n": secrets.token_hex(16)}
        return mcp_types.InputRequiredResult(
            input_requests=self.asked.input_requests,
            request_state=json.dumps(state, separators=(",", ":")),
        )


class MissingCapability(Exception):  # noqa: N818 - names the protocol error it carries
    """An upstream refused a call for a capability the client did not declare (``-32021``);
    the gateway ends the call with that error."""

    def __init__(self, message: str, data: Any) -> None:
        super().__init__(message)
        self.message = message
        self.data = data

    @property
    def code(self) -> int:
        """The JSON-RPC error code: ``-32021``."""
        return MISSING_REQUIRED_CLIENT_CAPABILITY


@dataclass
class Relay:
    """Where one call's upstream questions go: the base of the relays, itself a client that
    cannot be asked (no back-channel), so the upstream is told of no capability."""

    declared: Mapping[str, Any] | None = None
    """The client's declared capabilities (its ``ClientCapabilities`` as JSON), or None."""
    approved: Mapping[str, Any] | None = None
    """The user's yes to this call, once given (:mod:`toolmgmt_gateway.approval`; a 2026 call
    carries it in the state of its next round)."""
    can_ask: ClassVar[bool] = False
    """Whether a question can reach the client."""
    turn: Any = None
    """The request's place in its client's share of the work (:mod:`toolmgmt_gateway.admission`),
    given back while the call waits on an upstream or on the client, or None."""

    def _relayable(self) -> dict[str, Any]:
        declared = self.declared or {}
        return {key: declared[key] for key in _RELAYED if declared.get(key) is not None}

    def capabilities(self) -> dict[str, Any]:
        """What the upstream may rely on: the client's own capabilities that a question can
        need (elicitation, sampling, roots), as it declared them; none when the client cannot
        be asked."""
        return self._relayable() if self.can_ask else {}

    def resume(self, upstream: str, tool: str, arguments: Any = None) -> tuple[Any, str | None]:
        """The answers and the upstream's request state to start ``tool`` of ``upstream``
        with ``arguments``: (None, None) unless this call is a client's retry with answers."""
        return None, None

    def resume_state(self) -> str | None:
        """The sealed state of the program a 2026 retry resumes (code mode), or None."""
        return None

    def check_declared(self, upstream: str, asked: mcp_types.InputRequiredResult) -> None:
        """Refuse questions the client did not declare it can answer (an upstream told the
        client's capabilities does not ask them; one that does is not relayed).

        Raises:
            MissingCapability: naming the capability, as the upstream would have.
        """
        declared = self._relayable()
        for request in (asked.input_requests or {}).values():
            needed = _CAPABILITY_OF[request.method]
            if needed not in declared:
                raise MissingCapability(
                    f"Upstream {upstream!r} asked {request.method}, which needs the client's "
                    f"{needed} capability; the client did not declare it.",
                    {"requiredCapabilities": {needed: {}}},
                )

    async def answer(
        self, upstream: str, tool: str, asked: mcp_types.InputRequiredResult, arguments: Any = None
    ) -> dict[str, Any]:
        """The client's answers to ``asked`` (the upstream's questions).

        Raises:
            InputRequired: the questions go back to the client as the call's result.
            MissingCapability: a question the client did not declare it can answer.
            ToolExecutionError: they cannot reach the client, or it refused one.
        """
        self.check_declared(upstream, asked)
        methods = sorted({r.method for r in (asked.input_requests or {}).values()})
        raise ToolExecutionError(
            f"Upstream {upstream!r} asked its user ({', '.join(methods) or 'no question'}) "
            f"during {tool!r}, and this client cannot be asked: over the 2025 protocol "
            "questions need a back-channel to the client; the 2026 protocol relays them "
            "everywhere.",
            tool_name=tool,
        )


@dataclass
class ReturnToClient(Relay):
    """A 2026 client: questions end the call with :class:`InputRequired`; its retry resumes.

    Usage::

        relay = ReturnToClient.for_retry(capabilities, params.request_state, params.input_responses)
    """

    can_ask: ClassVar[bool] = True
    state: Mapping[str, Any] | None = None
    """The gateway's request state the client sent back (the boundary checked and opened
    it), or None."""
    responses: Any = None
    """The client's answers (``inputResponses``), or None."""
    claim: Callable[[str], Awaitable[bool]] | None = None
    """Marks an approval's key used (True the first time, on any replica); None: every
    approval a retry brings is refused (nothing can prove it was not used)."""
    _used: bool = field(default=False, repr=False)

    @classmethod
    def for_retry(
        cls,
        declared: Mapping[str, Any] | None,
        state: str | None,
        responses: Any,
        claim: Callable[[str], Awaitable[bool]] | None = None,
    ) -> ReturnToClient:
        """The relay of a request that may be a retry (``requestState`` and
        ``inputResponses`` as the client sent them; the state already opened by the
        boundary, so it is the gateway's own)."""
        opened: Mapping[str, Any] | None = None
        if state is not None:
            try:
                parsed = json.loads(state)
            except ValueError:
                parsed = None
            if not isinstance(parsed, dict) or parsed.get("v") != STATE_VERSION:
                raise ValueError("request state of another version or shape")
            opened = parsed
        return cls(declared=declared, state=opened, responses=responses, claim=claim)

    def resume_state(self) -> str | None:
        """See :meth:`Relay.resume_state`."""
        program = (self.state or {}).get(PROGRAM_KEY)
        return program if isinstance(program, str) else None

    def resume(self, upstream: str, tool: str, arguments: Any = None) -> tuple[Any, str | None]:
        """See :meth:`Relay.resume`: once, for the upstream call the state names, by its tool
        and arguments (a program's gathered calls of one tool each get their own answers; any
        call when the client sent answers without state)."""
        if self._used or (self.state is None and self.responses is None):
            return None, None
        named = [upstream, tool, arguments_digest(arguments or {})]
        if self.state is not None and [self.state.get(k) for k in "utd"] != named:
            return None, None
        self._used = True
        state = self.state.get("s") if self.state is not None else None
        return self.responses, state if isinstance(state, str) else None

    async def answer(
        self, upstream: str, tool: str, asked: mcp_types.InputRequiredResult, arguments: Any = None
    ) -> dict[str, Any]:
        """See :meth:`Relay.answer`: always :class:`InputRequired` (or
        :class:`MissingCapability`)."""
        self.check_declared(upstream, asked)
        raise InputRequired(asked, upstream, tool, arguments)


@dataclass
class AskClient(Relay):
    """A 2025 client with a back-channel: each question is sent to it on the call's stream."""

    can_ask: ClassVar[bool] = True
    session: Any = None
    """The SDK's ``ServerSession`` of the call."""
    request_id: Any = None
    """The call's JSON-RPC id (the questions go on its stream)."""

    async def answer(
        self, upstream: str, tool: str, asked: mcp_types.InputRequiredResult, arguments: Any = None
    ) -> dict[str, Any]:
        """See :meth:`Relay.answer`: the client's answer to each question, asked in turn.

        Raises:
            MissingCapability: a question the client did not declare it can answer.
        """
        self.check_declared(upstream, asked)
        answers: dict[str, Any] = {}
        for key, request in (asked.input_requests or {}).items():
            try:
                async with waiting_on_upstream(self.turn):  # the client's answer: not our work
                    answers[key] = await self.session.send_request(
                        request,
                        _answer_type(request),
                        metadata=ServerMessageMetadata(related_request_id=self.request_id),
                    )
            except Exception as exc:  # the client refused, or went away
                raise ToolExecutionError(
                    f"Upstream {upstream!r} asked its user ({request.method}) during {tool!r}, "
                    f"and the client did not answer: {exc}",
                    tool_name=tool,
                ) from exc
        return answers


def _answer_type(request: Any) -> Any:
    if isinstance(request, mcp_types.ElicitRequest):
        return mcp_types.ElicitResult
    if isinstance(request, mcp_types.ListRootsRequest):
        return mcp_types.ListRootsResult
    if request.params.tools or request.params.tool_choice:
        return mcp_types.CreateMessageResultWithTools
    return mcp_types.CreateMessageResult


def callers_capabilities(client: Client, relay: Relay | None) -> RequestParamsMeta | None:
    """The ``_meta`` a call made for a client through ``relay`` sends a 2026 upstream: the
    client's capabilities (None for a handshake-era connection, which declared its own once,
    or a call made for no client)."""
    if relay is None or client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return None
    return cast(RequestParamsMeta, {CLIENT_CAPABILITIES_META_KEY: relay.capabilities()})


def forward_capabilities(client: Client) -> None:
    """Make a 2026 upstream connection declare, on each call made for a client, the
    capabilities of that client (:func:`callers_capabilities`, given as the request's
    ``_meta``) where the SDK declares one set per connection (the 2026 protocol carries them
    per request).

    A handshake-era connection declared its capabilities once, at ``initialize``: unchanged.
    """
    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        keep_meta_key(client, CLIENT_CAPABILITIES_META_KEY)
