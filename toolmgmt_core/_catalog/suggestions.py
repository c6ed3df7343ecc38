"""Which close names an unknown tool name may be answered with ("Closest: ...").

A suggestion is an invitation to call: a model that misspelt ``notes_delete_note`` calls what it
is offered. So besides staying within the tools the caller may see (the ``where`` of
:meth:`~toolmgmt_core.ToolCatalog.suggest`), a suggestion is never

- **a look-alike**: a name with a character from another script or a decorated letter
  imitating plain ASCII (``evil_notes_dеlete_note`` with a Cyrillic ``е``, ``notes_gét_note``):
  such a name is offered only to a caller who wrote it exactly, which lookup answers first;
- **another domain's tool that may destroy** (not annotated read-only or non-destructive) when
  the name asked for belongs elsewhere: to the domains its start names (``notes_...``), else to
  the domain of the closest name of the whole catalog, hidden tools included (so hiding the real
  tool does not hand its misspellings to a copy from another upstream).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from toolmgmt_core._model.names import fold_name, fold_text
from toolmgmt_core._model.tool import Tool

__all__ = ["imitates_ascii", "safe_suggestions"]


def imitates_ascii(name: str) -> bool:
    """Whether ``name`` holds a character that is not ASCII but folds to ASCII (a look-alike
    of a plain letter, a decorated letter, a fullwidth form)."""
    return not name.isascii() and any(
        not c.isascii() and (folded := fold_text(c)).isascii() and folded for c in name
    )


def _may_destroy(tool: Tool) -> bool:
    hints = tool.annotations
    return not (hints.read_only is True or hints.destructive is False)


def safe_suggestions(
    name: str,
    ranked: Sequence[str],
    limit: int,
    tools: Mapping[str, Tool],
    closest: Callable[[], Sequence[str]],
) -> list[str]:
    """The names of ``ranked`` (closest first, already within what the caller may see) that
    may be offered for ``name``, at most ``limit``.

    Args:
        name: the unknown name asked for.
        ranked: candidate tool names, closest first.
        limit: at most this many.
        tools: the catalog's tools by name.
        closest: the catalog's closest name to ``name``, hidden tools included (asked only when
            a candidate may destroy and ``name`` does not start with a domain).
    """
    home: set[str] | None = None
    out: list[str] = []
    for candidate in ranked:
        tool = tools.get(candidate)
        if tool is None or imitates_ascii(candidate):
            continue
        if _may_destroy(tool):
            home = _home(name, tools, closest) if home is None else home
            if fold_name(tool.domain) not in home:
                continue
        out.append(candidate)
        if len(out) >= limit:
            break
    return out


def _home(name: str, tools: Mapping[str, Tool], closest: Callable[[], Sequence[str]]) -> set[str]:
    """The folded domains ``name`` belongs to: those its start names, else the closest tool's."""
    key = fold_name(name)
    domains = {fold_name(t.domain) for t in tools.values()}
    named = {d for d in domains if key.startswith(d + "_")}
    if named:
        return named
    best = [tools[n] for n in closest() if n in tools]
    return {fold_name(best[0].domain)} if best else set()
