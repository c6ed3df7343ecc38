"""The object a ``module:attribute`` string names (a catalog for ``--catalog``, an embedder for
the gateway's ``[search] embedder``), with errors that say which part failed."""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["load_object"]


def load_object(
    spec: str, error: type[Exception], *, factory: Callable[[Any], bool] = callable
) -> Any:
    """The object ``spec`` (``module:attribute``, the attribute possibly dotted) names; called
    with no arguments first when ``factory(object)`` says it makes the object wanted.

    The working folder is importable, as for ``python -m`` (console scripts leave it out).

    Raises:
        error: the module cannot be imported, it lacks the attribute, or the factory failed;
            the message names ``spec`` and which of these it was.
    """
    module_name, _, attribute = spec.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise error(f"{spec}: cannot import module {module_name!r}: {exc}.") from None
    target: Any = module
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise error(f"{spec}: module {module_name!r} has no attribute {attribute!r}.") from None
    if factory(target):
        try:
            target = target()
        except Exception as exc:  # the user's factory failed: say so, with its error
            raise error(
                f"{spec}: calling {attribute}() failed: {type(exc).__name__}: {exc}"
            ) from exc
    return target
