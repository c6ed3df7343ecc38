"""The gateway's catalog with a catalog store (``[store] catalog``): the upstreams' own tools and
the store's, one catalog that every replica serves alike.

Two sources feed the catalog the gateway's sessions search:

- **the upstreams' own tools**, listed live by this replica (as without a store): each replica
  asks its upstreams, refreshes on their ``list_changed``, and never writes them to the store,
  so replicas never race each other over the shared catalog, and the upstream stays the truth
  about what it runs;
- **the catalog store's tools**, followed through ``LISTEN/NOTIFY`` (pushed with ``toolmgmt
  catalog push``): a pushed tool is searchable on every replica within a second, without a
  restart. A stored tool runs on the upstream its domain names: ``notes_create_note`` of domain
  ``notes`` calls the ``notes`` upstream's ``create_note``. A stored definition of a name the
  upstream lists itself replaces the upstream's definition (a curated description or keywords,
  pushed once for every replica) and keeps its handler.

A stored tool whose domain is not an upstream of this gateway, or whose name lacks that
upstream's prefix, has nothing to run it: it is skipped with a warning, as is a stored tool whose
name an upstream of *another* domain already uses, and a stored row that is a look-alike of
another (the follower keeps the older one, names the row it skips and keeps following; see
:class:`~toolmgmt_core._stores.postgres_follower.CatalogFollower`). No row stops a replica from
starting. The store's follower mirrors the store into a
catalog of its own, and the sources are merged into the served catalog when either changed
(checked on every request, which costs two integer comparisons), so neither source removes
the other's tools.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

import anyio

from toolmgmt_core import CatalogError, StoreError, Tool, ToolCatalog, ToolUnavailableError
from toolmgmt_core.integration import call_store
from toolmgmt_gateway.config import GatewayConfig

__all__ = ["SharedCatalog"]

logger = logging.getLogger("toolmgmt_mcp")

_RETRY_FIRST = 1.0
_RETRY_MAX = 30.0


class SharedCatalog:
    """The served catalog of a gateway replica over a catalog store.

    Usage::

        shared = SharedCatalog(catalog, config, store=PostgresCatalogStore(dsn))
        upstreams = GatewayUpstreams(config, shared.local, policy)   # installs its tools there
        shared.ensure_upstream = upstreams.ensure_for
        await shared.start()             # follows the store (retried while it is down)
        shared.sync()                    # before each request: merge what changed
        shared.close()

    Args:
        catalog: the catalog the gateway's manager serves (the merge of both sources).
        config: the gateway configuration (its upstreams' domains and prefixes).
        store: a :class:`~toolmgmt_core._stores.postgres.PostgresCatalogStore`.
    """

    def __init__(self, catalog: ToolCatalog, config: GatewayConfig, store: Any) -> None:
        self.catalog = catalog
        self.local = ToolCatalog(encoding=catalog.encoding)
        """The upstreams' own tools (the :class:`GatewayUpstreams` installs them here)."""
        self.followed = ToolCatalog(encoding=catalog.encoding)
        """The store's tools, bound to their upstreams (the follower mirrors the store here)."""
        self.store = store
        self.follower: Any = None
        """The store's :class:`~toolmgmt_core._stores.postgres.CatalogFollower` once following."""
        self.ensure_upstream: Callable[[str], Any] | None = None
        """``GatewayUpstreams.ensure_for``: reconnects the upstream of a tool about to run."""
        self._prefixes = {u.name: u.tool_prefix for u in config.upstreams}
        self._seen = (-1, -1)
        self._merge_lock = threading.Lock()
        self._delegates: dict[tuple[str, str], Callable[..., Any]] = {}
        self._warned: set[tuple[str, str]] = set()
        self._closed = False

    # -- following the store ------------------------------------------------------------------

    async def start(self, tasks: Any) -> None:
        """Follow the store; when it is unreachable, serve the upstreams' tools alone and keep
        trying in ``tasks`` (a task group) until it answers."""
        try:
            await call_store(self.store, self._follow)
        except StoreError as exc:
            logger.error(
                "catalog store not available at start (%s); serving the upstreams' own tools and "
                "following the store as soon as it answers",
                exc,
            )
            tasks.start_soon(self._follow_when_reachable)
        except Exception:  # never a reason not to start: the upstreams' tools are served
            logger.exception(
                "catalog store at %s: following it failed at start; serving the upstreams' own "
                "tools and trying again",
                self.store.where,
            )
            tasks.start_soon(self._follow_when_reachable)

    def _follow(self) -> None:
        self.follower = self.store.follow(self.followed, bind=self._bind)
        self.follower.learner = self.catalog  # [learning]: other replicas' lessons, served here
        logger.info(
            "following the catalog store at %s (%d tools)", self.store.where, len(self.followed)
        )

    async def _follow_when_reachable(self) -> None:
        delay = _RETRY_FIRST
        while not self._closed:
            await anyio.sleep(delay)
            try:
                await call_store(self.store, self._follow)
            except Exception:  # unreachable still (said at start), or failing: retry, slower
                delay = min(delay * 2, _RETRY_MAX)
                continue
            return

    def close(self) -> None:
        """Stop following (the served catalog keeps what it has)."""
        self._closed = True
        if self.follower is not None:
            self.follower.close()
        self.store.close()

    # -- binding stored tools to upstreams ------------------------------------------------------

    def _bind(self, tool: Tool) -> Tool:
        """A stored tool with the handler of its domain's upstream (the follower's ``bind``).

        Raises:
            CatalogError: no upstream of this gateway can run it (the follower skips it).
        """
        prefix = self._prefixes.get(tool.domain)
        if prefix is None:
            domains = ", ".join(self._prefixes)
            raise CatalogError(
                f"its domain {tool.domain!r} is not an upstream of this gateway ({domains}), so "
                "nothing here can run it; push it with one of those domains"
            )
        if not tool.name.startswith(prefix):
            raise CatalogError(
                f"the tools of upstream {tool.domain!r} are named {prefix}<its tool name>; "
                f"{tool.name!r} is not"
            )
        upstream_tool = tool.name[len(prefix) :]
        return tool.replace(
            handler=self._delegate(tool.name, tool.domain, upstream_tool),
            metadata={**tool.metadata, "upstream": tool.domain, "upstream_tool": upstream_tool},
        )

    def _delegate(self, name: str, domain: str, upstream_tool: str) -> Callable[..., Any]:
        """One handler per name (kept, so re-reading an unchanged row changes nothing)."""
        handler = self._delegates.get((name, domain))
        if handler is not None:
            return handler

        async def call_upstream(**arguments: Any) -> Any:
            local = self.local.find(name)
            if (local is None or local.name != name) and self.ensure_upstream is not None:
                await self.ensure_upstream(name)  # a down upstream is reconnected first
                local = self.local.find(name)
            if local is None or local.name != name or local.handler is None:
                raise ToolUnavailableError(
                    f"Upstream {domain!r} does not list {upstream_tool!r}, so {name!r} (from the "
                    "catalog store) cannot run now. Use another tool.",
                    tool_name=name,
                )
            return await local.handler(**arguments)

        call_upstream.__name__ = name
        self._delegates[(name, domain)] = call_upstream
        return call_upstream

    # -- merging ------------------------------------------------------------------------------

    def sync(self) -> bool:
        """Bring the served catalog in line with both sources if either changed; whether
        anything was merged."""
        if (self.local.version, self.followed.version) == self._seen:
            return False
        with self._merge_lock:
            seen = (self.local.version, self.followed.version)
            if seen == self._seen:
                return False
            self._merge()
            self._seen = seen
        return True

    def _merge(self) -> None:
        wanted = {tool.name: tool for tool in self.local}
        for tool in self.followed:
            own = wanted.get(tool.name)
            if own is not None and own.domain != tool.domain:
                self._warn(
                    tool.name,
                    f"skipped the catalog store's {tool.name!r} (domain {tool.domain!r}): "
                    f"upstream {own.domain!r} lists a tool of that name",
                )
                continue
            wanted[tool.name] = tool
        for name in self.catalog.names():
            if name not in wanted:
                self.catalog.remove(name)
        for tool in wanted.values():
            current = self.catalog.get(tool.name) if tool.name in self.catalog else None
            if (
                current is not None
                and current == tool  # Tool equality leaves out the handler and metadata
                and current.handler is tool.handler
                and current.metadata == tool.metadata
            ):
                continue
            try:
                self.catalog.replace(tool)
            except CatalogError as exc:  # a look-alike of another source's name
                self._warn(tool.name, f"skipped {tool.name!r}: {exc}")

    def _warn(self, name: str, message: str) -> None:
        if (name, message) not in self._warned:
            self._warned.add((name, message))
            logger.warning("catalog: %s", message)
