"""The HTTP edge of Anthropic's Messages API, faked: the body of an assistant message, for the
tests whose SDK client (``anthropic``, ``ChatAnthropic``, LiteLLM) talks to a mock transport."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["message_body"]


def message_body(
    content: Sequence[dict[str, Any]], *, number: int = 1, model: str = "claude-test"
) -> dict[str, Any]:
    """A Messages API answer (``msg_{number}``) holding ``content``'s blocks; its stop reason
    ``tool_use`` when a block calls a tool, else ``end_turn``."""
    calls = any(block["type"] == "tool_use" for block in content)
    return {
        "id": f"msg_{number}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": list(content),
        "stop_reason": "tool_use" if calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
