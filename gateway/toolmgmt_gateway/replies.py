"""A 2025 client's answers to the questions a replica asked it, delivered to that replica.

Over the 2025 protocol a server asks its client something (``elicitation/create``,
``sampling/createMessage``, ``roots/list``) on the stream of the call that needs it, and the
client POSTs its answer, as a JSON-RPC response, with its ``Mcp-Session-Id``. Behind a load
balancer that POST lands on any replica, seldom the one holding the call. The replica that
takes it posts it here, under the conversation's store key and the question's id, and the
replica holding the call takes it (:class:`RedisReplies`: a Redis list per question, read with
``BLPOP``). The conversation key is the one the middleware checked for the answering request,
so only the conversation's own client, with its own credentials, can answer its questions.
"""

from __future__ import annotations

import time
from typing import Any

from toolmgmt_core import StoreError, StoreUnavailableError

__all__ = ["ANSWER_WAIT", "RedisReplies"]

ANSWER_WAIT = 600.0
"""Seconds a call waits for its client's answer to one question (a user may take a while)."""
_KEPT = 60
"""Seconds an answer waits in Redis for the call that asked (it is taken at once, normally)."""
_POLL = 5
"""Seconds one ``BLPOP`` blocks (a worker thread) before the wait goes on with another."""


class RedisReplies:
    """Answers to questions, through Redis: ``post`` on the replica that took the answer,
    ``take`` on the one that asked.

    Args:
        url: the Redis of ``[store] sessions``.
        prefix: what the keys start with (the session store's prefix).
    """

    def __init__(self, url: str, prefix: str) -> None:
        import redis

        self._redis = redis.Redis.from_url(
            url, socket_connect_timeout=5.0, socket_timeout=_POLL + 5.0
        )
        self._errors = (redis.ConnectionError, redis.TimeoutError)
        self._prefix = prefix

    def _key(self, conversation: str, question: str) -> str:
        # The conversation in braces: one Redis Cluster slot per conversation.
        return f"{self._prefix}reply:{{{conversation}}}:{question}"

    def post(self, conversation: str, question: str, answer: bytes) -> None:
        """Deliver ``answer`` (the client's JSON-RPC response) to whoever asked ``question``.

        Raises:
            StoreUnavailableError: Redis cannot be reached.
        """
        key = self._key(conversation, question)
        try:
            with self._redis.pipeline() as pipe:
                pipe.rpush(key, answer)
                pipe.expire(key, _KEPT)
                pipe.execute()
        except self._errors as exc:
            raise StoreUnavailableError(
                f"Cannot deliver an answer: Redis is unreachable ({exc})"
            ) from exc

    def take(self, conversation: str, question: str, timeout: float) -> bytes | None:
        """The answer to ``question`` once it comes (None after ``timeout`` seconds).

        Blocks: run it on a worker thread.

        Raises:
            StoreError: Redis cannot be reached.
        """
        key = self._key(conversation, question)
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                found = self._redis.blpop([key], timeout=max(1, min(_POLL, int(left))))
            except self._errors as exc:
                raise StoreError(f"Cannot wait for an answer: Redis is down ({exc})") from exc
            if found is not None:
                answer: Any = found[1]
                return bytes(answer)
        return None

    def close(self) -> None:
        """Close the connections."""
        self._redis.close()
