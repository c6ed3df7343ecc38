"""The exception tree of toolmgmt.

Every error toolmgmt raises is a :class:`ToolmgmtError`. Errors that end up in front of a model
(:class:`ToolCallError` and its children) carry a short, actionable ``message`` that names the
valid options or the closest names, and a ``kind`` the model can tell apart ("gateway" errors are
toolmgmt's own; "tool" errors come from the tool itself)::

    ToolmgmtError
    ├── CatalogError (ValueError)          bad input to the catalog
    │   ├── InvalidToolError               a tool that is not valid (name, schema, handler)
    │   ├── DuplicateToolError             a name already in the catalog
    │   └── CatalogSourceError             a catalog file, module or config that cannot be read
    ├── BrowseError (ValueError)           an unknown domain or group; lists the valid ones
    ├── SearchError (ValueError)           a query that cannot run (bad regex, too long, ...)
    ├── ConfigError (ValueError)           bad configuration: profiles, policies, files
    ├── ProviderError (ValueError)         a tool that cannot be formatted for a provider
    ├── EmbeddingError (RuntimeError)      an embedding model failed (error, timeout, wrong count)
    ├── TokenizerUnavailableError          no tiktoken encoding could be loaded offline
    ├── StoreError (RuntimeError)          a session or catalog store failed
    │   ├── InvalidSessionError (ValueError)   a session id or state the store refuses
    │   ├── SessionConflictError           the session changed since it was loaded
    │   └── StoreUnavailableError          the store's server cannot be reached
    └── ToolCallError                      a call that failed; ``message`` is for the model
        ├── ToolNotFoundError (KeyError)   gateway, retry: unknown name (closest names given);
        │                                  also what ``catalog.get`` raises
        │   ├── ToolNotPermittedError      gateway, denied: a real tool the policy hides here
        │   └── ToolNotListedError         gateway, retry: a name missing from the list where
        │                                  only listed names may be called (an MCP
        │                                  ``tools/call``); the protocol's error
        ├── ToolNotLoadedError             gateway, retry: deferred tool called before loading
        ├── InvalidArgumentsError          gateway, retry: arguments do not match the schema
        ├── ToolDeniedError                gateway, denied: policy refuses the tool
        ├── ApprovalDeniedError            gateway, denied: the approver said no
        ├── ToolUnavailableError           gateway, failed: no handler, upstream down, ...
        │   └── ToolAnswerLostError        gateway, failed: the answer was lost; it may have run
        ├── ToolTimeoutError               gateway, failed: the handler took too long
        └── ToolExecutionError             tool, failed: the handler raised or reported one

A call error's ``kind`` says who failed (toolmgmt or the tool), its ``outcome`` what the model
can do about it: ``retry`` (fix the call), ``denied`` (not allowed: do not repeat it) or
``failed``; each integration maps the outcome to its framework's own form (docs/adapters.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from toolmgmt_core._model.redaction import redact_secrets

__all__ = [
    "ApprovalDeniedError",
    "BrowseError",
    "CatalogError",
    "CatalogSourceError",
    "ConfigError",
    "DuplicateToolError",
    "EmbeddingError",
    "InvalidArgumentsError",
    "InvalidSessionError",
    "InvalidToolError",
    "ProviderError",
    "SearchError",
    "SessionConflictError",
    "StoreError",
    "StoreUnavailableError",
    "TokenizerUnavailableError",
    "ToolAnswerLostError",
    "ToolCallError",
    "ToolDeniedError",
    "ToolExecutionError",
    "ToolNotFoundError",
    "ToolNotListedError",
    "ToolNotLoadedError",
    "ToolNotPermittedError",
    "ToolTimeoutError",
    "ToolUnavailableError",
    "ToolmgmtError",
    "describe_exception",
    "exception_message",
]


class ToolmgmtError(Exception):
    """Base class of every toolmgmt error."""


class CatalogError(ToolmgmtError, ValueError):
    """Bad input to the catalog; the catalog is left unchanged."""


class InvalidToolError(CatalogError):
    """A tool definition that is not valid: empty name, bad schema, non-callable handler."""


class DuplicateToolError(CatalogError):
    """A tool name that the catalog already holds."""


class CatalogSourceError(CatalogError):
    """A catalog source (a JSON file, a ``module:attribute``, a gateway config) that cannot be
    read or holds no valid tool; the message names the source and what is wrong."""


class BrowseError(ToolmgmtError, ValueError):
    """An unknown domain or group; the message lists the valid ones."""


class SearchError(ToolmgmtError, ValueError):
    """A query that cannot run: a regex that does not compile or is too long, an empty query."""


class ConfigError(ToolmgmtError, ValueError):
    """Bad configuration: an unknown profile, an invalid policy file, a bad option."""


class ProviderError(ToolmgmtError, ValueError):
    """A tool or request that cannot be made valid for a provider."""


class EmbeddingError(ToolmgmtError, RuntimeError):
    """An embedding model that failed: an API error, a timeout, or a wrong number of vectors.

    Search catches it and falls back to BM25 alone.
    """


class TokenizerUnavailableError(ToolmgmtError, RuntimeError):
    """No tiktoken encoding could be loaded without the network."""


class StoreError(ToolmgmtError, RuntimeError):
    """A session or catalog store (Redis, PostgreSQL) that failed or refused an operation."""


class InvalidSessionError(StoreError, ValueError):
    """A session id or state the store refuses: a bad id, a state too large or not JSON.

    The message says what is wrong and what is valid; nothing was stored.
    """


class SessionConflictError(StoreError):
    """The session changed in the store since it was loaded (another writer saved first).

    Load it again and re-apply the change; :func:`~toolmgmt_core._stores.update_session` does
    that for you.
    """


class StoreUnavailableError(StoreError):
    """The store's server cannot be reached; the message names it (without a password)."""


class ToolCallError(ToolmgmtError):
    """A tool call that failed. ``message`` is short and written for the model.

    ``kind`` is ``"call"`` for toolmgmt's own refusals of the call (an unknown tool, invalid
    arguments, a denial, a timeout: the model fixes its call or gives up) and ``"tool"`` for
    errors raised or reported by the tool itself, so a model (and a log) can tell them apart,
    with or without the MCP gateway.
    """

    kind = "call"
    code = "error"
    outcome = "failed"
    """What the call came to, for an integration to map to its framework's form: ``"retry"`` (the
    model can fix its call: another name, other arguments, a search first), ``"denied"`` (policy or
    an approver refused it) or ``"failed"`` (the tool could not run or failed)."""

    def __init__(self, message: str, *, tool_name: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.tool_name = tool_name

    def to_dict(self) -> dict[str, str]:
        """The error as the compact JSON object sent to a model."""
        return {"error": self.code, "kind": self.kind, "message": self.message}


class ToolNotFoundError(ToolCallError, KeyError):
    """No (visible) tool by that name; ``suggestions`` holds the closest (visible) names.

    The one error for a name that names nothing: a call's answer, and what ``catalog.get``
    raises (a ``KeyError`` too, as a mapping's lookup would).
    """

    code = "unknown_tool"
    outcome = "retry"

    def __init__(
        self, message: str, *, tool_name: str | None = None, suggestions: Sequence[str] = ()
    ) -> None:
        super().__init__(message, tool_name=tool_name)
        self.suggestions = list(suggestions)

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.message

    @classmethod
    def unknown(cls, name: str, suggestions: Sequence[str] = ()) -> ToolNotFoundError:
        """A lookup's error for ``name``, naming the closest names."""
        hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        return cls(f"Unknown tool {name!r}.{hint}", tool_name=name, suggestions=suggestions)

    @property
    def name(self) -> str | None:
        """The name looked up (``tool_name``)."""
        return self.tool_name


class ToolNotPermittedError(ToolNotFoundError):
    """A tool the model named (exactly, or as the same name folded) that exists but that the
    policy hides from this agent.

    It is a :class:`ToolNotFoundError` (there is no such tool *here*), with its own ``code`` so
    the model stops looking for it; ``suggestions`` only ever hold visible tools. Its outcome
    is ``denied``: no change to the call makes it run, so no integration counts it as a retry.
    """

    code = "not_permitted"
    outcome = "denied"


class ToolNotListedError(ToolNotFoundError):
    """A name called directly that the tool list does not hold, exactly, where the integration's
    protocol allows only listed names (``CallContext.listed_only``: an MCP ``tools/call``).

    No folding, no provider form and no loading applies: the integration answers it with its
    protocol's own error (MCP's ``-32602``), naming :attr:`listed`.
    """

    def __init__(self, message: str, *, tool_name: str | None = None, listed: Sequence[str]):
        super().__init__(message, tool_name=tool_name)
        self.listed = list(listed)
        """The names the list holds, sorted."""


class ToolNotLoadedError(ToolCallError):
    """A deferred tool called before it was loaded."""

    code = "tool_not_loaded"
    outcome = "retry"


class InvalidArgumentsError(ToolCallError):
    """Arguments that do not match the tool's JSON Schema."""

    code = "invalid_arguments"
    outcome = "retry"


class ToolDeniedError(ToolCallError):
    """A tool that policy does not allow here."""

    code = "tool_denied"
    outcome = "denied"


class ApprovalDeniedError(ToolCallError):
    """A call the approval callback refused."""

    code = "approval_denied"
    outcome = "denied"


class ToolUnavailableError(ToolCallError):
    """A tool that cannot run now: no handler, an upstream that is down."""

    code = "tool_unavailable"


class ToolAnswerLostError(ToolUnavailableError):
    """The call's request or its answer was lost on the way (the connection to an upstream
    lives on): the call may or may not have run.

    A handler raises it to let the core decide: the core runs the call once more when the
    tool is annotated read-only, or idempotent and not destructive, never otherwise
    (:func:`~toolmgmt_core._calls.execution.run_handler`); the model sees a
    ``tool_unavailable`` error when it is not resent or is lost again.
    """


class ToolTimeoutError(ToolCallError):
    """A handler that did not finish within the tool's timeout."""

    code = "timeout"


class ToolExecutionError(ToolCallError):
    """The tool itself failed: its handler raised or returned an error."""

    kind = "tool"
    code = "tool_error"


def __getattr__(name: str) -> type[ToolNotFoundError]:
    if name == "UnknownToolError":  # the catalog's lookup error became ToolNotFoundError
        import warnings

        warnings.warn(
            "UnknownToolError is ToolNotFoundError now (one error for a name that names "
            "nothing); import ToolNotFoundError.",
            DeprecationWarning,
            stacklevel=2,
        )
        return ToolNotFoundError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def describe_exception(exc: BaseException) -> str:
    """One line naming ``exc`` for a log or a status: ``Type: the first line of its message``
    (an exception group: its first leaf), whole even when the message cannot be read (an
    exception from a tool or an upstream is untrusted too)."""
    while getattr(exc, "exceptions", None):  # an exception group: its first cause
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    text = exception_message(exc)
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def exception_message(exc: BaseException) -> str:
    """``str(exc)`` stripped (maybe empty) with its secrets replaced
    (:func:`~toolmgmt_core._model.redaction.redact_secrets`: a tool's failure may quote a
    connection string or a key), or a stand-in when that itself fails (an exception from a tool
    or an upstream is untrusted too)."""
    try:
        text = str(exc).strip()
    except Exception:
        return "(its message could not be read)"
    return redact_secrets(text)
