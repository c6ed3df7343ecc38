"""The key of what a learned store keeps as digests, held outside the store: :class:`LearnedKey`.

A learned store (:mod:`toolmgmt_core._learning.store`) keeps, per learned request, digests of the
terms fewer principals than the threshold taught, of the principal and of the conversation.
Each is an HMAC-SHA256 under a key that the store never holds (:func:`learned_key` says where it
comes from), so that a copy of the database, read with any dictionary of words, e-mail
addresses or conversation ids, gives nothing back: the digests cannot be recomputed without
the key.

Each principal digest starts with the key's id (:attr:`LearnedKey.id`, an HMAC of a constant:
it says nothing of the key), so that a process tells its rows from rows kept under another key
(an earlier key, a replica started with another one), which it ignores.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import Any

from toolmgmt_core._learning.requests import ANONYMOUS
from toolmgmt_core._model.errors import ConfigError

__all__ = ["LearnedKey", "learned_key"]

_DIGITS = 16
"""Hex digits kept of a principal's or a conversation's HMAC (64 bits)."""


class LearnedKey:
    """The key of a learned store's digests (terms, principals, conversations).

    Args:
        secret: the operator's key (text or bytes, any length; 32 random bytes or more is
            best), never stored with what it keys.
    """

    def __init__(self, secret: str | bytes) -> None:
        raw = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
        if not raw:
            raise ConfigError("The learned store's key is empty: give a secret of its own.")
        self._key = hmac.new(raw, b"toolmgmt learned store", hashlib.sha256).digest()
        self.terms = self._mac(b"terms")
        """The key of the terms' digests (:func:`~toolmgmt_core._learning.requests.term_digest`)."""
        self.id = self._mac(b"key id").hex()[:8]
        """Which key this is (says nothing of it): the start of every principal digest."""

    def __repr__(self) -> str:
        return f"LearnedKey(id={self.id!r})"

    def _mac(self, text: bytes) -> bytes:
        return hmac.new(self._key, text, hashlib.sha256).digest()

    def principal(self, principal: str | None) -> str:
        """What is kept of a principal (None: the one anonymous principal): the key's id, a
        dot and 16 hex digits of its HMAC."""
        name = ANONYMOUS if principal is None else f"principal:{principal}"
        mac = self._mac(b"principal|" + name.encode("utf-8", "surrogatepass"))
        return f"{self.id}.{mac.hex()[:_DIGITS]}"

    def conversation(self, conversation_id: str) -> str:
        """What is kept of a conversation id: 16 hex digits of its HMAC."""
        text = conversation_id.encode("utf-8", "surrogatepass")
        return self._mac(b"conversation|" + text).hex()[:_DIGITS]

    def owns(self, principal_digest: str) -> bool:
        """Whether a stored principal digest was made under this key."""
        return principal_digest.startswith(self.id + ".")


def learned_key(secret: str | bytes | None, store: Any) -> LearnedKey:
    """The key of a catalog's learned store: ``secret`` when given, else the key a store keeps
    beside it (a SQLite file's ``.key`` file: ``store.key()``), else, with no store, a random
    key of this process (what it learns is lost with it anyway).

    Raises:
        ConfigError: a store that keeps no key of its own (PostgreSQL, shared by replicas) and
            no ``secret``.
    """
    if secret is not None:
        return LearnedKey(secret)
    own = getattr(store, "key", None)
    if callable(own):
        return LearnedKey(own())
    if store is None:
        return LearnedKey(os.urandom(32))
    raise ConfigError(
        f"{store!r} needs the key of its digests, kept outside it so that a copy of the "
        "database reveals nothing: LearningOptions(key=os.environ['LEARNING_KEY']) (the "
        "gateway: [learning] key_env, or its [gateway] state_key_env); every replica gives "
        "the same key."
    )
