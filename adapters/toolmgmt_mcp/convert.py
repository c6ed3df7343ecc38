"""MCP to the core: an upstream's listed tools as catalog tools, its call results as values.

:func:`tools_from_listing` turns one upstream's ``tools/list`` into :class:`Tool` objects of its
domain (grouped by configuration or name prefix, the SDK's ``{"result": x}`` output wrapping
undone, a malformed definition skipped with the reason). :func:`result_value` turns a
``CallToolResult`` into a JSON-compatible value; the non-text blocks of the calls made inside
:func:`capture_media` are collected for the gateway to pass on, and the progress notifications
of the calls made inside :func:`relay_progress` are sent to the gateway's client.
"""

from __future__ import annotations

import contextlib
import contextvars
import fnmatch
import logging
import math
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

import mcp.types as mcp_types

from toolmgmt_core.model.errors import CatalogError
from toolmgmt_core.model.schema import tool_from_dict
from toolmgmt_core.model.tool import Tool
from toolmgmt_mcp.config import UpstreamConfig

__all__ = [
    "capture_media",
    "error_text",
    "keep_media",
    "progress_callback",
    "relay_progress",
    "result_value",
    "tools_from_listing",
]

logger = logging.getLogger("toolmgmt_mcp")

_TIMEOUT_GRACE = 2.0
"""Seconds the core's own timeout waits beyond the upstream's, so ours fires first."""
_PREFIX = re.compile(r"^([A-Za-z0-9]+)[_\-.]")

# -- listed tools -----------------------------------------------------------------------------


def tools_from_listing(
    listed: list[mcp_types.Tool],
    config: UpstreamConfig,
    *,
    always_on: tuple[str, ...],
    handler: Callable[..., Callable[..., Any]],
) -> tuple[list[Tool], list[tuple[str, str]]]:
    """Catalog tools for an upstream's listed tools, and the ones skipped with the reason.

    Args:
        listed: the upstream's tools, as the SDK listed them.
        config: the upstream's configuration (its domain, prefix, groups, budgets).
        always_on: gateway name patterns of tools listed up front (never deferred).
        handler: ``handler(upstream_tool_name, unwrap=...)``, the tool's handler; ``unwrap``
            says the upstream wraps its plain return value in ``{"result": x}``.
    """
    prefixes: dict[str, int] = {}
    for item in listed:
        match = _PREFIX.match(item.name)
        if match:
            prefixes[match.group(1)] = prefixes.get(match.group(1), 0) + 1
    tools: list[Tool] = []
    skipped: list[tuple[str, str]] = []
    for item in listed:
        name = f"{config.tool_prefix}{item.name}"
        definition = {
            "name": name,
            "description": item.description or item.title or "",
            "inputSchema": item.input_schema,
            "outputSchema": item.output_schema,
            "annotations": item.annotations.model_dump(by_alias=True, exclude_none=True)
            if item.annotations
            else None,
        }
        wrapped = _wrapped_output(item.output_schema)
        if wrapped is not None:  # the SDK's {"result": x} wrapping of a plain return value
            definition["outputSchema"] = wrapped
        if item.title and not (item.annotations and item.annotations.title):
            definition["annotations"] = {
                **(definition["annotations"] or {}),
                "title": item.title,
            }
        try:
            tool = tool_from_dict(
                definition,
                domain=config.name,
                group=_group(config, item.name, prefixes),
                profiles=config.profiles,
                max_result_tokens=config.max_result_tokens,
                truncation=config.truncation,
                # A call may first have to restart the upstream: both budgets count.
                timeout=config.connect_timeout + config.timeout + _TIMEOUT_GRACE,
                handler=handler(item.name, unwrap=wrapped is not None),
                metadata={"upstream": config.name, "upstream_tool": item.name},
                defer_loading=False if _matches(name, always_on) else None,
            )
        except CatalogError as exc:
            skipped.append((item.name, f"malformed tool definition: {exc}"))
            continue
        tools.append(tool)
    return tools, skipped


def _group(config: UpstreamConfig, tool_name: str, prefixes: Mapping[str, int]) -> str:
    for group, patterns in config.groups.items():
        if _matches(tool_name, patterns):
            return group
    if config.group_by_prefix:
        match = _PREFIX.match(tool_name)
        if match and prefixes.get(match.group(1), 0) > 1:
            return match.group(1).lower()
    return "general"


def _wrapped_output(schema: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The inner schema when ``schema`` is a lone required ``result`` property, else None."""
    if not isinstance(schema, Mapping):
        return None
    properties = schema.get("properties")
    if (
        schema.get("type") == "object"
        and isinstance(properties, Mapping)
        and set(properties) == {"result"}
        and schema.get("required") == ["result"]
        and isinstance(properties["result"], Mapping)
    ):
        return {k: v for k, v in properties["result"].items() if k != "title"}
    return None


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


# -- call results -----------------------------------------------------------------------------


def result_value(result: mcp_types.CallToolResult) -> Any:
    """A JSON-compatible value for an upstream's successful ``CallToolResult``.

    Structured content when the upstream sends it (it is the same data as the text, typed);
    else the text (one block as a string); else the blocks, with images and binary resources
    replaced by a short description.
    """
    if result.structured_content is not None:
        return result.structured_content
    parts: list[Any] = []
    for block in result.content:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            size = math.ceil(len(block.data) * 3 / 4)
            parts.append(f"[{block.type} {block.mime_type}, {size} bytes, not shown]")
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(
                {"resource": str(resource.uri), "text": text}
                if text is not None
                else f"[binary resource {resource.uri}, not shown]"
            )
        else:
            parts.append(block.model_dump(mode="json", by_alias=True, exclude_none=True))
    if all(isinstance(p, str) for p in parts):
        return "\n".join(parts)
    return parts


def error_text(result: mcp_types.CallToolResult) -> str:
    texts = [b.text for b in result.content if isinstance(b, mcp_types.TextContent)]
    return "\n".join(texts).strip() or "the tool reported an error without a message"


_MEDIA: contextvars.ContextVar[list[Any] | None] = contextvars.ContextVar(
    "toolmgmt_mcp_media", default=None
)


@contextlib.contextmanager
def capture_media() -> Iterator[list[Any]]:
    """Collect the non-text content blocks (images, audio, resources) of upstream calls made
    inside the block, so a gateway can pass them on beside the session's text result."""
    blocks: list[Any] = []
    token = _MEDIA.set(blocks)
    try:
        yield blocks
    finally:
        _MEDIA.reset(token)


_PROGRESS: contextvars.ContextVar[Callable[..., Awaitable[None]] | None] = contextvars.ContextVar(
    "toolmgmt_mcp_progress", default=None
)


@contextlib.contextmanager
def relay_progress(report: Callable[..., Awaitable[None]]) -> Iterator[None]:
    """Send the progress notifications of upstream calls made inside the block to ``report``
    (``report(progress, total, message)``, such as the gateway request's ``report_progress``)."""
    token = _PROGRESS.set(report)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def keep_media(result: mcp_types.CallToolResult) -> None:
    """Add ``result``'s non-text blocks to those :func:`capture_media` collects, if it does."""
    media = _MEDIA.get()
    if media is not None:
        media.extend(b for b in result.content if not isinstance(b, mcp_types.TextContent))


def progress_callback() -> Any:
    """The SDK progress callback relaying one call's progress to the ``report`` of the
    :func:`relay_progress` block around it (None outside one)."""
    report = _PROGRESS.get()
    if report is None:
        return None

    async def forward(progress: float, total: float | None, message: str | None) -> None:
        try:
            await report(progress, total, message)
        except Exception as exc:  # a client that went away must not fail the call
            logger.debug("progress not relayed: %s", exc)

    return forward
