"""``toolmgmt catalog trust``: the changes of a gateway's upstream tools held back since they
were pinned (:mod:`toolmgmt_core._catalog.pins`), listed, and accepted after review.

Usage::

    toolmgmt catalog trust --config gateway.toml                     # what is held back
    toolmgmt catalog trust notes_delete_note --config gateway.toml   # accept it

The pins are the gateway's: ``--config`` reads its ``[store] catalog`` (or ``catalog_env``), else
its ``[gateway] pins_file``, else the pins file beside it (``gateway.pins.json``); ``--store``
names the catalog store directly (default ``$TOOLMGMT_CATALOG_DSN``). Every replica serves an
accepted change within seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

from toolmgmt_core._cli.console import CliError, add_json_argument, emit_json, print_table
from toolmgmt_core._model.errors import ToolmgmtError

__all__ = ["register_trust"]

_STORE_ENV = "TOOLMGMT_CATALOG_DSN"


def register_trust(commands: Any, add_store_argument: Callable[[Any], None]) -> None:
    """Add ``trust`` to ``toolmgmt catalog``'s actions."""
    trust = commands.add_parser(
        "trust",
        help="accept a gateway upstream tool's changed definition (held back since pinned)",
        description="List the upstream tool changes a gateway holds back, or accept some after "
        "review: the tool is listed and run again with its new definition on every replica.",
    )
    trust.add_argument("names", nargs="*", metavar="NAME", help="gateway tool names to accept")
    trust.add_argument(
        "--config", metavar="FILE", help="the gateway config (its [store] catalog or pins_file)"
    )
    add_store_argument(trust)
    add_json_argument(trust)
    trust.set_defaults(run=_run_trust)


# -- pinned upstream tools ---------------------------------------------------------------------


def _pin_store(args: argparse.Namespace) -> Any:
    """The gateway's pins: ``--store``, else ``--config``'s ``[store] catalog``, ``[gateway]
    pins_file`` or the pins file beside it, else ``$TOOLMGMT_CATALOG_DSN``."""
    dsn = args.store
    if not dsn and args.config:
        from pathlib import Path

        from toolmgmt_core._config.document import ConfigDocument

        path = Path(args.config)
        try:
            root = ConfigDocument.read(
                path, what="gateway config", fmt="toml" if path.suffix == ".toml" else "json"
            ).root()
            dsn = root.table("store").secret("catalog")
            gateway = root.table("gateway")
            in_memory = gateway.body.get("pins_file") is False
            pins_file = None if in_memory else gateway.string("pins_file", None)
        except ToolmgmtError as exc:
            raise CliError(str(exc)) from exc
        if not dsn and in_memory:
            raise CliError(
                f"{args.config} keeps its pins in the gateway's process (pins_file = false), out "
                "of this command's reach: remove that line or set [store] catalog, or set "
                "accept_changes = true in the upstream's table and restart the gateway."
            )
        if not dsn:
            from toolmgmt_core._catalog.pins import PinFile

            return PinFile(path.parent / pins_file) if pins_file else PinFile.beside(path)
    dsn = dsn or os.environ.get(_STORE_ENV)
    if not dsn:
        raise CliError(f"no pins: pass --config gateway.toml, --store DSN or set {_STORE_ENV}.")
    try:
        from toolmgmt_core._stores.postgres_pins import PostgresPins

        return PostgresPins(dsn)
    except (ImportError, ToolmgmtError) as exc:
        raise CliError(str(exc)) from exc


def _run_trust(args: argparse.Namespace) -> int:
    from toolmgmt_core._catalog.pins import lowered_guards

    store = _pin_store(args)
    try:
        held = {p.name: p for p in store.pins() if p.pending is not None}
        trusted = store.trust(args.names) if args.names else []
    except ToolmgmtError as exc:
        raise CliError(str(exc)) from exc
    rows = []
    for pin in held.values():
        assert pin.pending is not None
        changed = [k for k in sorted(pin.pending) if pin.pending[k] != pin.definition.get(k)]
        if pin.pending_name:  # renamed: listed under its new spelling
            changed.insert(0, f"name (was {pin.name})")
        lowered = lowered_guards(pin.definition.get("annotations"), pin.pending.get("annotations"))
        rows.append((pin.pending_name or pin.name, pin.source, changed, lowered))
    unknown = [n for n in args.names if n not in trusted]
    if args.json:
        emit_json(
            {
                "held": [
                    {"tool": n, "upstream": u, "changed": c, "lowered": w} for n, u, c, w in rows
                ],
                "trusted": trusted,
                "not_held": unknown,
            }
        )
        return 1 if unknown else 0
    if not args.names:
        if not rows:
            print(f"{store!r}: no upstream tool changes held back.")
            return 0
        print_table(
            ["tool", "upstream", "changed", "lowers"],
            [(n, u, ", ".join(c), "; ".join(w) or "-") for n, u, c, w in rows],
        )
        print("\nReview each change upstream, then: toolmgmt catalog trust NAME ...")
        return 0
    for name in trusted:
        print(f"trusted {name}: its new definition is served within seconds on every replica.")
    for name in unknown:
        print(
            f"error: {name!r} has no change held back (see: toolmgmt catalog trust).",
            file=sys.stderr,
        )
    return 1 if unknown else 0
