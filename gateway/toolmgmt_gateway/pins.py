"""Trust on first use for the gateway's upstream tools.

Each tool's definition (description, title, input and output schemas, annotations) is pinned
the first time the gateway sees it, under its folded name and its upstream; a later listing
whose definition or spelling differs (``WIPE7`` where ``wipe7`` was pinned) is held back
(quarantined: neither listed nor run) until an operator trusts it (``toolmgmt catalog trust
NAME``), or taken at once with the upstream's ``accept_changes`` unless the change lowers a
guard. A name is never another upstream's: one pinned to another upstream, or under another
upstream's longer prefix (``notes_...`` when an upstream has ``prefix = "notes_"``), is refused
(``status.refused``), whichever starts first. :class:`UpstreamPins` judges each listing of an
upstream against the pin store (the catalog store's, shared by replicas, else the pins file
beside the config) and, when that store cannot be reached, against what this process had in
effect.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import mcp.types as mcp_types
from toolmgmt_mcp import UpstreamStatus as AdapterUpstreamStatus

from toolmgmt_core import StoreError
from toolmgmt_core.integration import (
    ACCEPTED,
    CLAIMED,
    QUARANTINED,
    SAME,
    PinStore,
    PinVerdict,
    call_store,
    fold_name,
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
    refused: dict[str, str] = field(default_factory=dict)
    """Gateway name -> why, for each listed tool whose name is another upstream's."""


class UpstreamPins:
    """The pins of a gateway's upstream tools, and the changes of pinned tools seen.

    Usage::

        pins = UpstreamPins(MemoryPins())
        kept = await pins.judge(config, listed, status)  # held back: status.quarantined
        await pins.trusted_since("notes", "notes_delete_note")  # an operator trusted it since?
    """

    def __init__(
        self,
        store: PinStore,
        on_change: Callable[[str, str], None] | None = None,
        prefixes: Mapping[str, str] | None = None,
    ) -> None:
        self.store = store
        """Where the pins live (the catalog store's, for replicas)."""
        self.prefixes = {
            fold_name(prefix): upstream for upstream, prefix in (prefixes or {}).items() if prefix
        }
        """Folded prefix -> the upstream it is configured for: a name under it is that
        upstream's (the longest prefix wins)."""
        self.changes: Counter[tuple[str, str]] = Counter()
        """(upstream, ``accepted`` or ``quarantined``) -> changes of pinned tools seen."""
        self.on_change = on_change
        """Called with (upstream, outcome) for each change (a metric)."""
        self._in_effect: dict[str, tuple[str, str, str]] = {}
        """Folded name -> (upstream, name, digest) in effect, for when the pin store cannot be
        reached."""
        self._held: dict[tuple[str, str], str] = {}
        """(upstream, gateway name) -> the digest of the definition held back."""

    async def judge(
        self, config: UpstreamConfig, listed: list[mcp_types.Tool], status: UpstreamStatus
    ) -> list[mcp_types.Tool]:
        """The tools of ``listed`` (the upstream ``config``'s) whose definition is pinned (or
        accepted); the others held back in ``status.quarantined`` or, when their name is
        another upstream's, refused in ``status.refused``, logged and counted once."""
        refused: dict[str, str] = {}
        definitions, twins = self._definitions(config, listed, refused)
        verdicts = await self._verdicts(config, definitions)
        quarantined: dict[str, str] = {}
        for name, verdict in verdicts.items():
            if verdict.state == CLAIMED:
                refused[name] = _claimed_message(config.name, name, "pinned to another upstream")
            elif verdict.state == ACCEPTED:
                self._changed(config.name, ACCEPTED)
                logger.warning(
                    "upstream %r: tool %r changed (%s) and was accepted (accept_changes)",
                    config.name,
                    name,
                    ", ".join(verdict.changed) or "its definition",
                )
            elif verdict.state == QUARANTINED:
                quarantined[name] = _quarantine_message(config.name, name, verdict)
                self._held[(config.name, name)] = pin_digest(definitions[name])
                if name not in status.quarantined:
                    self._changed(config.name, QUARANTINED)
                    logger.warning("upstream %r: %s", config.name, quarantined[name])
        for name, first in twins.items():  # else the catalog refuses it beside ``first``
            if first in quarantined or first in refused:
                refused[name] = _claimed_message(config.name, name, f"a look-alike of {first!r}")
        for name in refused.keys() - status.refused.keys():
            logger.warning("upstream %r: %s", config.name, refused[name])
        status.quarantined = quarantined
        status.refused = refused
        prefix = config.tool_prefix
        held = quarantined.keys() | refused.keys()
        return [item for item in listed if f"{prefix}{item.name}" not in held]

    def _definitions(
        self, config: UpstreamConfig, listed: list[mcp_types.Tool], refused: dict[str, str]
    ) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
        """The pinned part of each listed tool by gateway name, and each look-alike of a tool
        listed before it (name -> that tool's name, not pinned); a name under another
        upstream's prefix is put in ``refused``."""
        definitions: dict[str, dict[str, Any]] = {}
        twins: dict[str, str] = {}
        firsts: dict[str, str] = {}
        for item in listed:
            name = f"{config.tool_prefix}{item.name}"
            owner = self._owner(name)
            if owner is not None and owner != config.name:
                where = f"under upstream {owner!r}'s prefix"
                refused[name] = _claimed_message(config.name, name, where)
                continue
            first = firsts.setdefault(fold_name(name), name)
            if first != name:
                twins[name] = first
                continue
            definitions[name] = pin_definition(
                item.description,
                item.input_schema,
                item.annotations.model_dump(by_alias=True, exclude_none=True)
                if item.annotations
                else None,
                item.title,
                item.output_schema,
            )
        return definitions, twins

    async def _verdicts(
        self, config: UpstreamConfig, definitions: dict[str, dict[str, Any]]
    ) -> dict[str, PinVerdict]:
        try:
            verdicts = await call_store(
                self.store,
                lambda: self.store.check(config.name, definitions, accept=config.accept_changes),
            )
        except StoreError as exc:  # judged against what this process had in effect
            logger.error(
                "upstream %r: the pin store failed (%s); tools whose definition "
                "changed since this replica last listed them are held back",
                config.name,
                exc,
            )
            return self._judged_here(config.name, definitions)
        self._in_effect.update(
            (fold_name(name), (config.name, name, pin_digest(definitions[name])))
            for name, v in verdicts.items()
            if v.state not in (QUARANTINED, CLAIMED)
        )
        return verdicts

    def _owner(self, name: str) -> str | None:
        """The upstream whose configured prefix (the longest) ``name`` starts with, or None."""
        folded = fold_name(name)
        under = [prefix for prefix in self.prefixes if folded.startswith(prefix)]
        return self.prefixes[max(under, key=len)] if under else None

    async def trusted_since(self, upstream: str, name: str) -> bool:
        """Whether the pin of ``name`` is now the definition held back (one row read)."""
        try:
            pins = await call_store(self.store, lambda: self.store.get([name]))
        except StoreError:
            return False
        pin = pins.get(name)
        return pin is not None and pin.digest == self._held.get((upstream, name))

    def _judged_here(
        self, upstream: str, definitions: dict[str, dict[str, Any]]
    ) -> dict[str, PinVerdict]:
        verdicts = {}
        for name, definition in definitions.items():
            seen = (upstream, name, pin_digest(definition))
            in_effect = self._in_effect.get(fold_name(name), seen)
            if in_effect == seen:
                verdicts[name] = PinVerdict(name, SAME)
            elif in_effect[0] != upstream:
                verdicts[name] = PinVerdict(name, CLAIMED, ("source",))
            else:
                verdicts[name] = PinVerdict(name, QUARANTINED, ("definition",))
        return verdicts

    def _changed(self, upstream: str, outcome: str) -> None:
        self.changes[(upstream, outcome)] += 1
        if self.on_change is not None:
            self.on_change(upstream, outcome)


def _claimed_message(upstream: str, name: str, why: str) -> str:
    return (
        f"Tool {name!r} of upstream {upstream!r} is refused: the name is {why}, and one "
        "upstream never takes another's name. Give this upstream a prefix of its own in the "
        "gateway config."
    )


def _quarantine_message(upstream: str, name: str, verdict: PinVerdict) -> str:
    lowered = f"; it lowers a guard: {', '.join(verdict.lowered)}" if verdict.lowered else ""
    changed = ", ".join(verdict.changed) or "its definition"
    return (
        f"Tool {name!r} of upstream {upstream!r} is quarantined: its {changed} changed since "
        f"it was first seen{lowered}. It is neither listed nor run until an operator reviews "
        f"the change and accepts it with: toolmgmt catalog trust {name} --config <gateway "
        "config>. Use another tool meanwhile."
    )
