"""The core imports no framework, adapter or gateway; no adapter imports another adapter or the
gateway; adapters and the gateway import only the core's published API."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ADAPTERS = ("toolmgmt_langchain", "toolmgmt_pydantic_ai", "toolmgmt_litellm")
FRAMEWORKS = (
    "langchain",
    "langchain_core",
    "langgraph",
    "pydantic_ai",
    "litellm",
    "mcp",
    "mcp_types",
)
ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "toolmgmt_core"


def _imported(path: Path) -> set[str]:
    """The top-level packages a source file imports, anywhere in it (lazy imports included)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def test_the_core_imports_no_framework() -> None:
    core_modules = sorted(
        ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for p in CORE.rglob("*.py")
        if p.name != "__main__.py"
    )
    code = (
        f"import importlib, sys\nfor m in {core_modules!r}:\n    importlib.import_module(m)\n"
        "from toolmgmt_core._cli import build_parser\nbuild_parser('search')\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & "
        f"set({FRAMEWORKS + ADAPTERS + ('toolmgmt_mcp', 'toolmgmt_gateway', 'toolmgmt_demo')!r})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_core_source_imports_an_adapter_or_a_framework(path: Path) -> None:
    # The demo catalog is found by name like any other source (catalog.sources.DEFAULT_CATALOG);
    # the launchers of local servers are deploy tooling, outside the shipped core.
    forbidden = (
        set(FRAMEWORKS)
        | set(ADAPTERS)
        | {"toolmgmt_mcp", "toolmgmt_gateway", "toolmgmt_demo", "toolmgmt_deploy"}
    )
    assert not _imported(path) & forbidden


OWN_FRAMEWORKS = {
    "toolmgmt_langchain": {"langchain", "langchain_core", "langgraph"},
    "toolmgmt_pydantic_ai": {"pydantic_ai"},
    "toolmgmt_litellm": {"litellm"},
    "toolmgmt_mcp": {"mcp", "mcp_types"},
}
"""The frameworks each adapter package may import (besides the core and the standard library)."""


def _adapter_modules() -> list[Path]:
    return sorted(p for a in OWN_FRAMEWORKS for p in (ROOT / "adapters" / a).rglob("*.py"))


@pytest.mark.parametrize("path", _adapter_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_adapter_modules_import_only_the_core_and_their_framework(path: Path) -> None:
    adapter = path.relative_to(ROOT / "adapters").parts[0]
    imported = _imported(path)
    other_adapters = set(OWN_FRAMEWORKS) - {adapter}
    other_frameworks = set(FRAMEWORKS) - OWN_FRAMEWORKS[adapter]
    assert not imported & (other_adapters | other_frameworks | {"toolmgmt_demo"})


@pytest.mark.parametrize("adapter", sorted(OWN_FRAMEWORKS))
def test_each_adapter_package_builds_on_the_core(adapter: str) -> None:
    assert "toolmgmt_core" in _imported(ROOT / "adapters" / adapter / "__init__.py")


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


GATEWAY = ROOT / "gateway" / "toolmgmt_gateway"
INTEGRATIONS = sorted([*_adapter_modules(), *GATEWAY.rglob("*.py")])
PUBLISHED = {"toolmgmt_core", "toolmgmt_core.integration"}
"""The core modules an integration may import: the application API and the integration API."""


def _core_modules_imported(path: Path) -> set[str]:
    """The ``toolmgmt_core`` modules a source file imports, anywhere in it (lazy ones too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "toolmgmt_core"}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module.split(".")[0] == "toolmgmt_core":
                found.add(node.module)
    return found


@pytest.mark.parametrize("path", INTEGRATIONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_integrations_import_only_the_cores_published_api(path: Path) -> None:
    # The core moves its rooms freely: adapters and the gateway see only what it publishes.
    deep = _core_modules_imported(path) - PUBLISHED
    assert not deep, f"import these from toolmgmt_core.integration instead: {sorted(deep)}"


def test_the_check_finds_a_deep_import(tmp_path: Path) -> None:
    source = tmp_path / "lazy.py"
    source.write_text("def f():\n    from toolmgmt_core._calls.sync import run_sync\n")
    assert _core_modules_imported(source) == {"toolmgmt_core._calls.sync"}


@pytest.mark.parametrize("path", sorted(GATEWAY.rglob("*.py")), ids=lambda p: p.name)
def test_the_gateway_builds_on_the_mcp_adapter_and_no_other(path: Path) -> None:
    imported = _imported(path)
    assert not imported & (set(ADAPTERS) | {"toolmgmt_demo", "toolmgmt_deploy"})


def test_the_gateway_imports_the_mcp_adapter() -> None:
    assert "toolmgmt_mcp" in set().union(*(_imported(p) for p in GATEWAY.rglob("*.py")))


@pytest.mark.parametrize("path", _adapter_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_adapter_imports_the_gateway(path: Path) -> None:
    assert "toolmgmt_gateway" not in _imported(path)


MAX_MCP_ADAPTER_LINES = 1_000
"""Lines of ``adapters/toolmgmt_mcp`` at most (every line of every module, as ``wc -l`` counts):
MCP upstreams as core tools and MCP tools into a catalog. What only a service on top does
(the gateway's pins, question and progress relay, admission, stderr relay) lives in that
service and overrides the adapter's hooks (docs/architecture.md). ``sdk_internals.py``, what
the MCP SDK does not publish (for the gateway's server side too), is measured apart: it
shrinks as the SDK publishes hooks, and stays small."""
MAX_SDK_INTERNALS_LINES = 150


def test_the_mcp_adapter_stays_an_adapter() -> None:
    folder = ROOT / "adapters" / "toolmgmt_mcp"
    lines = {
        path.name: len(path.read_text(encoding="utf-8").splitlines())
        for path in sorted(folder.rglob("*.py"))
    }
    assert lines.pop("sdk_internals.py") <= MAX_SDK_INTERNALS_LINES
    assert sum(lines.values()) <= MAX_MCP_ADAPTER_LINES, lines
