"""A result made of content blocks, in MCP's JSON shapes: :class:`ContentResult`.

A handler that gets its answer as content blocks (an MCP upstream's ``CallToolResult``, dumped
to plain JSON) returns a :class:`ContentResult`; the call pipeline shapes it like any result:
the model gets :meth:`ContentResult.value` (the structured content when there is some, else the
text: several blocks that are each JSON, one record a block, as one JSON array; else the blocks
with binary data described), cut to the tool's budget, and the binary
blocks travel beside it (:attr:`~toolmgmt_core.ToolResult.media`) for an integration that passes
them on. A result marked ``is_error`` is the tool's own failure (``tool_error``, the text its
message). The blocks are untrusted: anything that is not a mapping is described, never run.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ContentResult"]

_BINARY = ("image", "audio")


@dataclass(frozen=True)
class ContentResult:
    """Content blocks (MCP's ``TextContent``, ``ImageContent``... as dicts) and structured
    content, as a handler returns them."""

    content: Sequence[Mapping[str, Any]] = ()
    """The blocks, in order: ``{"type": "text", "text": ...}``, ``{"type": "image", "data":
    ..., "mimeType": ...}``, ``{"type": "resource", "resource": {...}}``..."""
    structured: Any = None
    """The structured content (MCP's ``structuredContent``), or None."""
    is_error: bool = False
    """Whether the tool reported a failure (MCP's ``isError``)."""
    meta: Mapping[str, Any] = field(default_factory=dict)
    """Anything else the result carried (MCP's ``_meta``), untouched."""

    @classmethod
    def from_mcp(cls, result: Mapping[str, Any]) -> ContentResult:
        """From an MCP ``CallToolResult`` as JSON (``model_dump(by_alias=True)``)."""
        blocks = result.get("content")
        meta = result.get("_meta")
        return cls(
            content=[b for b in blocks if isinstance(b, Mapping)]
            if isinstance(blocks, list)
            else [],
            structured=result.get("structuredContent"),
            is_error=result.get("isError") is True,
            meta=meta if isinstance(meta, Mapping) else {},
        )

    def value(self) -> Any:
        """What the model gets: the structured content when there is some (the same data as
        the text, typed); else the text (one string); else the blocks, with images, audio and
        binary resources replaced by a short description."""
        if self.structured is not None:
            return self.structured
        parts: list[Any] = []
        for block in self.content:
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                parts.append(block["text"])
            elif kind in _BINARY:
                parts.append(_described(block))
            elif kind == "resource" and isinstance(block.get("resource"), Mapping):
                resource = block["resource"]
                text = resource.get("text")
                parts.append(
                    {"resource": str(resource.get("uri")), "text": text}
                    if isinstance(text, str)
                    else f"[binary resource {resource.get('uri')}, not shown]"
                )
            else:
                parts.append(dict(block))
        if all(isinstance(p, str) for p in parts):
            records = _records(parts) if len(parts) > 1 else None
            return records if records is not None else "\n".join(parts)
        return parts

    def media(self) -> list[Mapping[str, Any]]:
        """The blocks that are not text (images, audio, resources, links), in order."""
        return [b for b in self.content if b.get("type") != "text"]

    def error_text(self) -> str:
        """The failure's text (its text blocks joined), or a placeholder."""
        texts = [b["text"] for b in self.content if isinstance(b.get("text"), str)]
        return "\n".join(texts).strip() or "the tool reported an error without a message"


def _records(texts: list[str]) -> list[Any] | None:
    """Text blocks that are each a JSON object or array (an upstream's list, one record a
    block), as one list: the result is then JSON as a whole (an array), and cut as one, where
    the joined text (``{...}\n{...}``) is not JSON. None when any block is other text."""
    records: list[Any] = []
    for text in texts:
        if text.lstrip()[:1] not in ("{", "["):
            return None
        try:
            records.append(json.loads(text))
        except (ValueError, RecursionError):  # not JSON, or nested past what Python parses
            return None
    return records


def _described(block: Mapping[str, Any]) -> str:
    data = block.get("data")
    size = math.ceil(len(data) * 3 / 4) if isinstance(data, str) else 0
    return f"[{block.get('type')} {block.get('mimeType')}, {size} bytes, not shown]"
