"""``toolmgmt catalog``: push tools to a shared catalog store (PostgreSQL), list, remove; and
what search learned from use: import pairs, list them, forget them.

Usage::

    toolmgmt catalog push tools.json --store postgresql://toolmgmt@db/toolmgmt
    toolmgmt catalog push tools.json --config gateway.toml --store ...   # every tool has an
                                                                         # upstream, else exit 1
    toolmgmt catalog list --store postgresql://toolmgmt@db/toolmgmt
    toolmgmt catalog list --json > tools.json        # the store's definitions, re-pushable
    toolmgmt catalog remove crm_old_search --store ...
    toolmgmt catalog learn pairs.jsonl --store ...   # or --file learned.sqlite --catalog tools.json
    toolmgmt catalog learned --tool get_weather --store ...
    toolmgmt catalog forget --tool get_weather --store ...   # or --all, --conversation ID,
                                                             # --principal NAME
    toolmgmt catalog trust --config gateway.toml            # the upstream changes held back
    toolmgmt catalog trust notes_delete_note --config gateway.toml   # accept one, after review

``learn`` reads JSON lines, one pair each: ``{"request": ..., "tool": ..., "conversation": ...}``
(``conversation`` optional) or ``[request, tool]`` / ``[request, tool, conversation]``; each is
checked, redacted and kept as :meth:`ToolCatalog.learn
<toolmgmt_core._catalog.tool_catalog.ToolCatalog.learn>` does, and the report says what was
learned and what was ignored, and why. With ``--store`` the tools are the store's and what is
learned reaches every replica; with ``--file`` (a single process's SQLite file) the tools are
``--catalog``'s. With ``--config gateway.toml`` the gateway's policy applies as it does to
learning from its traffic: a denied or quarantined tool never learns (the pair is reported
ignored). An import counts each conversation id as a principal; a ``"principal"`` key (or a
fourth list item) names who taught the pair instead.

``--store`` defaults to ``$TOOLMGMT_CATALOG_DSN``, the name docs/deploy.md gives the gateway
config's ``[store] catalog_env`` (``$TOOLMGMT_CATALOG_STORE``, its former name, is still read,
with a warning). ``push`` reads what ``--catalog`` reads
(:func:`toolmgmt_core._catalog.sources.load_catalog`: a JSON list of tool schemas in any accepted
shape, ``{"tools": [...]}``, a gateway config or a Python ``module:attribute``); definitions that
cannot be read are skipped with a warning naming each and why (also in ``--json`` output, as
``warnings``), the others are pushed. A tool whose name is a look-alike of a stored tool's (same
name once case, separators, invisible characters and unicode look-alikes are ignored) is
refused, named with the tool it imitates, and the command exits with code 1 (the other tools
are still pushed). With ``--config``, a tool no upstream of the gateway serves is named and
nothing is pushed (exit code 1) unless ``--allow-orphans`` (:mod:`toolmgmt_core._cli.catalog_push`).
Needs ``toolmgmt[postgres]``.

``trust`` accepts the changed definition of a gateway's upstream tool held back since it was
pinned (:mod:`toolmgmt_core._catalog.pins`); without names it lists the changes held back, what
changed and which guards a change lowers. The pins are the gateway's: ``--config`` reads its
``[store] catalog`` (or ``catalog_env``), else its ``[gateway] pins_file``; ``--store`` names the
catalog store directly. Every replica takes the trust within seconds.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from toolmgmt_core._cli.catalog_push import register_push
from toolmgmt_core._cli.catalog_trust import register_trust
from toolmgmt_core._cli.console import (
    CliError,
    add_catalog_argument,
    add_json_argument,
    emit_json,
    print_table,
    warn,
)
from toolmgmt_core._model.errors import ToolmgmtError

__all__ = ["DEPRECATED_STORE_ENV", "POLICY_GROUP", "STORE_ENV", "read_pairs", "register"]

STORE_ENV = "TOOLMGMT_CATALOG_DSN"
"""The environment variable ``--store`` defaults to."""

DEPRECATED_STORE_ENV = "TOOLMGMT_CATALOG_STORE"
"""The former name of :data:`STORE_ENV`: read when that is unset, with a warning."""


def register(subparsers: Any) -> None:
    """Add ``catalog push|list|remove`` to the ``toolmgmt`` command."""
    parser = subparsers.add_parser(
        "catalog",
        help="the shared catalog store (PostgreSQL): push, list, remove tools; what search "
        "learned; trust changed upstream tools",
        description="Manage the catalog store that gateway replicas follow: every replica "
        "sees a push or a removal within a second. Also what search learned from use (learn, "
        "learned, forget) and the upstream tool changes a gateway holds back (trust).",
    )
    commands = parser.add_subparsers(dest="catalog_command", metavar="ACTION", required=True)
    register_push(commands, _add_store_argument, _store)
    listing = commands.add_parser(
        "list",
        help="the stored tools",
        description="List the store's tools: name, domain/group, revision, when it was last "
        "updated and its description. With --json, the stored definitions, which push takes "
        "back as they are (a backup, or a copy to another store).",
    )
    remove = commands.add_parser(
        "remove",
        help="remove tools by name",
        description="Remove tools from the store by their exact names; every replica stops "
        "serving them within a second (an upstream's own tool comes back as the upstream lists "
        "it). Names not in the store are reported, not an error.",
    )
    remove.add_argument("names", nargs="+", metavar="NAME", help="tool names")
    for command, run in ((listing, _run_list), (remove, _run_remove)):
        _add_store_argument(command)
        add_json_argument(command)
        command.set_defaults(run=run)
    learn = commands.add_parser(
        "learn",
        help="import (request, tool) pairs search learns from",
        description="Teach search which tool requests wanted, from a JSON-lines file of pairs.",
    )
    learn.add_argument("file", metavar="FILE", help="JSON lines: one pair each (see the docs)")
    learn.add_argument(
        "--config",
        metavar="GATEWAY_TOML",
        help="apply this gateway config's policy: denied and quarantined tools never learn",
    )
    learned = commands.add_parser(
        "learned",
        help="what search learned (the audit trail)",
        description="List each request search learned from (what was asked, the tool it "
        "led to, the conversation, when and from where: traffic or an import), oldest first. "
        "Read-only.",
    )
    learned.add_argument("--tool", metavar="NAME", help="only this tool's")
    forget = commands.add_parser(
        "forget",
        help="forget what search learned: one tool's, one conversation's or all",
        description="Delete what search learned: one tool's terms (--tool), what one "
        "conversation or principal taught (--conversation, --principal: a right-to-erasure "
        "request), or everything (--all). Says how many learned requests went.",
    )
    which = forget.add_mutually_exclusive_group(required=True)
    which.add_argument("--tool", metavar="NAME", help="what this tool learned")
    which.add_argument("--conversation", metavar="ID", help="what this conversation taught")
    which.add_argument("--principal", metavar="NAME", help="what this principal taught")
    which.add_argument("--all", action="store_true", help="everything")
    for command, run in ((learn, _run_learn), (learned, _run_learned), (forget, _run_forget)):
        _add_store_argument(command)
        command.add_argument(
            "--file",
            dest="learned_file",
            metavar="PATH",
            help="a single process's SQLite file of what is learned, instead of --store",
        )
        command.add_argument(
            "--key-env",
            default="TOOLMGMT_LEARNING_KEY",
            metavar="VAR",
            help="the variable holding the key of the store's digests (as the gateway's "
            "[learning] key_env; --file keeps its own beside it); default: %(default)s",
        )
        add_json_argument(command)
        command.set_defaults(run=run)
    add_catalog_argument(learn)
    register_trust(commands, _add_store_argument)


def _add_store_argument(command: Any) -> None:
    command.add_argument(
        "--store",
        metavar="DSN",
        help=f"postgresql://user[:password]@host[:port]/dbname (default: ${STORE_ENV})",
    )


def _store_dsn(args: argparse.Namespace) -> str | None:
    """``--store``, else ``$TOOLMGMT_CATALOG_DSN``, else the deprecated name (warned)."""
    if args.store:
        return str(args.store)
    dsn, former = os.environ.get(STORE_ENV), os.environ.get(DEPRECATED_STORE_ENV)
    if former and not dsn:
        warn(f"${DEPRECATED_STORE_ENV} is deprecated and will stop working: set {STORE_ENV}.")
        return former
    if former and former != dsn:
        warn(f"${DEPRECATED_STORE_ENV} is ignored (deprecated): ${STORE_ENV} is set.")
    return dsn


def _store(args: argparse.Namespace) -> Any:
    dsn = _store_dsn(args)
    if not dsn:
        raise CliError(
            f"no catalog store: pass --store postgresql://user@host/dbname or set {STORE_ENV}."
        )
    try:
        from toolmgmt_core._stores.postgres import PostgresCatalogStore
    except ImportError as exc:
        raise CliError(str(exc)) from exc
    try:
        return PostgresCatalogStore(dsn)
    except ToolmgmtError as exc:
        raise CliError(str(exc)) from exc


def _run_list(args: argparse.Namespace) -> int:
    with _store(args) as store:
        try:
            records = store.records()
        except ToolmgmtError as exc:
            raise CliError(str(exc)) from exc
    if args.json:  # the definitions, as push reads them back (extra keys are ignored)
        emit_json(
            {
                "tools": [
                    {**r.definition, "revision": r.revision, "updated_at": r.updated_at.isoformat()}
                    for r in records
                ]
            }
        )
        return 0
    if not records:
        print(f"{store.where}: no tools.")
        return 0
    rows = [
        (
            r.name,
            f"{r.definition.get('domain', '')}/{r.definition.get('group', '')}",
            r.revision,
            r.updated_at.strftime("%Y-%m-%d %H:%M:%S"),
            str(r.definition.get("description", "")).split("\n")[0],
        )
        for r in records
    ]
    print_table(["tool", "domain/group", "revision", "updated", "description"], rows)
    print(f"\n{store.where}: {len(records):,} tools.")
    return 0


def _run_remove(args: argparse.Namespace) -> int:
    with _store(args) as store:
        try:
            removed = store.remove(args.names)
        except ToolmgmtError as exc:
            raise CliError(str(exc)) from exc
    missing = [name for name in dict.fromkeys(args.names) if name not in removed]
    if args.json:
        emit_json({"store": store.where, "removed": removed, "not_found": missing})
        return 0
    print_table(
        ["tool", "result"], [(n, "removed") for n in removed] + [(n, "not found") for n in missing]
    )
    return 0


# -- what search learned ----------------------------------------------------------------------


def _learned_store(args: argparse.Namespace) -> Any:
    """The store of what is learned: ``--file`` (SQLite) or ``--store`` (PostgreSQL)."""
    if args.learned_file:
        from toolmgmt_core._learning.store import LearnedFile

        return LearnedFile(args.learned_file)
    dsn = args.store or os.environ.get(STORE_ENV)
    if not dsn:
        raise CliError(
            f"nowhere to keep what is learned: pass --store postgresql://user@host/dbname (or "
            f"set {STORE_ENV}) for replicas, or --file learned.sqlite for one process."
        )
    try:
        from toolmgmt_core._stores.postgres_learned import PostgresLearnedStore

        return PostgresLearnedStore(dsn)
    except (ImportError, ToolmgmtError) as exc:
        raise CliError(str(exc)) from exc


def read_pairs(path: str) -> tuple[list[Any], list[tuple[int, str]]]:
    """The pairs of a JSON-lines file, and (line, why) for each line that is not one."""
    import json

    try:
        lines = open(path, encoding="utf-8").read().splitlines()  # noqa: SIM115
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror or exc}") from exc
    pairs: list[Any] = []
    bad: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            bad.append((number, f"not JSON: {exc}"))
            continue
        if isinstance(item, dict) and "request" in item and "tool" in item:
            item = [item["request"], item["tool"], item.get("conversation"), item.get("principal")]
        if not isinstance(item, list) or len(item) not in (2, 3, 4):
            bad.append(
                (number, 'expected {"request", "tool"[, "conversation", "principal"]} or a list')
            )
            continue
        pairs.append(tuple(item))
    return pairs, bad


def _run_learn(args: argparse.Namespace) -> int:
    from toolmgmt_core._catalog.tool_catalog import ToolCatalog
    from toolmgmt_core._cli.commands import load_catalog
    from toolmgmt_core._learning.teaching import LearningOptions

    pairs, bad = read_pairs(args.file)
    for number, reason in bad:
        warn(f"{args.file}:{number}: {reason}")
    store = _learned_store(args)
    try:
        if args.learned_file:
            tools = list(load_catalog(args.catalog))
        else:
            with _store(args) as tool_store:
                tools = tool_store.tools()
        key = os.environ.get(args.key_env)
        catalog = ToolCatalog(tools, learning=LearningOptions(store=store, key=key))
        where = _gateway_policy(args.config)(catalog) if args.config else None
        report = catalog.learn(pairs, where=where)
    except ToolmgmtError as exc:
        raise CliError(str(exc)) from exc
    if args.json:
        emit_json({**report.to_dict(), "unreadable": [{"line": n, "reason": r} for n, r in bad]})
        return 0
    rows = [(r.tool, "learned", r.text) for r in report.learned]
    rows += [
        (tool, f"ignored: {reason}", f"pair {position + 1}")
        for position, tool, reason in report.ignored
    ]
    print_table(["tool", "result", "request"], rows)
    print(
        f"\n{store!r}: {len(report.learned)} learned, {len(report.ignored)} ignored"
        + (f", {len(bad)} unreadable lines (above)" if bad else "")
        + "."
    )
    return 0


POLICY_GROUP = "toolmgmt.policy_sources"
"""The entry-point group of policy sources: ``source(path)`` returns, for a gateway config, a
function of a catalog returning whether a tool may learn (None: not its kind of file)."""


def _gateway_policy(path: str) -> Any:
    """The policy of the config at ``path``, from the first policy source that reads it."""
    from importlib.metadata import entry_points
    from pathlib import Path

    if not Path(path).is_file():
        raise CliError(f"--config {path}: no such file.")
    for entry in entry_points(group=POLICY_GROUP):
        try:
            policy = entry.load()(Path(path))
        except ImportError as exc:
            raise CliError(f"--config needs toolmgmt[gateway] ({exc})") from exc
        except ToolmgmtError as exc:
            raise CliError(str(exc)) from exc
        if policy is not None:
            return policy
    raise CliError(
        f"--config {path}: not a gateway config that an installed policy source reads "
        "(a gateway TOML needs toolmgmt[gateway])."
    )


def _run_learned(args: argparse.Namespace) -> int:
    store = _learned_store(args)
    try:
        requests = [r for r in store.load() if args.tool is None or r.tool == args.tool]
    except ToolmgmtError as exc:
        raise CliError(str(exc)) from exc
    if args.json:
        emit_json({"learned": [r.to_dict() for r in requests]})
        return 0
    if not requests:
        print(f"{store!r}: nothing learned" + (f" by {args.tool}." if args.tool else "."))
        return 0
    import datetime

    def when(at: float) -> str:
        return datetime.datetime.fromtimestamp(at).strftime("%Y-%m-%d %H:%M:%S")

    rows = [(r.id, r.tool, r.text, r.conversation, when(r.at), r.source) for r in requests]
    print_table(["id", "tool", "request", "conversation", "learned at", "source"], rows)
    return 0


def _run_forget(args: argparse.Namespace) -> int:
    from toolmgmt_core._learning.keys import learned_key

    store = _learned_store(args)
    try:
        key = learned_key(os.environ.get(args.key_env), store)
        digest = key.conversation(args.conversation) if args.conversation else None
        if args.principal:
            count = store.forget(args.tool, principal=key.principal(args.principal))
        else:
            count = store.forget(args.tool, conversation=digest)
    except ToolmgmtError as exc:
        raise CliError(str(exc)) from exc
    what = (
        f"what {args.tool} learned"
        if args.tool
        else f"what conversation {args.conversation} taught"
        if args.conversation
        else f"what principal {args.principal} taught"
        if args.principal
        else "everything learned"
    )
    if args.json:
        emit_json({"forgotten": count})
    else:
        print(f"{store!r}: forgot {what} ({count} requests).")
    return 0
