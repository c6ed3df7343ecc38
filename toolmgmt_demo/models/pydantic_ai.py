"""A PydanticAI model that plays the demo agent offline (:func:`demo_model`).

A ``FunctionModel`` (PydanticAI's own offline model) whose function is the demo agent,
:func:`toolmgmt_demo.models.next_move`. Needs ``toolmgmt[pydantic-ai]``.

Usage::

    from pydantic_ai import Agent
    from toolmgmt_demo.models.pydantic_ai import demo_model

    agent = Agent(demo_model(), toolsets=[...])  # offline; a real one: Agent("openai:gpt-4.1")
"""

from __future__ import annotations

from typing import Any

try:
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        RetryPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        'The PydanticAI demo model needs PydanticAI: pip install "toolmgmt[pydantic-ai]"'
    ) from exc

from toolmgmt_demo.models import Offered, ToolCall, called_name, next_move

__all__ = ["demo_answer", "demo_model"]


def _prompt_text(part: UserPromptPart) -> str:
    content = part.content
    return content if isinstance(content, str) else " ".join(str(c) for c in content)


def demo_answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The demo agent's answer to a PydanticAI conversation (a ``FunctionModel`` function)."""
    parts = [p for m in messages if isinstance(m, ModelRequest) for p in m.parts]
    # the user's latest prompt; a "<system>" notice PydanticAI adds as a prompt is not one
    prompts = [(i, _prompt_text(p)) for i, p in enumerate(parts) if isinstance(p, UserPromptPart)]
    start, request = next(
        ((i, text) for i, text in reversed(prompts) if not text.startswith("<system>")), (-1, "")
    )
    calls = {
        p.tool_call_id: called_name(p.tool_name, p.args)
        for m in messages
        if isinstance(m, ModelResponse)
        for p in m.parts
        if isinstance(p, ToolCallPart)
    }
    done = []
    for part in parts[start + 1 :]:
        if isinstance(part, ToolReturnPart):
            done.append((calls.get(part.tool_call_id, part.tool_name), part.model_response_str()))
        elif isinstance(part, RetryPromptPart) and part.tool_name:
            done.append((part.tool_name, part.model_response()))
    offered = [
        Offered(t.name, t.description or "", t.parameters_json_schema) for t in info.function_tools
    ]
    move = next_move(request, done, offered)
    if isinstance(move, ToolCall):
        return ModelResponse(parts=[ToolCallPart(move.name, move.arguments)])
    return ModelResponse(parts=[TextPart(move)])


def demo_model(**options: Any) -> FunctionModel:
    """A ``FunctionModel`` that plays the demo agent (``options``: ``FunctionModel``'s own)."""
    return FunctionModel(demo_answer, model_name="toolmgmt-demo", **options)
