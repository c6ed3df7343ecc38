"""A source's tools brought in line with what it lists now, one domain at a time.

A source that lists its tools again (an MCP upstream on a reconnect or a list-changed
notification) owns the names of its domain and no other: :func:`sync_domain` removes the
domain's tools it no longer lists, puts the others in place, and never lets one take the name of
another domain's tool, folded as lookup folds it (a look-alike is a clash too). What it skips
comes back with the reason, for the source to report. :func:`group_names` groups a domain's
tools for browsing: by the operator's patterns, else by a first word several names share.
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from collections.abc import Mapping, Sequence

from toolmgmt_core._catalog.tool_catalog import ToolCatalog
from toolmgmt_core._model.errors import CatalogError
from toolmgmt_core._model.tool import Tool

__all__ = ["group_names", "matches_any", "sync_domain"]

_FIRST_WORD = re.compile(r"^([A-Za-z0-9]+)[_\-.]")


def sync_domain(
    catalog: ToolCatalog, domain: str, tools: Sequence[Tool]
) -> tuple[list[str], list[tuple[str, str]]]:
    """Make ``tools`` the tools of ``domain`` in ``catalog``.

    The domain's tools not among ``tools`` are removed; each of ``tools`` replaces the tool of
    its name, or is added. A tool whose name (or a look-alike of it) another domain's tool holds
    is skipped, and that tool kept: first come, first served. So is one the catalog refuses
    (a look-alike of another tool of ``domain``).

    Args:
        catalog: the catalog to change.
        domain: the domain whose tools ``tools`` are (each tool's ``domain`` should be it).
        tools: every tool the domain's source lists now.

    Returns:
        The names of ``tools`` now in the catalog, in order, and (name, reason) for each tool
        skipped.
    """
    names = {tool.name for tool in tools}
    for old in [t.name for t in catalog if t.domain == domain]:
        if old not in names:
            catalog.remove(old)
    kept: list[str] = []
    skipped: list[tuple[str, str]] = []
    for tool in tools:
        existing = catalog.find(tool.name)  # folded: a look-alike is a clash too
        if existing is not None and existing.domain != domain:
            skipped.append(
                (tool.name, f"name clash with {existing.name!r} of domain {existing.domain!r}")
            )
            continue
        try:
            catalog.replace(tool)
        except CatalogError as exc:  # a look-alike of another tool of this domain
            skipped.append((tool.name, str(exc)))
            continue
        kept.append(tool.name)
    return kept, skipped


def group_names(
    names: Sequence[str],
    patterns: Mapping[str, Sequence[str]] | None = None,
    *,
    by_prefix: bool = True,
) -> dict[str, str]:
    """Each of one domain's tool ``names``' group: the first group of ``patterns`` (group ->
    glob patterns) one of whose patterns it matches; else, with ``by_prefix``, its name's first
    word, lowercased, when several names share it (``issue_create``, ``issue_close``: ``issue``);
    else ``general``."""
    words = {name: m.group(1) for name in names if (m := _FIRST_WORD.match(name))}
    shared = Counter(words.values())
    groups: dict[str, str] = {}
    for name in names:
        found = next((g for g, globs in (patterns or {}).items() if matches_any(name, globs)), None)
        if found is None and by_prefix and shared[words.get(name, "")] > 1:
            found = words[name].lower()
        groups[name] = found or "general"
    return groups


def matches_any(name: str, globs: Sequence[str]) -> bool:
    """Whether ``name`` matches one of the glob patterns ``globs`` (case-sensitive)."""
    return any(fnmatch.fnmatchcase(name, glob) for glob in globs)
