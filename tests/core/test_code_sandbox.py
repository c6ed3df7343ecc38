"""What a program cannot do: every escape ends in a clear error within the configured limits,
and nothing of the host reaches the model."""

from __future__ import annotations

import time
from typing import Any

import pytest

pytest.importorskip("pydantic_monty")

from toolmgmt_core import ToolCatalog, ToolManager  # noqa: E402
from toolmgmt_core._calls.code import CodeLimits  # noqa: E402
from toolmgmt_core._session.modes import Code  # noqa: E402

LIMITS = CodeLimits(seconds=0.5, memory_bytes=16 * 2**20, recursion_depth=50)
SECRET = "toolmgmt-sandbox-secret-7f3a"


def echo(text: str) -> str:
    """Echo a text."""
    return text


@pytest.fixture
def session(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("TOOLMGMT_SANDBOX_SECRET", SECRET)
    catalog = ToolCatalog()
    catalog.add_function(echo)
    return ToolManager(catalog, mode=Code(limits=LIMITS)).session()


def run(session: Any, code: str) -> tuple[str, str, float]:
    started = time.monotonic()
    result = session.call_sync("run_code", {"code": code})
    return result.outcome, result.content, time.monotonic() - started


ESCAPES = {
    "read a file": ("open('/etc/passwd').read()", "PermissionError"),
    "read a file by pathlib": (
        "from pathlib import Path\nPath('/etc/hostname').read_text()",
        "PermissionError",
    ),
    "list a directory": ("import os\nos.listdir('/')", "PermissionError"),
    "read the environment": (
        "import os\nos.environ.get('TOOLMGMT_SANDBOX_SECRET')",
        "PermissionError",
    ),
    "read one variable": ("import os\nos.getenv('TOOLMGMT_SANDBOX_SECRET')", "PermissionError"),
    "open a socket": ("import socket\nsocket.create_connection(('127.0.0.1', 22))", "No module"),
    "start a process": ("import subprocess\nsubprocess.run(['id'])", "No module"),
    "os.system": ("import os\nos.system('id')", "Error"),
    "import an unlisted module": ("import requests", "No module named 'requests'"),
    "reach the host's builtins": ("__import__('os').getcwd()", "Error"),
}


@pytest.mark.parametrize("escape", list(ESCAPES), ids=list(ESCAPES))
def test_an_escape_ends_in_a_clear_error(session: Any, escape: str) -> None:
    code, expected = ESCAPES[escape]
    outcome, content, seconds = run(session, code)
    assert outcome in ("failed", "retry"), content
    assert expected in content, content
    assert SECRET not in content and "root:" not in content
    assert seconds < 10


LIMIT_HITS = {
    "an endless loop": ("while True:\n    pass", "Time limit hit"),
    "a memory bomb": ("x = []\nwhile True:\n    x.append('a' * 100000)", "Memory limit hit"),
    "deep recursion": ("def f(n):\n    return f(n + 1)\nf(0)", "Recursion limit hit"),
    "a huge string": ("'a' * (10 ** 10)", "Memory limit hit"),
    "sleeping forever": ("import time\ntime.sleep(10 ** 6)\n'woke'", "woke"),
}


@pytest.mark.parametrize("hit", list(LIMIT_HITS), ids=list(LIMIT_HITS))
def test_a_limit_stops_the_program_and_says_which(session: Any, hit: str) -> None:
    code, expected = LIMIT_HITS[hit]
    outcome, content, seconds = run(session, code)
    assert expected in content, content
    # Within the limit (0.5 s of execution) plus the worker's grace and a busy machine.
    assert seconds < 15, seconds


def test_the_sandbox_keeps_working_after_a_limit_hit(session: Any) -> None:
    run(session, "while True:\n    pass")
    outcome, content, _ = run(session, "await echo('still here')")
    assert (outcome, content) == ("success", "still here")


def test_programs_share_nothing(session: Any) -> None:
    run(session, "leaked = 'from the first program'")
    outcome, content, _ = run(session, "leaked")
    assert outcome == "failed" and "NameError" in content

