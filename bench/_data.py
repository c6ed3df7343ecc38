"""Shared loaders for the benchmarks: the BFCL dev split in ``../shared/bench/bfcl_dev``."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["BfclQuery", "bfcl_dir", "load_bfcl"]


@dataclass(frozen=True)
class BfclQuery:
    """One retrieval query of the dev split."""

    id: str
    """The BFCL id (``simple_python_0``...)."""
    category: str
    """The BFCL category (``parallel_multiple``...)."""
    text: str
    """The user turns."""
    ground_truth: tuple[str, ...]
    """Pool names of the tools the query needs."""


def bfcl_dir() -> Path:
    """Where the split lives: ``$TOOLMGMT_BFCL_DIR`` or ``shared/bench/bfcl_dev``."""
    env = os.environ.get("TOOLMGMT_BFCL_DIR")
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent.parent
    for candidate in (
        here.parent / "shared" / "bench" / "bfcl_dev",
        Path("/work/shared/bench/bfcl_dev"),
    ):
        if candidate.exists():
            return candidate
    raise FileNotFoundError(
        "BFCL dev split not found: set TOOLMGMT_BFCL_DIR to the folder holding bfcl_pool.json."
    )


def load_bfcl(folder: Path | None = None) -> tuple[list[dict[str, Any]], list[BfclQuery]]:
    """The pool of tool definitions (plain dicts) and the queries."""
    folder = folder or bfcl_dir()
    pool = json.loads((folder / "bfcl_pool.json").read_text())["tools"]
    raw = json.loads((folder / "bfcl_queries.json").read_text())["queries"]
    queries = [BfclQuery(q["id"], q["category"], q["query"], tuple(q["ground_truth"])) for q in raw]
    return pool, queries
