"""Tools that shadow another domain's tool: a name or a description that nearly duplicates it.

A second upstream can list ``evil_notes_get_note`` with ``notes_get_note``'s very description:
search then shows it right beside the real tool, and a model may pick either. The catalog
already refuses a name that folds like a held one (:mod:`toolmgmt_core._model.names`); this finds
the near duplicates across domains that are distinct names:

- **the name contains another domain's tool name** (on folded names, at ``_`` boundaries: at
  its end after a prefix, two words or more, or three words or more anywhere):
  ``evil_notes_get_note`` contains ``notes_get_note``, ``evil_notes_dеlete_note`` with a
  Cyrillic ``е`` contains ``notes_delete_note``;
- **the description is near-identical** to another domain's tool's (the same words, folded, at
  least :data:`MIN_WORDS` of them, Jaccard similarity from :data:`NEAR_IDENTICAL`); of the two,
  the later one (the catalog's order: the first seen is taken for the original) shadows.

:func:`find_shadows` is what the linter reports (``name-shadows-tool``) and what a policy step's
``quarantine_shadowing`` hides.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from toolmgmt_core._model.names import fold_name, fold_text
from toolmgmt_core._model.tool import Tool

__all__ = ["MIN_WORDS", "NEAR_IDENTICAL", "find_shadows"]

MIN_WORDS = 5
"""Descriptions shorter than this many distinct words are never compared (too generic)."""

NEAR_IDENTICAL = 0.9
"""The Jaccard similarity of two descriptions' word sets from which they are one description."""

_MIN_NAME = 8  # characters of a contained name: shorter ones ("get_id") are too common


def find_shadows(tools: Sequence[Tool]) -> dict[str, str]:
    """Each tool of ``tools`` that shadows a tool of another domain: its name -> why."""
    shadows: dict[str, str] = {}
    by_fold: dict[str, Tool] = {}
    for tool in tools:
        by_fold.setdefault(fold_name(tool.name), tool)
    for tool in tools:
        words = fold_name(tool.name).split("_")
        hit = next(
            (
                other
                for start, end in _spans(len(words))
                if len(part := "_".join(words[start:end])) >= _MIN_NAME
                and (other := by_fold.get(part)) is not None
                and _apart(tool, other)
            ),
            None,
        )
        if hit is not None:
            shadows[tool.name] = f"its name contains {hit.name!r}, a tool of domain {hit.domain!r}"
    for tool, original in _near_identical(tools):
        if tool.name not in shadows and original.name not in shadows:
            shadows[tool.name] = (
                f"its description is near-identical to that of {original.name!r}, a tool of "
                f"domain {original.domain!r}"
            )
    return shadows


def _spans(count: int) -> list[tuple[int, int]]:
    """The word spans of a name of ``count`` words that may hold another tool's name, longest
    first: its ends after a prefix (``evil_`` + a name: two words or more), or three words or
    more anywhere (an extension such as ``calculate_area_circle`` of a two-word name is not
    taken for a copy)."""
    spans = [
        (start, end)
        for size in range(count - 1, 1, -1)
        for start in range(count - size + 1)
        if (end := start + size) == count or size >= 3
    ]
    return spans


def _apart(tool: Tool, other: Tool) -> bool:
    return fold_name(tool.domain) != fold_name(other.domain)


def _near_identical(tools: Sequence[Tool]) -> list[tuple[Tool, Tool]]:
    """(later, earlier) pairs of tools of different domains with near-identical descriptions,
    found by prefix filtering: two sets this similar share one of their rarest words."""
    sets = [frozenset(re.findall(r"\w+", fold_text(t.description))) for t in tools]
    frequency: dict[str, int] = {}
    for words in sets:
        for word in words:
            frequency[word] = frequency.get(word, 0) + 1
    index: dict[str, list[int]] = {}
    pairs: list[tuple[Tool, Tool]] = []
    for i, words in enumerate(sets):
        if len(words) < MIN_WORDS:
            continue
        rarest = sorted(words, key=lambda w: (frequency[w], w))
        prefix = rarest[: len(words) - math.ceil(NEAR_IDENTICAL * len(words)) + 1]
        candidates = {j for word in prefix for j in index.get(word, ())}
        for j in sorted(candidates):
            shared = len(words & sets[j])
            if shared / (len(words) + len(sets[j]) - shared) >= NEAR_IDENTICAL:
                if _apart(tools[i], tools[j]):
                    pairs.append((tools[i], tools[j]))
                    break
        for word in prefix:
            index.setdefault(word, []).append(i)
    return pairs
