"""The core's two public modules: ``toolmgmt_core`` for applications, ``toolmgmt_core.integration``
for adapters and the gateway; every other module is private by its path.

(Each public module's ``__all__`` is sorted and complete: tests/core/test_exported_members.py.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import toolmgmt_core
import toolmgmt_core.integration as integration

CORE = Path(toolmgmt_core.__file__).resolve().parent
PUBLIC_MODULES = {"__init__.py", "__main__.py", "integration.py"}
"""The core's modules a user or an integration may import (``__main__``: ``python -m``)."""


def test_what_a_user_writes_comes_from_the_top_level() -> None:
    """The names the user docs needed deep imports for (code mode's options, a call's context,
    events and listeners, stores, embedders) are the top level's."""
    needed = {
        "CallContext", "Code", "CodeLimits", "Event", "CallFinished", "ProgramFinished",
        "OtelListener", "JsonlListener", "read_jsonl", "usage_report", "InMemorySessionStore",
        "RedisSessionStore", "PostgresCatalogStore", "PostgresEmbeddingCache",
        "PostgresLearnedStore", "update_session", "SentenceTransformerEmbedder",
        "StaticEmbedder", "OnnxEmbedder", "export_onnx", "LearningOptions", "format_tools",
        "search_result_content", "search_output_item",
    }  # fmt: skip
    assert needed <= set(toolmgmt_core.__all__), sorted(needed - set(toolmgmt_core.__all__))


def test_integration_adds_to_the_top_level_and_repeats_none_of_it() -> None:
    both = set(toolmgmt_core.__all__) & set(integration.__all__)
    assert not both, f"exported twice: {sorted(both)}"


def test_each_integration_name_serves_one_stated_purpose() -> None:
    """(Each has a docstring too: bench/reference_page.py stops at one without.)"""
    grouped = [name for names in integration._GROUPS.values() for name in names]
    assert sorted(grouped) == sorted(integration.__all__), set(grouped) ^ set(integration.__all__)
    assert len(grouped) == len(set(grouped)), "a name under two purposes"


def test_neither_public_module_needs_a_driver() -> None:
    pytest.importorskip("redis")
    code = (
        "import sys, toolmgmt_core, toolmgmt_core.integration\n"
        "assert 'redis' not in sys.modules and 'psycopg' not in sys.modules\n"
        "from toolmgmt_core import RedisSessionStore\n"
        "assert 'redis' in sys.modules and 'psycopg' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_python_m_toolmgmt_core_is_the_command_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolmgmt_core", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: toolmgmt"), done.stdout


def _exposed_modules() -> list[str]:
    """Every core module whose path has no ``_``-prefixed part, the public ones aside."""
    return sorted(
        str(path.relative_to(CORE))
        for path in CORE.rglob("*.py")
        if str(path.relative_to(CORE)) not in PUBLIC_MODULES
        and not any(part.startswith("_") for part in path.relative_to(CORE).parts)
    )


def test_every_other_core_module_is_private_by_its_path() -> None:
    exposed = _exposed_modules()
    assert not exposed, f"public by accident (move under a `_` package): {exposed}"
