"""Where a managed conversation puts Anthropic's cache breakpoints.

A request caches its prefix only up to a ``cache_control`` breakpoint (at most four a request).
What ``bench/conversation.py`` measured (docs/cost.md, "Cache breakpoints") gives three places:

- after the tools sent up front (``format_tools(..., cache_control=True)``: the last tool that
  is not deferred): what every conversation of a deployment shares;
- at the end of the system prompt: shared too, when the deployment's prompt is the same;
- on the last block of the request: the conversation so far, read back by its next request.

:func:`chat_breakpoints` marks the last two on a Chat Completions message list (the shape
LiteLLM takes for every provider and turns into Anthropic's blocks); a framework with a
request-level switch (ChatAnthropic's ``cache_control``, Anthropic's automatic caching) uses
:data:`BREAKPOINT` there instead of the last-block mark. A request that already carries a
breakpoint of its own is left as it is: hand-tuned placement wins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["BREAKPOINT", "chat_breakpoints", "has_breakpoints"]

BREAKPOINT: Mapping[str, str] = {"type": "ephemeral"}
"""An ephemeral (5-minute) breakpoint, as ``cache_control`` takes it."""


def has_breakpoints(*parts: Sequence[Any]) -> bool:
    """Whether any tool, message or content part among ``parts`` carries ``cache_control``."""
    for items in parts:
        for item in items or ():
            if not isinstance(item, Mapping):
                continue
            if item.get("cache_control") is not None:
                return True
            content = item.get("content")
            if isinstance(content, list) and any(
                isinstance(p, Mapping) and p.get("cache_control") is not None for p in content
            ):
                return True
    return False


def _marked(message: Mapping[str, Any]) -> dict[str, Any]:
    """``message`` with a breakpoint on its last content block (a text becomes one block)."""
    content = message.get("content")
    if isinstance(content, str) and content and message.get("role") != "tool":
        block = {"type": "text", "text": content, "cache_control": dict(BREAKPOINT)}
        return {**message, "content": [block]}
    if isinstance(content, list) and content and isinstance(content[-1], Mapping):
        last = content[-1]
        if last.get("type") not in (None, "tool_reference"):
            return {
                **message,
                "content": [*content[:-1], {**last, "cache_control": dict(BREAKPOINT)}],
            }
    return {**message, "cache_control": dict(BREAKPOINT)}  # a tool message, or empty content


def chat_breakpoints(messages: Sequence[Mapping[str, Any]]) -> list[Any]:
    """``messages`` (Chat Completions shape) with breakpoints at the end of the system prompt
    and on the last message; unchanged when some message already carries one."""
    out: list[Any] = list(messages)
    if not out or has_breakpoints(out):
        return out
    systems = [i for i, m in enumerate(out) if isinstance(m, Mapping) and m.get("role") == "system"]
    if systems and systems[-1] != len(out) - 1:
        out[systems[-1]] = _marked(out[systems[-1]])
    if isinstance(out[-1], Mapping):
        out[-1] = _marked(out[-1])
    return out
