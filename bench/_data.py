"""Shared loaders for the benchmarks: the BFCL splits.

Two splits, each a folder holding ``bfcl_pool.json`` and ``bfcl_queries.json``:

- ``dev`` (``bfcl_dev/``): 979 tools, 1,150 requests from BFCL's single-turn categories;
- ``live`` (``bfcl_live/``): 2,101 tools, 675 real users' requests from BFCL's ``live_*``
  categories (the other half is held out by the project owner).

Where they are (``$TOOLMGMT_BFCL_DIR``, else ``<repo>/../shared/bench``) is
``tests/support/bfcl.py``'s :func:`bfcl_dir`, one lookup for the tests and the benchmarks.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # support.*

from support.bfcl import SPLITS, Split, bfcl_dir  # noqa: E402

__all__ = ["SPLITS", "BfclQuery", "Split", "bfcl_dir", "load_bfcl", "load_split"]


@dataclass(frozen=True)
class BfclQuery:
    """One retrieval query of a split."""

    id: str
    """The BFCL id (``simple_python_0``...)."""
    category: str
    """The BFCL category (``parallel_multiple``...)."""
    text: str
    """The user turns."""
    ground_truth: tuple[str, ...]
    """Pool names of the tools the query needs."""
    offered: tuple[str, ...] = ()
    """Pool names of the tools BFCL offered the model with this query."""


@dataclass(frozen=True)
class BfclData:
    """A split: the pool, the queries and the renamed same-name variants."""

    split: Split
    """``dev`` or ``live``."""
    folder: Path
    """Where it was read from."""
    pool: list[dict[str, Any]]
    """The tool definitions (plain dicts)."""
    queries: list[BfclQuery]
    """The requests, in file order."""
    renamed: dict[str, str]
    """Pool name (``get_current_weather__2``) to BFCL name, for variants that were renamed."""

    def base_name(self, pool_name: str) -> str:
        """The BFCL name of a pool tool (same-name variants share it)."""
        return self.renamed.get(pool_name, pool_name)


def load_split(split: Split = "dev", folder: Path | None = None) -> BfclData:
    """Everything in ``split``'s folder (``folder`` overrides where it is looked for)."""
    folder = folder or bfcl_dir(split)
    pool_file = json.loads((folder / "bfcl_pool.json").read_text())
    raw = json.loads((folder / "bfcl_queries.json").read_text())["queries"]
    queries = [
        BfclQuery(
            q["id"],
            q["category"],
            q["query"],
            tuple(q["ground_truth"]),
            tuple(q.get("offered") or ()),
        )
        for q in raw
    ]
    return BfclData(
        split, folder, pool_file["tools"], queries, dict(pool_file.get("renamed") or {})
    )


def load_bfcl(
    folder: Path | None = None, split: Split = "dev"
) -> tuple[list[dict[str, Any]], list[BfclQuery]]:
    """The pool of tool definitions (plain dicts) and the queries of ``split``."""
    data = load_split(split, folder)
    return data.pool, data.queries
