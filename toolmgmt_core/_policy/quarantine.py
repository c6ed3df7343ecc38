"""What a policy step's quarantine hides: text that addresses the model (``quarantine``), and
tools that shadow another domain's tool (``quarantine_shadowing``), until ``trusted``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from toolmgmt_core._model.injection import addresses_the_model
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._policy.profiles import ToolPattern

__all__ = ["quarantined"]


def quarantined(
    tool: Tool,
    label: str,
    flags: tuple[bool, bool],
    trusted: Sequence[ToolPattern],
    shadows: Mapping[str, str] | None,
) -> str | None:
    """Why step ``label``'s quarantine hides ``tool``, or None.

    Args:
        tool: the tool.
        label: the step's label.
        flags: the step's ``quarantine`` and ``quarantine_shadowing``.
        trusted: the step's ``trusted`` patterns: what they match passes.
        shadows: the catalog's tools that shadow another domain's (name -> why:
            :func:`~toolmgmt_core._model.shadowing.find_shadows`), None when not known.
    """
    injection, shadowing = flags
    if not (injection or shadowing) or any(p.matches(tool) for p in trusted):
        return None
    found = addresses_the_model(tool) if injection else None
    if found is None and shadowing and shadows and tool.name in shadows:
        found = f"it shadows another domain's tool: {shadows[tool.name]}"
    if found is None:
        return None
    return (
        f"quarantined by step {label!r}: {found}; an operator who has read it can let it "
        f"through with trusted = [{tool.name!r}]"
    )
