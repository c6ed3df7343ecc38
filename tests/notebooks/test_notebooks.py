"""Every demo notebook runs top to bottom in a real kernel, offline, and shows what it promises.

Each notebook is executed with nbclient in the ``python3`` kernel (the interpreter running the
tests, from the same environment), with ``notebooks/`` as its working directory. A notebook whose
framework is not installed is skipped.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
CELL_TIMEOUT = 120
"""Seconds one cell may take."""
NOTEBOOK_LIMIT = 240
"""Seconds a notebook may take before it counts as hung (a generous bound: how fast the demos
run is not a test's to judge on a busy machine)."""

pytestmark = pytest.mark.timeout(300)


def _load_builder() -> Any:
    spec = importlib.util.spec_from_file_location("notebooks_build", NOTEBOOKS / "_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def execute(notebook: nbformat.NotebookNode) -> None:
    """Run every cell of ``notebook`` in a fresh ``python3`` kernel, in ``notebooks/``."""
    client = nbclient.NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    )
    # ipykernel leaves the real stdout/stderr file descriptors alone when it sees pytest's
    # variable, and its sys.stderr then has no fileno(), which subprocesses (the MCP
    # notebook's stdio servers) need: start the kernel as Jupyter would.
    client.execute(env={k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"})


def run_notebook(name: str) -> tuple[nbformat.NotebookNode, float]:
    """Execute ``notebooks/<name>.ipynb``; the executed notebook and the seconds it took."""
    notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    started = time.monotonic()
    execute(notebook)
    return notebook, time.monotonic() - started


def text_of(notebook: nbformat.NotebookNode) -> str:
    """Everything the code cells printed or displayed as text."""
    parts: list[str] = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream":
                parts.append(output.get("text", ""))
            elif "data" in output:
                parts.append(output["data"].get("text/plain", ""))
    return "\n".join(parts)


def _executed(name: str, *frameworks: str) -> nbformat.NotebookNode:
    """Run a notebook (skipped without its frameworks); fails on an error or when too slow."""
    for framework in frameworks:
        pytest.importorskip(framework)
    notebook, seconds = run_notebook(name)  # a failing cell raises CellExecutionError
    assert seconds < NOTEBOOK_LIMIT, f"{name} took {seconds:.1f}s (budget {NOTEBOOK_LIMIT}s)"
    return notebook


def test_notebooks_are_built_from_the_generator() -> None:
    builder = _load_builder()
    names = sorted(builder.NOTEBOOKS)
    assert names == sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))
    for name in names:
        committed = (NOTEBOOKS / f"{name}.ipynb").read_text(encoding="utf-8")
        assert committed == builder.render(name), f"run python notebooks/_build.py ({name})"
        assert all(not c.get("outputs") for c in json.loads(committed)["cells"])


def test_kernel_runs_this_interpreter() -> None:
    """The ``python3`` kernel is this environment's Python (where the frameworks live)."""
    notebook = nbformat.v4.new_notebook()
    probe = "import os, sys; print(sys.prefix, os.getcwd())"
    notebook.cells.append(nbformat.v4.new_code_cell(probe))
    execute(notebook)
    prefix, cwd = notebook.cells[0].outputs[0]["text"].split()
    assert Path(prefix) == Path(sys.prefix) and Path(cwd) == NOTEBOOKS


def test_01_quickstart() -> None:
    notebook = _executed("01_quickstart", "matplotlib")
    text = text_of(notebook)
    assert "151 tools" in text
    hits = [line.split() for line in text.splitlines() if re.match(r"\s*\d+\.\d\d  \w", line)]
    assert hits[0][1] == "payments_refund_charge"  # the best hit for "refund a customer's payment"
    # The multi-need request finds a tool for each need.
    for name in ("crm_search_contacts", "calendar_create_event", "email_"):
        assert name in text
    for mode in ("search ", "gateway", "lazy", "auto"):
        assert f"\n{mode}" in "\n" + text
    assert "flat 15 tools listed" in text  # auto on a small catalog lists it flat
    assert '{"found":{"payments_' in text
    before = next(line for line in text.splitlines() if line.startswith("tools before:"))
    now = next(line for line in text.splitlines() if line.startswith("tools now:"))
    assert before.split(":", 1)[1].strip() == now.split(":", 1)[1].strip()  # one list
    assert "Calling 'payments_refund_charge' needs approval" in text  # call_tool reached it
    images = [
        o for c in notebook.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})
    ]
    assert len(images) == 2 and all(len(i["data"]["image/png"]) > 5000 for i in images)
    rows = [line.split() for line in text.splitlines() if line.strip().startswith("151 ")]
    flat, search, gateway, lazy = (int(v.replace(",", "")) for v in rows[-1][1:5])
    assert search < flat / 5 and gateway < flat / 5 and lazy < flat / 2
    billed = {
        line[:26].strip(): [float(v.rstrip("x")) for v in line[26:].split()]
        for line in text.splitlines()
        if line[:26].strip() in ("search (native deferral)", "search, growing list")
    }
    stable, growing = billed["search (native deferral)"], billed["search, growing list"]
    assert all(s < g for s, g in zip(stable, growing, strict=True)), billed


def test_02_langchain_agent() -> None:
    text = text_of(_executed("02_langchain_agent", "langchain"))
    assert "model calls tool_search" in text
    assert "tool crm_search_contacts [success" in text
    assert "tool crm_export_contacts [success" in text
    assert "tool crm_delete_contact [error" in text
    assert "Tool 'crm_delete_contact' is not permitted here" in text
    assert "omitted" in text
    assert "AIMessage: Found Patel" in text
    assert "loaded: ['crm_search_contacts'" in text


def test_03_pydantic_ai() -> None:
    text = text_of(_executed("03_pydantic_ai", "pydantic_ai"))
    assert text.startswith("Patel found") or "\nPatel found" in text
    assert "get_forecast joined the catalog in domain: weather" in text
    assert "Oslo" in text
    denied = [line for line in text.splitlines() if line.startswith("crm_delete_contact ")]
    assert len(denied) == 1 and "Unknown tool" in denied[0]  # PydanticAI: not offered
    assert "loaded: [" in text and "'get_forecast'" in text


def test_04_litellm() -> None:
    text = text_of(_executed("04_litellm", "litellm"))
    assert "payments_refund_charge" in text and "analytics_export_events" in text
    assert "final: Refunded" in text
    assert "request 1: 5 tools: tool_search, call_tool" in text
    requests = [line.split(":", 1)[1] for line in text.splitlines() if line.startswith("request ")]
    assert len(requests) == 5 and len(set(requests)) == 1  # one tool list for the conversation
    assert "anthropic: ['description', 'input_schema', 'name']" in text
    assert "in the request" in text


def test_05_mcp_gateway() -> None:
    text = text_of(_executed("05_mcp_gateway", "mcp"))
    assert "client sees: ['discover_tools', 'get_tool_schema', 'execute_tool']" in text
    assert "weather_get_alerts" in text and "Storm warning for west" in text
    assert '"not_permitted"' in text and "invalid_arguments" in text
    assert "no ticket 'T-9999'" in text
    assert "\"Get one support ticket by its id (e.g. 'T-0001').\"" in text  # the whole sentence
    assert "readings kept:" in text and "items omitted" in text


def test_06_policies_and_truncation() -> None:
    text = text_of(_executed("06_policies_and_truncation"))
    assert "denied by step 'global' (pattern '*_delete_*')" in text
    assert "excluded by profile 'support'" in text
    assert "description: Search CRM contacts. Only customers in the EU region." in text
    assert '"error":"approval_denied"' in text
    assert "items omitted" in text and "chars omitted" in text
    assert "spent: True" in text
    assert re.search(r"clearable: \[\('call_[0-9a-f]{12}', 'files_read_file'", text)


def test_07_observability() -> None:
    notebook = _executed("07_observability", "opentelemetry.sdk", "matplotlib")
    text = text_of(notebook)
    assert "agent step" in text and "  execute_tool tool_search" in text
    assert "    retrieval toolmgmt.catalog" in text
    refused = "execute_tool files_delete_file {'toolmgmt.call.outcome': 'denied', "
    assert refused + "'error.type': 'approval_denied'}" in text
    assert "toolmgmt.result_truncated" in text
    assert re.search(r"gen_ai\.execute_tool\.duration\s+3\b", text)
    assert "Tune my guitar strings." in text and "I found no tool" in text
    assert "searches that led to no call (1 of 1)" in text
    images = [
        o for c in notebook.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})
    ]
    assert len(images) == 1 and len(images[0]["data"]["image/png"]) > 5000


def test_08_code_mode() -> None:
    text = text_of(_executed("08_code_mode", "pydantic_monty", "langchain"))
    assert "['tool_search', 'run_code', " in text and "async def files_read_file(path: str" in text
    assert re.search(r"\d+ log lines, \d+ errors; first:", text)
    assert re.search(r"2 calls; [\d,]+ result tokens stayed in the sandbox", text)
    assert "paused: email_send_email" in text
    assert "errors; mailed:" in text and "Mailed the on-call team" in text


if __name__ == "__main__":  # python tests/notebooks/test_notebooks.py 01_quickstart ...
    for arg in sys.argv[1:]:
        executed, took = run_notebook(arg)
        print(f"==== {arg}: {took:.1f}s")
        for cell in executed.cells:
            for out in cell.get("outputs", []):
                if out.get("output_type") == "error":
                    print("ERROR", out["ename"], out["evalue"])
                    print("\n".join(out.get("traceback", []))[-3000:])
        print(text_of(executed))
