"""A session's state: as plain JSON, and kept in a session store under a conversation id.

:class:`StoredConversation` is the state side of :class:`~toolmgmt_core.ToolSession`:
``to_json``/``from_json`` write and read the state (:mod:`toolmgmt_core._session.state` checks
its shape; restored state only narrows), and ``ToolSession.open(manager, id)`` restores the
conversation the manager's session store holds (as untrusted as any state). After every call
that changed it (loads, result records, cleared results, profile) the session saves itself with
a compare-and-set write that merges with what another writer saved meanwhile
(:func:`~toolmgmt_core._session.state.merge_states`); the session then holds the merged state.
Two replicas serving one conversation therefore lose nothing, and each lists what the other
loaded from its next step on: a session opened per step sees it when opened, one held open across
steps when it ``refresh``-es (one version check when nothing changed).
"""

from __future__ import annotations

import abc
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from toolmgmt_core._calls.budget import SessionBudget
from toolmgmt_core._calls.code.runs import ProgramStateError
from toolmgmt_core._calls.validation import MAX_REPORTED_ERRORS, clip
from toolmgmt_core._model.errors import StoreError
from toolmgmt_core._policy.view import PolicyView
from toolmgmt_core._session.settings import SessionSettings
from toolmgmt_core._session.state import (
    MAX_LIVE_PROGRAMS,
    MAX_STATE_PROGRAMS,
    SessionState,
    merge_states,
    parse_state,
)
from toolmgmt_core._stores.base import (
    StoredSession,
    call_store,
    check_session_id,
    stored_version,
    update_session,
)

__all__ = ["StoredConversation"]

logger = logging.getLogger("toolmgmt")

_GONE = "-"
"""What stays of a paused program resumed or dropped (``-`` and when its run would have expired,
in seconds since the epoch): its call cannot start it over."""


def _live(value: Any) -> bool:
    return isinstance(value, str) and not value.startswith(_GONE)


def _marked(value: Any, now: float) -> bool:
    """Whether ``value`` is a mark that still holds (an older state's bare ``-`` does not)."""
    if _live(value) or not isinstance(value, str):
        return False
    try:
        return float(value[len(_GONE) :]) >= now
    except ValueError:
        return False


_S = TypeVar("_S", bound="StoredConversation")


class StoredConversation(abc.ABC):
    """A session's state, as JSON and in a session store (a base class of ``ToolSession``,
    which provides what is declared here)."""

    manager: SessionSettings
    session_id: str | None
    _stored: StoredSession | None
    _saved: SessionState | None
    _profile_view: PolicyView | None
    _results: SessionBudget
    _lock: threading.RLock
    _loaded: list[str]
    _programs: dict[str, Any]
    """Code mode's paused programs, sealed, by call key, for integrations that keep none themselves
    (kept with the conversation)."""
    _programs_taken: set[str]
    """Keys of paused programs resumed since the last save."""

    @abc.abstractmethod
    def __init__(self, manager: SessionSettings) -> None:
        """A new session over ``manager`` (what :meth:`from_json` and :meth:`open` build)."""

    @abc.abstractmethod
    def loaded(self) -> list[str]:
        """The names loaded now, in load order."""

    @abc.abstractmethod
    def record_loads(
        self, names: Sequence[str], *, restored: bool = False
    ) -> tuple[list[str], list[str]]:
        """Record ``names`` as loaded: (newly loaded, refused at the ``max_active`` cap)."""

    def snapshot(self) -> SessionState:
        """The session's state now: loads, the profile chosen, the result account."""
        view = self._profile_view
        results = self._results.to_json()
        return SessionState(
            loaded=tuple(self.loaded()),
            # The name only: restoring looks it up among the manager's profiles (an inline
            # profile in state could say anything, so it is never read back).
            profile=view.profile.name if view is not None else None,
            results=results if results["records"] or results["cleared"] else None,
            mode=self.manager.mode.name,
            programs=dict(self._programs) or None,
        )

    def to_json(self) -> dict[str, Any]:
        """The session's state as plain JSON (store it in a framework's state or checkpoint)."""
        return self.snapshot().to_json()

    @classmethod
    def from_json(cls: type[_S], manager: SessionSettings, data: Mapping[str, Any] | str) -> _S:
        """A session restored from :meth:`to_json` output (a dict, or its JSON text).

        Loaded names no longer in the catalog are kept (they reappear if the tool comes back)
        but never listed. State is untrusted (it may come from an agent's input or a
        checkpoint store), so it can narrow what the manager's configuration allows and never
        widen it: a ``"profile"`` must be the exact name of one of the manager's profiles and
        is applied within the configured one (see :meth:`PolicyView.narrowed`); inline
        profiles, look-alike names and anything else are refused. Loads beyond the manager's
        ``max_active`` cap are dropped, as a search would have refused them.

        Raises:
            ConfigError: ``data`` is not a session state this manager accepts; the message says
                what is wrong (:func:`~toolmgmt_core._session.state.parse_state`).
        """
        session = cls(manager)
        session._adopt(parse_state(data))
        return session

    @classmethod
    def open(cls: type[_S], manager: SessionSettings, session_id: str) -> _S:
        """The conversation ``session_id`` of the manager's session store: restored when the
        store holds it (as untrusted as :meth:`from_json`'s state), else a new one; either way
        saved there after every call that changes it (:mod:`toolmgmt_core._session.conversation`).

        Raises:
            InvalidSessionError: a bad id (1-256 visible ASCII characters).
            StoreUnavailableError: the store cannot be reached.
            ConfigError: the stored state is not a session state.
        """
        session = cls(manager)
        session._open(session_id)
        return session

    @classmethod
    def restore(
        cls: type[_S], manager: SessionSettings, session_id: str, stored: StoredSession | None
    ) -> _S:
        """:meth:`open` with the conversation its caller already loaded from the manager's
        session store (``stored``; None: not there), so that a server checking a conversation
        on each request loads it once. Saved there after every change, as :meth:`open`.

        Raises:
            InvalidSessionError: a bad id.
            ConfigError: the stored state is not a session state.
        """
        session = cls(manager)
        session._restore(check_session_id(session_id), stored)
        return session

    def _adopt(self, state: SessionState) -> None:
        """Take ``state`` on, narrowed by the manager's configuration (see :meth:`from_json`).

        A profile the session already has is kept as it is (code may have widened it with
        :meth:`set_profile`); another is looked up and applied within the configured one.
        """
        view = self._profile_view
        if state.profile is None:
            view = None
        elif view is None or view.profile.name != state.profile:
            view = self.manager.policy.narrowed(state.profile)
        with self._lock:
            self._profile_view = None if view is self.manager.policy else view
            self._loaded = []
            dropped = self.record_loads(list(state.loaded), restored=True)[1]
            self._results.restore(state.results or {"records": [], "cleared": []})
            self._programs = {
                k: v for k, v in (state.programs or {}).items() if k not in self._programs_taken
            }
        if dropped:
            logger.warning(
                "toolmgmt: restored state loads %d tools over max_active=%s; dropped: %s",
                len(dropped),
                self.manager.discovery.max_active,
                ", ".join(clip(n) for n in dropped[:MAX_REPORTED_ERRORS]),
            )

    def _open(self, session_id: str) -> None:
        """Become the conversation ``session_id`` of the manager's store (restored when held).

        Raises:
            InvalidSessionError: a bad id (1-256 visible ASCII characters).
            StoreUnavailableError: the store cannot be reached.
            ConfigError: the stored state is not a session state.
        """
        self._restore(session_id, self.manager.session_store.load(check_session_id(session_id)))

    def _restore(self, session_id: str, stored: StoredSession | None) -> None:
        self.session_id = session_id
        if stored is not None:
            self._adopt(parse_state(stored.state))
        self._stored = stored
        self._saved = self.snapshot()

    def save_sync(self) -> None:
        """Save this conversation to the manager's session store, if it has an id and changed.

        Raises:
            StoreUnavailableError: the store cannot be reached (the change stays unsaved and is
                saved with the next change).
            SessionConflictError: other writers kept winning for every retry.
        """
        if self.session_id is None:
            return
        mine = self.snapshot()
        if mine == self._saved:
            return

        def change(state: Mapping[str, Any] | None) -> dict[str, Any]:
            return merge_states(
                state,
                loaded=mine.loaded,
                results=mine.results,
                profile=mine.profile,
                clear_profile=mine.profile is None,
                mode=self.manager.mode.name,
                programs=mine.programs,
                taken_programs=sorted(self._programs_taken),
            )

        # The first attempt merges onto the state this session was restored from (or last
        # saved): no load unless another writer saved in between.
        stored = update_session(
            self.manager.session_store, self.session_id, change, current=self._stored
        )
        merged = parse_state(stored.state)
        self._programs_taken.clear()
        if merged != mine:
            self._adopt(merged)
        self._stored = stored
        self._saved = self.snapshot()

    def refresh_sync(self) -> bool:
        """Catch up with what other writers (replicas, workers) saved to this conversation
        since this session last loaded or saved it; whether the session changed.

        A session held open across the steps of a run sees another replica's loads only once
        it refreshes: call this at the start of each step (the PydanticAI toolset does), not
        while this session's own calls run. Cheap when nothing changed: one version check on
        a store that offers one (Redis: one small read), else one load. A change of this
        session's own not saved yet (the store was down) is saved now instead, which merges
        both ways.

        Raises:
            StoreUnavailableError: the store cannot be reached.
            ConfigError: the stored state is not a session state.
        """
        if self.session_id is None:
            return False
        if self.snapshot() != self._saved:
            self.save_sync()
            return True
        store = self.manager.session_store
        held = self._stored.version if self._stored is not None else 0
        if stored_version(store, self.session_id) == held:
            return False
        stored = store.load(self.session_id)
        if stored is None:  # expired or deleted: what is held here is saved with the next change
            self._stored = None
            return False
        if stored.version == held:
            return False
        self._adopt(parse_state(stored.state))
        self._stored = stored
        self._saved = self.snapshot()
        return True

    def kept_program(self, key: str) -> str | None:
        """The sealed run paused under ``key`` (a call's key), or None when none was kept.

        Raises:
            ProgramStateError: the call's program was kept once and is no longer (resumed
                already, or dropped for newer ones): it must not start over.
        """
        with self._lock:
            data = self._programs.get(key)
        if data is None:
            return None
        if not _live(data):
            raise ProgramStateError(
                "The paused program of this call is no longer kept: it was resumed already, or "
                "dropped for newer paused programs. Nothing ran; run the program again.",
                tool_name="run_code",
            )
        return data

    def take_program(self, key: str, ttl: float) -> None:
        """Mark the run paused under ``key`` resumed (the mark stays as long as the run would
        have, ``ttl`` seconds: a second resume of the same call is refused, never started
        over)."""
        with self._lock:
            if key in self._programs:
                self._programs[key] = f"{_GONE}{int(time.time() + ttl) + 1}"
                self._programs_taken.add(key)

    def room_for_program(self) -> bool:
        """Whether a program may pause here: the conversation's entries (paused programs and
        the marks that still hold) leave room for one more (see :data:`MAX_STATE_PROGRAMS`)."""
        now = time.time()
        with self._lock:
            held = sum(1 for v in self._programs.values() if _live(v) or _marked(v, now))
        return held < MAX_STATE_PROGRAMS

    async def keep_program(self, key: str, sealed: str, ttl: float) -> None:
        """Keep ``sealed`` (a run paused at a call) with the conversation under ``key``, saved
        to the store at once: the resumed call may reach another worker. The oldest of more
        than :data:`MAX_LIVE_PROGRAMS` is dropped (its resume then fails, never starts over;
        its mark held ``ttl`` seconds)."""
        now = time.time()
        gone = f"{_GONE}{int(now + ttl) + 1}"
        with self._lock:
            self._programs.pop(key, None)
            self._programs[key] = sealed
            self._programs_taken.discard(key)
            live = [k for k, v in self._programs.items() if _live(v)]
            for old in live[: max(0, len(live) - MAX_LIVE_PROGRAMS)]:
                self._programs[old] = gone
            for old in [k for k, v in self._programs.items() if not _live(v)]:
                full = len(self._programs) > MAX_STATE_PROGRAMS  # two runs raced for room
                if full or not _marked(self._programs[old], now):
                    del self._programs[old]  # past its run's life
        await self.save()

    async def refresh(self) -> None:
        """:meth:`refresh_sync` for async code (a store that does I/O is read from a worker
        thread). A store that is down is logged loudly and the session goes on with what it
        holds."""
        if self.session_id is not None:
            await self._in_store(
                self.refresh_sync,
                "could not be refreshed from the store",
                "going on with what this process holds",
            )

    async def save(self) -> str | None:
        """:meth:`save_sync` for async code; a store that does I/O is written from a worker
        thread. A store that is down (or slower than its deadlines) is logged loudly and does
        not fail the call that ran: the reason it could not be saved is returned (None when it
        was saved, or had nothing to save)."""
        if self.session_id is None or self.snapshot() == self._saved:
            return None
        return await self._in_store(
            self.save_sync,
            "could not be saved",
            "its change is kept here and saved with the next one",
        )

    async def _in_store(self, work: Callable[[], Any], failed: str, meanwhile: str) -> str | None:
        """``work()`` off the event loop for a store that does I/O; a store error is logged
        and returned."""
        try:
            await call_store(self.manager.session_store, work)
        except StoreError as exc:
            logger.error(
                "toolmgmt: session %r %s (%s); %s", self.session_id, failed, exc, meanwhile
            )
            return str(exc)
        return None
