"""The catalog and the embedding cache on PostgreSQL, shared by replicas (``toolmgmt[postgres]``).

:class:`PostgresCatalogStore` keeps every tool's complete definition (what
:func:`~toolmgmt_core._model.schema.tool_to_definition` writes and
:func:`~toolmgmt_core._model.schema.tool_from_dict` reads) in ``toolmgmt_tools``, one row per tool
name
with a revision that increases with every change. Each push or removal sends a ``NOTIFY`` on
:data:`~toolmgmt_core._stores.postgres_db.CHANNEL` in the same transaction, so a
:class:`~toolmgmt_core._stores.postgres_follower.CatalogFollower` (one per replica) hears about a
change exactly when it becomes visible, and applies it to its in-memory
:class:`~toolmgmt_core.ToolCatalog`. Search stays in-process: each replica ranks with its
own BM25 index, rebuilt lazily after a change (PostgreSQL's full-text ranking is not BM25).

:class:`PostgresEmbeddingCache` keeps tool vectors in ``toolmgmt_embeddings``, keyed like the
SQLite :class:`~toolmgmt_core._embeddings.EmbeddingCache`, so every replica embeds each tool text
once between them.

Failure behaviour: an operation on a server that cannot be reached raises
:class:`~toolmgmt_core.StoreUnavailableError` naming it (never its password). A follower
that loses its connection keeps its catalog as it is (the replica goes on serving the last
catalog it had), reconnects with backoff and then resynchronises fully. The embedding cache,
unreachable, is skipped with a warning: vectors are computed locally meanwhile.

Modules: this one holds the store (what a push writes); the follower and the reading of rows
into a catalog are :mod:`~toolmgmt_core._stores.postgres_follower`'s, the embedding cache
:mod:`~toolmgmt_core._stores.postgres_embeddings`' (importable from here too), the driver, the
tables and the shared connection :mod:`~toolmgmt_core._stores.postgres_db`'s.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolmgmt_core._catalog.tool_catalog import IngestReport, ToolCatalog, ToolLimits
from toolmgmt_core._model.errors import CatalogError
from toolmgmt_core._model.names import name_forms
from toolmgmt_core._model.schema import tool_from_dict, tool_to_definition
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._stores.base import StoreTimeout
from toolmgmt_core._stores.postgres_db import (
    CHANNEL,
    TOOLS_SCHEMA,
    TOOLS_TABLE,
    Database,
    Jsonb,
    psycopg,
    redact_dsn,
)
from toolmgmt_core._stores.postgres_embeddings import PostgresEmbeddingCache
from toolmgmt_core._stores.postgres_follower import (
    Bind,
    CatalogFollower,
    StoredTool,
    build_tools,
    mirror_catalog,
    oldest_first,
    read_rows,
)

__all__ = [
    "ADMIN_TIMEOUT",
    "MAX_DEFINITION_BYTES",
    "PostgresCatalogStore",
    "PostgresEmbeddingCache",
    "PushReport",
    "redact_dsn",
]

MAX_DEFINITION_BYTES = 1 << 20
"""Largest tool definition (JSON) a push accepts: 1 MiB."""

ADMIN_TIMEOUT = StoreTimeout(connect=5.0, read=60.0)
"""The catalog store's deadlines: an operator's push of thousands of tools may take seconds
(no request waits on it; the embedding cache, which one does, has 2 s)."""

_NAME_IN_PAYLOAD = 7000  # bytes; PostgreSQL's payload limit is 8000

# Serialises pushes: a push reads every stored name to refuse look-alikes of them, so two pushes
# of look-alikes at once (each unaware of the other) must not both get in.
_PUSH_LOCK = 0x70757368  # "push"

# One statement per changed tool: the upsert and its notification, in the push's transaction.
_UPSERT = f"""
WITH up AS (
    INSERT INTO {TOOLS_TABLE} AS t (name, definition, revision, updated_at)
    VALUES (%(name)s, %(definition)s, nextval('{TOOLS_TABLE}_revision'), now())
    ON CONFLICT (name) DO UPDATE
        SET definition = EXCLUDED.definition, revision = EXCLUDED.revision, updated_at = now()
    RETURNING t.name, t.revision
)
SELECT pg_notify('{CHANNEL}', CASE WHEN octet_length(name) > {_NAME_IN_PAYLOAD}
    THEN json_build_object('op', 'sync', 'revision', revision)::text
    ELSE json_build_object('op', 'upsert', 'name', name, 'revision', revision)::text END)
FROM up
"""

_REMOVE = f"""
WITH gone AS (
    DELETE FROM {TOOLS_TABLE} WHERE name = ANY(%s) RETURNING name
), numbered AS (
    SELECT name, nextval('{TOOLS_TABLE}_revision') AS revision FROM gone
)
SELECT name, pg_notify('{CHANNEL}', CASE WHEN octet_length(name) > {_NAME_IN_PAYLOAD}
    THEN json_build_object('op', 'sync', 'revision', revision)::text
    ELSE json_build_object('op', 'remove', 'name', name, 'revision', revision)::text END)
FROM numbered
"""


@dataclass
class PushReport(IngestReport):
    """What a push stored: ``added`` (new names), ``updated``, ``unchanged``; and what it did
    not: ``skipped`` (not a valid tool), ``refused`` (a look-alike of a stored name)."""

    updated: list[str] = field(default_factory=list)
    """Names whose stored definition changed."""
    unchanged: list[str] = field(default_factory=list)
    """Names already stored with exactly this definition (nothing written, nothing sent)."""
    refused: list[tuple[str, str]] = field(default_factory=list)
    """(name, reason) for each definition whose name is the same name as a stored tool's (or
    an earlier one's of the push) to lookup and policy
    (:func:`~toolmgmt_core._model.names.name_forms`): nothing of it was written."""

    def __bool__(self) -> bool:
        return bool(self.added or self.updated or self.unchanged)


def _contains_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, Mapping):
        return any(_contains_nul(k) or _contains_nul(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_contains_nul(v) for v in value)
    return False


def _checked_definition(item: Mapping[str, Any] | Tool) -> tuple[str, dict[str, Any]]:
    """The canonical definition of a pushed item, validated as the core reads it back.

    Raises:
        CatalogError: not a valid tool, not plain JSON, too large (or larger than a catalog's
            default :class:`~toolmgmt_core.ToolLimits`), or holding a NUL character.
    """
    tool = item if isinstance(item, Tool) else tool_from_dict(item)
    ToolLimits().check(tool)  # what every replica's catalog would refuse
    definition = tool_to_definition(tool)
    try:
        text = json.dumps(definition, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise CatalogError(f"Tool {tool.name!r} is not plain JSON: {exc}.") from exc
    if len(text.encode("utf-8", "surrogatepass")) > MAX_DEFINITION_BYTES:
        raise CatalogError(
            f"Tool {tool.name!r}: its definition is over {MAX_DEFINITION_BYTES:,} bytes of JSON."
        )
    if _contains_nul(definition):  # PostgreSQL's jsonb cannot hold U+0000
        raise CatalogError(f"Tool {tool.name!r} holds a NUL character (U+0000); remove it.")
    tool_from_dict(json.loads(text))  # what a replica will read back must build
    return tool.name, json.loads(text)


def _held_forms(conn: psycopg.Connection[Any]) -> dict[str, str]:
    """Every folded form (:func:`~toolmgmt_core._model.names.name_forms`) of every stored name
    -> that name."""
    held: dict[str, str] = {}
    for (name,) in conn.execute(f"SELECT name FROM {TOOLS_TABLE} ORDER BY revision DESC"):
        held.update(dict.fromkeys(name_forms(name), name))  # the oldest holder last, so kept
    return held


def _lookalike(name: str, clash: str, in_this_push: bool) -> str:
    where = "an earlier definition of this push has" if in_this_push else "the store holds"
    return (
        f"{name!r} is the same name as {clash!r}, which {where}, once case, separators, "
        "invisible characters, accents and marks, unicode look-alikes and the characters a "
        "provider refuses are ignored, as lookup and policy ignore them; every replica would "
        f"refuse it. Choose a name that differs in its letters, or remove {clash!r} first"
    )


def _label(position: int, item: Any) -> str:
    if isinstance(item, Tool):
        return item.name
    if isinstance(item, Mapping):
        body = item["function"] if isinstance(item.get("function"), Mapping) else item
        name = body.get("name")
        if isinstance(name, str) and name:
            return name
    return f"#{position}"


class PostgresCatalogStore:
    """Tool definitions in PostgreSQL: push, remove, list, load into a catalog, follow changes.

    Tables are created when missing, on first use. Thread-safe (one connection, used under a
    lock; a follower has its own).

    Usage::

        store = PostgresCatalogStore("postgresql://toolmgmt@db/toolmgmt")
        store.push(json.load(open("tools.json")))       # or Tools; bad ones skipped, reported
        catalog = ToolCatalog()
        follower = store.follow(catalog, bind=attach_handler)   # every replica
        ...
        follower.close()
    """

    def __init__(self, dsn: str, *, timeout: float | StoreTimeout = ADMIN_TIMEOUT) -> None:
        """
        Args:
            dsn: ``postgresql://user[:password]@host[:port]/dbname`` or a key=value string.
            timeout: seconds to wait for a connection and for each operation (a push, a
                listing) to finish (a number: both); a follower's heartbeat has its own
                deadline (:attr:`CatalogFollower.heartbeat_deadline`).

        Raises:
            ConfigError: ``dsn`` cannot be parsed.
        """
        self._db = Database(dsn, TOOLS_SCHEMA, timeout=timeout, application="toolmgmt-catalog")
        self.dsn = dsn
        self.where = self._db.where
        """The server, for messages (without the password)."""

    def __repr__(self) -> str:
        return f"PostgresCatalogStore({self.where!r})"

    def push(self, definitions: Iterable[Mapping[str, Any] | Tool]) -> PushReport:
        """Add or replace tools from definitions (any shape the catalog accepts) or Tools.

        Each definition is validated through :func:`~toolmgmt_core._model.schema.tool_from_dict`; a
        bad one (or a second one of the same name) is skipped and reported, never the whole
        batch. The valid ones are written in one transaction, with one notification per
        changed tool, so followers see the whole push at once. A definition identical to the
        stored one writes nothing.

        A new name that is the same name as a stored one to lookup and policy (a look-alike:
        ``notes_Get_Note`` beside ``notes_get_note``, a Cyrillic ``е`` for ``e``; see
        :mod:`toolmgmt_core._model.names`) is refused and reported in ``refused``: every replica's
        catalog would refuse it. The check reads the store inside the push's transaction, and
        pushes take turns (a transaction lock), so two pushes of look-alikes at once cannot
        both get in.

        Raises:
            StoreUnavailableError: the server cannot be reached (nothing was written).
        """
        report = PushReport()
        pending: dict[str, dict[str, Any]] = {}
        for position, item in enumerate(definitions, start=1):
            label = _label(position, item)
            try:
                name, definition = _checked_definition(item)
                if name in pending:
                    raise CatalogError(f"the name {name!r} is already used by an earlier one")
            except CatalogError as exc:
                report.skipped.append((label, str(exc)))
                continue
            except Exception as exc:  # untrusted input that trips a field's conversion
                report.skipped.append((label, f"{type(exc).__name__}: {exc}"))
                continue
            pending[name] = definition
        if not pending:
            return report

        def write(conn: psycopg.Connection[Any]) -> None:
            # run again if the first attempt met a broken connection: count afresh
            report.added, report.updated, report.unchanged, report.refused = [], [], [], []
            conn.execute("SELECT pg_advisory_xact_lock(%s)", [_PUSH_LOCK])
            held = _held_forms(conn)
            pushed: set[str] = set()
            stored = {
                name: definition
                for name, definition in conn.execute(
                    f"SELECT name, definition FROM {TOOLS_TABLE} WHERE name = ANY(%s) FOR UPDATE",
                    [list(pending)],
                )
            }
            changed = []
            for name, definition in pending.items():
                forms = name_forms(name)
                clash = next((held[f] for f in sorted(forms) if held.get(f, name) != name), None)
                if clash is not None and name not in stored:  # an update stays an update
                    report.refused.append((name, _lookalike(name, clash, clash in pushed)))
                    continue
                held.update(dict.fromkeys(forms, name))
                pushed.add(name)
                if name not in stored:
                    report.added.append(name)
                elif stored[name] != definition:
                    report.updated.append(name)
                else:
                    report.unchanged.append(name)
                    continue
                changed.append({"name": name, "definition": Jsonb(definition)})
            if changed:
                with conn.cursor() as cursor:
                    cursor.executemany(_UPSERT, changed)

        self._db.run(f"push {len(pending)} tools", write)
        return report

    def remove(self, names: Iterable[str]) -> list[str]:
        """Remove tools by name; return the names that were stored (unknown names are ignored).

        Raises:
            StoreUnavailableError: the server cannot be reached (nothing was removed).
        """
        wanted = [name for name in dict.fromkeys(names) if isinstance(name, str)]
        if not wanted:
            return []
        removed = self._db.run(
            f"remove {len(wanted)} tools",
            lambda conn: [row[0] for row in conn.execute(_REMOVE, [wanted])],
        )
        return sorted(removed)

    def records(self) -> list[StoredTool]:
        """Every stored row, by name.

        Raises:
            StoreUnavailableError: the server cannot be reached.
        """
        return self._db.run("list the catalog", read_rows)

    def tools(self, *, bind: Bind | None = None) -> list[Tool]:
        """Every stored tool, by name (a row that does not build is skipped, with a warning).

        Raises:
            StoreUnavailableError: the server cannot be reached.
        """
        return build_tools(self.records(), bind)[0]

    def load_into(self, catalog: ToolCatalog, bind: Bind | None = None) -> IngestReport:
        """Replace ``catalog``'s contents with the store's.

        Args:
            catalog: the catalog to fill; tools not in the store are removed from it, unchanged
                tools are left in place (so its search index is rebuilt only if something
                changed).
            bind: ``bind(tool) -> Tool`` run on every tool read, e.g. to attach its handler
                (the gateway binds a tool to its upstream by domain).

        Returns:
            ``added``: every name now in the catalog; ``skipped``: rows that did not build
            or that ``bind`` refused, with the reason.

        Raises:
            StoreUnavailableError: the server cannot be reached (the catalog is unchanged).
        """
        tools, report = build_tools(oldest_first(self.records()), bind)
        mirror_catalog(catalog, tools, report)
        return report

    def follow(
        self,
        catalog: ToolCatalog,
        *,
        bind: Bind | None = None,
        retry_initial: float = 0.2,
        retry_max: float = 5.0,
        heartbeat: float | None = None,
    ) -> CatalogFollower:
        """Load the store into ``catalog``, then keep it in step in a background thread.

        The catalog mirrors the store: tools not in the store are removed from it. Every push
        or removal reaches the catalog within milliseconds (it LISTENs for the store's
        notifications). When the connection is lost, the catalog stays as it is, the
        follower reconnects with backoff (``retry_initial`` doubling up to ``retry_max``
        seconds, jittered) and then resynchronises fully. After ``heartbeat`` seconds without a
        notification (default :attr:`CatalogFollower.heartbeat`) it checks its connection with
        a query that must answer within :attr:`CatalogFollower.heartbeat_deadline`, so a
        listening backend that stalled is replaced too.

        Raises:
            StoreUnavailableError: the first load failed (nothing was started).
        """
        follower = CatalogFollower(
            self._db.dsn,
            catalog,
            bind=bind,
            timeout=self._db.deadlines,
            retry_initial=retry_initial,
            retry_max=retry_max,
            heartbeat=heartbeat,
        )
        follower.start()
        return follower

    def close(self) -> None:
        """Close the connection (the store reconnects if used again)."""
        self._db.close()

    def __enter__(self) -> PostgresCatalogStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
