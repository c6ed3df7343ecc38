"""A test run without the engines says so at its end, and fails with TOOLMGMT_REQUIRE_ENGINES=1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NEEDS_REDIS = "tests/stores/test_sessions.py::test_a_redis_restart_is_survived"


def _pytest(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", NEEDS_REDIS],
        cwd=ROOT,
        env={**os.environ, "TOOLMGMT_REDIS_SERVER": "/nonexistent/redis-server", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_skipped_store_tests_are_counted_at_the_end_of_the_run() -> None:
    done = _pytest(TOOLMGMT_REQUIRE_ENGINES="0")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 tests skipped: Redis, PostgreSQL or HAProxy missing" in done.stdout
    assert "1 skipped: redis-server is not installed (apt-get install redis-server)" in done.stdout
    assert "TOOLMGMT_REQUIRE_ENGINES=1" in done.stdout


def test_required_engines_fail_instead() -> None:
    done = _pytest(TOOLMGMT_REQUIRE_ENGINES="1")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "redis-server is not installed" in done.stdout and "1 error" in done.stdout
    assert "tests skipped: Redis" not in done.stdout
