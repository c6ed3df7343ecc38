"""The modes, one small class each: how a session shows the catalog to a model.

=========  ==========================================================================
``search``  :class:`Search`: ``tool_search``; found tools join the list
``gateway`` :class:`Gateway`: ``discover_tools``, ``get_tool_schema``, ``execute_tool``
``lazy``    :class:`Lazy`: every tool by name and description; ``load_tool_schema``
``flat``    :class:`Flat`: every tool, fully defined
``auto``    :class:`Auto`: flat below a threshold or budget, search beyond
``code``    :class:`Code`: ``tool_search`` (signatures) and ``run_code`` (a sandboxed program)
=========  ==========================================================================

:func:`mode_of` turns a name into the mode with its defaults; everything else asks the mode
object, never its name.
"""

from __future__ import annotations

from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._session.modes.auto import DEFAULT_CONTEXT_WINDOW, Auto
from toolmgmt_core._session.modes.base import Layout, Mode
from toolmgmt_core._session.modes.code import Code
from toolmgmt_core._session.modes.flat import Flat
from toolmgmt_core._session.modes.gateway import Gateway
from toolmgmt_core._session.modes.lazy import Lazy
from toolmgmt_core._session.modes.search import Search

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "MODES",
    "Auto",
    "Code",
    "Flat",
    "Gateway",
    "Layout",
    "Lazy",
    "Mode",
    "Search",
    "mode_of",
]

MODES: dict[str, type[Mode]] = {m.name: m for m in (Search, Gateway, Lazy, Flat, Auto, Code)}
"""Each mode class by its name."""


def mode_of(spec: str | Mode) -> Mode:
    """The mode ``spec`` names (a mode object is returned as it is).

    Raises:
        ConfigError: an unknown name; the message lists the valid ones.
    """
    if isinstance(spec, Mode):
        return spec
    kind = MODES.get(spec) if isinstance(spec, str) else None
    if kind is None:
        raise ConfigError(
            f"Unknown mode {spec!r}. Valid modes: {', '.join(MODES)} (or a Mode object such "
            "as Auto(definitions_budget=8000))."
        )
    return kind()
