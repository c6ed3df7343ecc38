"""The ``toolmgmt`` command line: search, browse, measure, lint and diff a tool catalog.

Usage::

    toolmgmt search refund a customer payment          # on the embedded demo catalog
    toolmgmt search "send.*email" --regex --json
    toolmgmt search --each "read the app log" "email the team" --limit 4
    toolmgmt browse                                   # domains; then: browse crm; browse crm deals
    toolmgmt report --catalog tools.json              # tools, domains, definition tokens
    toolmgmt usage usage.jsonl --plot usage.png       # what a usage log says

``--catalog`` takes what :func:`toolmgmt_core._catalog.sources.load_catalog` reads: a JSON file of
tool
schemas, a gateway config (with ``toolmgmt[gateway]``) or a Python ``module:attribute``. Without it,
the embedded demo catalog is used.

Exit codes: 0 success (also when nothing matched: a message says so); 1 a check that found
problems (``lint`` errors, a breaking ``diff``); 2 bad usage or bad input (a missing or malformed
file, an unknown domain, a regex that does not compile); 130 when interrupted. Errors go to
stderr and name the file and what is wrong; tools that cannot be read are skipped with a warning
and counted.

Adding a command: write a module with a ``register(subparsers)`` function and either add it to
:data:`COMMAND_MODULES` by command name (core commands) or register it under the
``toolmgmt.commands`` entry-point group (a command that lives in an adapter or another package,
such as ``serve`` in ``toolmgmt_gateway``; the core never imports an adapter)::

    def register(subparsers):
        parser = subparsers.add_parser("hello", help="say hello")
        add_catalog_argument(parser)                  # from toolmgmt_core._cli.console
        parser.set_defaults(run=run_hello)            # run_hello(args) -> exit code

``register`` must stay cheap and import no optional dependency (import those inside the run
function); a module that cannot be imported leaves its command listed as unavailable, with the
reason, instead of breaking the other commands. Raise
:class:`~toolmgmt_core._cli.console.CliError` for bad input: ``main`` prints it and exits with 2.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib.metadata import entry_points
from typing import Any

from toolmgmt_core._cli.commands import BUILTIN_COMMANDS
from toolmgmt_core._cli.console import CliError
from toolmgmt_core._compat import package_version

__all__ = ["COMMAND_GROUP", "COMMAND_MODULES", "build_parser", "main"]

COMMAND_MODULES: Mapping[str, str] = {
    "catalog": "toolmgmt_core._cli.catalog",
    "check": "toolmgmt_core._cli.check",
    "usage": "toolmgmt_core._cli.usage",
}
"""Core modules that add a command through ``register(subparsers)``, by command name (the name
an unavailable command is listed under)."""

COMMAND_GROUP = "toolmgmt.commands"
"""The entry-point group of commands that live outside the core (``serve``)."""


def _register_unavailable(subparsers: Any, command: str, error: BaseException) -> None:
    reason = f"{type(error).__name__}: {error}"
    try:
        # No option prefix: whatever follows is taken as is, so the run says why it cannot.
        parser = subparsers.add_parser(
            command, help=f"(unavailable: {reason})", add_help=False, prefix_chars="\0"
        )
    except argparse.ArgumentError:  # the name is taken: nothing to add
        return

    def run(args: argparse.Namespace) -> int:
        raise CliError(f"the {command!r} command is unavailable: {reason}")

    parser.set_defaults(run=run)
    parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def _module_register(module_name: str) -> Callable[[Any], None]:
    register: Callable[[Any], None] = importlib.import_module(module_name).register
    return register


def _add_ons() -> Iterator[tuple[str, Callable[[], Callable[[Any], None]]]]:
    """(command name, a loader of its ``register``) for each add-on command."""
    for command, module_name in COMMAND_MODULES.items():
        yield command, functools.partial(_module_register, module_name)
    for entry in entry_points(group=COMMAND_GROUP):
        yield entry.name, entry.load


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every registered command.

    Args:
        command: the command about to run, when known: add-on commands (which may import an
            adapter and its framework) are left out when it is a built-in one.
    """
    parser = argparse.ArgumentParser(
        prog="toolmgmt",
        description="Search, browse and measure a catalog of LLM tools.",
        epilog="Run 'toolmgmt COMMAND --help' for a command's options.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for register in BUILTIN_COMMANDS:
        register(subparsers)
    if command is not None and command in subparsers.choices:
        return parser
    for name, load in _add_ons():
        try:
            load()(subparsers)
        except ImportError as exc:
            # How an add-on says it cannot run here: its extra (and framework) is not
            # installed, and its ImportError names what to install. Anything else is a bug
            # and surfaces as one.
            _register_unavailable(subparsers, name, exc)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(next((a for a in argv if not a.startswith("-")), None))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits on --help (0) and on usage errors (2)
        return int(exc.code) if isinstance(exc.code, int) else 2
    try:
        return int(args.run(args))
    except CliError as exc:
        print(f"toolmgmt {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `toolmgmt search ... | head`
        sys.stderr.close()
        return 0
