"""At most two context variables in the whole tree: the core, the adapters, the gateway, the
deploy tooling and the demo together (issues 33 and 42).

What a call needs travels with it (``CallContext``, the request's scope, the SDK's request
context, a LangChain ToolNode call in ``CallContext.run``, a LiteLLM request's own marker in
its metadata); a context variable is state read far below where it was set. The two left carry
what passes through code that never sees the call: a framework's control-flow signals
(``_runtime/control.py``) and the validation deadline inside the JSON Schema validator
(``_model/schema_validator.py``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = (
    ROOT / "toolmgmt_core",
    ROOT / "adapters",
    ROOT / "gateway",
    ROOT / "deploy",
    ROOT / "toolmgmt_demo",
)
LIMIT = 2


def _definitions(source: str) -> int:
    """How many ``ContextVar(...)`` calls ``source`` makes, however the name is reached
    (``ContextVar``, ``contextvars.ContextVar``, an alias of either)."""
    tree = ast.parse(source)
    names = {"ContextVar"}
    modules = {"contextvars"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "contextvars":
            names |= {a.asname or a.name for a in node.names if a.name == "ContextVar"}
        elif isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "contextvars"}
    found = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        if isinstance(function, ast.Name) and function.id in names:
            found += 1
        elif (
            isinstance(function, ast.Attribute)
            and function.attr == "ContextVar"
            and isinstance(function.value, ast.Name)
            and function.value.id in modules
        ):
            found += 1
    return found


def test_the_whole_tree_defines_at_most_two_context_variables() -> None:
    found = {
        str(path.relative_to(ROOT)): count
        for folder in FOLDERS
        for path in sorted(folder.rglob("*.py"))
        if (count := _definitions(path.read_text(encoding="utf-8")))
    }
    assert sum(found.values()) <= LIMIT, (
        f"{sum(found.values())} ContextVar definitions (at most {LIMIT}): {found}; pass the "
        "value with the call instead (CallContext, the request's scope)"
    )


def test_every_package_is_counted() -> None:
    packages = {p.parent.name for f in FOLDERS for p in f.rglob("__init__.py")}
    assert {
        "toolmgmt_core",
        "toolmgmt_langchain",
        "toolmgmt_litellm",
        "toolmgmt_mcp",
        "toolmgmt_pydantic_ai",
        "toolmgmt_gateway",
        "toolmgmt_deploy",
        "toolmgmt_demo",
    } <= packages


def test_the_count_sees_every_spelling() -> None:
    source = (
        "import contextvars\nimport contextvars as cv\nfrom contextvars import ContextVar\n"
        "from contextvars import ContextVar as CV\n"
        "A = ContextVar('a')\nB = contextvars.ContextVar('b')\nC = cv.ContextVar('c')\n"
        "D = CV('d')\ndef f():\n    return ContextVar('e')\n"
    )
    assert _definitions(source) == 5
    assert _definitions("x = ContextVar[int]\ny: ContextVar[int]\n") == 0  # types, no definition
