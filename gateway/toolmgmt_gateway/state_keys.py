"""The keys sealing the request state of relayed questions, and whose state it is.

The gateway's input-required results (:mod:`toolmgmt_gateway.questions`) carry a request state that
the client sends back with its answers. The SDK's :class:`~mcp.server.request_state.
RequestStateBoundary` seals it on the way out (AES-256-GCM under a key derived with HKDF, so it
is tamper-evident and unreadable) and checks it on the way back: its expiry, the tool and the
arguments it was minted for, this gateway's name (the audience), and the caller
(:func:`caller_principal`, a digest of the ``Authorization`` header). A state that fails any of
these is refused with ``-32602 Invalid or expired requestState``, whatever was changed.

Any replica must open what another sealed, so the key is shared (:func:`request_state_security`):

- ``[gateway] state_key`` / ``state_key_env``: the operator's keys (the first seals, every one
  opens: rotate by putting the new key first, then dropping the old one after
  :data:`STATE_TTL`);
- else, with ``[store] sessions``: one random key kept in that store, made by the first replica
  that needs it (an atomic create; the others read it);
- else: a key of this process (one gateway process serves every request).
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
from typing import Any

from mcp.server.request_state import (
    AESGCMRequestStateCodec,
    InvalidRequestState,
    RequestStateBoundary,
    RequestStateSecurity,
)

from toolmgmt_core import SessionConflictError, StoreError
from toolmgmt_gateway.clients import request_principal
from toolmgmt_gateway.config import GatewayConfig

__all__ = [
    "STATE_TTL",
    "SharedKeyCodec",
    "caller_principal",
    "request_state_boundary",
    "run_state_key",
]

logger = logging.getLogger("toolmgmt_mcp")

STATE_TTL = 600.0
"""Seconds a sealed request state stays valid: a user has this long to answer a question."""
KEY_ID = "gateway-state-key"
"""The session-store id under which the replicas' shared key is kept."""


def caller_principal(ctx: Any) -> str | None:
    """Whose request state it is: the SHA-256 of the request's ``Authorization`` header (its
    bearer token), or of its client's name on a gateway with ``[gateway.clients]``
    (:func:`~toolmgmt_gateway.clients.request_principal`), or None when there is none (stdio, an
    open gateway)."""
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    scope = getattr(request, "scope", None)
    authorization = headers.get("authorization") if headers is not None else None
    principal = request_principal(scope if isinstance(scope, dict) else {}, authorization or "")
    if not principal:
        return None
    return hashlib.sha256(principal.encode("utf-8", "surrogatepass")).hexdigest()


class SharedKeyCodec:
    """The SDK's AES-256-GCM codec under the key kept in a session store for every replica,
    read (or made) on first use, and again after a failure to read it.

    Args:
        store: a session store without a TTL (the key must not expire).
    """

    def __init__(self, store: Any) -> None:
        self.store = store
        self._codec: AESGCMRequestStateCodec | None = None
        self._key: str | None = None
        self._lock = threading.Lock()

    def load(self) -> AESGCMRequestStateCodec:
        """The codec, reading the key from the store (making it when there is none).

        Raises:
            StoreError: the store cannot be reached.
        """
        with self._lock:
            if self._codec is None:
                self._key = self._key or self._shared_key()
                self._codec = AESGCMRequestStateCodec([self._key])
            return self._codec

    def _shared_key(self) -> str:
        stored = self.store.load(KEY_ID)
        if stored is None:
            try:
                self.store.save(KEY_ID, {"key": secrets.token_hex(32)}, version=0)
            except SessionConflictError:
                pass  # another replica made it first: use that one
            stored = self.store.load(KEY_ID)
        key = stored.state.get("key") if stored is not None else None
        if not isinstance(key, str) or len(key) < 32:
            raise StoreError(f"the request-state key kept under {KEY_ID!r} is missing or short")
        return key

    def key(self) -> str:
        """The shared key itself (code mode's paused programs are sealed with it too).

        Raises:
            StoreError: the store cannot be reached.
        """
        with self._lock:
            if self._key is None:
                self._key = self._shared_key()
            return self._key

    def seal(self, payload: bytes) -> str:
        """See the SDK's ``RequestStateCodec``."""
        return self.load().seal(payload)

    def unseal(self, token: str) -> bytes:
        """See the SDK's ``RequestStateCodec``.

        Raises:
            InvalidRequestState: the token is not one this gateway sealed, or the key cannot
                be read now.
        """
        try:
            codec = self.load()
        except StoreError as exc:
            raise InvalidRequestState("key unavailable") from exc
        return codec.unseal(token)


def request_state_boundary(config: GatewayConfig, shared: Any = None) -> RequestStateBoundary:
    """The SDK's request-state boundary for the gateway: the configured keys, else the key kept
    in ``shared`` (a :class:`SharedKeyCodec`), else a key of this process."""
    keys = list(config.gateway.state_keys)
    if keys:
        security = RequestStateSecurity(keys=keys, ttl=STATE_TTL, bind_principal=caller_principal)
    elif shared is not None:
        security = RequestStateSecurity(
            codec=shared, ttl=STATE_TTL, bind_principal=caller_principal
        )
    else:
        security = RequestStateSecurity(
            keys=[secrets.token_bytes(32)], ttl=STATE_TTL, bind_principal=caller_principal
        )
    return RequestStateBoundary(security, default_audience=config.gateway.name)


def run_state_key(config: GatewayConfig, shared: SharedKeyCodec | None = None) -> Any:
    """The key sealing code mode's paused programs (``Execution.run_key``): the replicas'
    state key (the first configured one, else the one kept in the session store, read when first
    needed), else a key of this process, so any replica resumes what another paused."""
    keys = list(config.gateway.state_keys)
    if keys:
        return keys[0]
    if shared is not None:
        return shared.key
    return secrets.token_bytes(32)
