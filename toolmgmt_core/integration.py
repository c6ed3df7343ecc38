"""The core's published API for integrations: what the adapters and the MCP gateway build on.

The framework adapters (``toolmgmt_langchain``, ``toolmgmt_pydantic_ai``, ``toolmgmt_litellm``,
``toolmgmt_mcp``) and the gateway (``toolmgmt_gateway``) import the core only from
:mod:`toolmgmt_core` (the application API) and from here (a test holds them to it), never from
the core's rooms, so the core can move its modules without breaking an integration. A name here
is a seam an integration needs: the call pipeline's entry points (running a call from a
framework's thread, an approval the framework already gave), provider wire formats, session
state, the gateway's stores and configuration reading. It is as stable as the top level.

The stores that need a driver (``toolmgmt[redis]``, ``toolmgmt[postgres]``) are imported on first
use, as from :mod:`toolmgmt_core.stores`, so importing this module never needs either driver.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolmgmt_core.calls.approval import (
    ApprovalAsker,
    ApprovalMarker,
    UsedApprovals,
    approval_key,
    replayed_approval,
)
from toolmgmt_core.calls.budget import DEFAULT_MAX_RESULT_TOKENS
from toolmgmt_core.calls.code.runs import ProgramStateError
from toolmgmt_core.calls.context import NO_CONTEXT, CallContext
from toolmgmt_core.calls.execution import dumps_compact
from toolmgmt_core.calls.sync import run_sync
from toolmgmt_core.calls.truncation import MIN_RESULT_TOKENS
from toolmgmt_core.calls.validation import validate_arguments
from toolmgmt_core.catalog.domain_sync import group_names, matches_any, sync_domain
from toolmgmt_core.catalog.pins import (
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
from toolmgmt_core.compat import (
    package_version,
    require_version,
)
from toolmgmt_core.config.document import (
    ConfigDocument,
    ConfigTable,
    config_problem,
)
from toolmgmt_core.embeddings import matrix_from_vectors
from toolmgmt_core.embeddings.named import (
    check_embedder_spec,
    embedder_from_spec,
)
from toolmgmt_core.events import OtelListener
from toolmgmt_core.learning.teaching import LearningOptions
from toolmgmt_core.model.errors import (
    CatalogSourceError,
    ToolAnswerLostError,
    describe_exception,
)
from toolmgmt_core.model.names import fold_name
from toolmgmt_core.model.redaction import redact_line
from toolmgmt_core.model.schema import tool_from_dict
from toolmgmt_core.model.tool import (
    CALL_TOOL,
    EXECUTE_TOOL,
)
from toolmgmt_core.policy.check import (
    ConfigFinding,
    pattern_findings,
    reader_findings,
)
from toolmgmt_core.policy.profiles import (
    get_profile,
    may_match,
    parse_pattern,
)
from toolmgmt_core.policy.verdicts import arguments_digest
from toolmgmt_core.providers import search_output_item
from toolmgmt_core.providers.breakpoints import (
    BREAKPOINT,
    chat_breakpoints,
    has_breakpoints,
)
from toolmgmt_core.providers.deferral import (
    is_search_call,
    search_arguments,
    tool_result_content,
)
from toolmgmt_core.runtime.control import CallPaused, passthrough
from toolmgmt_core.runtime.threads import Pool, hung_threads, start_thread
from toolmgmt_core.session.history import restore_loaded
from toolmgmt_core.session.meta_tools import (
    META_TOOL_NAMES,
    RUN_CODE,
    TOOL_SEARCH,
)
from toolmgmt_core.session.modes import Code
from toolmgmt_core.session.settings import SessionSettings
from toolmgmt_core.stores import (
    DEFAULT_SESSION_TTL,
    InMemorySessionStore,
    SessionStore,
    StoredSession,
    StoreTimeout,
    call_store,
    check_session_id,
    lazy_attributes,
)
from toolmgmt_core.stores.event_log import (
    StoreListener,
    open_event_log,
)

if TYPE_CHECKING:  # imported on first use (``__getattr__``): their modules need a driver
    from toolmgmt_core.stores.postgres import PostgresCatalogStore, PostgresEmbeddingCache
    from toolmgmt_core.stores.postgres_learned import PostgresLearnedStore
    from toolmgmt_core.stores.postgres_pins import PostgresPins
    from toolmgmt_core.stores.redis import DEFAULT_PREFIX, RedisSessionStore

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
    "CallContext",
    "CallPaused",
    "CatalogSourceError",
    "Code",
    "ConfigDocument",
    "ConfigFinding",
    "ConfigTable",
    "InMemorySessionStore",
    "LearningOptions",
    "MemoryPins",
    "OtelListener",
    "PinFile",
    "PinStore",
    "PinVerdict",
    "Pool",
    "PostgresCatalogStore",
    "PostgresEmbeddingCache",
    "PostgresLearnedStore",
    "PostgresPins",
    "ProgramStateError",
    "RedisSessionStore",
    "SessionSettings",
    "SessionStore",
    "StoreListener",
    "StoreTimeout",
    "StoredSession",
    "ToolAnswerLostError",
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
    "search_output_item",
    "start_thread",
    "sync_domain",
    "tool_from_dict",
    "tool_result_content",
    "validate_arguments",
]

_LAZY = {
    "DEFAULT_PREFIX": "toolmgmt_core.stores.redis",
    "PostgresCatalogStore": "toolmgmt_core.stores.postgres",
    "PostgresEmbeddingCache": "toolmgmt_core.stores.postgres",
    "PostgresLearnedStore": "toolmgmt_core.stores.postgres_learned",
    "PostgresPins": "toolmgmt_core.stores.postgres_pins",
    "RedisSessionStore": "toolmgmt_core.stores.redis",
}
"""Name -> the module holding it, for the names whose module imports an optional driver."""


__getattr__ = lazy_attributes(__name__, _LAZY)
