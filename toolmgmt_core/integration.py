"""The interface the core publishes for integrations: what adapters and the MCP gateway build on.

An application imports everything it needs from :mod:`toolmgmt_core`. A framework adapter
(``toolmgmt_langchain``, ``toolmgmt_pydantic_ai``, ``toolmgmt_litellm``, ``toolmgmt_mcp``) or the
gateway (``toolmgmt_gateway``) imports from there too, and from here only what an integration
needs beyond it; never from the core's private modules (a test holds them to it), so the
core can move its modules without breaking an integration. This module is as stable as the top
level. Its names, by purpose (:data:`_GROUPS`; docs/reference.md lists them with their
docstrings):

- **version floors**: :func:`require_version` checks a framework's version once, at import, and
  names the extra to install;
- **running a framework's call**: an integration builds a :class:`~toolmgmt_core.CallContext` per
  call (:data:`NO_CONTEXT` when it carries nothing; what only its handlers read under a typed
  :class:`Slot`), declares its framework's control-flow signals
  with :func:`passthrough`, runs the session from a framework's thread with :func:`run_sync`, and
  maps :class:`CallPaused` (the call waits for its caller) and :class:`ProgramStateError` (a
  program's sealed state refused) to its framework's form;
- **approvals**: the framework's own approver (:class:`ApprovalAsker`), the marker of an approval
  it already gave (:class:`ApprovalMarker`), and an approval replayed once for the call it names
  (:func:`approval_key`, :func:`arguments_digest`, :func:`replayed_approval`,
  :class:`UsedApprovals`, :class:`OnceRecord`);
- **meta-tool names** a framework's tool list holds in search and code mode;
- **provider wire formats** an adapter passes on unchanged: cache breakpoints, deferred-search
  calls and their answers;
- **conversation state** kept where the framework keeps its own (:class:`StoredSession`,
  :func:`call_store`, :func:`restore_loaded`: loads rebuilt from a transcript);
- **tools from MCP servers**: definitions read (:func:`tool_from_dict`), a server's domain kept in
  step (:func:`sync_domain`), tools pinned on first sight (:class:`PinStore` and its stores, the
  verdicts :data:`SAME`, :data:`ACCEPTED`, :data:`QUARANTINED`, :data:`CLAIMED`);
- **the gateway's configuration**: the one reader of configuration files
  (:class:`ConfigDocument`) and the checks ``toolmgmt check`` runs;
- **a scripted model's calls**: arguments a tool can be called with (:func:`example_arguments`,
  for the demo's and a test's fake model);
- **embedders** an adapter adds, and **observing a server** (the usage log in a store, the
  threads an integration starts through the one registry (:class:`Pool`, :func:`start_thread`) and
  those stuck calls left running, a log line's secrets taken out: :func:`redact_line`).

The stores that need a driver (``toolmgmt[redis]``, ``toolmgmt[postgres]``) are imported on first
use, so importing this module never needs either driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolmgmt_core._calls.approval import (
    ApprovalAsker,
    ApprovalMarker,
    OnceRecord,
    UsedApprovals,
    approval_key,
    replayed_approval,
)
from toolmgmt_core._calls.budget import DEFAULT_MAX_RESULT_TOKENS
from toolmgmt_core._calls.code.runs import ProgramStateError
from toolmgmt_core._calls.context import NO_CONTEXT, Slot
from toolmgmt_core._calls.execution import dumps_compact
from toolmgmt_core._calls.sync import run_sync
from toolmgmt_core._calls.truncation import MIN_RESULT_TOKENS
from toolmgmt_core._calls.validation import validate_arguments
from toolmgmt_core._catalog.domain_sync import group_names, matches_any, sync_domain
from toolmgmt_core._catalog.pins import (
    ACCEPTED,
    CLAIMED,
    QUARANTINED,
    SAME,
    MemoryPins,
    PinFile,
    PinStore,
    PinVerdict,
    pin_definition,
    pin_digest,
)
from toolmgmt_core._compat import package_version, require_version
from toolmgmt_core._config.document import ConfigDocument, ConfigTable, config_problem
from toolmgmt_core._embeddings import matrix_from_vectors
from toolmgmt_core._embeddings.named import check_embedder_spec, embedder_from_spec
from toolmgmt_core._model.errors import CatalogSourceError, describe_exception
from toolmgmt_core._model.names import fold_name
from toolmgmt_core._model.redaction import redact_line
from toolmgmt_core._model.schema import tool_from_dict
from toolmgmt_core._model.tool import CALL_TOOL, EXECUTE_TOOL
from toolmgmt_core._policy.check import ConfigFinding, pattern_findings, reader_findings
from toolmgmt_core._policy.profiles import get_profile, may_match, parse_pattern
from toolmgmt_core._policy.verdicts import arguments_digest
from toolmgmt_core._providers.breakpoints import BREAKPOINT, chat_breakpoints, has_breakpoints
from toolmgmt_core._providers.deferral import (
    is_search_call,
    search_arguments,
    tool_result_content,
)
from toolmgmt_core._runtime.control import CallPaused, passthrough
from toolmgmt_core._runtime.threads import Pool, hung_threads, start_thread
from toolmgmt_core._session.history import restore_loaded
from toolmgmt_core._session.meta_tools import META_TOOL_NAMES, RUN_CODE, TOOL_SEARCH
from toolmgmt_core._session.report import example_arguments
from toolmgmt_core._session.settings import SessionSettings
from toolmgmt_core._stores import (
    DEFAULT_SESSION_TTL,
    StoredSession,
    StoreTimeout,
    call_store,
    check_session_id,
    lazy_attributes,
)
from toolmgmt_core._stores.event_log import StoreListener, open_event_log

if TYPE_CHECKING:  # imported on first use (``__getattr__``): their modules need a driver
    from toolmgmt_core._stores.postgres_pins import PostgresPins
    from toolmgmt_core._stores.redis import DEFAULT_PREFIX

__all__ = [
    "ACCEPTED",
    "BREAKPOINT",
    "CALL_TOOL",
    "CLAIMED",
    "DEFAULT_MAX_RESULT_TOKENS",
    "DEFAULT_PREFIX",
    "DEFAULT_SESSION_TTL",
    "EXECUTE_TOOL",
    "META_TOOL_NAMES",
    "MIN_RESULT_TOKENS",
    "NO_CONTEXT",
    "QUARANTINED",
    "RUN_CODE",
    "SAME",
    "TOOL_SEARCH",
    "ApprovalAsker",
    "ApprovalMarker",
    "CallPaused",
    "CatalogSourceError",
    "ConfigDocument",
    "ConfigFinding",
    "ConfigTable",
    "MemoryPins",
    "OnceRecord",
    "PinFile",
    "PinStore",
    "PinVerdict",
    "Pool",
    "PostgresPins",
    "ProgramStateError",
    "SessionSettings",
    "Slot",
    "StoreListener",
    "StoreTimeout",
    "StoredSession",
    "UsedApprovals",
    "approval_key",
    "arguments_digest",
    "call_store",
    "chat_breakpoints",
    "check_embedder_spec",
    "check_session_id",
    "config_problem",
    "describe_exception",
    "dumps_compact",
    "embedder_from_spec",
    "example_arguments",
    "fold_name",
    "get_profile",
    "group_names",
    "has_breakpoints",
    "hung_threads",
    "is_search_call",
    "matches_any",
    "matrix_from_vectors",
    "may_match",
    "open_event_log",
    "package_version",
    "parse_pattern",
    "passthrough",
    "pattern_findings",
    "pin_definition",
    "pin_digest",
    "reader_findings",
    "redact_line",
    "replayed_approval",
    "require_version",
    "restore_loaded",
    "run_sync",
    "search_arguments",
    "start_thread",
    "sync_domain",
    "tool_from_dict",
    "tool_result_content",
    "validate_arguments",
]

_GROUPS: dict[str, tuple[str, ...]] = {
    "Version floors: an adapter checks its framework once, at import": (
        "package_version",
        "require_version",
    ),
    "Running a framework's call through the session": (
        "NO_CONTEXT",
        "CallPaused",
        "ProgramStateError",
        "Slot",
        "describe_exception",
        "dumps_compact",
        "passthrough",
        "run_sync",
        "validate_arguments",
    ),
    "Approvals a framework gives or replays": (
        "ApprovalAsker",
        "ApprovalMarker",
        "OnceRecord",
        "UsedApprovals",
        "approval_key",
        "arguments_digest",
        "replayed_approval",
    ),
    "The meta-tools' names a framework's tool list holds": (
        "CALL_TOOL",
        "EXECUTE_TOOL",
        "META_TOOL_NAMES",
        "RUN_CODE",
        "TOOL_SEARCH",
    ),
    "Provider wire formats an adapter passes on": (
        "BREAKPOINT",
        "chat_breakpoints",
        "has_breakpoints",
        "is_search_call",
        "search_arguments",
        "tool_result_content",
    ),
    "A conversation's state kept where the framework keeps its own": (
        "DEFAULT_PREFIX",
        "DEFAULT_SESSION_TTL",
        "SessionSettings",
        "StoreTimeout",
        "StoredSession",
        "call_store",
        "check_session_id",
        "restore_loaded",
    ),
    "Tools from MCP servers: listing, syncing and pinning them": (
        "ACCEPTED",
        "CLAIMED",
        "QUARANTINED",
        "SAME",
        "CatalogSourceError",
        "MemoryPins",
        "PinFile",
        "PinStore",
        "PinVerdict",
        "PostgresPins",
        "fold_name",
        "group_names",
        "matches_any",
        "pin_definition",
        "pin_digest",
        "sync_domain",
        "tool_from_dict",
    ),
    "Reading and checking the gateway's configuration": (
        "DEFAULT_MAX_RESULT_TOKENS",
        "MIN_RESULT_TOKENS",
        "ConfigDocument",
        "ConfigFinding",
        "ConfigTable",
        "check_embedder_spec",
        "config_problem",
        "embedder_from_spec",
        "get_profile",
        "may_match",
        "parse_pattern",
        "pattern_findings",
        "reader_findings",
    ),
    "A scripted model's calls (the demo's, a test's): arguments a tool can be called with": (
        "example_arguments",
    ),
    "Embedders an adapter adds (a framework's embedding model)": ("matrix_from_vectors",),
    "Observing a server: usage log, threads, stuck calls": (
        "Pool",
        "StoreListener",
        "hung_threads",
        "open_event_log",
        "redact_line",
        "start_thread",
    ),
}
"""Each name of :data:`__all__` under the purpose it serves (the reference page's sections)."""

_LAZY = {
    "DEFAULT_PREFIX": "toolmgmt_core._stores.redis",
    "PostgresPins": "toolmgmt_core._stores.postgres_pins",
}
"""Name -> the module holding it, for the names whose module imports an optional driver."""


__getattr__ = lazy_attributes(__name__, _LAZY)
