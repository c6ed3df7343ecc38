"""A PydanticAI run's tool results by call id: what the PydanticAI tests read back.

Import it after ``pytest.importorskip("pydantic_ai")``: it imports pydantic-ai.
"""

from __future__ import annotations

from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturnPart

__all__ = ["tool_returns"]


def tool_returns(messages: list[ModelMessage]) -> dict[str, ToolReturnPart]:
    """Every tool result the model was sent in ``messages``, by its tool call id."""
    return {
        part.tool_call_id: part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    }
