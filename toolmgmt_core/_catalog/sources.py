"""Catalogs from where users keep their tools: JSON files, Python modules, and plugin sources.

:func:`load_catalog` reads what ``--catalog`` names:

- a JSON file: a list of tool definitions in any shape
  :meth:`~toolmgmt_core.ToolCatalog.add_schemas` accepts, or ``{"tools": [...]}``;
- a Python ``module:attribute`` naming a :class:`~toolmgmt_core.ToolCatalog`, a list of
  tools or definitions, or a function returning one of these;
- anything a catalog-source plugin reads: a callable registered under the
  ``toolmgmt.catalog_sources`` entry-point group, called with the path, returning a catalog or
  None when the file is not its kind. The MCP adapter registers one for gateway configs (TOML,
  or JSON with ``upstreams``); the core never imports an adapter, it finds them this way.

One bad definition is skipped and reported (``warn``), never the whole file; a source that cannot
be read, or holds no valid tool, raises :class:`~toolmgmt_core._model.errors.CatalogSourceError`
naming it and what is wrong. A JSON file is read as every configuration file is
(:mod:`toolmgmt_core._config.document`), so its problems, and each skipped definition, are said in
the one format ``file:line: key.path: problem`` (``tools.json:14: [3]: skipped tool #4 ...``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from toolmgmt_core._catalog.tool_catalog import ToolCatalog
from toolmgmt_core._config.document import ConfigDocument
from toolmgmt_core._config.lines import KeyPath
from toolmgmt_core._config.objects import load_object
from toolmgmt_core._model.errors import CatalogError, CatalogSourceError
from toolmgmt_core._model.names import name_forms
from toolmgmt_core._model.schema import tool_from_dict
from toolmgmt_core._model.tool import Tool

__all__ = [
    "DEFAULT_CATALOG",
    "SOURCE_GROUP",
    "catalog_from_definitions",
    "load_catalog",
    "read_definitions",
]

DEFAULT_CATALOG = "toolmgmt_demo:demo_catalog"
"""The catalog used when none is named: the embedded demo, found as any ``module:attribute``."""

SOURCE_GROUP = "toolmgmt.catalog_sources"
"""The entry-point group of catalog-source plugins: ``loader(path) -> ToolCatalog | None``."""

Warn = Callable[[str], None]

_MODULE_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def _stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def load_catalog(spec: str | None, *, warn: Warn = _stderr) -> ToolCatalog:
    """The catalog ``spec`` names (``None``: :data:`DEFAULT_CATALOG`, the embedded demo).

    Args:
        spec: a file path or a ``module:attribute``.
        warn: called with a message for each definition skipped and each plugin's warning
            (default: a ``warning:`` line on stderr).

    Raises:
        CatalogSourceError: the source is missing, unreadable, not a catalog, or holds no valid
            tool; the message names it and what is wrong.
    """
    if spec is None:
        spec = DEFAULT_CATALOG
    path = Path(spec)
    if not path.exists() and _MODULE_SPEC.match(spec):
        return _load_python(spec, warn)
    if path.suffix.casefold() != ".json" and path.is_file():
        catalog, problems = _from_plugins(path, warn)
        if catalog is not None:
            return catalog
        if problems:
            raise CatalogSourceError(f"{path}: no catalog source could read it ({problems}).")
    document = _read_json(path)
    data = document.data
    found = _definitions_in(data)
    if found is None:
        catalog, problems = _from_plugins(path, warn)
        if catalog is not None:
            return catalog
        kind = "an object without a 'tools' list" if isinstance(data, dict) else type(data).__name__
        raise CatalogSourceError(
            f'{path}: expected a JSON list of tool schemas or an object with a "tools" list '
            f"(or a gateway config, with toolmgmt[gateway]), got {kind}"
            + (f"; plugins that could not load: {problems}." if problems else ".")
        )
    definitions, at = found
    return catalog_from_definitions(definitions, str(path), warn=warn, document=document, at=at)


def read_definitions(path: str | Path) -> list[Any]:
    """The tool definitions of a JSON file (a list, or ``{"tools": [...]}``), unchecked.

    Raises:
        CatalogSourceError: the file is missing, unreadable, not JSON, or not such a list.
    """
    path = Path(path)
    data = _read_json(path).data
    found = _definitions_in(data)
    if found is None:
        kind = "an object without a 'tools' list" if isinstance(data, dict) else type(data).__name__
        raise CatalogSourceError(
            f'{path}: expected a JSON list of tool schemas or an object with a "tools" list, '
            f"got {kind}."
        )
    return found[0]


def _definitions_in(data: Any) -> tuple[list[Any], KeyPath] | None:
    """The definitions a file's data holds, and their key path in it."""
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        return list(data["tools"]), ("tools",)
    if isinstance(data, list):
        return data, ()
    return None


def _read_json(path: Path) -> ConfigDocument:
    # Lines are needed for each definition (depth 2: "tools", its index), not inside them.
    return ConfigDocument.read(path, what="catalog", fmt="json", error=CatalogSourceError, depth=2)


def _from_plugins(path: Path, warn: Warn) -> tuple[ToolCatalog | None, str]:
    """The catalog the first source plugin that knows ``path``'s kind reads from it, and why
    the plugins that could not be loaded were not (their extra is missing)."""
    problems = []
    for entry in entry_points(group=SOURCE_GROUP):
        try:
            loader = entry.load()
        except ImportError as exc:  # its extra is missing: say so if nothing else reads it
            problems.append(f"{entry.name}: {exc}")
            continue
        catalog = loader(path, warn=warn)
        if catalog is not None:
            return catalog, ""
    return None, "; ".join(problems)


def catalog_from_definitions(
    definitions: Sequence[Any],
    label: str,
    *,
    warn: Warn = _stderr,
    document: ConfigDocument | None = None,
    at: KeyPath = (),
) -> ToolCatalog:
    """A catalog of the valid ``definitions``; each bad one is skipped and reported.

    Args:
        definitions: tool definitions in any shape :func:`~toolmgmt_core._model.schema.
            tool_from_dict` takes.
        label: where they come from, for messages (a path, a ``module:attribute``).
        warn: called with a message for each definition skipped.
        document: the file they were read from: each skipped one is then reported at its
            line (``file:line: key.path: problem``).
        at: the key path of the list in ``document`` (``("tools",)``, or ``()`` for a list).

    Raises:
        CatalogSourceError: no definition is valid (or the list is empty).
    """
    tools: list[Tool] = []
    taken: dict[str, str] = {}  # folded name -> the tool that took it
    skipped = 0
    for position, definition in enumerate(definitions, start=1):
        name = _definition_name(definition)
        where = f"tool #{position}" + (f" ({name})" if name else "")
        try:
            tool = tool_from_dict(definition)
            forms = name_forms(tool.name)
            earlier = next((taken[f] for f in sorted(forms) if f in taken), None)
            # the catalog refuses look-alikes too (toolmgmt_core._model.names)
            if earlier is not None:
                raise CatalogError(
                    f"the name {tool.name!r} is already used by an earlier tool ({earlier})"
                )
        except CatalogError as exc:
            skipped += 1
            problem = f"skipped {where}: {exc}"
            if document is not None:
                warn(document.problem((*at, position - 1), problem))
            else:
                warn(f"{label}: {problem}")
            continue
        taken.update(dict.fromkeys(forms, where))
        tools.append(tool)
    if not tools:
        what = f"all {skipped} definitions were skipped" if skipped else "the list is empty"
        raise CatalogSourceError(f"{label}: no valid tool definitions ({what}).")
    if skipped:
        warn(f"{label}: loaded {len(tools)} tools, skipped {skipped}.")
    return ToolCatalog(tools)


def _definition_name(definition: Any) -> str | None:
    if not isinstance(definition, dict):
        return None
    body = definition.get("function") if isinstance(definition.get("function"), dict) else None
    name = (body or definition).get("name")
    return name if isinstance(name, str) and name else None


def _load_python(spec: str, warn: Warn) -> ToolCatalog:
    target = load_object(
        spec,
        CatalogSourceError,
        factory=lambda found: callable(found) and not isinstance(found, ToolCatalog),
    )
    if isinstance(target, ToolCatalog):
        return target
    if isinstance(target, list | tuple):
        if all(isinstance(item, Tool) for item in target) and target:
            return ToolCatalog(target)
        return catalog_from_definitions(list(target), spec, warn=warn)
    raise CatalogSourceError(
        f"{spec}: expected a ToolCatalog, a list of tools or schemas, or a function returning "
        f"one, got {type(target).__name__}."
    )
