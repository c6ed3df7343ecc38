"""``RedisSessionStore``: sessions shared by every replica, on Redis (``toolmgmt[redis]``).

Each session is one Redis hash ``{prefix}{session id}`` with two fields: ``v`` (the version) and
``s`` (the state as JSON). A save is one Lua script, so the version check, the write and the
new time to live happen atomically on the server: two replicas saving the same version at the
same moment cannot both succeed.
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

from toolmgmt_core.errors import ConfigError, StoreError, StoreUnavailableError
from toolmgmt_core.stores.base import (
    DEFAULT_SESSION_TTL,
    MAX_STATE_BYTES,
    StoredSession,
    _conflict,
    check_session_id,
    check_version,
    decode_state,
    encode_state,
)

__all__ = ["DEFAULT_PREFIX", "RedisSessionStore", "redact_url"]

_COUNTER = "\x00versions"  # no session id can hold a control character, so no clash

DEFAULT_PREFIX = "toolmgmt:session:"
"""What every session key starts with, so toolmgmt's keys are easy to find and to keep apart."""

# KEYS[1]: the session key; KEYS[2]: the store's version counter. ARGV: the expected version,
# the state JSON, the TTL in ms (0: none). Returns {1, new version} when saved, {0, current
# version} (0: no session) when not. Versions come from one counter, never from the session's
# own (current + 1): a session that expired and was started again never reuses a version, so a
# writer holding a version from before cannot overwrite the new session (no ABA).
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
else
  redis.call('PERSIST', KEYS[1])
end
return {1, version}
"""


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

    Failure behaviour: a server that cannot be reached raises
    :class:`~toolmgmt_core.errors.StoreUnavailableError` naming the server (never its
    password) after a few quick reconnection attempts (well under a second when the port is
    closed; ``timeout`` bounds a silent network). A save whose reply was lost may have been
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
        timeout: float = 5.0,
    ) -> None:
        """
        Args:
            url: ``redis://[[user]:password@]host[:port][/db]``, ``rediss://`` (TLS) or
                ``unix:///path/to/redis.sock``.
            ttl: seconds a session lives after its last save; None keeps it until deleted.
            prefix: what every key starts with (several deployments may share one Redis).
            client: a ready ``redis.Redis`` to use instead of making one from ``url``.
            max_state_bytes: the largest serialised state accepted.
            timeout: seconds to wait to connect and for each reply.
        """
        if ttl is not None and not ttl > 0:
            raise ConfigError(f"ttl must be a positive number of seconds or None, got {ttl!r}.")
        if client is None:
            if not url:
                raise ConfigError("RedisSessionStore needs a url (redis://host:port/db).")
            try:
                client = redis.Redis.from_url(
                    url,
                    socket_connect_timeout=timeout,
                    socket_timeout=timeout,
                    health_check_interval=30,
                    # A few quick reconnections, not redis-py's ten up to a second apart: a
                    # request should fail fast when Redis is down.
                    retry=Retry(ExponentialWithJitterBackoff(base=0.01, cap=0.1), 3),
                )
            except ValueError as exc:
                raise ConfigError(
                    f"Not a Redis URL: {redact_url(url)} ({exc}). Use "
                    "redis://[[user]:password@]host[:port][/db], rediss://... (TLS) or "
                    "unix:///path/to/redis.sock."
                ) from exc
        self.url = redact_url(url) if url else _describe(client)
        """The server, for messages (the password is never shown)."""
        self.ttl = ttl
        self.prefix = prefix
        self.max_state_bytes = max_state_bytes
        self._client = client
        self._save = client.register_script(_SAVE_SCRIPT)
        self._ttl_ms = 0 if ttl is None else max(1, round(ttl * 1000))

    def __repr__(self) -> str:
        return f"RedisSessionStore({self.url!r}, prefix={self.prefix!r}, ttl={self.ttl!r})"

    def key(self, session_id: str) -> str:
        """The Redis key of a session (the id checked first)."""
        return self.prefix + check_session_id(session_id)

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            yield
        except (redis.ConnectionError, redis.TimeoutError) as exc:
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
        """See :meth:`~toolmgmt_core.stores.SessionStore.load`."""
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

    def save(self, session_id: str, state: Mapping[str, Any], *, version: int) -> int:
        """See :meth:`~toolmgmt_core.stores.SessionStore.save`."""
        key = self.key(session_id)
        check_version(version)
        data = encode_state(state, max_bytes=self.max_state_bytes)
        with self._errors(f"save session {session_id!r}"):
            saved, current = self._save(
                keys=[key, self.prefix + _COUNTER], args=[version, data, self._ttl_ms]
            )
        if not saved:
            raise _conflict(session_id, version, int(current))
        return int(current)

    def delete(self, session_id: str) -> None:
        """See :meth:`~toolmgmt_core.stores.SessionStore.delete`."""
        key = self.key(session_id)
        with self._errors(f"delete session {session_id!r}"):
            self._client.delete(key)

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
