"""One result per tool across servers: the same tool served by several upstreams kept once.

Catalogs built from many MCP servers hold the same tool more than once (``search``,
``fetch``, ``read_file`` from three servers each). A search that returns all of them fills its
slots with equivalents and leaves out the next tool the task needs. :func:`one_per_tool` keeps
the best of each set of equivalents and names the others on it (``SearchHit.also``), so the
model still knows they exist.

Two hits are equivalents when they come from different domains, their bare names (the name
without its domain's prefix, ``notes_search`` -> ``search``) fold alike, and their descriptions
share at least :data:`SIMILAR` of their words (Jaccard). Tools of one domain are never
collapsed: a server's own variants are different tools.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from toolmgmt_core._catalog.entries import SearchHit
from toolmgmt_core._model.names import fold_name
from toolmgmt_core._model.tool import Tool

__all__ = ["SIMILAR", "bare_name", "one_per_tool"]

SIMILAR = 0.5
"""Share of their description words (Jaccard) two same-named tools of different servers must
have in common to count as one tool."""

_WORDS = re.compile(r"[^\W_]{2,}")


def bare_name(tool: Tool) -> str:
    """``tool``'s name without its domain's prefix (``notes_search`` in domain ``notes``:
    ``search``), folded; the name itself when it has no such prefix."""
    name, domain = tool.name, tool.domain
    for separator in ("_", "-", "."):
        if domain and name.lower().startswith(domain.lower() + separator):
            return fold_name(name[len(domain) + 1 :])
    return fold_name(name)


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORDS.findall(text.casefold()))


def one_per_tool(
    hits: Sequence[SearchHit],
    find: Callable[[str], Tool | None],
    *,
    similar: float = SIMILAR,
) -> list[SearchHit]:
    """``hits`` (best first) with each set of equivalents kept once: the best, its ``also``
    naming the others (see the module docstring)."""
    kept: list[tuple[SearchHit, str, str, frozenset[str]]] = []
    also: dict[str, list[str]] = {}
    for hit in hits:
        tool = find(hit.name)
        if tool is None:
            kept.append((hit, "", "", frozenset()))
            continue
        bare, words = bare_name(tool), _words(tool.description)
        for best, best_bare, best_domain, best_words in kept:
            if (
                best_bare == bare
                and best_domain != tool.domain
                and _jaccard(words, best_words) >= similar
            ):
                also.setdefault(best.name, []).append(hit.name)
                break
        else:
            kept.append((hit, bare, tool.domain, words))
    return [
        dataclasses.replace(hit, also=tuple(also[hit.name])) if hit.name in also else hit
        for hit, _, _, _ in kept
    ]


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)
