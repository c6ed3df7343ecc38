"""Schema evolution: what changed between two versions of a catalog, and how much it breaks.

Each :class:`Change` is classified like a version bump:

- ``major`` (breaking): a tool or field removed or renamed, a new required field, an optional
  field made required, a changed type, a tighter constraint (fewer enum values, a higher minimum,
  a new pattern, a closed object);
- ``minor``: a new tool, a new optional field, a required field made optional, a looser
  constraint, a changed default;
- ``patch``: a changed description or title.

``toolmgmt diff OLD NEW`` prints the changes and exits 1 when any is breaking, so it can guard a
release.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from toolmgmt_core._model.errors import ToolmgmtError
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._providers.schema_utils import inline_refs

__all__ = [
    "LEVELS",
    "Change",
    "Level",
    "diff_catalogs",
    "diff_tools",
    "summarize",
]

Level = Literal["major", "minor", "patch"]

LEVELS: tuple[str, ...] = ("major", "minor", "patch")
"""Change levels, most severe first (a breaking change is major)."""

_RANK = {level: rank for rank, level in enumerate(LEVELS)}
# keyword -> which direction tightens: +1 when a larger new value is tighter, -1 when smaller is
_BOUNDS = {
    "minimum": 1,
    "exclusiveMinimum": 1,
    "minLength": 1,
    "minItems": 1,
    "minProperties": 1,
    "maximum": -1,
    "exclusiveMaximum": -1,
    "maxLength": -1,
    "maxItems": -1,
    "maxProperties": -1,
}
_TEXT = ("description", "title", "examples", "example", "$comment")


@dataclass(frozen=True)
class Change:
    """One difference between two versions of a catalog."""

    level: Level
    """``major`` (breaking), ``minor`` (compatible addition or loosening) or ``patch``."""
    tool: str
    """The tool's name (the old name for a rename)."""
    code: str
    """What kind of change: ``tool-removed``, ``field-added-required``, ``type-changed``..."""
    message: str
    """The change in words."""
    path: str = ""
    """Where in the parameters schema (``/filters/tag``), empty for the tool itself."""

    def to_dict(self) -> dict[str, Any]:
        """The change as plain JSON."""
        return asdict(self)


def _types(schema: Mapping[str, Any]) -> set[str] | None:
    kind = schema.get("type")
    if kind is None:
        return None
    kinds = set(kind) if isinstance(kind, list) else {str(kind)}
    if "number" in kinds:
        kinds.add("integer")  # an integer is a number: number is looser
    return kinds


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def _diff_schema(
    tool: str, old: Mapping[str, Any], new: Mapping[str, Any], path: str
) -> Iterator[Change]:
    where = path or "/"
    old_types, new_types = _types(old), _types(new)
    if old_types != new_types:
        if new_types is None or (old_types is not None and old_types <= new_types):
            yield Change("minor", tool, "type-loosened", f"{where}: type widened", path)
        else:
            yield Change(
                "major",
                tool,
                "type-changed",
                f"{where}: type {old.get('type')!r} -> {new.get('type')!r}",
                path,
            )
    for key in _TEXT:
        if key in old or key in new:
            if not _same(old.get(key), new.get(key)):
                yield Change("patch", tool, f"{key}-changed", f"{where}: {key} changed", path)
    yield from _diff_constraints(tool, old, new, path)
    yield from _diff_properties(tool, old, new, path)
    old_items, new_items = old.get("items"), new.get("items")
    if isinstance(old_items, Mapping) and isinstance(new_items, Mapping):
        yield from _diff_schema(tool, old_items, new_items, f"{path}/items")
    for key in ("anyOf", "oneOf", "allOf", "$defs", "definitions", "not", "if", "then", "else"):
        if key in old or key in new:
            if not _same(old.get(key), new.get(key)):
                yield Change(
                    "major",
                    tool,
                    "composition-changed",
                    f"{where}: {key} changed (treated as breaking)",
                    path,
                )


def _diff_constraints(
    tool: str, old: Mapping[str, Any], new: Mapping[str, Any], path: str
) -> Iterator[Change]:
    where = path or "/"
    for key, tighter_sign in _BOUNDS.items():
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if before is None:
            yield Change("major", tool, "constraint-added", f"{where}: {key} {after} added", path)
        elif after is None:
            yield Change("minor", tool, "constraint-removed", f"{where}: {key} removed", path)
        else:
            tighter = (after - before) * tighter_sign > 0
            yield Change(
                "major" if tighter else "minor",
                tool,
                "constraint-tightened" if tighter else "constraint-loosened",
                f"{where}: {key} {before} -> {after}",
                path,
            )
    old_enum, new_enum = old.get("enum"), new.get("enum")
    if old_enum != new_enum:
        if new_enum is None:
            yield Change("minor", tool, "enum-removed", f"{where}: enum removed", path)
        elif old_enum is None:
            yield Change("major", tool, "enum-added", f"{where}: values limited to an enum", path)
        else:
            lost = [v for v in old_enum if v not in new_enum]
            if lost:
                shown = ", ".join(map(str, lost[:5]))
                yield Change(
                    "major", tool, "enum-narrowed", f"{where}: values {shown} removed", path
                )
            else:
                yield Change("minor", tool, "enum-widened", f"{where}: enum values added", path)
    for key in ("pattern", "format", "const", "multipleOf", "uniqueItems"):
        before, after = old.get(key), new.get(key)
        if before == after:
            continue
        if after is None:
            yield Change("minor", tool, "constraint-removed", f"{where}: {key} removed", path)
        else:
            yield Change(
                "major", tool, "constraint-tightened", f"{where}: {key} now {after!r}", path
            )
    if "default" in old or "default" in new:
        if not _same(old.get("default"), new.get("default")):
            yield Change("minor", tool, "default-changed", f"{where}: default changed", path)
    before, after = old.get("additionalProperties", True), new.get("additionalProperties", True)
    if not _same(before, after):
        closing = after is False or (before is True and isinstance(after, Mapping))
        yield Change(
            "major" if closing else "minor",
            tool,
            "constraint-tightened" if closing else "constraint-loosened",
            f"{where}: additionalProperties {before!r} -> {after!r}",
            path,
        )


def _diff_properties(
    tool: str, old: Mapping[str, Any], new: Mapping[str, Any], path: str
) -> Iterator[Change]:
    old_props: Mapping[str, Any] = old.get("properties") or {}
    new_props: Mapping[str, Any] = new.get("properties") or {}
    old_req, new_req = set(old.get("required") or ()), set(new.get("required") or ())
    removed = [n for n in old_props if n not in new_props]
    added = [n for n in new_props if n not in old_props]
    for name in removed:
        twin = next((a for a in added if _same(old_props[name], new_props[a])), None)
        if twin is not None:
            yield Change(
                "major",
                tool,
                "field-renamed",
                f"{path}/{name}: renamed to {twin!r}",
                f"{path}/{name}",
            )
            added.remove(twin)
            continue
        yield Change("major", tool, "field-removed", f"{path}/{name}: removed", f"{path}/{name}")
    for name in added:
        if name in new_req:
            yield Change(
                "major",
                tool,
                "field-added-required",
                f"{path}/{name}: new required field",
                f"{path}/{name}",
            )
        else:
            yield Change(
                "minor",
                tool,
                "field-added-optional",
                f"{path}/{name}: new optional field",
                f"{path}/{name}",
            )
    for name in old_props:
        if name not in new_props:
            continue
        sub = f"{path}/{name}"
        if name in new_req and name not in old_req:
            yield Change("major", tool, "field-now-required", f"{sub}: now required", sub)
        elif name in old_req and name not in new_req:
            yield Change("minor", tool, "field-now-optional", f"{sub}: now optional", sub)
        before, after = old_props[name], new_props[name]
        if isinstance(before, Mapping) and isinstance(after, Mapping):
            yield from _diff_schema(tool, before, after, sub)


def diff_tools(old: Tool, new: Tool) -> list[Change]:
    """The changes between two versions of one tool."""
    changes: list[Change] = []
    if old.description != new.description:
        changes.append(Change("patch", old.name, "description-changed", "description changed"))
    changes.extend(_diff_schema(old.name, _inlined(old.parameters), _inlined(new.parameters), ""))
    return changes


def _inlined(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    """``schema`` with its $refs inlined, so a change inside a definition is seen where used."""
    try:
        return inline_refs(schema)[0]
    except ToolmgmtError:
        return schema


def diff_catalogs(old: Iterable[Tool], new: Iterable[Tool]) -> list[Change]:
    """The changes between two versions of a catalog (lists of tools or catalogs), worst first.

    A tool that disappears while a tool with identical parameters appears is reported as renamed
    (breaking: calls by the old name fail).
    """
    before = {t.name: t for t in old}
    after = {t.name: t for t in new}
    changes: list[Change] = []
    appeared = [n for n in after if n not in before]
    for name, tool in before.items():
        if name in after:
            changes.extend(diff_tools(tool, after[name]))
            continue
        twin = next((n for n in appeared if _same(after[n].parameters, tool.parameters)), None)
        if twin is not None:
            appeared.remove(twin)
            changes.append(Change("major", name, "tool-renamed", f"tool renamed to {twin!r}"))
        else:
            changes.append(Change("major", name, "tool-removed", "tool removed"))
    for name in appeared:
        changes.append(Change("minor", name, "tool-added", "tool added"))
    changes.sort(key=lambda c: _RANK[c.level])
    return changes


def summarize(changes: Sequence[Change]) -> Level | None:
    """The version bump ``changes`` call for (None when nothing changed)."""
    if not changes:
        return None
    return min((c.level for c in changes), key=_RANK.__getitem__)
