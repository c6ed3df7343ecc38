"""Every module of the core and the demo has a sorted ``__all__`` of names that exist: the
public ones and those of the core's private packages (``toolmgmt_core._calls`` ...) alike."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import toolmgmt_core
import toolmgmt_demo


def _public_modules() -> list[str]:
    names = []
    for package in (toolmgmt_core, toolmgmt_demo):
        names.append(package.__name__)
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            # the core's packages are private by their name (toolmgmt_core._calls); a module
            # private within its package (_helpers.py, __main__.py) is not held to an __all__
            parts = info.name.split(".")
            inner = parts[2:] if parts[1].startswith("_") and parts[1] != "__main__" else parts[1:]
            if parts[1] != "__main__" and not any(part.startswith("_") for part in inner):
                names.append(info.name)
    return sorted(names)


def _order(name: str) -> tuple[int, str]:
    """Constants first, then classes, then functions (isort's order, as ruff's RUF022)."""
    kind = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return kind, name


@pytest.mark.parametrize("name", _public_modules())
def test_all_is_sorted_and_complete(name: str) -> None:
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    assert exported is not None, f"{name} has no __all__"
    assert list(exported) == sorted(exported, key=_order), f"{name}.__all__ is not sorted"
    missing = [item for item in exported if not hasattr(module, item)]
    assert not missing, f"{name}.__all__ names what it lacks: {missing}"
    assert len(set(exported)) == len(exported)


def test_what_a_user_configures_is_exported_from_the_core() -> None:
    """The options a catalog or a manager is built with come from ``toolmgmt_core`` itself."""
    from toolmgmt_core._learning.teaching import LearningOptions

    assert toolmgmt_core.LearningOptions is LearningOptions
    assert "LearningOptions" in toolmgmt_core.__all__
