"""The session store contract, an in-memory store, and a retried read-modify-write.

A session store keeps one JSON object per session id with a version number. Writes are
compare-and-set: :meth:`SessionStore.save` names the version it loaded, and fails with
:class:`~toolmgmt_core.SessionConflictError` when someone else saved in between. That is
what lets two replicas serve one conversation without losing an update: each applies its
change to the state it loaded, and the one that loses the race loads again and re-applies its
change (:func:`update_session`)::

    store = InMemorySessionStore(ttl=3600)          # or RedisSessionStore("redis://...")

    def add_tool(state):
        state = state or {"loaded": []}
        if "crm_search" not in state["loaded"]:
            state["loaded"].append("crm_search")
        return state

    update_session(store, "conversation-1", add_tool)

Session ids and states come from clients and from the store: both are checked
(:func:`check_session_id`, :func:`encode_state`, :func:`decode_state`) with errors that say
what is wrong and what is valid.
"""

from __future__ import annotations

import json
import random
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

from toolmgmt_core._model.errors import ConfigError, InvalidSessionError, SessionConflictError
from toolmgmt_core._runtime.threads import Pool

__all__ = [
    "DEFAULT_SESSION_TTL",
    "MAX_SESSION_ID_LENGTH",
    "MAX_STATE_BYTES",
    "UPDATE_RETRIES",
    "InMemorySessionStore",
    "SessionStore",
    "StoreTimeout",
    "StoredSession",
    "call_store",
    "check_session_id",
    "check_version",
    "decode_state",
    "encode_state",
    "stored_version",
    "update_session",
]

DEFAULT_SESSION_TTL = 24 * 3600.0
"""Seconds a session is kept after its last save (None in a store's ``ttl``: forever)."""

MAX_SESSION_ID_LENGTH = 256
"""Longest session id a store accepts."""

MAX_STATE_BYTES = 1 << 20
"""Largest serialised session state (UTF-8 JSON) a store accepts by default: 1 MiB."""

UPDATE_RETRIES = 10
"""How many times :func:`update_session` re-applies a change after a conflict by default."""

_T = TypeVar("_T")
_STORE_CALLS = Pool("store", 32)
"""Where a store's I/O runs for async callers (each operation within its timeouts)."""


@dataclass(frozen=True)
class StoreTimeout:
    """How long a store operation may wait on its server (Redis, PostgreSQL), in seconds.

    Past either deadline the operation raises :class:`~toolmgmt_core.StoreUnavailableError`
    (the gateway answers 503): a slow server (Redis under ``CLIENT PAUSE`` or ``DEBUG SLEEP``,
    a stopped PostgreSQL backend) costs a request these seconds, not a hang. A reply that timed
    out is not retried; a refused connection is, quickly.
    """

    connect: float = 2.0
    """Seconds to open a connection (TCP and the server's handshake)."""
    read: float = 2.0
    """Seconds to wait for each reply (PostgreSQL: each transaction's work)."""

    def __post_init__(self) -> None:
        for name in ("connect", "read"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
                raise ConfigError(
                    f"StoreTimeout.{name} must be a positive number of seconds, got {value!r}."
                )

    @classmethod
    def of(cls, timeout: float | StoreTimeout) -> StoreTimeout:
        """``timeout`` as a :class:`StoreTimeout` (a number: both deadlines)."""
        return timeout if isinstance(timeout, StoreTimeout) else cls(timeout, timeout)


# Visible ASCII, as MCP requires of its session ids: no spaces or control characters, so an id
# cannot break a log line or a key, and nothing that needs escaping anywhere.
_SESSION_ID = re.compile(r"[\x21-\x7e]+")


@dataclass(frozen=True)
class StoredSession:
    """A session as loaded from a store."""

    state: dict[str, Any]
    """The session's JSON state (a fresh copy: changing it changes nothing stored)."""
    version: int
    """The version to pass to :meth:`SessionStore.save`; increases with every save."""


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions live between calls, possibly shared by several processes.

    Implementations are thread-safe. ``version`` makes writes compare-and-set: see
    :meth:`save`.
    """

    def load(self, session_id: str, *, touch: bool = False) -> StoredSession | None:
        """The stored session, or None when there is none (never saved, deleted or expired).

        ``touch=True`` also restarts the session's time to live, in the same round trip: a
        conversation that only reads (a gateway's ``discover_tools``) stays alive while used.

        Raises:
            InvalidSessionError: a bad session id, or a stored state that is not a JSON object.
            StoreUnavailableError: the store cannot be reached.
        """
        ...

    def save(self, session_id: str, state: Mapping[str, Any], *, version: int) -> int:
        """Store ``state`` if the session is still at ``version``; return the new version.

        ``version`` is the version that was loaded, 0 for a session that did not exist. Each
        save (re)starts the session's time to live.

        Raises:
            SessionConflictError: the stored version differs (someone saved in between, or the
                session expired or was deleted); nothing was written.
            InvalidSessionError: a bad session id, or a state that is not a JSON object or is
                too large.
            StoreUnavailableError: the store cannot be reached.
        """
        ...

    def delete(self, session_id: str) -> None:
        """Forget the session (nothing happens when there is none)."""
        ...


def stored_version(store: SessionStore, session_id: str) -> int | None:
    """The version ``store`` holds of a session (0: none), when the store can tell without
    reading the state: a store may offer ``version(session_id) -> int`` (both stores here do;
    Redis reads one number), which a session held open across steps asks to see whether
    another replica saved meanwhile. None from a store without it (load the session instead).

    Raises:
        InvalidSessionError: a bad session id.
        StoreUnavailableError: the store cannot be reached.
    """
    probe = getattr(store, "version", None)
    return None if probe is None else int(probe(session_id))


def check_session_id(session_id: object) -> str:
    """``session_id`` if a store accepts it: 1-256 visible ASCII characters.

    Raises:
        InvalidSessionError: saying what is wrong and what a valid id looks like.
    """
    if not isinstance(session_id, str):
        raise InvalidSessionError(
            f"A session id must be a string, got {type(session_id).__name__}."
        )
    if not session_id or len(session_id) > MAX_SESSION_ID_LENGTH:
        raise InvalidSessionError(
            f"A session id must be 1 to {MAX_SESSION_ID_LENGTH} characters long, got "
            f"{len(session_id)}."
        )
    if not _SESSION_ID.fullmatch(session_id):
        bad = next(c for c in session_id if not _SESSION_ID.fullmatch(c))
        raise InvalidSessionError(
            f"A session id may hold only visible ASCII characters (letters, digits and "
            f"punctuation; no spaces, control characters or non-ASCII); {_preview(session_id)} "
            f"holds {bad!r}."
        )
    return session_id


def encode_state(state: Mapping[str, Any], *, max_bytes: int = MAX_STATE_BYTES) -> bytes:
    """``state`` as compact UTF-8 JSON, checked: a JSON object of at most ``max_bytes``.

    Raises:
        InvalidSessionError: not a mapping, not JSON (a set, NaN, a non-string key), or too
            large.
    """
    if not isinstance(state, Mapping):
        raise InvalidSessionError(
            f"A session state must be a JSON object (a dict), got {type(state).__name__}."
        )
    try:
        text = json.dumps(state, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidSessionError(
            f"A session state must be plain JSON (dicts with string keys, lists, strings, "
            f"finite numbers, booleans, null): {exc}."
        ) from exc
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > max_bytes:
        raise InvalidSessionError(
            f"The session state is {len(data):,} bytes of JSON; a store accepts at most "
            f"{max_bytes:,}. Keep less in the session (fewer loaded tools or result records) "
            "or raise the store's max_state_bytes."
        )
    return data


def decode_state(data: bytes | str, *, session_id: str) -> dict[str, Any]:
    """A stored state read back, checked to be a JSON object (a store's content is untrusted).

    Raises:
        InvalidSessionError: the stored value is not a JSON object.
    """
    try:
        state = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidSessionError(
            f"The stored state of session {_preview(session_id)} is not valid JSON ({exc}); "
            "delete the session to start it afresh."
        ) from exc
    if not isinstance(state, dict):
        raise InvalidSessionError(
            f"The stored state of session {_preview(session_id)} is a JSON "
            f"{type(state).__name__}, not an object; delete the session to start it afresh."
        )
    return state


def check_version(version: object) -> int:
    """``version`` if it can be a loaded version (a whole number, 0 or more).

    Raises:
        InvalidSessionError: it cannot.
    """
    if isinstance(version, bool) or not isinstance(version, int) or version < 0:
        raise InvalidSessionError(
            f"version must be the version that was loaded (a whole number; 0 for a new "
            f"session), got {version!r}."
        )
    return version


def _preview(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


class InMemorySessionStore:
    """Sessions in this process's memory: the default, and the reference for other stores.

    States are kept as JSON text, so what :meth:`load` returns is always a fresh copy and the
    same checks (size, plain JSON) apply as in a shared store. Expired sessions are dropped
    when read and swept regularly, so memory stays bounded by the sessions alive within the
    TTL.

    Usage::

        store = InMemorySessionStore(ttl=3600)
        version = store.save("conversation-1", {"loaded": []}, version=0)
        store.load("conversation-1")         # StoredSession(state={"loaded": []}, version=1)
    """

    def __init__(
        self,
        *,
        ttl: float | None = DEFAULT_SESSION_TTL,
        max_state_bytes: int = MAX_STATE_BYTES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """
        Args:
            ttl: seconds a session lives after its last save; None keeps it forever.
            max_state_bytes: the largest serialised state accepted.
            clock: seconds, monotonic (a test may pass its own).
        """
        if ttl is not None and not ttl > 0:
            raise ValueError(f"ttl must be a positive number of seconds or None, got {ttl!r}.")
        self.ttl = ttl
        self.max_state_bytes = max_state_bytes
        self._clock = clock
        self._lock = threading.Lock()
        # session id -> (version, JSON bytes, expiry time or None)
        self._sessions: dict[str, tuple[int, bytes, float | None]] = {}
        self._counter = 0
        self._next_sweep = clock() + (ttl or 0.0)

    def __len__(self) -> int:
        """How many live sessions are held."""
        with self._lock:
            self._sweep(self._clock(), force=True)
            return len(self._sessions)

    def _live(self, session_id: str, now: float) -> tuple[int, bytes, float | None] | None:
        entry = self._sessions.get(session_id)
        if entry is not None and entry[2] is not None and entry[2] <= now:
            del self._sessions[session_id]
            return None
        return entry

    def _sweep(self, now: float, *, force: bool = False) -> None:
        if self.ttl is None or (not force and now < self._next_sweep):
            return
        self._next_sweep = now + self.ttl
        expired = [k for k, (_, _, until) in self._sessions.items() if until and until <= now]
        for key in expired:
            del self._sessions[key]

    def load(self, session_id: str, *, touch: bool = False) -> StoredSession | None:
        """See :meth:`SessionStore.load`."""
        check_session_id(session_id)
        with self._lock:
            now = self._clock()
            entry = self._live(session_id, now)
            if entry is not None and touch and self.ttl is not None:
                entry = (entry[0], entry[1], now + self.ttl)
                self._sessions[session_id] = entry
        if entry is None:
            return None
        return StoredSession(decode_state(entry[1], session_id=session_id), entry[0])

    def version(self, session_id: str) -> int:
        """The session's version, 0 when there is none (see :func:`stored_version`)."""
        check_session_id(session_id)
        with self._lock:
            entry = self._live(session_id, self._clock())
        return 0 if entry is None else entry[0]

    def save(self, session_id: str, state: Mapping[str, Any], *, version: int) -> int:
        """See :meth:`SessionStore.save`."""
        check_session_id(session_id)
        check_version(version)
        data = encode_state(state, max_bytes=self.max_state_bytes)
        with self._lock:
            now = self._clock()
            self._sweep(now)
            entry = self._live(session_id, now)
            current = entry[0] if entry is not None else 0
            if current != version:
                raise _conflict(session_id, version, current)
            # From one counter, not current + 1: a session started again after it expired
            # never reuses a version, so a stale writer cannot overwrite it (no ABA).
            self._counter += 1
            new_version = self._counter
            until = None if self.ttl is None else now + self.ttl
            self._sessions[session_id] = (new_version, data, until)
        return new_version

    def delete(self, session_id: str) -> None:
        """See :meth:`SessionStore.delete`."""
        check_session_id(session_id)
        with self._lock:
            self._sessions.pop(session_id, None)


def _conflict(session_id: str, expected: int, current: int) -> SessionConflictError:
    """The error for a save at ``expected`` that found ``current`` (shared by every store)."""
    found = "no session (it expired or was deleted)" if current == 0 else f"version {current}"
    return SessionConflictError(
        f"Session {_preview(session_id)} changed since it was loaded: expected version "
        f"{expected}, found {found}. Load it again and re-apply the change "
        "(update_session does this)."
    )


def update_session(
    store: SessionStore,
    session_id: str,
    change: Callable[[dict[str, Any] | None], Mapping[str, Any]],
    *,
    retries: int = UPDATE_RETRIES,
    backoff: float = 0.002,
    current: StoredSession | None = None,
) -> StoredSession:
    """Load the session, apply ``change`` to its state, save; on a conflict, do it again.

    ``change(state)`` receives the current state (None when there is no session) and returns
    the new state; it may modify and return the dict it was given. It must be a pure function
    of that state (it runs once per attempt), so that a change re-applied to a fresher state
    keeps what the other writer did: add *your* tool to the list you loaded, do not overwrite
    the list with one you computed earlier.

    Args:
        store: any :class:`SessionStore`.
        session_id: the session.
        change: the state change.
        retries: attempts after the first before giving up.
        backoff: the first wait after a conflict, in seconds; it doubles per attempt (up to
            64 times), with full jitter so that two writers do not collide again in step.
        current: the session as the caller last loaded or saved it: the first attempt applies
            ``change`` to it without loading (one round trip instead of two when nobody
            wrote in between; a conflict loads afresh as usual). ``change`` receives its
            ``state`` itself: a change that modifies its argument modifies it.

    Returns:
        The saved state and its version.

    Raises:
        SessionConflictError: still conflicting after ``retries`` more attempts.
        InvalidSessionError, StoreUnavailableError: as :meth:`SessionStore.save` (not retried).
    """
    if retries < 0:
        raise ValueError(f"retries must be 0 or more, got {retries!r}.")
    attempt = 0
    while True:
        stored = current if attempt == 0 and current is not None else store.load(session_id)
        state = change(None if stored is None else stored.state)
        try:
            version = store.save(session_id, state, version=0 if stored is None else stored.version)
        except SessionConflictError as exc:
            if attempt >= retries:
                raise SessionConflictError(
                    f"Session {_preview(session_id)} kept changing while being updated; gave "
                    f"up after {retries + 1} attempts. Too many writers to one session at "
                    f"once: retry later or raise the retries. (Last conflict: {exc})"
                ) from exc
            time.sleep(random.uniform(0, backoff * (2 ** min(attempt, 6))))
            attempt += 1
            continue
        return StoredSession(state if isinstance(state, dict) else dict(state), version)


async def call_store(store: object, work: Callable[[], _T]) -> _T:
    """``work()``, a call of ``store`` (a session, pin or catalog store), from async code: at
    once for a session store in this process's memory, else on the store pool's threads
    (Redis, PostgreSQL), so the event loop keeps serving meanwhile."""
    if isinstance(store, InMemorySessionStore):
        return work()
    return await _STORE_CALLS.run(work)
