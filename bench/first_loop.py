"""A newcomer's way in, timed: from a fresh clone to the README's first agent loop (issue 43).

What the README's install line does, on this checkout's committed tree, each step timed:
``git clone`` into an empty folder, a fresh virtual environment, ``pip install -e .`` (the core:
all the first loop needs) or ``pip install -e ".[all]"`` (the four framework adapters too), then
the README's first Python block run as written. Pip's cache is left as the machine has it:
"warm" when it already holds the wheels (the figure a second clone or a CI cache sees); the
files in the cache are counted and the load average is recorded with each figure.

Run: ``python bench/first_loop.py [--extras core,all] [--json bench/results/first_loop.json]``
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from _results import write_results  # noqa: E402

_PYTHON_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def first_loop() -> str:
    """The README's first Python block (its first agent loop)."""
    found = _PYTHON_BLOCK.search((ROOT / "README.md").read_text(encoding="utf-8"))
    if found is None:
        raise SystemExit("README.md has no Python block")
    return found.group(1)


def _timed(command: list[str], cwd: Path, env: dict[str, str]) -> float:
    clock = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True, text=True)
    return time.perf_counter() - clock


def _pip_cache_files() -> int:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "cache", "dir"], capture_output=True, text=True
    )
    folder = Path(done.stdout.strip()) if done.returncode == 0 else None
    if folder is None or not folder.is_dir():
        return 0
    return sum(len(files) for _, _, files in os.walk(folder))


def measure(extra: str) -> dict[str, Any]:
    """One way in: clone, venv, install (``extra``: ``core`` or an extra's name), first loop."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        clone = where / "toolmgmt"
        steps = {"clone": _timed(["git", "clone", "-q", str(ROOT), str(clone)], where, env)}
        steps["venv"] = _timed([sys.executable, "-m", "venv", ".venv"], clone, env)
        python = str(clone / ".venv" / "bin" / "python")
        target = "." if extra == "core" else f".[{extra}]"
        steps["install"] = _timed([python, "-m", "pip", "install", "-q", "-e", target], clone, env)
        (where / "loop.py").write_text(first_loop(), encoding="utf-8")
        steps["first loop"] = _timed([python, str(where / "loop.py")], where, env)
    return {
        "extra": extra,
        "steps": {k: round(v, 1) for k, v in steps.items()},
        "total": round(sum(steps.values()), 1),
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--extras", default="core,all", help="comma-separated: core, all, ...")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    figures: dict[str, Any] = {
        "pip_cache_files": _pip_cache_files(),
        "load_before": [round(x, 2) for x in os.getloadavg()],
        "runs": [measure(extra) for extra in args.extras.split(",")],
    }
    for run in figures["runs"]:
        steps = ", ".join(f"{k} {v:.1f} s" for k, v in run["steps"].items())
        print(f"{run['extra']:<6} {run['total']:>6.1f} s  ({steps}; load {run['load_after'][0]})")
    if args.json:
        write_results(args.json, "first_loop", figures)


if __name__ == "__main__":
    main()
