"""A session's loaded tools rebuilt from a conversation's tool results.

A framework that keeps the conversation but not toolmgmt's state (PydanticAI's
``message_history``) hands the next run the previous run's tool calls and results; the tools
that conversation loaded are written there, in the meta-tools' own answers:

- ``tool_search`` answers ``{"found": {name: definition}}`` (the cache-stable search), or
  ``{"found": ..., "added": [names]}`` (``Search(appends=True)``), or, sent with a provider's
  native deferral, a list of Anthropic ``tool_reference`` blocks (``{"type":
  "tool_reference", "tool_name": ...}``; the provider's name, resolved by the session);
- ``get_tool_schema`` and ``load_tool_schema`` answer a definition (``{"name": ...}``) or
  ``{"tools": [definitions]}``;
- a catalog tool that answered without an error was in the model's list (or was loaded by
  ``call_unloaded="load"``).

A result's content is the session's text, its parsed value, or a list of text parts as a
framework or a client may pass it on (OpenAI's ``[{"type": "text", "text": ...}]``, the
Responses API's ``input_text`` parts, Anthropic's text and ``tool_result`` blocks): the parts'
text is joined and read like the text itself.

The transcript is untrusted (a client may send any history): content is read only so far
(:data:`_MAX_PARTS` parts, :data:`_MAX_CHARS` characters), only names the session may see are
loaded, through the session's own loading (so ``max_active`` holds), in transcript order;
the profile and every other setting come from the manager, never from a transcript.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import toolmgmt_core._session.meta_tools as meta

if TYPE_CHECKING:
    from toolmgmt_core._session.session import ToolSession

__all__ = ["loaded_names", "restore_loaded"]

_ERROR_KINDS = ("call", "tool", "gateway")
"""The ``kind`` of toolmgmt's error objects (``"gateway"``: a refused call's kind in transcripts
kept from before it was named ``"call"``)."""


_MAX_PARTS = 64
"""Parts of one result's content read at most (a longer list is not toolmgmt's answer)."""
_MAX_CHARS = 1_000_000
"""Characters of one result's text parsed at most."""
_TEXT_PARTS = frozenset({"text", "input_text", "output_text"})
"""Part types whose ``text`` is the content: OpenAI's chat and Responses, Anthropic's blocks."""


def _text(content: Sequence[Any]) -> str | None:
    """The text of a content list (``[{"type": "text", "text": ...}]``, Responses'
    ``input_text`` parts, Anthropic's text blocks or one ``tool_result`` block holding them, or
    plain strings), joined; None when it holds anything else or is too long."""
    first = content[0] if len(content) == 1 else None
    if isinstance(first, Mapping) and first.get("type") == "tool_result":
        inner = first.get("content")  # Anthropic: the block's own content (one level)
        if isinstance(inner, str):
            return inner
        if not isinstance(inner, list | tuple):
            return None
        content = inner
    if len(content) > _MAX_PARTS:
        return None
    texts: list[str] = []
    for part in content:
        if isinstance(part, Mapping) and part.get("type", "text") in _TEXT_PARTS:
            part = part.get("text")
        if not isinstance(part, str):
            return None
        texts.append(part)
    return "".join(texts)


def _parsed(content: Any) -> Any:
    """The value of a result's content: parsed JSON, the text itself, or as given."""
    if isinstance(content, list | tuple):
        text = _text(content)
        if text is None:
            return content
        content = text
    if isinstance(content, str) and len(content) <= _MAX_CHARS:
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


def _referenced(value: Any) -> list[str]:
    """The names of a native search answer's ``tool_reference`` blocks."""
    if not isinstance(value, list | tuple) or len(value) > _MAX_PARTS:
        return []
    return [
        n
        for part in value
        if isinstance(part, Mapping) and part.get("type") == "tool_reference"
        for n in _names(part.get("tool_name"))
    ]


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
            if isinstance(added, list):
                found = [n for item in added for n in _names(item)]
            else:  # the cache-stable search: {"found": {name: definition}}, nothing appended
                defined = value.get("found")
                pairs = list(defined.items())[:_MAX_PARTS] if isinstance(defined, Mapping) else []
                found = [n for n, entry in pairs if isinstance(entry, Mapping) for n in _names(n)]
        elif name == meta.TOOL_SEARCH:
            found = _referenced(value)
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
    added, _ = session.load(loaded_names(results), restored=True)
    return added
