"""toolmgmt: let an LLM agent work with hundreds of tools without drowning in them.

The framework-free core. Adapters for LangChain, PydanticAI, LiteLLM and MCP live in their own
packages (``toolmgmt_langchain``, ...) and are never imported from here.
"""

from __future__ import annotations

from importlib import metadata as _metadata

from toolmgmt_core.calls.budget import (
    DefinitionPlan,
    ResultBudget,
    ResultRecord,
    SessionBudget,
    plan_definitions,
)
from toolmgmt_core.calls.execution import ToolResult
from toolmgmt_core.calls.truncation import (
    TruncationResult,
    render_result,
    summarize_result,
    truncate_result,
)
from toolmgmt_core.catalog.tool_catalog import (
    DomainSummary,
    IngestReport,
    SearchHit,
    ToolCatalog,
    ToolEntry,
    ToolLimits,
)
from toolmgmt_core.learning.teaching import LearningOptions
from toolmgmt_core.lint import Finding, lint
from toolmgmt_core.lint.diff import Change, diff_catalogs
from toolmgmt_core.model.content import ContentResult
from toolmgmt_core.model.errors import (
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
from toolmgmt_core.model.tokens import count_tokens, get_encoding
from toolmgmt_core.model.tool import Tool, ToolAnnotations
from toolmgmt_core.policy.callers import Callers
from toolmgmt_core.policy.files import load_policy_file
from toolmgmt_core.policy.profiles import Profile
from toolmgmt_core.policy.steps import (
    Approval,
    ApprovalEdit,
    ApprovalRequest,
    ApprovalResponse,
    Explanation,
    Policy,
)
from toolmgmt_core.policy.view import PolicyView
from toolmgmt_core.providers import FormatReport, format_tools
from toolmgmt_core.session.manager import ToolManager
from toolmgmt_core.session.modes import Auto, Flat, Gateway, Lazy, Mode, Search
from toolmgmt_core.session.options import Access, Discovery, Execution
from toolmgmt_core.session.session import ToolSession, Usage

try:
    __version__ = _metadata.version("toolmgmt")
except _metadata.PackageNotFoundError:  # pragma: no cover - running from a checkout
    __version__ = "0"

__all__ = [
    "Access",
    "Approval",
    "ApprovalDeniedError",
    "ApprovalEdit",
    "ApprovalRequest",
    "ApprovalResponse",
    "Auto",
    "BrowseError",
    "Callers",
    "CatalogError",
    "Change",
    "ConfigError",
    "ContentResult",
    "DefinitionPlan",
    "Discovery",
    "DomainSummary",
    "DuplicateToolError",
    "EmbeddingError",
    "Execution",
    "Explanation",
    "Finding",
    "Flat",
    "FormatReport",
    "Gateway",
    "IngestReport",
    "InvalidArgumentsError",
    "InvalidSessionError",
    "InvalidToolError",
    "Lazy",
    "LearningOptions",
    "Mode",
    "Policy",
    "PolicyView",
    "Profile",
    "ProviderError",
    "ResultBudget",
    "ResultRecord",
    "Search",
    "SearchError",
    "SearchHit",
    "SessionBudget",
    "SessionConflictError",
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
    "TruncationResult",
    "Usage",
    "count_tokens",
    "diff_catalogs",
    "format_tools",
    "get_encoding",
    "lint",
    "load_policy_file",
    "plan_definitions",
    "render_result",
    "summarize_result",
    "truncate_result",
]


def __getattr__(name: str) -> object:
    if name == "UnknownToolError":  # deprecated: ToolNotFoundError is the one lookup error
        from toolmgmt_core.model import errors

        return errors.__getattr__(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
