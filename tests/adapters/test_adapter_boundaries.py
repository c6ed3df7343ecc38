"""The core imports no framework; no framework adapter imports another adapter."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ADAPTERS = ("toolmgmt_langchain", "toolmgmt_pydantic_ai", "toolmgmt_litellm")
FRAMEWORKS = ("langchain", "langchain_core", "langgraph", "pydantic_ai", "litellm")
ROOT = Path(__file__).resolve().parents[2]


def test_the_core_imports_no_framework() -> None:
    code = (
        "import sys, toolmgmt_core, toolmgmt_core.session, toolmgmt_core.providers, "
        "toolmgmt_core.truncation, toolmgmt_core.compat\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({FRAMEWORKS + ADAPTERS!r})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_adapters_import_no_other_adapter(adapter: str) -> None:
    source = (ROOT / "adapters" / adapter / "__init__.py").read_text(encoding="utf-8")
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    others = set(ADAPTERS) - {adapter} | {"toolmgmt_mcp"}
    assert not imported & others
    assert "toolmgmt_core" in imported


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_usage_block_is_valid_python(adapter: str) -> None:
    source = (ROOT / "adapters" / adapter / "__init__.py").read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(source)) or ""
    lines = doc.split("Usage::", 1)[1].splitlines()[1:]
    block = []
    for line in lines:
        if line.strip() and not line.startswith("    "):
            break
        block.append(line[4:])
    code = "\n".join(block).strip()
    assert code.count("\n") >= 5
    compile(code, f"{adapter} usage", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
