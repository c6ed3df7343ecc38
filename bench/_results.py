"""Benchmark results as JSON: what every ``bench/*.py --json OUT`` writes.

Each file is ``{"bench": NAME, "commit": ..., "dirty": bool, "machine": {...}, "date": ...,
"figures": {...}}``: the figures a script printed, stamped with the commit and the machine they
were measured on. ``bench/results/`` keeps the files the README's figures come from;
``bench/readme_figures.py`` regenerates the README's tables from them.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = [
    "PEERS",
    "RESULTS_DIR",
    "machine",
    "peer_versions",
    "read_results",
    "stamp",
    "write_results",
]

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = ROOT / "bench" / "results"
"""Where the results the README quotes are kept."""


def _git(*args: str) -> str:
    try:
        out = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip()


PEERS = ("bm25s", "rank-bm25", "sentence-transformers", "torch", "onnxruntime")
"""The libraries benchmarks compare against: a peer's figure means little without its version."""


def peer_versions() -> dict[str, str]:
    """The installed version of each of :data:`PEERS` (those not installed are left out)."""
    versions = {}
    for name in PEERS:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on every platform
        load = []
    return {
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "processor": platform.machine(),
        "cpus": os.cpu_count(),
        "load_average": load,
    }


def stamp(name: str) -> dict[str, Any]:
    """The header of a result file: bench name, commit, whether the code was dirty, machine.

    Dirty means a tracked file other than those in ``bench/results/`` differs from the commit.
    """
    return {
        "bench": name,
        "commit": _git("rev-parse", "--short=12", "HEAD") or "unknown",
        # Result files do not change what is measured: writing one run's files must not mark
        # the next run's as made from local changes.
        "dirty": bool(
            _git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!bench/results")
        ),
        "date": datetime.date.today().isoformat(),
        "machine": machine(),
        "peers": peer_versions(),
    }


def write_results(path: str | Path, name: str, figures: Any) -> Path:
    """Write ``figures`` of bench ``name`` to ``path`` as a stamped JSON file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {**stamp(name), "figures": figures}
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def read_results(name: str, folder: Path = RESULTS_DIR) -> dict[str, Any]:
    """The result file ``folder/NAME.json`` (raises FileNotFoundError naming the command)."""
    path = folder / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: run the bench that writes it with --json {path}."
        )
    return json.loads(path.read_text(encoding="utf-8"))
