"""Formatting results kept across steps, so that formatting an unchanged step costs almost
nothing: each tool's conversion (by identity, then by content) and whole requests."""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Literal

from toolmgmt_core._model.tool import Tool
from toolmgmt_core._providers.anthropic import to_anthropic_tool
from toolmgmt_core._providers.gemini import to_gemini_declaration
from toolmgmt_core._providers.openai import to_openai_tool

__all__ = ["REQUESTS", "Converted", "clear_format_cache", "convert"]


class _LRU:
    """A small thread-safe least-recently-used map (``get`` answers None for a missing key)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.data: OrderedDict[Any, Any] = OrderedDict()
        self.lock = threading.Lock()

    def get(self, key: Any) -> Any:
        with self.lock:
            value = self.data.get(key)
            if value is not None:
                self.data.move_to_end(key)
            return value

    def put(self, key: Any, value: Any) -> None:
        with self.lock:
            self.data[key] = value
            self.data.move_to_end(key)
            while len(self.data) > self.size:
                self.data.popitem(last=False)

    def clear(self) -> None:
        with self.lock:
            self.data.clear()


REQUESTS = _LRU(64)
"""Whole ``format_tools`` results, by the tools' identities and the options."""
_BY_ID = _LRU(8192)
_BY_CONTENT = _LRU(8192)


def clear_format_cache() -> None:
    """Forget every cached formatting result (for benchmarks and tests)."""
    for cache in (REQUESTS, _BY_ID, _BY_CONTENT):
        cache.clear()


@dataclass(frozen=True)
class Converted:
    """One tool in one provider's shape."""

    data: dict[str, Any] | None
    """The definition, or None when it could not be made (see :attr:`error`)."""
    notes: tuple[str, ...] = ()
    """What was changed to fit the provider."""
    fallback: str | None = None
    """Why OpenAI's strict mode was given up for this tool, if it was."""
    error: str | None = None
    """Why the tool could not be converted."""


def _fingerprint(tool: Tool, examples: bool) -> str:
    content: list[Any] = [tool.name, tool.description, tool.parameters]
    if examples:
        content.append(tool.input_examples)
    return json.dumps(content, sort_keys=True, default=str)


def _convert_uncached(tool: Tool, provider: str, name: str, options: tuple[Any, ...]) -> Converted:
    strict, json_schema, examples = options
    try:
        if provider == "anthropic":
            data, notes = to_anthropic_tool(tool, name, examples=examples)
            return Converted(data, tuple(notes))
        if provider == "gemini":
            data, notes = to_gemini_declaration(tool, name, json_schema=json_schema)
            return Converted(data, tuple(notes))
        api: Literal["chat", "responses"] = (
            "responses" if provider == "openai-responses" else "chat"
        )
        data, notes, fallback = to_openai_tool(tool, name, api=api, strict=strict)
        return Converted(data, tuple(notes), fallback)
    except Exception as exc:  # one bad tool never fails the request
        return Converted(None, error=f"{type(exc).__name__}: {exc}")


def convert(tool: Tool, provider: str, name: str, options: tuple[Any, ...]) -> Converted:
    """``tool`` in ``provider``'s shape under ``name``, cached on its identity, then on its content
    (``options``: strict, Gemini JSON Schema, input examples)."""
    id_key = (provider, options, name, id(tool))
    hit = _BY_ID.get(id_key)
    if hit is not None and hit[0] is tool:
        return hit[1]  # type: ignore[no-any-return]
    content_key = (provider, options, name, _fingerprint(tool, options[2]))
    converted = _BY_CONTENT.get(content_key)
    if converted is None:
        converted = _convert_uncached(tool, provider, name, options)
        _BY_CONTENT.put(content_key, converted)
    _BY_ID.put(id_key, (tool, converted))
    return converted  # type: ignore[no-any-return]
