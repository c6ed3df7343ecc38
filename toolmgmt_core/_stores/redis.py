"""``RedisSessionStore``: sessions shared by every replica, on Redis (``toolmgmt[redis]``).

Each session is two keys that share the session id as their Redis Cluster *hash tag*, so both
live in one slot (one node) of a cluster, as a script touching both requires:

- ``{prefix}{<id>}``, a hash with two fields: ``v`` (the version) and ``s`` (the state as JSON);
- ``{prefix}{<id>}:versions``, the session's version counter, which outlives the state (twice
  its time to live): a session that expired or was deleted and is started again goes on from
  the versions it had, so a writer still holding one from before cannot overwrite it (no ABA).

In the tag, ``%``, ``{`` and ``}`` of an id are written ``%25``, ``%7B`` and ``%7D`` (an id is
any visible ASCII, and a brace would end the tag early). A save is one Lua script, so the
version check, the write and the new time to live happen atomically on the server: two
replicas saving the same version at the same moment cannot both succeed. The same keys serve a
single Redis, a replicated one and a Redis Cluster (pass a ``redis.RedisCluster`` as
``client=``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

try:
    import redis
    from redis.backoff import ExponentialWithJitterBackoff
    from redis.retry import Retry
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError('RedisSessionStore needs redis-py: pip install "toolmgmt[redis]"') from exc

from toolmgmt_core._model.errors import ConfigError, StoreError, StoreUnavailableError
from toolmgmt_core._stores.base import (
    DEFAULT_SESSION_TTL,
    MAX_STATE_BYTES,
    StoredSession,
    StoreTimeout,
    _conflict,
    check_session_id,
    check_version,
    decode_state,
    encode_state,
)

__all__ = ["DEFAULT_PREFIX", "RedisSessionStore", "hash_tag", "redact_url"]

DEFAULT_PREFIX = "toolmgmt:session:"
"""What every session key starts with, so toolmgmt's keys are easy to find and to keep apart."""

_COUNTER_SUFFIX = ":versions"
_COUNTER_KEPT_WITHOUT_TTL_MS = round(DEFAULT_SESSION_TTL * 1000)
"""How long the counter of a deleted session with no TTL is kept (a writer holding one of its
versions that long is not expected)."""

# KEYS[1]: the session's hash; KEYS[2]: its version counter (one hash tag: one slot). ARGV: the
# expected version, the state JSON, the TTL in ms (0: none). Returns {1, new version} when
# saved, {0, current version} (0: no session) when not. The counter is kept twice the TTL, so
# a session that expired and is started again never reuses a version (no ABA).
_SAVE_SCRIPT = """
local current = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if current ~= tonumber(ARGV[1]) then
  return {0, current}
end
local version = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], 'v', version, 's', ARGV[2])
local ttl = tonumber(ARGV[3])
if ttl > 0 then
  redis.call('PEXPIRE', KEYS[1], ttl)
  redis.call('PEXPIRE', KEYS[2], 2 * ttl)
else
  redis.call('PERSIST', KEYS[1])
  redis.call('PERSIST', KEYS[2])
end
return {1, version}
"""


def hash_tag(session_id: str) -> str:
    """``session_id`` as a Redis Cluster hash tag: braces and ``%`` escaped, reversibly (two
    ids never share a key), so that the tag is the whole id whatever it holds."""
    return session_id.replace("%", "%25").replace("{", "%7B").replace("}", "%7D")


def redact_url(url: str) -> str:
    """``url`` with its password replaced by ``***``, for messages and logs."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        user = parts.username or ""
        host = parts.hostname or ""
        if ":" in host:  # an IPv6 address
            host = f"[{host}]"
        netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
        return urlunsplit(parts._replace(netloc=netloc))
    except ValueError:  # an unparseable URL may still hold a secret: show none of it
        return "(an unparseable URL)"


class RedisSessionStore:
    """Sessions on a Redis server, shared by every process that uses the same URL and prefix.

    Thread-safe: redis-py's client keeps a connection pool. Nothing connects until the first
    operation; call :meth:`ping` at start-up to fail early.

    Usage::

        store = RedisSessionStore("redis://localhost:6379/0", ttl=3600)
        update_session(store, "conversation-1", lambda s: {**(s or {}), "profile": "support"})

    Failure behaviour: a server that cannot be reached, or that does not answer within
    ``timeout`` (a slow or paused Redis: ``CLIENT PAUSE``, ``DEBUG SLEEP``), raises
    :class:`~toolmgmt_core.StoreUnavailableError` naming the server (never its password): a
    refused connection after a few quick reconnection attempts (well under a second), a
    connection or a reply that takes too long at once, never retried, so an operation waits at
    most ``timeout.connect + timeout.read`` seconds. A save whose reply was lost may have been
    applied: retrying it then reports a conflict, and :func:`update_session` re-applies the
    change to the fresh state, so nothing is lost or applied twice by a pure change function.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        ttl: float | None = DEFAULT_SESSION_TTL,
        prefix: str = DEFAULT_PREFIX,
        client: redis.Redis | None = None,
        max_state_bytes: int = MAX_STATE_BYTES,
        timeout: float | StoreTimeout = StoreTimeout(),
    ) -> None:
        """
        Args:
            url: ``redis://[[user]:password@]host[:port][/db]``, ``rediss://`` (TLS) or
                ``unix:///path/to/redis.sock``.
            ttl: seconds a session lives after its last save; None keeps it until deleted.
            prefix: what every key starts with (several deployments may share one Redis);
                no braces (the session id is the keys' hash tag).
            client: a ready ``redis.Redis`` to use instead of making one from ``url``.
            max_state_bytes: the largest serialised state accepted.
            timeout: seconds to wait to connect and for each reply (a number: both; default
                2 s each, see :class:`~toolmgmt_core._stores.StoreTimeout`). Not applied to a
                ``client`` passed in (its own settings stand).
        """
        if ttl is not None and not ttl > 0:
            raise ConfigError(f"ttl must be a positive number of seconds or None, got {ttl!r}.")
        if "{" in prefix or "}" in prefix:
            raise ConfigError(
                f"A session key prefix may not hold braces, got {prefix!r}: the session id in "
                "braces is each key's Redis Cluster hash tag. Use e.g. 'toolmgmt:session:'."
            )
        deadlines = StoreTimeout.of(timeout)
        if client is None:
            if not url:
                raise ConfigError("RedisSessionStore needs a url (redis://host:port/db).")
            try:
                client = redis.Redis.from_url(
                    url,
                    socket_connect_timeout=deadlines.connect,
                    socket_timeout=deadlines.read,
                    health_check_interval=30,
                    # A few quick reconnections when refused, not redis-py's ten up to a second
                    # apart; and none after a timeout (redis-py retries those too by default,
                    # which made a paused Redis hold a request four times the timeout).
                    retry=Retry(
                        ExponentialWithJitterBackoff(base=0.01, cap=0.1),
                        3,
                        supported_errors=(redis.ConnectionError,),
                    ),
                )
            except ValueError as exc:
                raise ConfigError(
                    f"Not a Redis URL: {redact_url(url)} ({exc}). Use "
                    "redis://[[user]:password@]host[:port][/db], rediss://... (TLS) or "
                    "unix:///path/to/redis.sock."
                ) from exc
        self.url = redact_url(url) if url else _describe(client)
        """The server, for messages (the password is never shown)."""
        self.timeout = deadlines
        """The deadlines of each operation (see :class:`~toolmgmt_core._stores.StoreTimeout`)."""
        self.ttl = ttl
        self.prefix = prefix
        self.max_state_bytes = max_state_bytes
        self._client = client
        self._save = client.register_script(_SAVE_SCRIPT)
        self._ttl_ms = 0 if ttl is None else max(1, round(ttl * 1000))

    def __repr__(self) -> str:
        return f"RedisSessionStore({self.url!r}, prefix={self.prefix!r}, ttl={self.ttl!r})"

    def key(self, session_id: str) -> str:
        """The Redis key of a session's state: ``{prefix}{<id>}`` (the id checked first)."""
        return f"{self.prefix}{{{hash_tag(check_session_id(session_id))}}}"

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except redis.AuthenticationError as exc:  # a ConnectionError, but the server answered
            raise StoreUnavailableError(
                f"Cannot {action}: Redis at {self.url} refused the login ({exc}). The server "
                "answers but does not accept these credentials: check the URL's user and "
                "password (redis://[user]:password@host:port/db)."
            ) from exc
        except redis.TimeoutError as exc:
            raise StoreUnavailableError(
                f"Cannot {action}: Redis at {self.url} did not answer in time ({exc}; "
                f"deadlines: {self.timeout.connect:g} s to connect, {self.timeout.read:g} s "
                "for a reply). It may be overloaded, paused or blocked by a slow command."
            ) from exc
        except redis.ConnectionError as exc:
            raise StoreUnavailableError(
                f"Cannot {action}: Redis at {self.url} is unreachable ({exc}). Check that "
                "redis-server is running there and reachable from this machine, and the "
                "URL's host, port, password and scheme (rediss:// for TLS)."
            ) from exc
        except redis.RedisError as exc:
            raise StoreError(f"Cannot {action}: Redis at {self.url} refused: {exc}") from exc

    def ping(self) -> None:
        """Check that the server answers.

        Raises:
            StoreUnavailableError: it does not.
        """
        with self._errors("reach the session store"):
            self._client.ping()

    def load(self, session_id: str, *, touch: bool = False) -> StoredSession | None:
        """See :meth:`~toolmgmt_core._stores.SessionStore.load`."""
        key = self.key(session_id)
        with self._errors(f"load session {session_id!r}"):
            if touch and self._ttl_ms:
                # One round trip: the read and the new time to live (a missing key stays so).
                pipe = self._client.pipeline(transaction=False)
                pipe.hmget(key, ["v", "s"])
                pipe.pexpire(key, self._ttl_ms)
                (version, data), _ = pipe.execute()
            else:
                version, data = self._client.hmget(key, ["v", "s"])
        if version is None:
            return None
        if data is None:
            raise StoreError(
                f"Session {session_id!r} in Redis at {self.url} has a version but no state "
                f"(key {key!r} was written by something else); delete it to start afresh."
            )
        return StoredSession(decode_state(data, session_id=session_id), int(version))

    def version(self, session_id: str) -> int:
        """The session's version, 0 when there is none: one small read, not the state (see
        :func:`~toolmgmt_core._stores.stored_version`)."""
        key = self.key(session_id)
        with self._errors(f"check session {session_id!r}"):
            version = self._client.hget(key, "v")
        return 0 if version is None else int(version)

    def save(self, session_id: str, state: Mapping[str, Any], *, version: int) -> int:
        """See :meth:`~toolmgmt_core._stores.SessionStore.save`."""
        key = self.key(session_id)
        check_version(version)
        data = encode_state(state, max_bytes=self.max_state_bytes)
        with self._errors(f"save session {session_id!r}"):
            saved, current = self._save(
                keys=[key, key + _COUNTER_SUFFIX], args=[version, data, self._ttl_ms]
            )
        if not saved:
            raise _conflict(session_id, version, int(current))
        return int(current)

    def delete(self, session_id: str) -> None:
        """See :meth:`~toolmgmt_core._stores.SessionStore.delete`."""
        key = self.key(session_id)
        kept = 2 * self._ttl_ms if self._ttl_ms else _COUNTER_KEPT_WITHOUT_TTL_MS
        with self._errors(f"delete session {session_id!r}"):
            # The counter stays a while (one slot: one pipeline), so that a session started
            # again under this id goes on from its versions.
            pipe = self._client.pipeline(transaction=False)
            pipe.delete(key)
            pipe.pexpire(key + _COUNTER_SUFFIX, kept)
            pipe.execute()

    def claim_once(self, key: str, ttl: float) -> bool:
        """Mark ``key`` used for ``ttl`` seconds: True for the one caller that marked it first,
        False for every other (any replica) until it expires; one atomic ``SET NX PX``. An
        approval is claimed so (``toolmgmt_core._calls.approval.approval_key``): it runs its call
        once, whichever replica takes the retry.

        Raises:
            StoreUnavailableError: the server cannot be reached (nothing was marked, so the
                caller refuses what it guards).
        """
        if not isinstance(key, str) or not key or not ttl > 0:
            raise ValueError(f"claim_once needs a key and a positive ttl, got {key!r}, {ttl!r}")
        with self._errors("record a used approval"):
            marked = self._client.set(f"{self.prefix}used:{key}", 1, nx=True, px=round(ttl * 1000))
        return bool(marked)

    def close(self) -> None:
        """Close the connections (the store can be used again: it reconnects)."""
        self._client.close()

    def __enter__(self) -> RedisSessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _describe(client: Any) -> str:
    kwargs = getattr(getattr(client, "connection_pool", None), "connection_kwargs", {})
    if "path" in kwargs:
        return f"unix://{kwargs['path']}"
    return f"redis://{kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{kwargs.get('db', 0)}"
