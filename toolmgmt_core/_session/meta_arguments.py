"""The slips models make with meta-tool arguments, forgiven before the arguments are
validated (:func:`forgive_meta_arguments`): a JSON string for the object, a single name where
a list is wanted, several names under a singular key, ``name`` for ``tool_name``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import toolmgmt_core._session.meta_tools as meta
from toolmgmt_core._model.errors import InvalidArgumentsError

__all__ = ["RUNNERS", "forgive_meta_arguments", "well_formed_run"]

RUNNERS = (meta.EXECUTE_TOOL, meta.CALL_TOOL)
"""The meta-tools that run another tool by name."""

_RUNNERS = RUNNERS
_RUN_KEYS = frozenset({"tool_name", "arguments"})


def well_formed_run(arguments: Any) -> bool:
    """Whether ``arguments`` of ``execute_tool`` or ``call_tool`` certainly satisfy its schema
    (an object with a string ``tool_name`` and, if any, an object of ``arguments``; nothing
    else), so the common call skips the validator: the tool's own arguments are validated when
    it runs."""
    return (
        type(arguments) is dict
        and isinstance(arguments.get("tool_name"), str)
        and type(arguments.get("arguments", arguments)) is dict
        and arguments.keys() <= _RUN_KEYS
    )


def forgive_meta_arguments(name: str, arguments: Any) -> Any:
    """Fix the slips models make with meta-tool arguments before validating them."""
    if isinstance(arguments, str):
        text = arguments.strip()
        try:
            arguments = json.loads(text) if text else {}
        except ValueError:
            return arguments  # validation reports it
    if not isinstance(arguments, Mapping):
        return arguments
    arguments = dict(arguments)
    for key in ("tool_names", "queries"):
        value = arguments.get(key)
        if isinstance(value, str):
            try:
                parsed = json.loads(value)
            except ValueError:
                parsed = None
            if not isinstance(parsed, list):
                arguments[key] = [value]  # a single name where a list is wanted
    if name == meta.LOAD_TOOL_SCHEMA and arguments.get("tool_names") == []:
        raise InvalidArgumentsError(
            'load_tool_schema got an empty "tool_names": name the tools whose parameters you '
            'need, for example {"tool_names": ["first_tool", "second_tool"]}.',
            tool_name=name,
        )
    if name == meta.GET_TOOL_SCHEMA and isinstance(arguments.get("tool_name"), list):
        names = arguments.pop("tool_name")  # several names under the singular key
        arguments["tool_names"] = [*names, *(arguments.get("tool_names") or [])]
    if name in (*_RUNNERS, meta.GET_TOOL_SCHEMA) and "tool_name" not in arguments:
        if isinstance(arguments.get("name"), str) and "tool_names" not in arguments:
            arguments["tool_name"] = arguments.pop("name")
    if name == meta.LOAD_TOOL_SCHEMA and "tool_names" not in arguments:
        for alias in ("tool_name", "names", "name"):
            if isinstance(arguments.get(alias), str):
                arguments["tool_names"] = [arguments.pop(alias)]
                break
    return arguments
