"""The option objects a :class:`~toolmgmt_core.ToolManager` is built from, grouped by concern.

=============  =====================================================================
``mode``       a mode object (:mod:`toolmgmt_core._session.modes`): ``Search()``, ``Auto(...)``
``discovery``  :class:`Discovery`: how many tools a search finds and loads, browsing
``access``     :class:`Access`: the profile and policy steps (what the agent may see and run)
``approval``   :class:`~toolmgmt_core.Approval`: which calls need a yes, and who says it
``results``    :class:`~toolmgmt_core.ResultBudget`: result budgets and truncation
``execution``  :class:`Execution`: how long a call may take; the key and life of paused programs
=============  =====================================================================

The gateway's configuration file fills the same objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from toolmgmt_core._calls.code.runs import DEFAULT_RUN_TTL, RunKey
from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._policy.files import PolicyFile
from toolmgmt_core._policy.profiles import Profile
from toolmgmt_core._policy.steps import Policy

__all__ = ["CALL_UNLOADED", "Access", "Discovery", "Execution"]

CALL_UNLOADED: tuple[str, ...] = ("error", "load")
"""What a direct call of a tool not listed yet may do."""


def _positive(owner: str, name: str, value: Any, *, optional: bool = False) -> None:
    if optional and value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{owner}({name}=...) must be a positive whole number, got {value!r}.")


@dataclass(frozen=True)
class Discovery:
    """How a session finds and loads tools.

    Usage::

        ToolManager(catalog, discovery=Discovery(max_results=8, max_active=40))
    """

    max_results: int = 5
    """Tools a search returns (and loads) at most, per query."""
    max_active: int | None = None
    """Most tools searches may add to a session's list; None for no cap."""
    min_score: float = 0.0
    """Search hits scoring below this are neither returned nor loaded (BM25 scores are not
    normalised: pick a value from ``catalog.search`` output; regex hits score 2 on the name and
    1 elsewhere)."""
    browse_limit: int = 50
    """Most tools one ``discover_tools`` listing shows before it asks to narrow."""
    call_unloaded: Literal["error", "load"] = "error"
    """What a direct call of a tool not listed yet does: ``"error"`` (an actionable error
    saying how to find or run it) or ``"load"`` (load it, then run it)."""
    companions: int = 1
    """Tools a search answer suggests beside its hits, at most, apart from them ("often used
    with": what conversations of several principals used with the hits; only where the
    catalog learns from use, see ``ToolCatalog.companions``); loaded like a hit. 0: none."""

    def __post_init__(self) -> None:
        _positive("Discovery", "max_results", self.max_results)
        if (
            isinstance(self.companions, bool)
            or not isinstance(self.companions, int)
            or self.companions < 0
        ):
            raise ConfigError(
                f"Discovery(companions=...) must be a whole number >= 0, got {self.companions!r}."
            )
        _positive("Discovery", "max_active", self.max_active, optional=True)
        _positive("Discovery", "browse_limit", self.browse_limit)
        if isinstance(self.min_score, bool) or not isinstance(self.min_score, int | float):
            raise ConfigError(f"Discovery(min_score=...) must be a number, got {self.min_score!r}.")
        if self.call_unloaded not in CALL_UNLOADED:
            raise ConfigError(
                f"Discovery(call_unloaded=...) must be 'error' or 'load', got "
                f"{self.call_unloaded!r}."
            )


@dataclass(frozen=True)
class Access:
    """What the agent may see and run: a profile, then policy steps, in order.

    Usage::

        ToolManager(catalog, access=Access("readonly", policies="policy.toml"))
        ToolManager(catalog, access="readonly")            # a profile alone

    A session may narrow it (``session.set_profile``, restored state) and never widen it: the
    profile is a ceiling.
    """

    profile: str | Profile | None = None
    """``"full"`` (default), ``"minimal"``, ``"readonly"``, a custom profile's name, or a
    :class:`~toolmgmt_core.Profile`."""
    policies: Iterable[Policy | Mapping[str, Any]] | str | Path | PolicyFile | None = None
    """Policy steps applied after the profile, in order (:class:`~toolmgmt_core.Policy` objects
    or mappings), or the path of a TOML/JSON policy file. A removed tool is invisible and
    uncallable through every integration; meta-tools are never removed."""
    profiles: Mapping[str, Profile] | Iterable[Profile] | None = None
    """Custom profiles known by name (for ``profile`` and ``session.set_profile``)."""

    @classmethod
    def of(cls, value: Access | str | Profile | None) -> Access:
        """``value`` as an :class:`Access` (a profile name or object alone is its profile).

        Raises:
            ConfigError: anything else; the message says what is accepted.
        """
        if isinstance(value, Access):
            return value
        if value is None or isinstance(value, str | Profile):
            return cls(profile=value)
        raise ConfigError(
            f"access must be an Access, a profile name or a Profile, got {type(value).__name__}."
        )


@dataclass(frozen=True)
class Execution:
    """How calls run.

    Usage::

        ToolManager(catalog, execution=Execution(timeout=10))
    """

    timeout: float | None = 30.0
    """Seconds a call may take when the tool sets no ``timeout`` (validation, the handler and
    shaping its result; not the time an approver takes); None for no limit."""
    run_key: RunKey | None = field(default=None, repr=False)
    """The key sealing a code-mode program's state while it waits at a call (text, bytes, or a
    function giving it). None: a random key of this manager, so a paused run resumes only in
    this process; give every worker or replica that may resume it the same key."""
    run_ttl: float = DEFAULT_RUN_TTL
    """Seconds a paused program can be resumed; after that its resume fails ("the program
    expired; run it again") and nothing runs."""
    run_elsewhere: bool = True
    """Whether another process (a fresh worker, a replica) may resume a paused program when no
    session store shared by them (Redis) records which were resumed: True where the
    framework's own state is resumed once (a LangGraph checkpoint, PydanticAI's history);
    False where a client holds the state and may send it again (the MCP gateway): such a state
    is refused ("paused by another process") rather than risk running it twice."""

    def __post_init__(self) -> None:
        if (
            isinstance(self.run_ttl, bool)
            or not isinstance(self.run_ttl, int | float)
            or not (self.run_ttl > 0)
        ):
            raise ConfigError(
                f"Execution(run_ttl=...) must be a positive number of seconds, got "
                f"{self.run_ttl!r}."
            )
        timeout = self.timeout
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
        ):
            raise ConfigError(
                f"Execution(timeout=...) must be a positive number of seconds or None, got "
                f"{timeout!r}."
            )
