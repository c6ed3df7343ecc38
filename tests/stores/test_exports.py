"""The stores package imports no driver until a store that needs one is asked for.

(Every module's ``__all__`` is checked by tests/core/test_exported_members.py.)
"""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_the_package_imports_no_driver_until_asked() -> None:
    pytest.importorskip("redis")
    code = (
        "import sys, toolmgmt_core, toolmgmt_core._stores\n"
        "assert 'redis' not in sys.modules and 'psycopg' not in sys.modules, sys.modules.keys()\n"
        "from toolmgmt_core._stores import RedisSessionStore\n"
        "assert 'redis' in sys.modules and 'psycopg' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
