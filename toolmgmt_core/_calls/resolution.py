"""Which tool a model meant, and what it is told when it cannot have it.

A name from a model is resolved exactly, then folded (:func:`toolmgmt_core._model.names.fold_name`:
case, look-alikes, separators), then as a provider-shortened form. Three answers can come back
besides the tool:

- ``not_permitted``: the name is a real tool the policy hides here. The model learns it may not
  use it (so it stops searching for it), with only visible tools suggested, and no hidden tool
  it did not name is revealed;
- ``unknown_tool``: no such tool, with the closest visible names, never a look-alike nor
  another domain's tool that may destroy (:mod:`toolmgmt_core._catalog.suggestions`);
- ``tool_not_loaded``: a visible tool called before it was loaded, with how to load it (the
  mode's ``unloaded_message``).

Every message ends with how to find tools in the session's mode (``Mode.find_hint``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from toolmgmt_core._calls.validation import clip
from toolmgmt_core._catalog.tool_catalog import ToolCatalog
from toolmgmt_core._model.errors import ToolNotFoundError, ToolNotPermittedError
from toolmgmt_core._model.names import names_hint
from toolmgmt_core._model.provider_names import resolve_provider_name
from toolmgmt_core._model.tool import Tool

__all__ = ["cap_message", "quoted", "resolve_tool"]


def quoted(value: Any) -> str:
    """``repr(value)`` for an error message, clipped: a model's input is echoed, not resent."""
    return clip(repr(value))


def resolve_tool(
    catalog: ToolCatalog, name: Any, can_see: Callable[[Tool], bool], hint: str
) -> Tool:
    """The visible tool ``name`` stands for: exact, folded, then provider-shortened.

    Args:
        catalog: the tools.
        name: what the model sent.
        can_see: whether the session may see a tool.
        hint: how to find tools in the session's mode (``Mode.find_hint``), appended to every
            refusal.

    Raises:
        ToolNotPermittedError: ``name`` (exactly or folded) is a catalog tool the policy hides
            here; suggestions are visible tools only.
        ToolNotFoundError: with the closest visible names (hidden tools are never named).
    """
    if not isinstance(name, str) or not name.strip():
        raise ToolNotFoundError(
            f"A tool name is required, got {quoted(name)}.{hint}", tool_name=str(name)
        )
    tool = catalog.find(name)
    if tool is not None and can_see(tool):
        return tool
    if tool is not None:
        # The model named a real tool it may not use: say so, so it stops looking for it;
        # only visible tools are suggested, and no hidden tool it did not name is revealed.
        suggestions = catalog.suggest(name, where=can_see)
        closest = (
            f" Allowed tools with close names: {', '.join(suggestions)}." if suggestions else ""
        )
        raise ToolNotPermittedError(
            f"Tool {quoted(name)} is not permitted here; use another tool.{closest}{hint}",
            tool_name=tool.name,
            suggestions=suggestions,
        )
    real = resolve_provider_name(name, [t.name for t in catalog if can_see(t)])
    if real is not None and real in catalog:
        return catalog.get(real)
    suggestions = catalog.suggest(name, where=can_see)
    closest = f" Closest: {', '.join(suggestions)}." if suggestions else ""
    raise ToolNotFoundError(
        f"Unknown tool {quoted(name)}.{closest}{hint}", tool_name=name, suggestions=suggestions
    )


def cap_message(max_active: int | None, refused: Sequence[str]) -> str:
    """Why ``refused`` could not join the tool list: the active tool limit is reached."""
    return (
        f"The active tool limit ({max_active}) is reached, so {names_hint(refused)} could not "
        "be added. Use the tools already in your list."
    )
