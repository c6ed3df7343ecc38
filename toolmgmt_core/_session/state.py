"""A session's state as plain JSON: what :meth:`ToolSession.to_json` writes, what
:meth:`ToolSession.from_json` accepts, and how two writers' states merge.

State is untrusted when it comes back (from an agent's input, a checkpoint, a shared store): it
is checked here, bounded in size, and it can only narrow what the manager's configuration
allows (the session applies a ``profile`` within the configured one). The shape::

    {"version": 1, "mode": "search", "loaded": ["crm_search_contacts", ...],
     "profile": "readonly", "results": {...}, "programs": {call key: sealed paused program}}

``profile``, ``results`` and ``programs`` (code mode's programs paused at a call waiting for
approval) are left out when unset. :func:`merge_states` combines the state a
store holds with the change one call made, so that two replicas writing one conversation at the
same moment lose nothing: loads are a union in load order, result records a union by record id
(:mod:`toolmgmt_core._calls.records`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolmgmt_core._calls.records import merge_accounts
from toolmgmt_core._model.errors import ConfigError

__all__ = [
    "MAX_STATE_CHARS",
    "MAX_STATE_LOADED",
    "MAX_STATE_NAME_CHARS",
    "MAX_STATE_PROGRAMS",
    "STATE_KEYS",
    "STATE_VERSION",
    "SessionState",
    "merge_states",
    "parse_state",
]

STATE_VERSION = 1
"""Version of the JSON state written by :meth:`ToolSession.to_json`."""

MAX_STATE_CHARS = 4_000_000
"""Longest session state read as JSON text."""

MAX_STATE_LOADED = 10_000
"""Most loaded tool names a restored session state may hold."""

MAX_STATE_NAME_CHARS = 1_000
"""Longest tool name a restored session state may hold."""

MAX_STATE_PROGRAMS = 64
"""Most entries of paused programs a session state holds: live ones (at most
:data:`MAX_LIVE_PROGRAMS`) and the marks of those resumed or dropped, each kept until its run
would have expired; while they fill it, a ``run_code`` call whose program may pause there is
refused before it starts (a dropped mark would let its call start over)."""

MAX_LIVE_PROGRAMS = 8
"""Most paused programs a session state keeps for integrations that keep none themselves; an older
one is dropped, and its resume fails ("run it again") rather than starting it over."""

STATE_KEYS = ("version", "mode", "loaded", "profile", "results", "programs")
"""The keys a session state may have."""

_SHOWN = 60


def _clip(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


@dataclass(frozen=True)
class SessionState:
    """A checked session state (not yet applied to a session)."""

    loaded: tuple[str, ...] = ()
    """Names loaded, in load order."""
    profile: str | None = None
    """The profile named (still to be looked up among the manager's), or None."""
    results: Mapping[str, Any] | None = None
    """The result budget's account, as ``SessionBudget.to_json`` wrote it, or None."""
    mode: str | None = None
    """The mode of the manager that wrote it (informational)."""
    programs: Mapping[str, Any] | None = None
    """Code mode's paused programs kept for integrations that keep none, by call key (sealed text;
    ``-`` marks one resumed or dropped), or None."""

    def to_json(self) -> dict[str, Any]:
        """The state as plain JSON."""
        state: dict[str, Any] = {"version": STATE_VERSION}
        if self.mode is not None:
            state["mode"] = self.mode
        state["loaded"] = list(self.loaded)
        if self.profile is not None:
            state["profile"] = self.profile
        if self.results:
            state["results"] = dict(self.results)
        if self.programs:
            state["programs"] = dict(self.programs)
        return state


def parse_state(data: Mapping[str, Any] | str) -> SessionState:
    """``data`` checked as a session state (a dict, or its JSON text).

    Raises:
        ConfigError: it is not a session state; the message says what is wrong and what is
            valid.
    """
    if isinstance(data, str):
        if len(data) > MAX_STATE_CHARS:
            raise ConfigError(
                f"Session state is {len(data):,} characters, over the limit of {MAX_STATE_CHARS:,}."
            )
        try:
            data = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise ConfigError(f"Session state is not valid JSON: {exc}.") from exc
    if not isinstance(data, Mapping):
        raise ConfigError(
            f"Session state must be a JSON object from ToolSession.to_json(), got "
            f"{type(data).__name__}."
        )
    unknown = sorted(str(k) for k in data if k not in STATE_KEYS)
    if unknown:
        raise ConfigError(
            f"Session state has unknown key {_clip(unknown[0])!r}; valid keys: "
            f"{', '.join(STATE_KEYS)}."
        )
    version = data.get("version", STATE_VERSION)
    if version != STATE_VERSION:
        raise ConfigError(
            f"Session state version {_clip(repr(version))} is not supported; expected "
            f"{STATE_VERSION}."
        )
    loaded = data.get("loaded", [])
    if not isinstance(loaded, list) or not all(
        isinstance(n, str) and len(n) <= MAX_STATE_NAME_CHARS for n in loaded
    ):
        raise ConfigError(
            f'Session state "loaded" must be a list of tool names (each at most '
            f"{MAX_STATE_NAME_CHARS} characters)."
        )
    if len(loaded) > MAX_STATE_LOADED:
        raise ConfigError(
            f'Session state "loaded" holds {len(loaded):,} names, over the limit of '
            f"{MAX_STATE_LOADED:,}."
        )
    results = data.get("results")
    if results is not None and not isinstance(results, Mapping):
        raise ConfigError('Session state "results" must be an object from SessionBudget.to_json().')
    programs = data.get("programs")
    if programs is not None and (
        not isinstance(programs, Mapping)
        or len(programs) > MAX_STATE_PROGRAMS
        or not all(isinstance(k, str) and len(k) <= 64 for k in programs)
        or not all(isinstance(v, str | Mapping) for v in programs.values())
    ):
        raise ConfigError(
            f'Session state "programs" must map call keys to sealed paused programs (at most '
            f"{MAX_STATE_PROGRAMS})."
        )
    mode = data.get("mode")
    return SessionState(
        loaded=tuple(dict.fromkeys(loaded)),
        profile=data.get("profile"),
        results=results,
        mode=mode if isinstance(mode, str) else None,
        programs=dict(programs) if programs else None,
    )


def merge_states(
    stored: Mapping[str, Any] | None,
    *,
    loaded: Sequence[str] = (),
    results: Mapping[str, Any] | None = None,
    profile: str | None = None,
    clear_profile: bool = False,
    mode: str | None = None,
    programs: Mapping[str, Any] | None = None,
    taken_programs: Sequence[str] = (),
) -> dict[str, Any]:
    """The stored state with one writer's change applied (for a compare-and-set store).

    Args:
        stored: the state the store holds now (None: none yet).
        loaded: names the writer loaded; appended after the stored ones, in order, once each.
        results: the writer's result account; its records join the stored ones by record id
            (a record the store already has is kept once), and its cleared records join the
            stored cleared ones (:func:`~toolmgmt_core._calls.records.merge_accounts`).
        profile: the profile the writer chose, if it chose one.
        clear_profile: the writer went back to the manager's profile.
        mode: the writer's mode, recorded as the state's mode.
        programs: the writer's paused programs (by call key); they replace stored ones.
        taken_programs: keys of paused programs the writer resumed (dropped).

    Raises:
        ConfigError: ``stored`` is not a session state, or an account is not an account.
    """
    base = parse_state(dict(stored)) if stored is not None else SessionState()
    merged_loaded = list(dict.fromkeys([*base.loaded, *loaded]))
    merged_profile = None if clear_profile else (profile or base.profile)
    merged_results: dict[str, Any] | None = dict(base.results) if base.results else None
    if results:
        # By record id: each record's own, so that two replicas' calls never merge into one
        # and the same call (a save retried after a conflict) is kept once.
        merged_results = merge_accounts(merged_results, results)
    merged_programs = {
        k: v for k, v in (base.programs or {}).items() if k not in set(taken_programs)
    }
    merged_programs.update(programs or {})
    while len(merged_programs) > MAX_STATE_PROGRAMS:
        merged_programs.pop(next(iter(merged_programs)))
    return SessionState(
        loaded=tuple(merged_loaded),
        profile=merged_profile,
        results=merged_results,
        mode=mode or base.mode,
        programs=merged_programs or None,
    ).to_json()
