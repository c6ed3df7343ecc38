"""A summariser for the manager's ``summarizer=``: large results through a small model."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import litellm

__all__ = [
    "litellm_summarizer",
]

_SUMMARY_PROMPT = (
    "You summarise a tool result for another AI agent. Keep every id, name, number, date and "
    "error message it may need; drop repetition and boilerplate. Answer with the summary only."
)


def litellm_summarizer(
    model: str, *, max_tokens: int = 500, **completion_kwargs: Any
) -> Callable[..., Awaitable[str]]:
    """A summariser for the manager's ``summarizer=``: large results through a small model.

    Args:
        model: any LiteLLM model name (``"openai/gpt-4.1-mini"``, ``"anthropic/claude-haiku-4-5"``).
        max_tokens: the summary's length limit.
        completion_kwargs: more ``litellm.acompletion`` arguments (``api_key``, ``timeout``, ...).
    """

    async def summarize(text: str, *, tool_name: str, goal: str | None = None) -> str:
        task = f"Result of tool {tool_name!r}" + (f", for the goal: {goal}" if goal else "")
        response = await litellm.acompletion(
            model=model,
            messages=[
                {"role": "system", "content": _SUMMARY_PROMPT},
                {"role": "user", "content": f"{task}\n\n{text}"},
            ],
            max_tokens=max_tokens,
            **completion_kwargs,
        )
        content = response.choices[0].message.content
        if not isinstance(content, str) or not content.strip():
            raise ValueError(f"The summariser model {model!r} returned no text.")
        return content.strip()

    return summarize
