"""Provider formatting: tools in the shape Anthropic, OpenAI and Gemini accept."""

from __future__ import annotations

from toolmgmt_core.providers.names import NameMap, build_name_map, resolve_provider_name

__all__ = ["NameMap", "build_name_map", "resolve_provider_name"]
