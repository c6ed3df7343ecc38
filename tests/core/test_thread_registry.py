"""Every thread the project starts comes from the one registry (``_runtime/threads.py``): named,
bounded, counted by the hung-thread gauge and joined when the manager closes."""

from __future__ import annotations

import ast
import asyncio
import threading
from pathlib import Path

from toolmgmt_core import ToolCatalog, ToolManager
from toolmgmt_core._calls.truncation.summarize import summarize_result
from toolmgmt_core._runtime.threads import (
    call_after,
    hung_threads,
    join_threads,
    live_threads,
)

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = ROOT / "toolmgmt_core" / "_runtime" / "threads.py"
TREES = [ROOT / "toolmgmt_core", ROOT / "adapters", ROOT / "gateway"]


def _thread_starts(path: Path, root: Path = ROOT) -> list[str]:
    """The places in ``path`` that start a thread without the registry."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        first = node.args[0] if node.args else None
        if (
            name in {"Thread", "Timer", "ThreadPoolExecutor", "to_thread", "start_new_thread"}
            or "to_thread" in ast.unparse(func)  # anyio.to_thread.run_sync
            or name == "run_in_executor"
            and isinstance(first, ast.Constant)
            and first.value is None
        ):
            found.append(f"{path.relative_to(root)}:{node.lineno}: {ast.unparse(func)}(")
    return found


def test_no_thread_is_started_outside_the_registry() -> None:
    starts = [
        place
        for tree in TREES
        for path in sorted(tree.rglob("*.py"))
        if path != REGISTRY
        for place in _thread_starts(path)
    ]
    assert not starts, "threads started outside _runtime/threads.py: " + ", ".join(starts)


def test_the_scan_sees_each_way_to_start_a_thread(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "threading.Thread(target=f)\nThread(target=f)\nThreadPoolExecutor(4)\n"
        "await asyncio.to_thread(f)\nloop.run_in_executor(None, f)\n"
        "await anyio.to_thread.run_sync(f)\nthreading.Timer(1, f)\n"
        "loop.run_in_executor(pool, f)\n"
    )
    assert len(_thread_starts(sample, tmp_path)) == 7


def test_one_thread_runs_every_timer_and_a_cancelled_one_never_fires() -> None:
    fired: list[str] = []
    done = threading.Event()
    cancel = call_after(0.01, lambda: fired.append("cancelled"))
    call_after(0.02, lambda: (fired.append("second"), done.set()))
    call_after(0.01, lambda: fired.append("first"))
    cancel()
    assert done.wait(5)
    assert fired == ["first", "second"]
    assert [name for name in live_threads() if "timer" in name] == ["toolmgmt-timer"]


def test_a_hung_summariser_is_counted_and_close_joins_the_threads() -> None:
    release = threading.Event()
    started = threading.Event()

    def hangs(text: str, *, tool_name: str, goal: str | None) -> str:
        started.set()
        release.wait(10)
        return "a summary"

    manager = ToolManager(ToolCatalog())
    try:
        result = asyncio.run(
            summarize_result("word " * 2_000, hangs, 50, tool_name="report", timeout=0.05)
        )
        assert result.note == "SummaryFailed: timed out after 0.05 s"
        assert started.is_set()
        assert hung_threads() == {"report summariser": 1}
        # Closing waits no longer than its bound for the hung thread, and names it.
        running = manager.close(timeout=0.1)
        assert [name for name in running if "summarizer" in name] == ["toolmgmt-summarizer_0"]
    finally:
        release.set()
    assert join_threads(5.0) == []
    assert hung_threads() == {}
    assert not [name for name in live_threads() if "summarizer" in name]
