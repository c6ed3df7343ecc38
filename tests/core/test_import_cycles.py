"""No import circle among the core's modules, counting every import a module's source holds.

Lazy imports inside functions and ``TYPE_CHECKING`` blocks count too: a circle that only a lazy
import hides is still two rooms that each need the other. ``from pkg import submodule`` is an
edge to the submodule, ``from pkg import name`` an edge to the package's ``__init__``.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "toolmgmt_core"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict[str, set[str]]:
    """Module -> the core modules its source imports, anywhere in it."""
    modules = {_module_name(p): p for p in CORE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names if alias.name in modules}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    target = node.module or ""
                for alias in node.names:
                    submodule = f"{target}.{alias.name}"
                    if submodule in modules:
                        found.add(submodule)
                    elif target in modules:
                        found.add(target)
        found.discard(name)
        graph[name] = found
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a path (first module repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if state.get(start):
            continue
        path = [start]
        stack = [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            child = next(stack[-1], None)
            if child is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(child) == 1:
                return [*path[path.index(child) :], child]
            elif not state.get(child):
                state[child] = 1
                path.append(child)
                stack.append(iter(sorted(graph[child])))
    return None


def test_no_core_module_takes_part_in_an_import_circle() -> None:
    cycle = _cycle(_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_check_sees_lazy_and_type_checking_imports() -> None:
    graph = _graph()
    # history.py names ToolSession only under TYPE_CHECKING.
    assert "toolmgmt_core._session.session" in graph["toolmgmt_core._session.history"]
    # A function's own import (the CLI loads its commands' modules lazily).
    assert "toolmgmt_core._lint" in graph["toolmgmt_core._cli.commands"]
    # ``import toolmgmt_core._session.meta_tools as meta`` is the submodule, not the package.
    assert "toolmgmt_core._session.meta_tools" in graph["toolmgmt_core._session.meta_calls"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"runtime"}),
    frozenset({"model", "compat"}),
    frozenset({"config"}),
    frozenset({"embeddings", "events", "policy"}),
    frozenset({"search"}),
    frozenset({"learning"}),
    frozenset({"catalog"}),
    frozenset({"calls"}),
    frozenset({"stores", "providers"}),
    frozenset({"session"}),
    frozenset({"lint"}),
    frozenset({"cli"}),
    frozenset({"integration"}),
)
"""The core's rooms from the bottom up: a room imports only rooms of lower layers (the package
``__init__`` sits above them all). ``integration`` is the API published to the adapters and the
gateway: it re-exports from the rooms below and nothing imports it inside the core."""


def test_rooms_import_only_downward() -> None:
    level = {room: i for i, rooms in enumerate(LAYERS) for room in rooms}
    level["__init__"] = len(LAYERS)
    upward = []
    for module, imported in _graph().items():
        room = _room(module)
        for target in imported:
            other = _room(target)
            if other != room and level[other] >= level[room]:
                upward.append(f"{module} -> {target}")
    assert not upward, "imports that do not go down a layer: " + ", ".join(sorted(upward))
    assert set(level) >= {_room(m) for m in _graph()}, "a room missing from LAYERS"


def _room(module: str) -> str:
    """The room a module lives in, by its folder's name without the ``_`` that makes it private
    (``toolmgmt_core._calls.pipeline`` -> ``calls``); the package's ``__init__`` and
    ``__main__`` (``python -m toolmgmt_core``) sit above every room."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return "__init__"
    return parts[1].removeprefix("_")


MAX_MODULE_LINES = 450
"""A core module past this is two rooms sharing a door: split it."""


def test_no_core_module_is_over_the_line_limit() -> None:
    long = {
        str(path.relative_to(ROOT)): count
        for path in CORE.rglob("*.py")
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert not long, long


MAX_FOLDER_MODULES = 20
"""A core folder holding more modules than this is several rooms: give one of them its own."""


def test_no_core_folder_holds_more_modules_than_the_limit() -> None:
    crowded = {
        str(folder.relative_to(ROOT)): count
        for folder in [CORE, *(p for p in CORE.rglob("*") if p.is_dir())]
        if (count := len(list(folder.glob("*.py")))) > MAX_FOLDER_MODULES
    }
    assert not crowded, crowded


def test_no_core_class_declares_a_method_by_raising_not_implemented() -> None:
    """What a subclass or a host must provide is an ``abc.abstractmethod`` or a Protocol, which
    mypy and instantiation check, not a stub that fails at run time."""
    stubs = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in CORE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Raise)
        and node.exc is not None
        and "NotImplementedError" in ast.unparse(node.exc)
    ]
    assert not stubs, stubs
