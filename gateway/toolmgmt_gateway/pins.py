"""Trust on first use for the gateway's upstream tools.

Each tool's definition (description, input schema, annotations, title) is pinned the first time
the gateway sees it; a later listing whose definition differs is held back (quarantined: neither
listed nor run) until an operator trusts it (``toolmgmt catalog trust NAME``), or taken at once
with the upstream's ``accept_changes`` unless the change lowers a guard. :class:`UpstreamPins`
judges each listing of an upstream against the pin store (the catalog store's, shared by
replicas, else one in memory) and, when that store cannot be reached, against what this process
had in effect.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread
import mcp.types as mcp_types
from toolmgmt_mcp import UpstreamStatus as AdapterUpstreamStatus

from toolmgmt_core import StoreError
from toolmgmt_core.integration import (
    ACCEPTED,
    QUARANTINED,
    SAME,
    PinStore,
    PinVerdict,
    pin_definition,
    pin_digest,
)
from toolmgmt_gateway.config import UpstreamConfig

__all__ = ["UpstreamPins", "UpstreamStatus"]

logger = logging.getLogger("toolmgmt_mcp")


@dataclass
class UpstreamStatus(AdapterUpstreamStatus):
    """What the gateway knows about one upstream: the adapter's status and what is held back."""

    quarantined: dict[str, str] = field(default_factory=dict)
    """Gateway name -> why, for each tool held back since its definition changed after it was
    pinned (until ``toolmgmt catalog trust NAME``)."""


class UpstreamPins:
    """The pins of a gateway's upstream tools, and the changes of pinned tools seen.

    Usage::

        pins = UpstreamPins(MemoryPins())
        kept = await pins.judge(config, listed, status)  # held back: status.quarantined
        await pins.trusted_since("notes", "notes_delete_note")  # an operator trusted it since?
    """

    def __init__(
        self, store: PinStore, on_change: Callable[[str, str], None] | None = None
    ) -> None:
        self.store = store
        """Where the pins live (the catalog store's, for replicas)."""
        self.changes: Counter[tuple[str, str]] = Counter()
        """(upstream, ``accepted`` or ``quarantined``) -> changes of pinned tools seen."""
        self.on_change = on_change
        """Called with (upstream, outcome) for each change (a metric)."""
        self._in_effect: dict[str, str] = {}
        """Gateway name -> the digest in effect, for when the pin store cannot be reached."""
        self._held: dict[tuple[str, str], str] = {}
        """(upstream, gateway name) -> the digest of the definition held back."""

    async def judge(
        self, config: UpstreamConfig, listed: list[mcp_types.Tool], status: UpstreamStatus
    ) -> list[mcp_types.Tool]:
        """The tools of ``listed`` (the upstream ``config``'s) whose definition is pinned (or
        accepted); the others held back in ``status.quarantined``, logged and counted once."""
        definitions = {
            f"{config.tool_prefix}{item.name}": pin_definition(
                item.description,
                item.input_schema,
                item.annotations.model_dump(by_alias=True, exclude_none=True)
                if item.annotations
                else None,
                item.title,
            )
            for item in listed
        }
        try:
            verdicts = await anyio.to_thread.run_sync(
                lambda: self.store.check(config.name, definitions, accept=config.accept_changes)
            )
        except StoreError as exc:  # judged against what this process had in effect
            logger.error("upstream %r: the pin store failed (%s); tools whose definition "
                         "changed since this replica last listed them are held back", config.name,
                         exc)
            verdicts = self._judged_here(definitions)
        else:
            self._in_effect.update(
                (name, pin_digest(definitions[name]))
                for name, v in verdicts.items()
                if v.state != QUARANTINED
            )
        quarantined: dict[str, str] = {}
        for name, verdict in verdicts.items():
            if verdict.state == ACCEPTED:
                self._changed(config.name, ACCEPTED)
                logger.warning(
                    "upstream %r: tool %r changed (%s) and was accepted (accept_changes)",
                    config.name, name, ", ".join(verdict.changed) or "its definition",
                )
            elif verdict.state == QUARANTINED:
                quarantined[name] = _quarantine_message(config.name, name, verdict)
                self._held[(config.name, name)] = pin_digest(definitions[name])
                if name not in status.quarantined:
                    self._changed(config.name, QUARANTINED)
                    logger.warning("upstream %r: %s", config.name, quarantined[name])
        status.quarantined = quarantined
        prefix = config.tool_prefix
        return [item for item in listed if f"{prefix}{item.name}" not in quarantined]

    async def trusted_since(self, upstream: str, name: str) -> bool:
        """Whether the pin of ``name`` is now the definition held back (one row read)."""
        try:
            pins = await anyio.to_thread.run_sync(lambda: self.store.get([name]))
        except StoreError:
            return False
        pin = pins.get(name)
        return pin is not None and pin.digest == self._held.get((upstream, name))

    def _judged_here(self, definitions: dict[str, dict[str, Any]]) -> dict[str, PinVerdict]:
        verdicts = {}
        for name, definition in definitions.items():
            digest = pin_digest(definition)
            if self._in_effect.get(name, digest) == digest:
                verdicts[name] = PinVerdict(name, SAME)
            else:
                verdicts[name] = PinVerdict(name, QUARANTINED, ("definition",))
        return verdicts

    def _changed(self, upstream: str, outcome: str) -> None:
        self.changes[(upstream, outcome)] += 1
        if self.on_change is not None:
            self.on_change(upstream, outcome)


def _quarantine_message(upstream: str, name: str, verdict: PinVerdict) -> str:
    lowered = f"; it lowers a guard: {', '.join(verdict.lowered)}" if verdict.lowered else ""
    changed = ", ".join(verdict.changed) or "its definition"
    return (
        f"Tool {name!r} of upstream {upstream!r} is quarantined: its {changed} changed since "
        f"it was first seen{lowered}. It is neither listed nor run until an operator reviews "
        f"the change and accepts it with: toolmgmt catalog trust {name} --config <gateway "
        "config>. Use another tool meanwhile."
    )
