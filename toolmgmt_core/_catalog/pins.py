"""Pinned tool definitions: trust on first use, then no silent change (a rug pull).

A tool that comes from somewhere the operator does not control (an MCP upstream) is pinned the
first time it is seen: a digest of what the model and the guards read of it (its description,
title, input and output schemas and annotations), under its folded name
(:func:`~toolmgmt_core._model.names.fold_name`) and the source it came from. A name is one
tool whatever its case or look-alikes: ``WIPE7`` listed where ``wipe7`` was pinned is that tool
renamed, a change like any other, never a new tool; and a name pinned to one source is never
another's (:data:`CLAIMED`: refused, whoever lists it and whatever its prefix). When a later
listing brings a different definition (or spelling), the
change is held back (:data:`QUARANTINED`) until an operator accepts it
(``toolmgmt catalog trust NAME``: :meth:`PinStore.trust`), or, for a source configured to accept
changes, taken at once (:data:`ACCEPTED`) unless it lowers a guard (:func:`lowered_guards`: it
stops being destructive, becomes read-only or idempotent, which the gateway's approval and retry
rules read): such a change is never taken silently.

The stores: :class:`MemoryPins` (one process), :class:`PinFile` (a JSON file, so that the
``trust`` command reaches a running process without a database), and
:class:`~toolmgmt_core._stores.postgres_pins.PostgresPins` (every replica agrees). They share
:func:`decide`, so a definition is judged the same way wherever its pin lives.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._model.names import fold_name
from toolmgmt_core._model.tool import ToolAnnotations

__all__ = [
    "ACCEPTED",
    "CLAIMED",
    "NEW",
    "QUARANTINED",
    "SAME",
    "MemoryPins",
    "Pin",
    "PinFile",
    "PinStore",
    "PinVerdict",
    "decide",
    "lowered_guards",
    "pin_definition",
    "pin_digest",
]

NEW: Literal["new"] = "new"
"""First sight: pinned as it is."""
SAME: Literal["same"] = "same"
"""The pinned definition."""
ACCEPTED: Literal["accepted"] = "accepted"
"""A change taken at once (its source accepts changes and no guard is lowered)."""
QUARANTINED: Literal["quarantined"] = "quarantined"
"""A change held back until an operator trusts it."""
CLAIMED: Literal["claimed"] = "claimed"
"""A name (folded) pinned to another source: refused, and nothing is written."""

State = Literal["new", "same", "accepted", "quarantined", "claimed"]


def pin_definition(
    description: str | None,
    input_schema: Mapping[str, Any] | None,
    annotations: Mapping[str, Any] | None,
    title: str | None = None,
    output_schema: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """What a pin covers of a tool, as plain JSON."""
    return {
        "description": description or "",
        "title": title,
        "inputSchema": dict(input_schema or {}),
        "outputSchema": dict(output_schema or {}),
        "annotations": dict(annotations or {}),
    }


def pin_digest(definition: Mapping[str, Any]) -> str:
    """The SHA-256 of ``definition`` as canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def lowered_guards(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> list[str]:
    """The guards a change of annotations (MCP or snake_case names) lowers, as phrases.

    Destructive to not destructive drops the approval a destructive tool needs; becoming
    read-only or idempotent makes a lost call resendable (and read-only overrides destructive).
    """
    old = ToolAnnotations.from_mapping(before)
    new = ToolAnnotations.from_mapping(after)
    lowered = []
    if old.destructive is True and old.read_only is not True and new.destructive is not True:
        lowered.append(f"destructiveHint {old.destructive} -> {new.destructive}")
    if old.read_only is not True and new.read_only is True:
        lowered.append(f"readOnlyHint {old.read_only} -> {new.read_only}")
    if old.idempotent is not True and new.idempotent is True:
        lowered.append(f"idempotentHint {old.idempotent} -> {new.idempotent}")
    return lowered


@dataclass(frozen=True)
class Pin:
    """One tool's pinned definition, and the change waiting for an operator, if any."""

    name: str
    """The tool's name as served (``notes_delete_note``); pins are keyed by its fold."""
    source: str
    """Where it comes from (the upstream's name): the only source that may list the name."""
    digest: str
    """:func:`pin_digest` of :attr:`definition`."""
    definition: dict[str, Any]
    """What is pinned (:func:`pin_definition`)."""
    pending: dict[str, Any] | None = None
    """A changed definition held back, or None."""
    pending_name: str | None = None
    """The name the held-back definition was listed under, when it was renamed (``WIPE7`` for
    a pinned ``wipe7``), else None."""

    @property
    def key(self) -> str:
        """The pin's key: the folded name."""
        return fold_name(self.name)

    def trusted(self) -> Pin:
        """The pin once its pending change is accepted."""
        assert self.pending is not None
        return Pin(
            self.pending_name or self.name, self.source, pin_digest(self.pending), self.pending
        )

    @property
    def pending_digest(self) -> str | None:
        """:func:`pin_digest` of :attr:`pending`, or None."""
        return pin_digest(self.pending) if self.pending is not None else None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Pin:
        return cls(
            str(data["name"]),
            str(data["source"]),
            str(data["digest"]),
            dict(data["definition"]),
            dict(data["pending"]) if data.get("pending") is not None else None,
            str(data["pending_name"]) if data.get("pending_name") else None,
        )


@dataclass(frozen=True)
class PinVerdict:
    """What one listed definition met."""

    name: str
    state: State
    """:data:`NEW`, :data:`SAME`, :data:`ACCEPTED` or :data:`QUARANTINED`."""
    changed: tuple[str, ...] = ()
    """The fields that differ from the pin (``description``, ``inputSchema``...)."""
    lowered: tuple[str, ...] = ()
    """The guards the change lowers (:func:`lowered_guards`)."""


def decide(
    pinned: Pin | None, name: str, source: str, definition: dict[str, Any], *, accept: bool
) -> tuple[Pin | None, PinVerdict]:
    """The pin to write (None: none) and the verdict for ``definition`` listed under ``name``.

    Args:
        pinned: the stored pin of ``name``'s fold, or None.
        accept: the source accepts changes that lower no guard.
    """
    digest = pin_digest(definition)
    if pinned is None:
        return Pin(name, source, digest, definition), PinVerdict(name, NEW)
    if pinned.source != source:  # another source's name, whoever lists it first
        return None, PinVerdict(name, CLAIMED, ("source",))
    if "outputSchema" not in pinned.definition and "outputSchema" in definition:
        # Pinned before pins covered output schemas: the rest compared, the output schema
        # pinned on this first sight of it.
        old = {k: v for k, v in definition.items() if k != "outputSchema"}
        if pin_digest(old) == pinned.digest and pinned.name == name and not pinned.pending:
            return Pin(name, source, digest, definition), PinVerdict(name, SAME)
    if pinned.digest == digest and pinned.name == name:
        cleared = Pin(name, source, digest, pinned.definition) if pinned.pending else None
        return cleared, PinVerdict(name, SAME)  # back to what was pinned: nothing pending
    every = set(definition) | set(pinned.definition)
    changed = tuple(k for k in sorted(every) if definition.get(k) != pinned.definition.get(k))
    changed = (("name",) if pinned.name != name else ()) + changed
    lowered = tuple(
        lowered_guards(pinned.definition.get("annotations"), definition.get("annotations"))
    )
    if accept and not lowered:
        accepted = Pin(name, source, digest, definition)
        return accepted, PinVerdict(name, ACCEPTED, changed, lowered)
    renamed = name if name != pinned.name else None
    if pinned.pending == definition and pinned.pending_name == renamed:
        return None, PinVerdict(name, QUARANTINED, changed, lowered)
    held = dataclasses.replace(pinned, pending=definition, pending_name=renamed)
    return held, PinVerdict(name, QUARANTINED, changed, lowered)


class PinStore(Protocol):
    """Where pins live."""

    def check(
        self, source: str, definitions: Mapping[str, dict[str, Any]], *, accept: bool = False
    ) -> dict[str, PinVerdict]:
        """Judge (and pin, or hold back) each listed definition of ``source``, by name (the
        pins compared by folded name)."""
        ...

    def get(self, names: Iterable[str]) -> dict[str, Pin]:
        """The pins of these names, each under the name asked for (compared folded; unknown
        ones left out)."""
        ...

    def trust(self, names: Iterable[str]) -> list[str]:
        """Accept each name's pending change; the names (as given) that had one."""
        ...

    def pins(self) -> list[Pin]:
        """Every pin, by name."""
        ...


class MemoryPins:
    """Pins in this process (lost on restart: the first listing after it is trusted again),
    keyed by folded name."""

    def __init__(self) -> None:
        self._pins: dict[str, Pin] = {}
        self._lock = threading.Lock()

    def _load(self) -> dict[str, Pin]:
        return self._pins

    def _save(self, pins: dict[str, Pin]) -> None:
        self._pins = pins

    @contextmanager
    def _locked(self) -> Iterator[dict[str, Pin]]:
        with self._lock:
            pins = dict(self._load())
            yield pins
            self._save(pins)

    def check(
        self, source: str, definitions: Mapping[str, dict[str, Any]], *, accept: bool = False
    ) -> dict[str, PinVerdict]:
        verdicts = {}
        with self._locked() as pins:
            for name, definition in definitions.items():
                key = fold_name(name)
                write, verdicts[name] = decide(
                    pins.get(key), name, source, definition, accept=accept
                )
                if write is not None:
                    pins[key] = write
        return verdicts

    def get(self, names: Iterable[str]) -> dict[str, Pin]:
        with self._locked() as pins:
            found = {n: pins.get(fold_name(n)) for n in names}
            return {n: pin for n, pin in found.items() if pin is not None}

    def trust(self, names: Iterable[str]) -> list[str]:
        trusted = []
        with self._locked() as pins:
            for name in names:
                pin = pins.get(fold_name(name))
                if pin is not None and pin.pending is not None:
                    pins[pin.key] = pin.trusted()
                    trusted.append(name)
        return trusted

    def pins(self) -> list[Pin]:
        with self._locked() as pins:
            return sorted(pins.values(), key=lambda pin: pin.name)


class PinFile(MemoryPins):
    """Pins in a JSON file, read and written under an exclusive lock on each use, so a running
    gateway and ``toolmgmt catalog trust --config`` share them.

    Raises:
        ConfigError: the file exists but is not a pin file.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"PinFile({str(self.path)!r})"

    @classmethod
    def beside(cls, config: str | os.PathLike[str]) -> PinFile:
        """The pins a gateway keeps by default: ``gateway.pins.json`` beside ``gateway.toml``."""
        path = Path(config).resolve()
        return cls(path.with_name(f"{path.stem}.pins.json"))

    @contextmanager
    def _locked(self) -> Iterator[dict[str, Pin]]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.path.with_suffix(self.path.suffix + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            pins = self._read()
            before = dict(pins)
            yield pins
            if pins != before:
                temporary = self.path.with_suffix(self.path.suffix + ".tmp")
                ordered = sorted(pins.values(), key=lambda pin: pin.name)
                data = {"pins": [pin.to_json() for pin in ordered]}
                temporary.write_text(json.dumps(data, indent=1), encoding="utf-8")
                os.replace(temporary, self.path)

    def _read(self) -> dict[str, Pin]:
        if not self.path.exists():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            pins = [Pin.from_json(p) for p in data["pins"]]
            return {pin.key: pin for pin in pins}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ConfigError(
                f"{self.path}: not a pin file ({type(exc).__name__}: {exc}); move it away and "
                "the gateway pins every tool again on its next listing."
            ) from exc
