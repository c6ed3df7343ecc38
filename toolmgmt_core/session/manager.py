"""``ToolManager``: how an agent meets the catalog (mode, always-on tools, limits), shared by
many concurrent sessions.

A manager holds configuration only and is read-only once built; each conversation gets its own
:class:`~toolmgmt_core.ToolSession` from :meth:`ToolManager.session`, so sessions on
threads or asyncio tasks never share loaded tools or results.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from toolmgmt_core.calls.budget import DEFAULT_MAX_RESULT_TOKENS, ResultBudget
from toolmgmt_core.catalog.tool_catalog import ToolCatalog
from toolmgmt_core.model.errors import ConfigError
from toolmgmt_core.model.tokens import DEFAULT_ENCODING, definition_tokens, get_encoding
from toolmgmt_core.model.tool import Tool
from toolmgmt_core.policy.files import PolicyFile
from toolmgmt_core.policy.profiles import Profile
from toolmgmt_core.policy.steps import ApprovalCallback, Policy
from toolmgmt_core.policy.view import PolicyView
from toolmgmt_core.session.layout import LayoutPlanner
from toolmgmt_core.session.meta_tools import INSTRUCTIONS, meta_tools_for
from toolmgmt_core.session.session import ToolSession
from toolmgmt_core.stores.base import InMemorySessionStore, SessionStore

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "MODES",
    "Mode",
    "ToolManager",
]

Mode = Literal["search", "gateway", "lazy", "auto"]
MODES: tuple[str, ...] = ("search", "gateway", "lazy", "auto")
"""The modes a manager accepts."""

DEFAULT_CONTEXT_WINDOW = 128_000
"""Context window assumed by ``auto`` mode when none is given (a common current size)."""

_CALL_UNLOADED = ("error", "load")
_LAZY_DESCRIPTIONS = ("summary", "full")


class ToolManager:
    """Configuration for discovery sessions over one catalog.

    Usage::

        manager = ToolManager(catalog, mode="search", always_on=["get_time"])
        session = manager.session()
        request_tools = session.tools()              # meta-tools + always-on + loaded
        result = await session.call("tool_search", {"query": "send an email"})
        result = await session.call("send_email", {"to": ["a@b.c"], "subject": "Hi"})

    Args:
        catalog: the tools.
        mode: ``"search"`` (a ``tool_search`` meta-tool; found tools join the list),
            ``"gateway"`` (``discover_tools`` / ``get_tool_schema`` / ``execute_tool`` only),
            ``"lazy"`` (every tool by name and description, parameters on request through
            ``load_tool_schema``) or ``"auto"`` (every tool flat, unless their definitions
            exceed the threshold below; then as ``"search"``).
        always_on: names of tools always listed, in this order, in every mode. Tools whose
            ``defer_loading`` is False are always listed too, after these.
        max_results: tools a search returns (and loads) at most, per query.
        max_active: most tools searches may add to a session's list; None for no cap.
        min_score: search hits scoring below this are neither returned nor loaded (BM25 scores
            are not normalised: pick a value from ``catalog.search`` output; regex hits score 2
            on the name and 1 elsewhere).
        auto_threshold_tokens: ``auto`` defers when definitions exceed this many tokens.
        context_window: the model's context window, for ``auto_threshold_share``
            (default :data:`DEFAULT_CONTEXT_WINDOW`).
        auto_threshold_share: ``auto`` defers when definitions exceed this share of the
            context window. When a token threshold is also given, the lower one applies.
        definitions_budget: ``auto`` mode's budget for catalog tool definitions listed up
            front. When set, it replaces the threshold: tools are listed in catalog order
            (always-on first) while they fit, and only the rest are deferred behind
            ``tool_search``. None: all-or-nothing at the threshold.
        call_unloaded: what a direct call of a tool that is not listed yet does: ``"error"``
            (an actionable error saying how to find or run it) or ``"load"`` (load, then run).
        default_timeout: seconds a call may take when the tool sets no ``timeout``; None for
            no limit.
        encoding: tiktoken encoding for token counts.
        browse_limit: most tools one ``discover_tools`` listing shows before it asks the model
            to narrow by group or query.
        lazy_descriptions: in ``lazy`` mode, list each tool's first sentence (``"summary"``)
            or its whole description (``"full"``).
        profile: the tools this agent may use: ``"full"`` (default), ``"minimal"``,
            ``"readonly"``, a custom profile's name, or a :class:`~toolmgmt_core.Profile`.
        profiles: custom profiles known by name (for ``profile`` and ``session.set_profile``).
        policies: policy steps applied after the profile, in order (:class:`~toolmgmt_core.Policy`
            objects or mappings), or the path of a TOML/JSON policy file. A removed tool is
            invisible and uncallable through every door; meta-tools are never removed.
        approval: a sync or async callback deciding each call that needs approval (tools
            annotated destructive, or matched by a step's ``require_approval``).
        max_result_tokens: budget of one tool result when the tool sets no
            ``max_result_tokens`` (at least 16); larger results are cut.
        truncation: how results over budget are cut when the tool sets no ``truncation``:
            ``"smart"`` (structure kept), ``"head"`` or ``"tail"``.
        session_result_budget: budget of all results of one session; once spent, results are
            cut to half their budget and ``session.clearable_results()`` names what could go.
        summarizer: a sync or async ``(text, *, tool_name, goal) -> str`` that summarises
            results over ``summarize_threshold``; on failure or timeout they are truncated.
        summarize_threshold: summarise results over this many tokens (default: their budget).
        summary_timeout: seconds the summariser may take.
        session_store: where conversations opened by id (``manager.session("conv-1")``) live
            between calls: in this process's memory by default; a
            :class:`~toolmgmt_core.stores.redis.RedisSessionStore` shares them between replicas.

    Raises:
        ConfigError: an unknown mode or option value, or an always-on name not in the catalog.
    """

    def __init__(
        self,
        catalog: ToolCatalog,
        mode: Mode = "search",
        *,
        always_on: Iterable[str | Tool] = (),
        max_results: int = 5,
        max_active: int | None = None,
        min_score: float = 0.0,
        auto_threshold_tokens: int | None = None,
        context_window: int | None = None,
        auto_threshold_share: float = 0.10,
        definitions_budget: int | None = None,
        call_unloaded: Literal["error", "load"] = "error",
        default_timeout: float | None = 30.0,
        encoding: str = DEFAULT_ENCODING,
        browse_limit: int = 50,
        lazy_descriptions: Literal["summary", "full"] = "summary",
        profile: str | Profile | None = None,
        profiles: Mapping[str, Profile] | Iterable[Profile] | None = None,
        policies: Iterable[Policy | Mapping[str, Any]] | str | Path | PolicyFile | None = None,
        approval: ApprovalCallback | None = None,
        max_result_tokens: int = DEFAULT_MAX_RESULT_TOKENS,
        truncation: str = "smart",
        session_result_budget: int | None = None,
        summarizer: Callable[..., Any] | None = None,
        summarize_threshold: int | None = None,
        summary_timeout: float | None = 30.0,
        session_store: SessionStore | None = None,
    ) -> None:
        if not isinstance(catalog, ToolCatalog):
            raise ConfigError(
                f"ToolManager needs a ToolCatalog, got {type(catalog).__name__}. Build one with "
                "ToolCatalog(tools) or ToolCatalog().add_schemas(definitions)."
            )
        if mode not in MODES:
            raise ConfigError(f"Unknown mode {mode!r}. Valid modes: {', '.join(MODES)}.")
        if call_unloaded not in _CALL_UNLOADED:
            raise ConfigError(f"call_unloaded must be 'error' or 'load', got {call_unloaded!r}.")
        if lazy_descriptions not in _LAZY_DESCRIPTIONS:
            raise ConfigError(
                f"lazy_descriptions must be 'summary' or 'full', got {lazy_descriptions!r}."
            )
        _check_positive("max_results", max_results)
        _check_positive("browse_limit", browse_limit)
        if max_active is not None:
            _check_positive("max_active", max_active)
        if auto_threshold_tokens is not None:
            _check_positive("auto_threshold_tokens", auto_threshold_tokens)
        if definitions_budget is not None:
            _check_positive("definitions_budget", definitions_budget)
        if context_window is not None:
            _check_positive("context_window", context_window)
        if not 0 < auto_threshold_share <= 1:
            raise ConfigError(
                f"auto_threshold_share must be a share in (0, 1], got {auto_threshold_share!r}."
            )
        if default_timeout is not None and not default_timeout > 0:
            raise ConfigError(
                f"default_timeout must be a positive number of seconds or None, got "
                f"{default_timeout!r}."
            )
        self.catalog = catalog
        self.mode: Mode = mode
        self.always_on: tuple[str, ...] = self._check_always_on(always_on)
        self.max_results = max_results
        self.max_active = max_active
        self.min_score = float(min_score)
        self.auto_threshold_tokens = auto_threshold_tokens
        self.context_window = context_window
        self.auto_threshold_share = auto_threshold_share
        self.definitions_budget = definitions_budget
        self.call_unloaded = call_unloaded
        self.default_timeout = default_timeout
        self.encoding = encoding
        self.browse_limit = browse_limit
        self.lazy_descriptions = lazy_descriptions
        self.policy = PolicyView(catalog, profile, policies, approval, profiles=profiles)
        """The policy view sessions start with (``session.set_profile`` derives another)."""
        hidden = [name for name in self.always_on if not self.policy.allows(name)]
        if hidden:
            warnings.warn(
                f"always_on names {', '.join(hidden)}, which the profile or policies hide; "
                "hidden tools are never listed. See manager.policy.explain(name).",
                UserWarning,
                stacklevel=2,
            )
        self.result_budget = ResultBudget(
            max_result_tokens=max_result_tokens,
            session_tokens=session_result_budget,
            strategy=truncation,
            summarizer=summarizer,
            summarize_threshold=summarize_threshold,
            summary_timeout=summary_timeout,
            encoding=encoding,
        )
        """Result budgets and truncation; each session keeps its own account of it."""
        self.max_result_tokens = max_result_tokens
        self.truncation = truncation
        if session_store is not None and not isinstance(session_store, SessionStore):
            raise ConfigError(
                f"session_store must have load, save and delete (the SessionStore protocol: "
                f"InMemorySessionStore, RedisSessionStore), got {type(session_store).__name__}."
            )
        self.session_store: SessionStore = (
            InMemorySessionStore() if session_store is None else session_store
        )
        """Where conversations opened by id live between calls."""
        self.planner = LayoutPlanner(
            catalog,
            mode=mode,
            meta_tools={
                m: meta_tools_for(m, max_results=max_results) for m in ("search", "gateway", "lazy")
            },
            always_on=self.always_on,
            auto_threshold=self.auto_threshold,
            definitions_budget=definitions_budget,
            lazy_descriptions=lazy_descriptions,
            encoding=encoding,
        )
        """Plans each step's tool list for this manager's sessions
        (:mod:`toolmgmt_core.session.layout`)."""
        # Load the tokenizer now, once: sessions starting together on many threads would
        # otherwise each load it on their first call.
        get_encoding(encoding)

    def _check_always_on(self, always_on: Iterable[str | Tool]) -> tuple[str, ...]:
        if isinstance(always_on, str | Tool):
            always_on = [always_on]
        names: list[str] = []
        for item in always_on:
            name = item.name if isinstance(item, Tool) else item
            if not isinstance(name, str) or name not in self.catalog:
                closest = self.catalog.suggest(str(name)) if isinstance(name, str) else []
                hint = f" Closest: {', '.join(closest)}." if closest else ""
                raise ConfigError(f"always_on names {name!r}, which is not in the catalog.{hint}")
            if name not in names:
                names.append(name)
        return tuple(names)

    # -- sessions -------------------------------------------------------------------------

    def session(self, key: str | Mapping[str, Any] | None = None) -> ToolSession:
        """A conversation's session.

        - ``manager.session()``: a new conversation, in this object only;
        - ``manager.session("conversation-1")``: the conversation with this id in
          :attr:`session_store`, restored when the store holds it, new otherwise, and saved
          there after every call that changes it (two managers over one store, as two
          replicas, serve the same conversation);
        - ``manager.session(state)``: restored from ``ToolSession.to_json()`` state (a dict; for
          JSON text use ``ToolSession.from_json``).

        Raises:
            InvalidSessionError: a bad id.
            StoreUnavailableError: the session store cannot be reached.
            ConfigError: a state (given or stored) that is not a session state.
        """
        if key is None:
            return ToolSession(self)
        if isinstance(key, str):
            return ToolSession.open(self, key)
        return ToolSession.from_json(self, key)

    @property
    def instructions(self) -> str:
        """A short system-prompt text for this mode (``auto`` gives the search text)."""
        return INSTRUCTIONS["search" if self.mode == "auto" else self.mode]

    def meta_tools(self, mode: str | None = None) -> list[Tool]:
        """The meta-tools of ``mode`` (default: this manager's; ``auto`` gives search's)."""
        return self.planner.meta_tools(mode)

    # -- tokens and thresholds ------------------------------------------------------------

    def definition_tokens(self, tools: Iterable[Tool]) -> int:
        """Tokens of ``tools``' definitions sent flat (cached per distinct definition)."""
        return definition_tokens(tools, self.encoding)

    @property
    def auto_threshold(self) -> int:
        """Definition tokens above which ``auto`` mode defers tools."""
        window = self.context_window or DEFAULT_CONTEXT_WINDOW
        by_share = int(window * self.auto_threshold_share)
        if self.auto_threshold_tokens is None:
            return by_share
        if self.context_window is None:
            return self.auto_threshold_tokens
        return min(self.auto_threshold_tokens, by_share)


def _check_positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"{name} must be a positive whole number, got {value!r}.")
