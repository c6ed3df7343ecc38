"""MCP results: text blocks, embedded text resources and structured content share one budget;
binary blobs become a short description (:func:`truncate_mcp_result`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolmgmt_core.calls.truncation.fit import _check_budget, _truncate
from toolmgmt_core.calls.truncation.render import (
    DEFAULT_MAX_DEPTH,
    MIN_RESULT_TOKENS,
    Strategy,
    render_result,
    to_jsonable,
)
from toolmgmt_core.calls.truncation.shrink import _plural
from toolmgmt_core.model.tokens import DEFAULT_ENCODING, Encoding, counter, get_encoding

__all__ = [
    "McpTruncationResult",
    "truncate_mcp_result",
]


_BINARY_TYPES = ("image", "audio")


@dataclass(frozen=True)
class McpTruncationResult:
    """An MCP tool result (content blocks and structured content) cut to one shared budget."""

    content: list[dict[str, Any]]
    """The content blocks, in order, as plain dicts in MCP's shapes (copies; input untouched)."""
    structured: Any
    """The structured content (``structuredContent``), cut like the rest, or None."""
    truncated: bool
    """Whether anything was cut, replaced or dropped."""
    tokens: int
    """Tokens of the text parts sent (text blocks, resource texts, structured JSON), summed."""
    original_tokens: int
    """The same sum for the untouched result (binary blobs not counted)."""
    replaced: list[str] = field(default_factory=list)
    """A description of each binary block replaced by text."""


@dataclass
class _Part:
    """One text part of an MCP result that shares the budget."""

    value: Any
    tokens: int
    block: int | None  # index into the blocks, None for the structured content
    copies: int = 1  # the structured content counts once more for each block mirroring it
    out: Any = None
    out_tokens: int = 0


def _approx_bytes(data: Any) -> str:
    if isinstance(data, str):
        size = len(data) * 3 // 4  # base64
    elif isinstance(data, bytes | bytearray):
        size = len(data)
    else:
        return "unknown size"
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:,.1f} {unit}"
    return _plural(size, "byte")


def _describe_binary(block: Mapping[str, Any]) -> str:
    kind = block.get("type", "binary")
    if kind == "resource":
        resource = block.get("resource") or {}
        mime = resource.get("mimeType") or "unknown type"
        where = f" {resource.get('uri')}" if resource.get("uri") else ""
        return f"[binary resource{where} omitted: {mime}, {_approx_bytes(resource.get('blob'))}]"
    mime = block.get("mimeType") or "unknown type"
    return f"[{kind} omitted: {mime}, {_approx_bytes(block.get('data'))}]"


def _same_json(text: str, structured: Any) -> bool:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return False
    try:
        return bool(json.loads(stripped) == structured)
    except ValueError:
        return False


def _share_budget(
    parts: list[_Part], room: int, strategy: str, count: Callable[[str], int], max_depth: int
) -> None:
    """Water-fill ``room`` over the parts, smallest first; unused room flows to larger ones."""
    remaining = room
    left = sum(p.copies for p in parts)
    for part in sorted(parts, key=lambda p: p.tokens):
        share = remaining // left
        if part.tokens <= share:
            part.out, part.out_tokens = part.value, part.tokens
        else:
            cut = _truncate(
                part.value, max(share, MIN_RESULT_TOKENS), strategy, count, max_depth, part.tokens
            )
            part.out, part.out_tokens = cut.value, cut.tokens
        remaining -= part.out_tokens * part.copies
        left -= part.copies


def truncate_mcp_result(
    content_blocks: Sequence[Mapping[str, Any]],
    structured: Any = None,
    max_tokens: int = 2_000,
    allow_binary: bool = False,
    *,
    strategy: Strategy | str = "smart",
    encoding: str | Encoding = DEFAULT_ENCODING,
) -> McpTruncationResult:
    """Cap an MCP tool result: text, embedded text resources and structured content together.

    One budget is shared by every text part, so the structured content can never ride along in
    full beside capped text. A text block that mirrors the structured content (the JSON the MCP
    spec asks servers to add) is replaced by exactly the cut structured content. Image and
    audio blocks and binary resources become a short text description unless ``allow_binary``
    (kept binary data is not counted as text tokens). Blocks are plain dicts in MCP's shapes
    (``type`` text, image, audio, resource, resource_link); the fields of ``resource_link`` and
    unknown block types are counted and cut as JSON.

    Args:
        content_blocks: the result's ``content`` list.
        structured: the result's ``structuredContent``, or None.
        max_tokens: the shared budget. Each part gets at least :data:`MIN_RESULT_TOKENS`; when
            the budget cannot give every part that much, trailing blocks are dropped (never the
            structured content) and a closing text block says how many.
        allow_binary: keep image, audio and blob blocks as they are.
        strategy: the truncation strategy for each part.
        encoding: the tokenizer.

    Raises:
        ConfigError: a budget under the minimum, or an unknown strategy.
    """
    _check_budget(max_tokens, strategy)
    enc = get_encoding(encoding) if isinstance(encoding, str) else encoding
    count = counter(enc)
    blocks: list[dict[str, Any]] = []
    replaced: list[str] = []
    parts: list[_Part] = []
    mirrors: list[int] = []
    mirror_tokens = 0

    for raw in content_blocks:
        block = dict(raw) if isinstance(raw, Mapping) else to_jsonable(raw)
        if not isinstance(block, dict):
            block = {"type": "text", "text": render_result(block)}
        kind = block.get("type")
        resource = block.get("resource") if kind == "resource" else None
        is_blob = isinstance(resource, Mapping) and "blob" in resource
        if (kind in _BINARY_TYPES or is_blob) and not allow_binary:
            description = _describe_binary(block)
            replaced.append(description)
            block, kind = {"type": "text", "text": description}, "text"
        index = len(blocks)
        blocks.append(block)
        if kind == "text":
            text = block.get("text")
            text = text if isinstance(text, str) else render_result(text)
            if structured is not None and _same_json(text, structured):
                mirrors.append(index)
                mirror_tokens += count(text)
            else:
                parts.append(_Part(text, count(text), index))
        elif kind == "resource" and isinstance(resource, Mapping) and "text" in resource:
            text = render_result(resource["text"])
            parts.append(_Part(text, count(text), index))
        elif kind not in _BINARY_TYPES and kind != "resource":
            payload = {k: v for k, v in block.items() if k != "type"}
            parts.append(_Part(payload, count(render_result(payload)), index))

    structured_part = None
    if structured is not None:
        structured_part = _Part(
            structured, count(render_result(structured)), None, 1 + len(mirrors)
        )
        parts.append(structured_part)

    # As sent, a mirror counts its own text; once cut, it is the cut structured content again.
    original = sum(p.tokens for p in parts) + mirror_tokens
    truncated = bool(replaced)
    dropped: set[int] = set()
    note = None
    if original <= max_tokens:
        for part in parts:
            part.out, part.out_tokens = part.value, part.tokens
    else:
        truncated = True
        room = max_tokens
        while sum(p.copies for p in parts) * MIN_RESULT_TOKENS > room:
            victims = [p for p in parts if p is not structured_part]
            if victims:
                parts.remove(victims[-1])
                dropped.add(victims[-1].block)  # type: ignore[arg-type]
            elif mirrors and structured_part is not None:
                dropped.add(mirrors.pop())
                structured_part.copies -= 1
            else:
                break
            note = f"[{_plural(len(dropped), 'more content block')} omitted to fit the budget]"
            room = max_tokens - count(note)
        if note is not None and sum(p.copies for p in parts) * MIN_RESULT_TOKENS > room:
            note, room = None, max_tokens  # no room left to say so; ``truncated`` still does
        _share_budget(parts, room, str(strategy), count, DEFAULT_MAX_DEPTH)

    for part in parts:
        if part.block is None:
            continue
        block = blocks[part.block]
        if block.get("type") == "text":
            block["text"] = part.out
        elif block.get("type") == "resource":
            block["resource"] = {**block["resource"], "text": part.out}
        else:
            blocks[part.block] = {"type": block.get("type"), **part.out}
    out_structured = structured_part.out if structured_part is not None else None
    if original <= max_tokens:
        tokens = original
    else:
        mirror_text = render_result(out_structured)
        for index in mirrors:
            blocks[index]["text"] = mirror_text
        tokens = sum(p.out_tokens * p.copies for p in parts)
    content = [b for i, b in enumerate(blocks) if i not in dropped]
    if note is not None:
        content.append({"type": "text", "text": note})
        tokens += count(note)
    return McpTruncationResult(content, out_structured, truncated, tokens, original, replaced)
