"""The names a program calls tools by: every tool's name as a safe Python identifier.

A tool whose name a program can write as it is (``get_order``) keeps it. Any other gets an
alias: ``get-weather`` is ``get_weather``, ``math.factorial`` is ``math_factorial``,
``3d_render`` is ``t_3d_render``, and a name that would hide a keyword, a builtin, a module the
sandbox has, a meta-tool or the sandbox's own functions gets ``_tool`` (``print`` is
``print_tool``, ``json`` is ``json_tool``). Two tools never share one: an alias that another
tool already has as its name or alias takes a suffix from its own name's digest, so it is the
same on every call and every replica. ``call_tool`` still takes the original name;
``tool_search`` shows the alias. Parameters are named the same way (``from`` is ``from_``,
``max-results`` is ``max_results``).
"""

from __future__ import annotations

import builtins
import hashlib
import keyword
import re
import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from toolmgmt_core._model.tool import META_TOOL_NAMES

__all__ = [
    "SANDBOX_MODULES",
    "CodeNames",
    "code_names",
    "code_parameters",
    "original_arguments",
]

SANDBOX_MODULES = frozenset(
    "asyncio base64 binascii bisect collections copy csv dataclasses datetime decimal "
    "functools hashlib itertools json math os pathlib posixpath random re sys time tomllib "
    "typing unicodedata".split()
)
"""The modules a program can import in pydantic-monty 1.4 (a tool named like one would be
hidden by ``import``)."""

_RESERVED = frozenset(
    {
        *keyword.kwlist,
        *keyword.softkwlist,
        *dir(builtins),
        *SANDBOX_MODULES,
        *META_TOOL_NAMES,  # a tool named like a meta-tool is reached only by its alias
        "call_tool",
        "search_tools",
    }
)
_UNSAFE = re.compile(r"[^0-9A-Za-z_]+")


def _is_plain(name: str) -> bool:
    return name.isascii() and name.isidentifier() and name not in _RESERVED


def _base(name: str, suffix: str) -> str:
    base = _UNSAFE.sub("_", name).strip("_") or "tool"
    if base[0].isdigit():
        base = f"t_{base}"
    return f"{base}{suffix}" if base in _RESERVED or keyword.iskeyword(base) else base


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:6]


class CodeNames:
    """The names programs call a set of tools by, and back.

    Usage::

        names = CodeNames(catalog.names())
        names.alias("get-weather")     # "get_weather"
        names.original("get_weather")  # "get-weather"
    """

    def __init__(self, names: Iterable[str]) -> None:
        ordered = sorted(set(names))
        self._alias: dict[str, str] = {n: n for n in ordered if _is_plain(n)}
        taken = set(self._alias)
        for name in ordered:
            if name in self._alias:
                continue
            alias = _base(name, "_tool")
            if alias in taken:
                alias = f"{alias}_{_digest(name)}"
            self._alias[name] = alias
            taken.add(alias)
        self._original = {alias: name for name, alias in self._alias.items()}

    def alias(self, name: str) -> str:
        """The name a program calls tool ``name`` by."""
        known = self._alias.get(name)
        return known if known is not None else _base(name, "_tool")

    def original(self, alias: str) -> str:
        """The tool a program's name stands for (``alias`` itself when it stands for none)."""
        return self._original.get(alias, alias)


def code_parameters(names: Sequence[str]) -> dict[str, str]:
    """The names a program passes a tool's parameters by (Python identifiers, unique), by
    parameter name."""
    shown: dict[str, str] = {}
    taken = {n for n in names if n.isascii() and n.isidentifier() and not keyword.iskeyword(n)}
    for name in names:
        if name in taken:
            shown[name] = name
            continue
        alias = _UNSAFE.sub("_", name).strip("_") or "arg"
        if alias[0].isdigit():
            alias = f"p_{alias}"
        if keyword.iskeyword(alias) or keyword.issoftkeyword(alias):
            alias = f"{alias}_"
        if alias in taken:
            alias = f"{alias}_{_digest(name)}"
        shown[name] = alias
        taken.add(alias)
    return shown


def original_arguments(arguments: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """``arguments`` as a program passed them (by :func:`code_parameters`' names), by the
    tool's own parameter names."""
    back = {alias: name for name, alias in code_parameters(names).items() if alias != name}
    return {back.get(key, key): value for key, value in arguments.items()}


_CACHE: weakref.WeakKeyDictionary[Any, tuple[int, CodeNames]] = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def code_names(catalog: Any) -> CodeNames:
    """The program names of every tool of ``catalog`` (a ``ToolCatalog``), kept until it
    changes."""
    version = catalog.version
    with _CACHE_LOCK:
        kept = _CACHE.get(catalog)
        if kept is not None and kept[0] == version:
            return kept[1]
    names = CodeNames(catalog.names())
    with _CACHE_LOCK:
        _CACHE[catalog] = (version, names)
    return names
