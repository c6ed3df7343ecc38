"""The HTTP edge of an OpenAI-compatible provider, faked: what LiteLLM's tests talk to.

A handler gets each request (its JSON body already read) and returns the assistant message;
:func:`completion` wraps a message in a Chat Completions body and :func:`async_client` gives an
``AsyncOpenAI`` client whose HTTP transport is the handler.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import httpx
from openai import AsyncOpenAI

__all__ = ["async_client", "completion", "tool_calls_message"]

Handler = Callable[[dict[str, Any]], dict[str, Any]]


def completion(message: dict[str, Any], *, number: int = 1) -> httpx.Response:
    """A Chat Completions answer holding ``message`` (finish reason from its tool calls)."""
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    body = {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o-mini",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
    return httpx.Response(200, json=body)


def tool_calls_message(calls: Sequence[tuple[str, Any]], prefix: str = "call") -> dict[str, Any]:
    """An assistant message calling each (name, arguments) in ``calls``."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"{prefix}_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
            for i, (name, arguments) in enumerate(calls)
        ],
    }


def async_client(handler: Handler) -> AsyncOpenAI:
    """An ``AsyncOpenAI`` whose every request is answered by ``handler(body) -> message``."""
    seen = [0]

    def answer(request: httpx.Request) -> httpx.Response:
        seen[0] += 1
        return completion(handler(json.loads(request.content)), number=seen[0])

    return AsyncOpenAI(
        api_key="sk-test", http_client=httpx.AsyncClient(transport=httpx.MockTransport(answer))
    )
