"""toolmgmt: let an LLM agent work with hundreds of tools without drowning in them.

The framework-free core. Adapters for LangChain, PydanticAI, LiteLLM and MCP live in their own
packages (``toolmgmt_langchain``, ...) and are never imported from here.
"""

from __future__ import annotations

from toolmgmt_core.calls.budget import (
    DefinitionPlan,
    ResultBudget,
    ResultRecord,
    SessionBudget,
    plan_definitions,
)
from toolmgmt_core.calls.execution import ToolResult
from toolmgmt_core.calls.truncation import (
    McpTruncationResult,
    TruncationResult,
    render_result,
    summarize_result,
    truncate_mcp_result,
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
from toolmgmt_core.lint import Finding, lint
from toolmgmt_core.lint.diff import Change, diff_catalogs
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
    ToolCallError,
    ToolDeniedError,
    ToolExecutionError,
    ToolmgmtError,
    ToolNotFoundError,
    ToolNotLoadedError,
    ToolNotPermittedError,
    ToolTimeoutError,
    ToolUnavailableError,
    UnknownToolError,
)
from toolmgmt_core.model.tokens import count_tokens, get_encoding
from toolmgmt_core.model.tool import Tool, ToolAnnotations
from toolmgmt_core.policy.files import load_policy_file
from toolmgmt_core.policy.profiles import Profile
from toolmgmt_core.policy.steps import (
    ApprovalEdit,
    ApprovalRequest,
    ApprovalResponse,
    Explanation,
    Policy,
)
from toolmgmt_core.policy.view import PolicyView
from toolmgmt_core.providers import FormatReport, format_tools
from toolmgmt_core.session.manager import ToolManager
from toolmgmt_core.session.session import ToolSession, Usage

__version__ = "0.1.0"

__all__ = [
    "ApprovalDeniedError",
    "ApprovalEdit",
    "ApprovalRequest",
    "ApprovalResponse",
    "BrowseError",
    "CatalogError",
    "Change",
    "ConfigError",
    "DefinitionPlan",
    "DomainSummary",
    "DuplicateToolError",
    "EmbeddingError",
    "Explanation",
    "Finding",
    "FormatReport",
    "IngestReport",
    "InvalidArgumentsError",
    "InvalidSessionError",
    "InvalidToolError",
    "McpTruncationResult",
    "Policy",
    "PolicyView",
    "Profile",
    "ProviderError",
    "ResultBudget",
    "ResultRecord",
    "SearchError",
    "SearchHit",
    "SessionBudget",
    "SessionConflictError",
    "StoreError",
    "StoreUnavailableError",
    "TokenizerUnavailableError",
    "Tool",
    "ToolAnnotations",
    "ToolCallError",
    "ToolCatalog",
    "ToolDeniedError",
    "ToolEntry",
    "ToolExecutionError",
    "ToolLimits",
    "ToolManager",
    "ToolNotFoundError",
    "ToolNotLoadedError",
    "ToolNotPermittedError",
    "ToolResult",
    "ToolSession",
    "ToolTimeoutError",
    "ToolUnavailableError",
    "ToolmgmtError",
    "TruncationResult",
    "UnknownToolError",
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
    "truncate_mcp_result",
    "truncate_result",
]
