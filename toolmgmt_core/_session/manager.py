"""``ToolManager``: how an agent meets the catalog, shared by many concurrent sessions.

A manager holds configuration only and is read-only once built; each conversation gets its own
:class:`~toolmgmt_core.ToolSession` from :meth:`ToolManager.session`, so sessions on threads or
asyncio tasks never share loaded tools or results. Its options are a few small objects grouped by
concern (:mod:`toolmgmt_core._session.options`), which the gateway's configuration file fills too.
"""

from __future__ import annotations

import dataclasses
import logging
import time
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

from toolmgmt_core._calls.budget import ResultBudget
from toolmgmt_core._calls.code.runs import RunBook
from toolmgmt_core._calls.pipeline import CallPipeline
from toolmgmt_core._catalog.tool_catalog import ToolCatalog
from toolmgmt_core._events import EventHub, Listener, OtelListener, default_listeners
from toolmgmt_core._learning.from_use import UseLearner
from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._model.tokens import DEFAULT_ENCODING, definition_tokens, get_encoding
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._policy.steps import Approval, ApprovalCallback
from toolmgmt_core._policy.view import PolicyView
from toolmgmt_core._runtime.threads import join_threads
from toolmgmt_core._session.layout import LayoutPlanner
from toolmgmt_core._session.modes import Mode, mode_of
from toolmgmt_core._session.options import Access, Discovery, Execution
from toolmgmt_core._session.session import ToolSession
from toolmgmt_core._stores.base import InMemorySessionStore, SessionStore

__all__ = ["ToolManager"]

logger = logging.getLogger("toolmgmt")


class ToolManager:
    """Configuration for discovery sessions over one catalog.

    Usage::

        manager = ToolManager(catalog, mode="search", always_on=["get_time"])
        session = manager.session()
        request_tools = session.tools()    # tool_search, call_tool, always-on: every step
        result = await session.call("tool_search", {"query": "send an email"})
        result = await session.call(
            "call_tool", {"tool_name": "send_email", "arguments": {"to": ["a@b.c"]}}
        )
        messages.append({"role": "tool", "content": result.content})  # a ToolResult

    Args:
        catalog: the tools (and the tokenizer everything is measured in, ``catalog.encoding``).
        mode: a mode (:mod:`toolmgmt_core._session.modes`) or its name: ``"search"``
            (``tool_search`` answers with the found tools' definitions and ``call_tool`` runs
            them; the list stays the same all conversation, so a prompt cache holds;
            ``Search(appends=True)`` adds found tools to the list instead), ``"gateway"``
            (``discover_tools`` / ``get_tool_schema`` / ``execute_tool`` only), ``"lazy"``
            (every tool by name and description, parameters on request), ``"flat"`` (every
            tool) or ``"auto"`` (flat below a threshold, search beyond; ``Auto(...)`` sets it).
        always_on: names of tools always listed, in this order, in every mode. Tools whose
            ``defer_loading`` is False are always listed too, after these. A name not in the
            catalog yet (a framework's tools join on first use) is warned about and listed once
            it is there.
        discovery: how searches find and load tools (:class:`~toolmgmt_core.Discovery`).
        access: what the agent may see and run: an :class:`~toolmgmt_core.Access` (profile and
            policy steps), or a profile name alone.
        approval: which calls need approval and who decides: an
            :class:`~toolmgmt_core.Approval` or its callback alone. By default tools annotated
            destructive need approval however they are called; with no callback and no framework
            approver, such calls are refused.
        results: result budgets and truncation (:class:`~toolmgmt_core.ResultBudget`).
        execution: how calls run (:class:`~toolmgmt_core.Execution`: the default timeout).
        session_store: where conversations opened by id (``manager.session("conv-1")``) live
            between calls: in this process's memory by default; a
            :class:`~toolmgmt_core._stores.redis.RedisSessionStore` shares them between replicas.
        listeners: callables that get every event of every session (:mod:`toolmgmt_core._events`).
            An :class:`~toolmgmt_core._events.OtelListener` is added unless one is given (or
            ``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`` names ``toolmgmt``): spans and metrics
            once an OpenTelemetry SDK is configured, one check per event site until then. A
            catalog that learns from use adds its :class:`~toolmgmt_core._learning.from_use.
            UseLearner` (:attr:`learner`).

    Raises:
        ConfigError: an unknown mode or option value.
    """

    def __init__(
        self,
        catalog: ToolCatalog,
        mode: str | Mode = "search",
        *,
        always_on: Iterable[str | Tool] = (),
        discovery: Discovery | None = None,
        access: Access | str | None = None,
        approval: Approval | ApprovalCallback | None = None,
        results: ResultBudget | None = None,
        execution: Execution | None = None,
        session_store: SessionStore | None = None,
        listeners: Iterable[Listener] = (),
    ) -> None:
        if not isinstance(catalog, ToolCatalog):
            raise ConfigError(
                f"ToolManager needs a ToolCatalog, got {type(catalog).__name__}. Build one with "
                "ToolCatalog(tools) or ToolCatalog().add_schemas(definitions)."
            )
        self.catalog = catalog
        self.mode: Mode = mode_of(mode)
        """The configured mode (``session.mode`` names the one a session is in now)."""
        self.discovery: Discovery = _option("discovery", discovery, Discovery)
        self.execution: Execution = _option("execution", execution, Execution)
        self.result_budget: ResultBudget = self._results(_option("results", results, ResultBudget))
        """Result budgets and truncation; each session keeps its own account of it."""
        self.always_on: tuple[str, ...] = self._check_always_on(always_on)
        access = Access.of(access)
        self.policy = PolicyView(
            catalog, access.profile, access.policies, approval, profiles=access.profiles
        )
        """The policy view sessions start with; a session may narrow it, never widen it."""
        hidden = [n for n in self.always_on if n in catalog and not self.policy.allows(n)]
        if hidden:
            warnings.warn(
                f"always_on names {', '.join(hidden)}, which the profile or policies hide; "
                "hidden tools are never listed. See manager.policy.explain(name).",
                UserWarning,
                stacklevel=2,
            )
        if session_store is not None and not isinstance(session_store, SessionStore):
            raise ConfigError(
                f"session_store must have load, save and delete (the SessionStore protocol: "
                f"InMemorySessionStore, RedisSessionStore), got {type(session_store).__name__}."
            )
        self.session_store: SessionStore = (
            InMemorySessionStore() if session_store is None else session_store
        )
        """Where conversations opened by id live between calls."""
        self.runs = RunBook(
            self.execution.run_key,
            self.execution.run_ttl,
            self.session_store,
            elsewhere=self.execution.run_elsewhere,
        )
        """Code mode's paused runs: the key sealing them, and which were resumed already."""
        learning = catalog.learning
        self.learner: UseLearner | None = (
            UseLearner(catalog) if learning is not None and learning.from_use else None
        )
        """What teaches the catalog from this manager's sessions when it learns from use
        (``ToolCatalog(learning=LearningOptions())``), else None."""
        listeners = list(listeners)
        if not any(isinstance(listener, OtelListener) for listener in listeners):
            listeners += default_listeners()
        self.events = EventHub([*listeners, *([self.learner] if self.learner else [])])
        """The listeners every session's events go to (the default OpenTelemetry one too)."""
        self.planner = LayoutPlanner(
            catalog,
            self.mode,
            max_results=self.discovery.max_results,
            always_on=self.always_on,
            encoding=self.encoding,
        )
        """Plans each step's tool list for this manager's sessions (its mode lays it out)."""
        self.pipeline = CallPipeline(
            catalog,
            timeout=self.execution.timeout,
            encoding=self.encoding,
            events=self.events,
        )
        """The one call pipeline every call of this manager's sessions goes through (a
        request in, a result out: it keeps nothing of a session)."""
        # Load the tokenizer now, once: sessions starting together on many threads would
        # otherwise each load it on their first call.
        get_encoding(self.encoding)

    @property
    def encoding(self) -> str:
        """The tokenizer everything is measured in: the catalog's."""
        return self.catalog.encoding

    def _results(self, results: ResultBudget) -> ResultBudget:
        if results.encoding == self.encoding:
            return results
        if results.encoding != DEFAULT_ENCODING:
            raise ConfigError(
                f"ResultBudget(encoding={results.encoding!r}) differs from the catalog's "
                f"{self.encoding!r}: set the encoding once, on the ToolCatalog."
            )
        return dataclasses.replace(results, encoding=self.encoding)

    def _check_always_on(self, always_on: Iterable[str | Tool]) -> tuple[str, ...]:
        if isinstance(always_on, str | Tool):
            always_on = [always_on]
        names: list[str] = []
        for item in always_on:
            name = item.name if isinstance(item, Tool) else item
            if not isinstance(name, str) or not name.strip():
                raise ConfigError(f"always_on holds {name!r}; give tool names (or Tool objects).")
            if name not in self.catalog:
                closest = self.catalog.suggest(name)
                hint = f" Closest: {', '.join(closest)}." if closest else ""
                warnings.warn(
                    f"always_on names {name!r}, which is not in the catalog yet; it is listed once "
                    f"a tool of that name is added (a framework's tools join on first use).{hint}",
                    UserWarning,
                    stacklevel=3,
                )
            if name not in names:
                names.append(name)
        return tuple(names)

    # -- sessions -------------------------------------------------------------------------

    def session(
        self, key: str | Mapping[str, Any] | None = None, *, principal: str | None = None
    ) -> ToolSession:
        """A conversation's session.

        - ``manager.session()``: a new conversation, in this object only;
        - ``manager.session("conversation-1")``: the conversation with this id in
          :attr:`session_store`, restored when the store holds it, new otherwise, and saved
          there after every call that changes it (two managers over one store, as two
          replicas, serve the same conversation);
        - ``manager.session(state)``: restored from ``ToolSession.to_json()`` state (a dict; for
          JSON text use ``ToolSession.from_json``).

        ``principal`` names who the conversation belongs to (a user id, as the frameworks name
        a user): when the catalog learns from use, what its conversations teach counts once
        for that principal however many conversations it opens.

        Raises:
            InvalidSessionError: a bad id.
            StoreUnavailableError: the session store cannot be reached.
            ConfigError: a state (given or stored) that is not a session state.
        """
        if principal is not None and (not isinstance(principal, str) or not principal):
            raise ConfigError(f"principal must be a non-empty string or None, got {principal!r}.")
        if key is None:
            session = ToolSession(self)
        elif isinstance(key, str):
            session = ToolSession.open(self, key)
        else:
            session = ToolSession.from_json(self, key)
        if self.learner is not None and principal is not None:
            self.learner.bind(session.conversation, principal)
        return session

    @property
    def instructions(self) -> str:
        """A short system-prompt text for this mode (``auto`` gives the search text)."""
        return self.mode.instructions

    def meta_tools(self) -> list[Tool]:
        """The meta-tools of this manager's mode (``auto`` gives search's)."""
        return self.planner.meta_tools()

    def definition_tokens(self, tools: Iterable[Tool]) -> int:
        """Tokens of ``tools``' definitions sent flat (cached per distinct definition)."""
        return definition_tokens(tools, self.encoding)

    def close(self, timeout: float = 5.0) -> list[str]:
        """Stop this manager's threads on shutdown, waiting at most ``timeout`` seconds in all:
        the learner's (what it was taught is learned first), and the idle threads of tool calls,
        summarisers and the sandbox, joined (a later call starts fresh ones). Returns the names
        of the threads still running then, held by calls that timed out (a warning says so)."""
        deadline = time.monotonic() + timeout
        if self.learner is not None:
            self.learner.close(timeout)
        running = join_threads(max(0.0, deadline - time.monotonic()))
        if running:
            logger.warning(
                "toolmgmt: %d threads still run calls that timed out: %s",
                len(running),
                ", ".join(running),
            )
        return running


def _option(label: str, value: Any, kind: type[Any]) -> Any:
    if value is None:
        return kind()
    if not isinstance(value, kind):
        raise ConfigError(
            f"{label} must be a {kind.__name__}(...), got {type(value).__name__}; for example "
            f"ToolManager(catalog, {label}={kind.__name__}())."
        )
    return value
