"""The events the core emits as it searches, loads, and runs calls.

Events are plain frozen dataclasses, made only when a listener is registered (see
:class:`~toolmgmt_core._events.hub.EventHub`). They carry what happened in this process,
argument and query text included; a listener that sends anything out of the process (spans,
metrics, a usage log) leaves that text out unless its user opted in
(:mod:`toolmgmt_core._events.content`).

A call's :class:`CallStarted` and :class:`CallFinished` are emitted in the same task, around
everything the call does (its handler included), and every other event of the call between
them, in that task too: a listener may make something current on the first (an OpenTelemetry
span, so the handler's own outgoing calls nest under it) and end it on the second, which always
comes, even when a framework's signal or a cancellation ends the call (``outcome`` is then
``interrupted``).
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any, TypeVar

_E = TypeVar("_E")

__all__ = [
    "ApprovalAnswered",
    "ApprovalAsked",
    "BudgetExhausted",
    "CallFinished",
    "CallStarted",
    "Event",
    "PolicyDenied",
    "ProgramFinished",
    "ProgramStarted",
    "ResultTruncated",
    "SearchDone",
    "ToolsListed",
    "ToolsLoaded",
]


def _filled_at_once(cls: type[_E]) -> type[_E]:
    """``cls``, a frozen dataclass, with an ``__init__`` of the same signature that fills the
    instance's dict directly: a frozen dataclass's own sets each field through
    ``object.__setattr__``, which made building a call's two events cost more than the rest of
    what the pipeline does for listeners. Equality, hashing, ``repr`` and immutability are the
    dataclass's own."""
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    if any(f.default_factory is not MISSING for f in fields(cls)):  # type: ignore[arg-type]
        raise TypeError(
            f"{cls.__name__}: a field with a default_factory needs the dataclass's own __init__"
        )
    namespace: dict[str, Any] = {
        f"_default_{f.name}": f.default
        for f in fields(cls)  # type: ignore[arg-type]
        if f.default is not MISSING
    }
    parameters = ", ".join(
        f"{name}=_default_{name}" if f"_default_{name}" in namespace else name for name in names
    )
    lines = "".join(f"    _instance_dict[{name!r}] = {name}\n" for name in names)
    source = f"def __init__(self, {parameters}):\n    _instance_dict = self.__dict__\n{lines}"
    exec(source, namespace)  # what dataclasses does to write an __init__
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__  # type: ignore[misc]
    cls.__init__ = init  # type: ignore[method-assign]
    return cls


@dataclass(frozen=True)
class Event:
    """Something the core did for one conversation."""

    conversation: str | None
    """The conversation: the session's id in its store, else the one its adapter gave it (a
    LangGraph thread), else a key of the session object alone (``local-...``); None when
    emitted outside a session."""


@_filled_at_once
@dataclass(frozen=True)
class SearchDone(Event):
    """A search a meta-tool ran (``tool_search``, ``discover_tools`` with a query)."""

    queries: tuple[str, ...]
    """What was searched for (text: keep it in the process unless opted in)."""
    method: str
    """``keyword`` or ``regex``."""
    engine: str
    """``bm25``, ``hybrid`` (with embeddings) or ``regex``."""
    hits: tuple[str, ...]
    """The names found, best first."""
    duration: float
    """Seconds the search took."""


@_filled_at_once
@dataclass(frozen=True)
class ToolsLoaded(Event):
    """Tools a search or schema request loaded into the session."""

    names: tuple[str, ...]
    """The tools added, in load order."""
    definition_tokens: int
    """Tokens of their definitions."""


@_filled_at_once
@dataclass(frozen=True)
class ToolsListed(Event):
    """The tool list a session handed out for one model request (``session.tools()``)."""

    tools: int
    """Definitions listed (meta-tools included)."""
    definition_tokens: int
    """Tokens of those definitions."""
    flat_tokens: int
    """Tokens every tool the session may see would take, listed flat: what discovery saved is
    the difference."""


@_filled_at_once
@dataclass(frozen=True)
class CallStarted(Event):
    """A call entered the pipeline (a meta-tool's, or a tool's)."""

    tool: str
    """The name the model used (the tool's own name once resolved, for an inner call)."""
    call_id: str | None
    """The provider's id of the call."""
    arguments: Any = field(default=None, repr=False)
    """What the model sent (text: keep it in the process unless opted in)."""
    meta: bool = False
    """Whether a meta-tool was called."""


@_filled_at_once
@dataclass(frozen=True)
class CallFinished(Event):
    """A call left the pipeline: what it came to."""

    started: CallStarted
    """The event that began it."""
    tool: str
    """The tool that ran (resolved), or the name asked for when none did."""
    outcome: str
    """``success``, ``retry``, ``denied`` or ``failed`` (:attr:`ToolResult.outcome`), or
    ``interrupted``: a framework's signal (a pause for approval), a pause for the caller's
    answer (a ``paused`` outcome) or a cancellation left the call with no result (``signal``
    names it)."""
    error_code: str | None
    """The error's code (``invalid_arguments``, ``not_permitted``...), or None."""
    error_kind: str | None
    """``gateway`` or ``tool``, or None."""
    duration: float
    """Seconds in the pipeline (time an approver took included)."""
    tokens: int
    """Tokens of the result the model gets."""
    original_tokens: int
    """Tokens before truncation."""
    truncated: bool
    """Whether the result was cut."""
    result: Any = field(default=None, repr=False)
    """The result's content (text: keep it in the process unless opted in)."""
    signal: str | None = None
    """The class of the signal, pause or cancellation that interrupted the call, or None."""


@_filled_at_once
@dataclass(frozen=True)
class PolicyDenied(Event):
    """A call refused because the policy hides or denies its tool."""

    tool: str
    """The tool refused."""
    code: str
    """``not_permitted`` or ``tool_denied``."""


@_filled_at_once
@dataclass(frozen=True)
class ApprovalAsked(Event):
    """A call that needs approval, before its approver answers."""

    tool: str
    """The tool about to run."""
    reason: str
    """Why it needs approval."""


@_filled_at_once
@dataclass(frozen=True)
class ApprovalAnswered(Event):
    """An approver's answer (a framework's pause is no answer yet: nothing is emitted)."""

    tool: str
    """The tool asked about."""
    verdict: str
    """``approved``, ``denied``, ``edited`` (run with other arguments) or ``answered`` (the
    approver answered in the tool's place)."""


@_filled_at_once
@dataclass(frozen=True)
class ResultTruncated(Event):
    """A result cut (or summarised) to its budget."""

    tool: str
    """The tool whose result it was."""
    tokens_before: int
    """Tokens of the whole result."""
    tokens_after: int
    """Tokens the model gets."""
    strategy: str
    """``smart``, ``head``, ``tail`` or ``summary``."""


@_filled_at_once
@dataclass(frozen=True)
class BudgetExhausted(Event):
    """The session's result budget is spent: results are cut harder from now on."""

    tool: str
    """The tool whose result spent it."""
    session_tokens: int
    """The session budget."""
    spent: int
    """Tokens of results in the context now."""


@_filled_at_once
@dataclass(frozen=True)
class ProgramStarted(Event):
    """A ``run_code`` program began (or resumed from a pause): its tools' calls come between
    this and its :class:`ProgramFinished`, in the same task."""

    call_id: str | None
    """The provider's id of the ``run_code`` call."""
    resumed: bool = False
    """Whether it carries on from a pause (an approval it waited for)."""


@_filled_at_once
@dataclass(frozen=True)
class ProgramFinished(Event):
    """A ``run_code`` program ended, or paused (``outcome`` ``paused``)."""

    started: ProgramStarted
    """The event that began it."""
    outcome: str
    """``success``, ``retry``, ``failed`` or ``denied`` (the result's outcome), ``paused`` (a
    framework's pause at one of its calls) or ``interrupted`` (a cancellation, an error)."""
    calls: int
    """Tool calls it made (in this run)."""
    inner_tokens: int
    """Tokens of its calls' whole results: what one-by-one calls would have sent the model."""
    result_tokens: int
    """Tokens of what it handed back to the model."""
    duration: float
    """Seconds it took (its tools' time included)."""
    signal: str | None = None
    """The class of the signal that paused it, or None."""

    @property
    def tokens_kept_out(self) -> int:
        """Result tokens that never entered the context."""
        return max(self.inner_tokens - self.result_tokens, 0)
