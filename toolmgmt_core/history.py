"""A session's loaded tools rebuilt from a conversation's tool results.

A framework that keeps the conversation but not toolmgmt's state (PydanticAI's
``message_history``) hands the next run the previous run's tool calls and results; the tools
that conversation loaded are written there, in the meta-tools' own answers:

- ``tool_search`` answers ``{"found": ..., "added": [names]}``;
- ``get_tool_schema`` and ``load_tool_schema`` answer a definition (``{"name": ...}``) or
  ``{"tools": [definitions]}``;
- a catalog tool that answered without an error was in the model's list (or was loaded by
  ``call_unloaded="load"``).

The transcript is untrusted (a client may send any history): only names the session may see
are loaded, through the session's own loading (so ``max_active`` holds), in transcript order;
the profile and every other setting come from the manager, never from a transcript.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from toolmgmt_core import meta_tools as meta

if TYPE_CHECKING:
    from toolmgmt_core.session import ToolSession

__all__ = ["loaded_names", "restore_loaded"]

_ERROR_KINDS = ("gateway", "tool")


def _parsed(content: Any) -> Any:
    if isinstance(content, str):
        try:
            return json.loads(content)
        except ValueError:
            return content
    return content


def _is_error(value: Any) -> bool:
    """Whether ``value`` is a toolmgmt error object (``{"error", "kind", "message"}``)."""
    return isinstance(value, Mapping) and "error" in value and value.get("kind") in _ERROR_KINDS


def _names(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else []


def _defined(value: Any) -> list[str]:
    """The names of the definitions a schema request answered with."""
    if not isinstance(value, Mapping):
        return []
    tools = value.get("tools")
    if isinstance(tools, list):
        return [n for t in tools if isinstance(t, Mapping) for n in _names(t.get("name"))]
    return _names(value.get("name"))


def loaded_names(results: Iterable[tuple[str, Any]]) -> list[str]:
    """The tool names a transcript's results say were loaded, in order (not yet checked).

    Args:
        results: ``(tool name, result content)`` per tool result, in conversation order; the
            content is the text the session returned (JSON) or its parsed value.
    """
    names: list[str] = []
    for name, content in results:
        if not isinstance(name, str):
            continue
        value = _parsed(content)
        if _is_error(value):
            continue
        if name == meta.TOOL_SEARCH and isinstance(value, Mapping):
            added = value.get("added")
            found = [n for item in added for n in _names(item)] if isinstance(added, list) else []
        elif name in (meta.GET_TOOL_SCHEMA, meta.LOAD_TOOL_SCHEMA):
            found = _defined(value)
        elif name in meta.META_TOOL_NAMES:
            found = []  # discover_tools lists, execute_tool runs: neither loads
        else:
            found = [name]
        names.extend(found)
    return list(dict.fromkeys(names))


def restore_loaded(session: ToolSession, results: Iterable[tuple[str, Any]]) -> list[str]:
    """Load into ``session`` the tools a transcript loaded, as far as its policy allows.

    Returns:
        The names newly loaded (hidden, unknown and over-the-cap names are left out).
    """
    added, _ = session.load(loaded_names(results))
    return added
