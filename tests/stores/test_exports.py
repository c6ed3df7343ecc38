"""Each stores module exports what it defines, in sorted order."""

from __future__ import annotations

import importlib

import pytest


def _isort_key(name: str) -> tuple[int, str]:
    # constants, then classes, then functions (ruff's RUF022 order)
    if name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


@pytest.mark.parametrize(
    "module",
    [
        "toolmgmt_core.errors",
        "toolmgmt_core.stores",
        "toolmgmt_core.stores.base",
        "toolmgmt_core.stores.cli",
        "toolmgmt_core.stores.local",
        "toolmgmt_core.stores.postgres",
        "toolmgmt_core.stores.redis",
    ],
)
def test_public_names_are_sorted_and_exist(module: str) -> None:
    if module.endswith(("postgres", "redis")):
        pytest.importorskip("psycopg" if module.endswith("postgres") else "redis")
    mod = importlib.import_module(module)
    assert list(mod.__all__) == sorted(mod.__all__, key=_isort_key)
    for name in mod.__all__:
        assert getattr(mod, name) is not None, name


def test_the_package_imports_no_driver_until_asked() -> None:
    pytest.importorskip("redis")
    import subprocess
    import sys

    code = (
        "import sys, toolmgmt_core, toolmgmt_core.stores\n"
        "assert 'redis' not in sys.modules and 'psycopg' not in sys.modules, sys.modules.keys()\n"
        "from toolmgmt_core.stores import RedisSessionStore\n"
        "assert 'redis' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
