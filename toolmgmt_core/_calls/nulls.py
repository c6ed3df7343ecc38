"""The ``null`` repair: dropping the ``null`` a model sent for an optional field.

OpenAI's strict mode makes every optional field nullable, so a model sends ``null`` for a field
it leaves out; a schema that refuses null would then refuse the call. :func:`drop_nulls` drops
those nulls, at any depth, when that removes errors and adds none (a required field's null
stays, and fails with its own message), in a bounded number of validations however many nulls
there are (arguments are untrusted: thousands of nulls must not cost thousands of validations).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jsonschema.exceptions import ValidationError

__all__ = ["drop_nulls"]


def _in_properties(error: ValidationError, key: str) -> bool:
    """Whether ``error`` came from the ``properties`` entry ``key`` (not a map's values)."""
    steps = list(error.absolute_schema_path)
    return any(steps[i] == "properties" and steps[i + 1] == key for i in range(len(steps) - 1))


def _null_fields(errors: list[ValidationError]) -> list[tuple[Any, ...]]:
    """Paths of declared object fields holding a ``null`` their schema refuses."""
    paths: dict[tuple[Any, ...], None] = {}
    stack = list(errors)
    while stack:
        error = stack.pop()
        stack.extend(error.context or ())  # the branches of anyOf/oneOf (Optional[Model])
        path = tuple(error.absolute_path)
        if (
            error.instance is None
            and path
            and isinstance(path[-1], str)
            and path not in paths
            and _in_properties(error, path[-1])
        ):
            paths[path] = None
    return list(paths)


_DROP = object()


def _without(container: Any, paths: list[tuple[Any, ...]]) -> Any:
    """A copy of ``container`` without the dict keys at ``paths`` (copied along them only;
    a path that is not there is ignored)."""
    tree: dict[Any, Any] = {}
    for path in paths:
        node = tree
        for step in path[:-1]:
            node = node.setdefault(step, {})
        node.setdefault(_DROP, set()).add(path[-1])
    return _pruned(container, tree)


def _pruned(value: Any, tree: dict[Any, Any]) -> Any:
    if isinstance(value, dict):
        drop = tree.get(_DROP, ())
        out = {k: v for k, v in value.items() if k not in drop}
        for key, inner in tree.items():
            if key is not _DROP and key in out:
                out[key] = _pruned(out[key], inner)
        return out
    if isinstance(value, list):
        items = list(value)
        for key, inner in tree.items():
            if isinstance(key, int) and 0 <= key < len(items):
                items[key] = _pruned(items[key], inner)
        return items
    return value


def _error_key(error: ValidationError) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    return tuple(error.absolute_path), tuple(error.absolute_schema_path)


_NULL_ROUNDS = 3
"""Validations the null repair may add: it costs the same for one null or ten thousand."""


def drop_nulls(
    arguments: dict[str, Any], validator: Any, errors: list[ValidationError]
) -> tuple[dict[str, Any], list[ValidationError]]:
    """``arguments`` without the ``null`` of each optional field whose schema refuses null, and
    the errors left; ``errors`` are ``validator``'s for ``arguments`` as given.

    The validator decides both what refuses null (``$ref``, ``anyOf``, ``{}`` accepts it...) and
    what is optional: the nulls are dropped together only when that removes errors and adds
    none. A drop that adds an error (a required field, ``minProperties``, a dependency) keeps
    the nulls under the object that error is about, and the rest are tried again: a bounded
    number of validations, never one per null (arguments with thousands of nulls would make
    that quadratic).
    """
    known = {_error_key(e) for e in errors}
    paths = _null_fields(errors)
    for _ in range(_NULL_ROUNDS):
        if not paths:
            break
        trial = _without(arguments, paths)
        after = list(validator.iter_errors(trial))
        added = [e for e in after if _error_key(e) not in known]
        if not added:
            return (trial, after) if len(after) < len(errors) else (arguments, errors)
        kept = [p for p in paths if not any(_blames(e, p) for e in added)]
        if len(kept) == len(paths):
            break
        paths = kept
    return arguments, errors


def _blames(error: ValidationError, null: tuple[Any, ...]) -> bool:
    """Whether dropping the null at ``null`` may have caused ``error``: a missing required
    field (or dependency) by its name, anything else when it sits under the error's object."""
    where = tuple(error.absolute_path)
    if null[: len(where)] != where:
        return False
    names: Any = None
    if error.validator == "required":
        names = error.validator_value
    elif error.validator in ("dependentRequired", "dependencies"):
        value = error.validator_value
        if isinstance(value, Mapping):
            names = [n for deps in value.values() if isinstance(deps, list) for n in deps]
    if isinstance(names, list):
        return len(null) == len(where) + 1 and null[-1] in names
    return True
