"""LangChain adapter: a ``create_agent`` middleware whose tools come from a toolmgmt session.

Usage::

    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from toolmgmt_core import ToolCatalog, ToolManager
    from toolmgmt_langchain import ToolManagerMiddleware, add_langchain_tools

    catalog = ToolCatalog()
    add_langchain_tools(catalog, my_langchain_tools, domain="crm")  # MCP tools too
    agent = create_agent(
        "openai:gpt-4.1",
        tools=[],  # the middleware supplies and runs them
        middleware=[ToolManagerMiddleware(ToolManager(catalog, mode="search"))],
        checkpointer=InMemorySaver(),
    )
    agent.invoke({"messages": [...]}, {"configurable": {"thread_id": "1"}})

Each model call gets the session's tools (meta-tools, then always-on, then loaded tools);
each tool call runs through the session (policy, validation, truncation) and the session's
state travels in the agent state under ``"toolmgmt"``, so a checkpointer restores loaded tools.
Tools passed to ``create_agent`` that are not in the catalog are left to LangChain.

LangGraph's control flow passes through the session untouched: a catalog tool that calls
``interrupt()`` pauses the graph and resumes with ``Command(resume=...)``. A call that needs
approval under toolmgmt's policy (a step's ``require_approval``, or a destructive tool) pauses
with ``interrupt()`` when the manager has no ``approval`` callback, in the shape of
``HumanInTheLoopMiddleware``'s per-call requests (``{"type": "tool_approval", "tool_call_id",
"name", "args", "description"}`` and a ``response_schema``); resume with one of its decisions
(``{"type": "approve"}``, ``"reject"``, ``"edit"``, ``"respond"``, see
:mod:`toolmgmt_langchain.approval`). An approved call runs once through the session; a rejected
one never runs and the model is told why. This needs a checkpointer; ``approval=False`` leaves
approval to the manager alone. Beside a ``HumanInTheLoopMiddleware``, list it first and pass it
as ``approval=hitl``: the calls it reviews are not asked about again.

LangChain tools taking ``ToolRuntime``, ``InjectedState``, ``InjectedStore`` or
``InjectedToolCallId`` arguments run through the agent's own ``ToolNode``, which supplies those
values (a ``Command`` they return updates the agent state as usual); outside an agent they
cannot run.

For a hand-written loop: ``bind_session_tools(model, session)`` and
``run_tool_calls_sync(session, ai_message)`` (``run_tool_calls`` when async).
"""

from __future__ import annotations

from toolmgmt_core.integration import require_version

MIN_LANGCHAIN_VERSION = "1.0"
"""Oldest supported ``langchain`` (the ``create_agent`` middleware API)."""

try:
    import langchain.agents.middleware  # noqa: F401
    import langchain_core.tools  # noqa: F401
    import langgraph.types  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        'toolmgmt_langchain needs LangChain: pip install "toolmgmt[langchain]"'
    ) from exc

require_version("langchain", MIN_LANGCHAIN_VERSION, "langchain")

# After the check: the modules below import the framework.
from toolmgmt_langchain.embeddings import LangChainEmbedder  # noqa: E402
from toolmgmt_langchain.loop import (  # noqa: E402
    bind_session_tools,
    run_tool_calls,
    run_tool_calls_sync,
    session_tool_definitions,
)
from toolmgmt_langchain.middleware import (  # noqa: E402
    STATE_KEY,
    ToolManagerMiddleware,
    ToolManagerState,
)
from toolmgmt_langchain.tools import add_langchain_tools  # noqa: E402

__all__ = [
    "MIN_LANGCHAIN_VERSION",
    "STATE_KEY",
    "LangChainEmbedder",
    "ToolManagerMiddleware",
    "ToolManagerState",
    "add_langchain_tools",
    "bind_session_tools",
    "run_tool_calls",
    "run_tool_calls_sync",
    "session_tool_definitions",
]
