"""LiteLLM adapter: the session's tools in every request, formatted for the target provider.

Usage::

    import litellm
    from toolmgmt_core import ToolManager
    from toolmgmt_litellm import ToolManagerCallback, run_meta_tool_calls

    callback = ToolManagerCallback(
        ToolManager(catalog, mode="search", results=ResultBudget(max_result_tokens=2000))
    )
    litellm.callbacks.append(callback)
    session = callback.session("conversation-1")
    while True:
        response = await litellm.acompletion(
            model="anthropic/claude-sonnet-4-5", messages=messages,
            metadata={"toolmgmt_session": "conversation-1"},  # the callback sets the tools
        )
        messages.append(response.choices[0].message.model_dump())
        if not response.choices[0].message.tool_calls:
            break
        messages += await run_meta_tool_calls(session, response, all_tools=True)

On the async path (``acompletion``) the callback replaces the request's tools with the session's
(via ``format_tools``: Anthropic's own shape for Anthropic models, OpenAI's for every other
provider, which LiteLLM translates) and cuts tool messages over the manager's result budget;
``aresponses`` gets them in the Responses API's shape. Requests without
``metadata["toolmgmt_session"]``, and other calls (embeddings, ...), are left alone; tools the
app passes that are not in the catalog are kept. LiteLLM runs no request-changing hook on the
sync path, so there use ``completion_with_tools(session, model=..., messages=...)``; a plain
``litellm.completion`` with a session id warns once.

In a LiteLLM proxy, name the callback in the config (``litellm_settings: callbacks:
my_module.callback``, where ``callback = ToolManagerCallback(manager)``): its
``async_pre_call_hook`` sets each request's tools the same way. The proxy's client runs the
meta-tool calls (with toolmgmt and the same catalog); the proxy reads the tools they loaded
from the conversation itself, so it keeps no state a client must share, and sessions are kept
apart per API key.
``litellm_summarizer(model=...)`` writes summaries of large results through a small model.
"""

from __future__ import annotations

from toolmgmt_core.integration import require_version

MIN_LITELLM_VERSION = "1.70"
"""Oldest supported ``litellm`` (``async_pre_call_deployment_hook`` on the client path)."""

try:
    import litellm  # noqa: F401
    from litellm.integrations.custom_logger import CustomLogger  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError('toolmgmt_litellm needs LiteLLM: pip install "toolmgmt[litellm]"') from exc

require_version("litellm", MIN_LITELLM_VERSION, "litellm")

# After the check: the modules below import the framework.
from toolmgmt_litellm.callback import (  # noqa: E402
    SESSION_KEY,
    ToolManagerCallback,
    completion_with_tools,
    prepare_request,
)
from toolmgmt_litellm.calls import run_meta_tool_calls, run_meta_tool_calls_sync  # noqa: E402
from toolmgmt_litellm.embeddings import LiteLLMEmbedder  # noqa: E402
from toolmgmt_litellm.summarizer import litellm_summarizer  # noqa: E402

__all__ = [
    "MIN_LITELLM_VERSION",
    "SESSION_KEY",
    "LiteLLMEmbedder",
    "ToolManagerCallback",
    "completion_with_tools",
    "litellm_summarizer",
    "prepare_request",
    "run_meta_tool_calls",
    "run_meta_tool_calls_sync",
]
