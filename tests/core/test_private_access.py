"""No package uses another's private names (issue 42, item 4).

A ``_name`` is a package's own business: the core, each adapter, the gateway, the deploy
tooling and the demo read and write only their own, and the frameworks' (the MCP SDK,
pydantic-ai, LangChain, LiteLLM, Starlette, OpenTelemetry, jsonschema) not at all. What the MCP
SDK does not publish but the adapter and the gateway need is reached in one module,
``toolmgmt_mcp/sdk_internals.py``, whose own test fails when the SDK changes shape
(``tests/adapters/mcp/test_sdk_internals.py``); it is the only one allowed here. The gateway
fills the MCP adapter's published hooks (``UpstreamManager.admit``, ``run_call``, ...), not its
private methods.

What counts, in every module of every package (by the syntax tree):

- ``x._name`` (read, written or deleted) where no module of the same package defines
  ``_name`` (as ``self._name = ...``, a ``def _name``, a class or module level ``_name = ...``);
- ``getattr(x, "_name")`` and its siblings, by the same rule;
- an import of a private module or name of another package (``from mcp.server._otel import``);
- a method ``_name`` overriding one of another first-party package's classes.

By name, not by type: a ``_name`` the package also defines for itself passes wherever it is
read (the gateway's own ``_lock`` hid its read of an upstream's), so a review still looks.
LangGraph's private config keys (``__pregel_checkpointer``, read in
``toolmgmt_langchain/checkpoint.py``: LangGraph publishes no other way to the checkpoint a task
resumes from) are strings, not names, and are not counted.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "toolmgmt_core": ROOT / "toolmgmt_core",
    "toolmgmt_langchain": ROOT / "adapters" / "toolmgmt_langchain",
    "toolmgmt_litellm": ROOT / "adapters" / "toolmgmt_litellm",
    "toolmgmt_mcp": ROOT / "adapters" / "toolmgmt_mcp",
    "toolmgmt_pydantic_ai": ROOT / "adapters" / "toolmgmt_pydantic_ai",
    "toolmgmt_gateway": ROOT / "gateway" / "toolmgmt_gateway",
    "toolmgmt_deploy": ROOT / "deploy" / "toolmgmt_deploy",
    "toolmgmt_demo": ROOT / "toolmgmt_demo",
}
ALLOWED = {"adapters/toolmgmt_mcp/sdk_internals.py"}
"""The one module that reaches the MCP SDK's private parts (see its docstring)."""

_REFLECTION = {"getattr", "setattr", "hasattr", "delattr"}
_SETTERS = {"setattr", "__setattr__"}
_PUBLIC = {"_asdict", "_fields", "_make", "_replace"}
"""Named tuples' public methods (their underscore keeps them apart from the fields)."""


@functools.cache
def _nodes(tree: ast.Module) -> list[ast.AST]:
    return list(ast.walk(tree))


def _private(name: str) -> bool:
    dunder = name.startswith("__") and name.endswith("__")
    return name.startswith("_") and not dunder and name not in _PUBLIC


def _defined(tree: ast.Module) -> set[str]:
    """The private names ``tree`` defines for itself."""
    names: set[str] = set()
    for node in _nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)  # module and class level, and locals: harmless
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id in ("self", "cls")
        ):
            names.add(node.attr)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name | ast.Attribute)
            and getattr(node.func, "id", getattr(node.func, "attr", "")) in _SETTERS
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            names.add(node.args[1].value)  # setattr(self, "_x", ...), object.__setattr__
    return {n for n in names if _private(n)}


def _origins(tree: ast.Module) -> dict[str, str]:
    """Names imported by ``tree`` -> the top-level package they come from."""
    found: dict[str, str] = {}
    for node in _nodes(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                found[alias.asname or alias.name] = node.module.split(".")[0]
    return found


def _uses(
    tree: ast.Module, package: str, own: set[str], theirs: dict[str, set[str]]
) -> Iterator[tuple[int, str]]:
    """(line, what) for each use of another package's private name in ``tree``."""
    origins = _origins(tree)
    for node in _nodes(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in own:
            yield node.lineno, f".{node.attr}"
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _REFLECTION
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
            and _private(node.args[1].value)
            and node.args[1].value not in own
        ):
            yield node.lineno, f"{node.func.id}(..., {node.args[1].value!r})"
        elif isinstance(node, ast.Import | ast.ImportFrom) and not getattr(node, "level", 0):
            modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                modules = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for module in modules:
                parts = module.split(".")
                if parts[0] != package and any(_private(p) for p in parts[1:]):
                    yield node.lineno, f"import {module}"
                    break
        elif isinstance(node, ast.ClassDef):
            bases = {origins.get(b.id) for b in node.bases if isinstance(b, ast.Name)}
            for item in node.body:
                if not isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                for base in bases - {package, None}:
                    if _private(item.name) and item.name in theirs.get(str(base), set()):
                        yield item.lineno, f"overrides {base}'s {item.name}"


def _trees() -> dict[str, dict[str, ast.Module]]:
    return {
        package: {
            str(path.relative_to(ROOT)): ast.parse(path.read_text(encoding="utf-8"))
            for path in sorted(folder.rglob("*.py"))
        }
        for package, folder in PACKAGES.items()
    }


def private_uses(trees: dict[str, dict[str, ast.Module]]) -> list[str]:
    """Every use of another package's private name in ``trees`` (package -> path -> tree)."""
    theirs = {
        package: set().union(*(_defined(t) for t in modules.values()))
        for package, modules in trees.items()
    }
    return [
        f"{path}:{line}: {what}"
        for package, modules in trees.items()
        for path, tree in modules.items()
        if path not in ALLOWED
        for line, what in _uses(tree, package, theirs[package], theirs)
    ]


def test_no_package_uses_another_packages_private_names() -> None:
    found = private_uses(_trees())
    assert not found, (
        "private names of another package (use its published API; what the MCP SDK does not "
        "publish goes through toolmgmt_mcp/sdk_internals.py):\n" + "\n".join(found)
    )


def test_every_package_is_scanned() -> None:
    assert all((folder / "__init__.py").is_file() for folder in PACKAGES.values())
    assert all(
        path.startswith(tuple(str(f.relative_to(ROOT)) for f in PACKAGES.values()))
        for path in ALLOWED
    )


def _scan(**modules: str) -> list[str]:
    """``private_uses`` over small packages given as source (``package="source"``)."""
    trees = {package: {f"{package}.py": ast.parse(src)} for package, src in modules.items()}
    return [use.split(": ", 1)[1] for use in private_uses(trees)]


def test_the_scan_sees_each_way_in() -> None:
    adapter = (
        "class UpstreamManager:\n"
        "    def __init__(self):\n        self._upstreams = {}\n"
        "    def _call(self):\n        pass\n"
    )
    gateway = (
        "from toolmgmt_mcp import UpstreamManager\n"
        "from mcp.server._otel import OpenTelemetryMiddleware\n"
        "class GatewayUpstreams(UpstreamManager):\n"
        "    def _call(self):\n        return self._upstreams\n"
        "    def _mine(self):\n        self._settings = 1\n        return self._settings\n"
        "def forward(client, ctx):\n"
        "    client.session._stamp = None\n"
        "    return getattr(ctx.session, '_connection', None)\n"
    )
    found = _scan(toolmgmt_mcp=adapter, toolmgmt_gateway=gateway)
    assert sorted(found) == sorted(
        [
            "import mcp.server._otel",
            "overrides toolmgmt_mcp's _call",
            "._upstreams",
            "._stamp",
            "getattr(..., '_connection')",
        ]
    )
