"""lint_catalog reports in catalog order, the same in every process (hash seeds)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from toolmgmt_core import Tool
from toolmgmt_core._lint import lint_catalog

_WORDS = [f"word{chr(97 + k)}x" for k in range(26)]
# Tool i uses words i..i+9, so each reads alike its neighbours up to three places away, and the
# words a pair shares differ from pair to pair.
_TOOLS = [
    Tool(
        name=f"get_item_{i}",
        domain="geo",
        group="area",
        description=" ".join(_WORDS[i : i + 10]) + ".",
    )
    for i in range(12)
]
_SCRIPT = """
import json
from tests.core.test_lint_determinism import _TOOLS
from toolmgmt_core._lint import lint_catalog
print(json.dumps([f.to_dict() for f in lint_catalog(_TOOLS)]))
"""


def _siblings() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for finding in lint_catalog(_TOOLS):
        if finding.code == "description-sibling":
            other = finding.message.split(" and ")[1].split("'")[1]
            found.setdefault(finding.tool, []).append(other)
    return found


def test_similar_siblings_come_in_catalog_order() -> None:
    found = _siblings()
    assert found["get_item_5"] == [f"get_item_{j}" for j in (2, 3, 4, 6, 7, 8)]
    order = [t.name for t in _TOOLS]
    for others in found.values():
        assert others == sorted(others, key=order.index)


def test_findings_are_identical_under_different_hash_seeds() -> None:
    root = Path(__file__).resolve().parents[2]
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [sys.executable, "-c", _SCRIPT], cwd=root, env=env, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr
        outputs.append(run.stdout)
    assert "description-sibling" in outputs[0]
    assert outputs[0] == outputs[1]
