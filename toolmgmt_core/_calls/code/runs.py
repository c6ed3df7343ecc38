"""A program's run: its identity, and its state sealed while it waits at a call.

A run is (conversation, principal, run id): the run id is minted when ``run_code`` starts
(:func:`new_run_id`, 128 random bits), never derived from the code, so a new ``run_code`` call is
always a fresh run. When a call of the program pauses (an approval the framework asks a human
for, an upstream's question), the run's state is sealed (:class:`RunSeal`): the worker's
snapshot, the calls already settled, the output so far, the run's identity, the code's digest,
the call it waits at and an expiry, as compact JSON, encrypted, under an HMAC-SHA256 tag. The
integration keeps the sealed text in its framework's state and hands it back with the answer;
:meth:`RunSeal.open` checks the tag before reading anything, then the expiry and the run's
identity, so a forged, tampered, expired or foreign state is refused before anything runs
(:class:`ProgramStateError`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolmgmt_core._calls.approval import OnceRecord, UsedApprovals
from toolmgmt_core._calls.code.sandbox import MAX_SNAPSHOT_BYTES, PausedProgram
from toolmgmt_core._model.errors import ToolUnavailableError

__all__ = [
    "DEFAULT_RUN_TTL",
    "PendingCall",
    "ProgramStateError",
    "RunBook",
    "RunKey",
    "RunSeal",
    "RunState",
    "code_digest",
    "new_run_id",
]

DEFAULT_RUN_TTL = 86_400.0
"""Seconds a paused run can be resumed, by default (a human has a day to answer)."""
_RESUMED: dict[float, UsedApprovals] = {}
"""The sealings resumed in this process, by the life of their runs: shared by every manager (a
fresh agent and manager per request is still this process; keys hold a random run id)."""
_RESUMED_LOCK = threading.Lock()
_VERSION = "r2"
"""The sealing's format: compressed JSON encrypted (AES-256-GCM), then the HMAC tag;
``r1`` (signed only) is still opened, so a run paused before an upgrade resumes."""
_SIGNED_ONLY = "r1"
_IV_BYTES = 12
_MAX_SEALED = MAX_SNAPSHOT_BYTES * 3
"""Longest sealed state opened (bounded before any decoding)."""
_MAX_JSON = MAX_SNAPSHOT_BYTES * 4
"""Largest payload a sealed state may inflate to."""

RunKey = str | bytes | Callable[[], str | bytes]
"""The key sealing paused runs: text, bytes, or a function giving it (read when first needed:
the gateway's key kept in a shared store)."""


class ProgramStateError(ToolUnavailableError):
    """A paused program's state that cannot be resumed (forged, tampered, expired, another
    caller's or another program's): refused before anything runs; the message says what to do."""

    code = "program_state"


def new_run_id() -> str:
    """A fresh run id: 128 random bits, URL-safe."""
    return secrets.token_urlsafe(16)


def code_digest(code: str) -> str:
    """The digest of a program's code: which program a run runs (never the run's identity)."""
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@dataclass(frozen=True)
class PendingCall:
    """The call a paused run waits at."""

    index: int
    """Which of the run's calls it is (1 for its first)."""
    tool: str
    """The tool's name, as resolved."""
    arguments: Mapping[str, Any]
    """Its validated arguments (an approval is asked about them again on resume)."""
    reason: str | None = None
    """Why it needs approval; None when it paused for another reason (an upstream's question)."""


@dataclass
class RunState:
    """What a paused run is: its identity, its program, and the call it waits at."""

    run_id: str
    conversation: str
    principal: str | None
    code: str
    """The code's digest (:func:`code_digest`)."""
    program: PausedProgram
    pending: PendingCall | None = None
    expires: float = 0.0
    """When it can no longer be resumed (seconds since the epoch)."""
    nonce: str = field(default_factory=lambda: secrets.token_hex(8))
    """This sealing's own id: a resume uses it once (a replay of the same state runs nothing)."""
    issuer: str | None = None
    """The process whose record alone tells whether it was resumed (:class:`RunBook`), or None
    (a store shared by every process records it, or any process may resume it)."""

    def to_json(self) -> dict[str, Any]:
        pending = self.pending
        return {
            "run": self.run_id,
            "conv": self.conversation,
            "who": self.principal,
            "code": self.code,
            "exp": self.expires,
            "n": self.nonce,
            "by": self.issuer,
            "program": self.program.to_json(),
            "pending": None
            if pending is None
            else [pending.index, pending.tool, dict(pending.arguments), pending.reason],
        }

    @classmethod
    def from_json(cls, data: Any) -> RunState:
        """Raises ValueError: not a run state (checked after its tag: still kept strict)."""
        if not isinstance(data, dict):
            raise ValueError("not a run state")
        pending = data.get("pending")
        call = None
        if pending is not None:
            index, tool, arguments, reason = pending
            if not (
                isinstance(index, int)
                and isinstance(tool, str)
                and isinstance(arguments, dict)
                and (reason is None or isinstance(reason, str))
            ):
                raise ValueError("not a pending call")
            call = PendingCall(index, tool, arguments, reason)
        texts = [data.get(k) for k in ("run", "conv", "code", "n")]
        who = data.get("who")
        expires = data.get("exp")
        if not all(isinstance(t, str) for t in texts) or not isinstance(expires, int | float):
            raise ValueError("not a run state")
        issuer = data.get("by")
        if (who is not None and not isinstance(who, str)) or not isinstance(issuer, str | None):
            raise ValueError("not a run state")
        run, conversation, code, nonce = texts
        program = PausedProgram.from_json(data.get("program") or {})
        return cls(run, conversation, who, code, program, call, float(expires), nonce, issuer)  # type: ignore[arg-type]


def _encrypt(key: bytes, iv: bytes, data: bytes) -> bytes:
    """``data`` encrypted under ``key`` with nonce ``iv`` (AES-256-GCM, the ``cryptography``
    package's; the ``code`` extra installs it)."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    return AESGCM(key).encrypt(iv, data, None)


def _decrypt(key: bytes, iv: bytes, data: bytes) -> bytes:
    """What :func:`_encrypt` encrypted (ValueError: not under this key and nonce)."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    try:
        return AESGCM(key).decrypt(iv, data, None)
    except InvalidTag as exc:
        raise ValueError("not encrypted under this key") from exc


class RunSeal:
    """Seals and opens paused runs under one key: compact, compressed JSON, encrypted (the state
    holds what the program read, and it goes where the framework shows its state: an interrupt's
    value, a message history, a client's request state), then tagged (HMAC-SHA256).

    Args:
        key: the key (a :data:`RunKey`); None: a random key of this object, so runs resume
            only where they paused (in this process).
        ttl: seconds a sealed run stays resumable.
    """

    def __init__(self, key: RunKey | None = None, ttl: float = DEFAULT_RUN_TTL) -> None:
        self._given = key if key is not None else secrets.token_bytes(32)
        self._derived: tuple[bytes, bytes] | None = None
        self.ttl = ttl
        self.issuer: str | None = None
        """Written into each sealed state (:attr:`RunState.issuer`)."""

    def _keys(self) -> tuple[bytes, bytes]:
        """(the tag's key, the cipher's key), derived from the given key on first use."""
        if self._derived is None:
            given = self._given() if callable(self._given) else self._given
            raw = given.encode("utf-8") if isinstance(given, str) else bytes(given)
            # Keys of their own, derived: the same secret may seal other things elsewhere.
            self._derived = (
                hmac.new(raw, b"toolmgmt paused run v1", hashlib.sha256).digest(),
                hmac.new(raw, b"toolmgmt paused run cipher", hashlib.sha256).digest(),
            )
        return self._derived

    def seal(self, state: RunState, *, renew: bool = True) -> str:
        """``state`` as sealed text, its expiry set ``ttl`` from now, a nonce and the issuer of
        its own (``renew`` False: the state's own kept, so the text is the same once-used
        state)."""
        if renew:
            state.expires = time.time() + self.ttl
            state.nonce = secrets.token_hex(8)
            state.issuer = self.issuer
        body = json.dumps(state.to_json(), separators=(",", ":"), ensure_ascii=False)
        tag_key, cipher_key = self._keys()
        iv = secrets.token_bytes(_IV_BYTES)
        secret = _encrypt(cipher_key, iv, zlib.compress(body.encode("utf-8", "surrogatepass")))
        packed = base64.urlsafe_b64encode(iv + secret)
        payload = f"{_VERSION}.{packed.decode('ascii')}"
        tag = hmac.new(tag_key, payload.encode("ascii"), hashlib.sha256).hexdigest()
        return f"{payload}.{tag}"

    def open(self, sealed: Any, *, conversation: str, principal: str | None, code: str) -> RunState:
        """The run ``sealed`` holds, once its tag, expiry and identity are checked.

        Raises:
            ProgramStateError: not a state this key sealed (forged or tampered), expired, or
                another conversation's, caller's or program's; nothing may run.
        """
        if not isinstance(sealed, str) or len(sealed) > _MAX_SEALED:
            raise _refused("it is not a paused program's state")
        payload, _, tag = sealed.rpartition(".")
        tag_key, cipher_key = self._keys()
        expected = hmac.new(tag_key, payload.encode("ascii", "replace"), hashlib.sha256)
        version, _, packed = payload.partition(".")
        if version not in (_VERSION, _SIGNED_ONLY) or not hmac.compare_digest(
            expected.hexdigest(), tag
        ):
            raise _refused(
                "its state is not one this server sealed (it was changed, forged, or sealed "
                "under another key)"
            )
        try:
            raw = base64.urlsafe_b64decode(packed)
            if version == _VERSION:
                raw = _decrypt(cipher_key, raw[:_IV_BYTES], raw[_IV_BYTES:])
            inflater = zlib.decompressobj()
            body = inflater.decompress(raw, _MAX_JSON)
            if inflater.unconsumed_tail:
                raise ValueError("too large")
            state = RunState.from_json(json.loads(body))
        except (ValueError, TypeError, zlib.error) as exc:
            raise _refused("its state cannot be read") from exc
        if state.expires < time.time():
            raise _refused("the program expired before it was resumed", expired=True)
        if (state.conversation, state.principal) != (conversation, principal):
            raise _refused("it was paused in another conversation or by another caller")
        if state.code != code:
            raise _refused("it was paused running another program")
        return state


def _refused(why: str, *, expired: bool = False) -> ProgramStateError:
    what = "The program expired; run it again." if expired else "Run the program again."
    return ProgramStateError(
        f"The paused program could not be resumed: {why}. Nothing ran. {what}",
        tool_name="run_code",
    )


class RunBook:
    """A manager's paused runs: the :class:`RunSeal` they are sealed with, and which sealed
    states were resumed already (each is resumed once: in the session store shared by workers
    or replicas when it can record that, else in this process, whichever manager resumes it).

    A record in this process cannot tell whether another process resumed a state: with
    ``elsewhere`` False (the states come back from a client that may send one again, to any
    replica or after a restart), a state sealed by another process is refused unless a store
    shared by them records resumed runs.

    Args:
        key: the sealing key (None: a random one of this book).
        ttl: seconds a paused run stays resumable.
        store: a session store with ``claim_once`` (Redis), or None.
        elsewhere: whether another process may resume a state without such a store.
    """

    def __init__(
        self, key: RunKey | None, ttl: float, store: Any = None, *, elsewhere: bool = True
    ) -> None:
        self.seal = RunSeal(key, ttl)
        with _RESUMED_LOCK:
            used = _RESUMED.setdefault(ttl, UsedApprovals(ttl))
        self._record = OnceRecord(store, ttl, used=used, issuing=not elsewhere)
        self.seal.issuer = self._record.issuer

    async def claim(self, state: RunState) -> None:
        """Record ``state`` (this sealing of it) as resumed.

        Raises:
            ProgramStateError: it was resumed already, or that cannot be recorded now.
        """
        if self._record.foreign(state.issuer):
            raise _refused(
                "it was paused by another process (another replica, or this server before a "
                "restart), and only that process knows whether it was resumed already; "
                "processes that resume each other's programs need a session store that "
                "records it for all of them (Redis)"
            )
        key = f"run:{state.run_id}:{state.nonce}"
        try:
            first = await self._record(key)
        except Exception as exc:  # the store is down: fail closed, nothing ran
            raise _refused(f"its use could not be recorded ({type(exc).__name__})") from exc
        if not first:
            raise _refused(
                "this paused state was resumed already (one answer carries a program on once)"
            )
