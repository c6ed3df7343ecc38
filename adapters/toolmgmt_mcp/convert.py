"""MCP to the core: an upstream's listed tools as catalog tools.

:func:`tools_from_listing` turns one upstream's ``tools/list`` into :class:`Tool` objects of its
domain (grouped by configuration or name prefix, the SDK's ``{"result": x}`` output wrapping
undone, a malformed definition or an invalid ``x-mcp-header`` annotation skipped with the
reason; the input schema kept whole, JSON Schema 2020-12 keywords and valid ``x-mcp-header``
annotations included). A call's result goes to the core as it came
(:class:`~toolmgmt_core.ContentResult`), which shapes it like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import mcp.types as mcp_types
from mcp.shared.inbound import find_invalid_x_mcp_header

from toolmgmt_core import CatalogError, Tool
from toolmgmt_core.integration import group_names, matches_any, tool_from_dict
from toolmgmt_mcp.upstream_config import UpstreamConfig

__all__ = ["tools_from_listing"]

_TIMEOUT_GRACE = 2.0
"""Seconds the core's own timeout waits beyond the upstream's, so ours fires first."""


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
    names = [item.name for item in listed]
    groups = group_names(names, config.groups, by_prefix=config.group_by_prefix)
    tools: list[Tool] = []
    skipped: list[tuple[str, str]] = []
    for item in listed:
        name = f"{config.tool_prefix}{item.name}"
        header_problem = find_invalid_x_mcp_header(item.input_schema)
        if header_problem is not None:
            # 2026: a tool whose x-mcp-header annotations are invalid must not be used (its
            # Mcp-Param headers could not be sent or checked); the gateway passes valid ones on.
            skipped.append((item.name, f"invalid x-mcp-header annotation: {header_problem}"))
            continue
        definition: dict[str, Any] = {
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
                group=groups[item.name],
                profiles=config.profiles,
                max_result_tokens=config.max_result_tokens,
                truncation=config.truncation,
                # A call may first have to restart the upstream: both budgets count.
                timeout=config.connect_timeout + config.timeout + _TIMEOUT_GRACE,
                handler=handler(item.name, unwrap=wrapped is not None),
                metadata={"upstream": config.name, "upstream_tool": item.name},
                defer_loading=False if matches_any(name, always_on) else None,
            )
        except CatalogError as exc:
            skipped.append((item.name, f"malformed tool definition: {exc}"))
            continue
        tools.append(tool)
    return tools, skipped


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

