"""toolmgmt: let an LLM agent work with hundreds of tools without drowning in them.

The framework-free core, and its one public face: everything an application needs is imported
from here (the catalog, the manager and its session, their options, modes and policies, results
and errors, code mode's options, events and listeners, stores and embedders). Every other module
of the package is private and may move; docs/reference.md lists these names. Adapters for
LangChain, PydanticAI, LiteLLM and MCP live in their own packages (``toolmgmt_langchain``, ...)
and are never imported from here; what they and the MCP gateway need beyond this face is
:mod:`toolmgmt_core.integration`.

The stores that need a driver (``RedisSessionStore``: ``toolmgmt[redis]``; the PostgreSQL ones:
``toolmgmt[postgres]``) are imported on first use, so importing this package needs neither.
"""

from __future__ import annotations

from importlib import metadata as _metadata
from typing import TYPE_CHECKING

from toolmgmt_core._calls.budget import (
    DefinitionPlan,
    ResultBudget,
    ResultRecord,
    SessionBudget,
    plan_definitions,
)
from toolmgmt_core._calls.code import CodeLimits
from toolmgmt_core._calls.context import CallContext
from toolmgmt_core._calls.execution import ToolResult
from toolmgmt_core._calls.truncation import (
    TruncationResult,
    render_result,
    summarize_result,
    truncate_result,
)
from toolmgmt_core._catalog.tool_catalog import (
    DomainSummary,
    IngestReport,
    SearchHit,
    ToolCatalog,
    ToolEntry,
    ToolLimits,
)
from toolmgmt_core._embeddings import (
    Embedder,
    EmbeddingCache,
    OnnxEmbedder,
    SentenceTransformerEmbedder,
    StaticEmbedder,
    export_onnx,
)
from toolmgmt_core._events import (
    ApprovalAnswered,
    ApprovalAsked,
    BudgetExhausted,
    CallFinished,
    CallStarted,
    Event,
    JsonlListener,
    Listener,
    OtelListener,
    PolicyDenied,
    ProgramFinished,
    ProgramStarted,
    ResultTruncated,
    SearchDone,
    ToolsListed,
    ToolsLoaded,
    read_jsonl,
)
from toolmgmt_core._events.usage import usage_report
from toolmgmt_core._learning.teaching import LearningOptions
from toolmgmt_core._lint import Finding, lint
from toolmgmt_core._lint.diff import Change, diff_catalogs
from toolmgmt_core._model.content import ContentResult
from toolmgmt_core._model.errors import (
    ApprovalDeniedError,
    BrowseError,
    CatalogError,
    ConfigError,
    DuplicateToolError,
    EmbeddingError,
    InvalidArgumentsError,
    InvalidSessionError,
    InvalidToolError,
    ProviderError,
    SearchError,
    SessionConflictError,
    StoreError,
    StoreUnavailableError,
    TokenizerUnavailableError,
    ToolAnswerLostError,
    ToolCallError,
    ToolDeniedError,
    ToolExecutionError,
    ToolmgmtError,
    ToolNotFoundError,
    ToolNotListedError,
    ToolNotLoadedError,
    ToolNotPermittedError,
    ToolTimeoutError,
    ToolUnavailableError,
)
from toolmgmt_core._model.tokens import count_tokens, get_encoding
from toolmgmt_core._model.tool import Tool, ToolAnnotations
from toolmgmt_core._policy.callers import Callers
from toolmgmt_core._policy.files import load_policy_file
from toolmgmt_core._policy.profiles import Profile
from toolmgmt_core._policy.steps import (
    Approval,
    ApprovalEdit,
    ApprovalRequest,
    ApprovalResponse,
    Explanation,
    Policy,
)
from toolmgmt_core._policy.view import PolicyView
from toolmgmt_core._providers import (
    FormatReport,
    format_tools,
    search_output_item,
    search_result_content,
)
from toolmgmt_core._session.manager import ToolManager
from toolmgmt_core._session.modes import Auto, Code, Flat, Gateway, Lazy, Mode, Search
from toolmgmt_core._session.options import Access, Discovery, Execution
from toolmgmt_core._session.session import ToolSession, Usage
from toolmgmt_core._stores import (
    InMemorySessionStore,
    SessionStore,
    lazy_attributes,
    update_session,
)

if TYPE_CHECKING:  # imported on first use (``__getattr__``): their modules need a driver
    from toolmgmt_core._stores.postgres import PostgresCatalogStore, PostgresEmbeddingCache
    from toolmgmt_core._stores.postgres_learned import PostgresLearnedStore
    from toolmgmt_core._stores.redis import RedisSessionStore

try:
    __version__ = _metadata.version("toolmgmt")
except _metadata.PackageNotFoundError:  # pragma: no cover - running from a checkout
    __version__ = "0"

__all__ = [
    "Access",
    "Approval",
    "ApprovalAnswered",
    "ApprovalAsked",
    "ApprovalDeniedError",
    "ApprovalEdit",
    "ApprovalRequest",
    "ApprovalResponse",
    "Auto",
    "BrowseError",
    "BudgetExhausted",
    "CallContext",
    "CallFinished",
    "CallStarted",
    "Callers",
    "CatalogError",
    "Change",
    "Code",
    "CodeLimits",
    "ConfigError",
    "ContentResult",
    "DefinitionPlan",
    "Discovery",
    "DomainSummary",
    "DuplicateToolError",
    "Embedder",
    "EmbeddingCache",
    "EmbeddingError",
    "Event",
    "Execution",
    "Explanation",
    "Finding",
    "Flat",
    "FormatReport",
    "Gateway",
    "InMemorySessionStore",
    "IngestReport",
    "InvalidArgumentsError",
    "InvalidSessionError",
    "InvalidToolError",
    "JsonlListener",
    "Lazy",
    "LearningOptions",
    "Listener",
    "Mode",
    "OnnxEmbedder",
    "OtelListener",
    "Policy",
    "PolicyDenied",
    "PolicyView",
    "PostgresCatalogStore",
    "PostgresEmbeddingCache",
    "PostgresLearnedStore",
    "Profile",
    "ProgramFinished",
    "ProgramStarted",
    "ProviderError",
    "RedisSessionStore",
    "ResultBudget",
    "ResultRecord",
    "ResultTruncated",
    "Search",
    "SearchDone",
    "SearchError",
    "SearchHit",
    "SentenceTransformerEmbedder",
    "SessionBudget",
    "SessionConflictError",
    "SessionStore",
    "StaticEmbedder",
    "StoreError",
    "StoreUnavailableError",
    "TokenizerUnavailableError",
    "Tool",
    "ToolAnnotations",
    "ToolAnswerLostError",
    "ToolCallError",
    "ToolCatalog",
    "ToolDeniedError",
    "ToolEntry",
    "ToolExecutionError",
    "ToolLimits",
    "ToolManager",
    "ToolNotFoundError",
    "ToolNotListedError",
    "ToolNotLoadedError",
    "ToolNotPermittedError",
    "ToolResult",
    "ToolSession",
    "ToolTimeoutError",
    "ToolUnavailableError",
    "ToolmgmtError",
    "ToolsListed",
    "ToolsLoaded",
    "TruncationResult",
    "Usage",
    "count_tokens",
    "diff_catalogs",
    "export_onnx",
    "format_tools",
    "get_encoding",
    "lint",
    "load_policy_file",
    "plan_definitions",
    "read_jsonl",
    "render_result",
    "search_output_item",
    "search_result_content",
    "summarize_result",
    "truncate_result",
    "update_session",
    "usage_report",
]


_LAZY = {
    "PostgresCatalogStore": "toolmgmt_core._stores.postgres",
    "PostgresEmbeddingCache": "toolmgmt_core._stores.postgres",
    "PostgresLearnedStore": "toolmgmt_core._stores.postgres_learned",
    "RedisSessionStore": "toolmgmt_core._stores.redis",
}
"""Name -> the module holding it, for the names whose module imports an optional driver."""

_lazy = lazy_attributes(__name__, _LAZY)


def __getattr__(name: str) -> object:
    if name == "UnknownToolError":  # deprecated: ToolNotFoundError is the one lookup error
        from toolmgmt_core._model import errors

        return errors.__getattr__(name)
    return _lazy(name)
