"""Where the shared BFCL benchmark data is: one lookup for the tests and ``bench/_data.py``.

The data is not in the repository: two BFCL splits prepared for this project, each a folder
holding ``bfcl_pool.json`` and ``bfcl_queries.json`` (``bfcl_dev/``, ``bfcl_live/``), kept
beside it in ``<repo>/../shared/bench``. The folder of a split is
``$TOOLMGMT_BFCL_DIR/bfcl_<split>`` when that exists, else ``$TOOLMGMT_BFCL_DIR`` itself when
it holds ``bfcl_pool.json`` (one split's folder), else ``<repo>/../shared/bench/bfcl_<split>``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

__all__ = ["SPLITS", "Split", "bfcl_dir", "bfcl_missing"]

Split = Literal["dev", "live"]

SPLITS: tuple[Split, ...] = ("dev", "live")
"""The splits there are."""

REPO = Path(__file__).resolve().parents[2]


def bfcl_dir(split: Split = "dev") -> Path:
    """The folder of ``split`` (see the module docstring).

    Raises:
        ValueError: an unknown split.
        FileNotFoundError: the folder is not where it is looked for.
    """
    if split not in SPLITS:
        raise ValueError(f"Unknown split {split!r}; valid splits: {', '.join(SPLITS)}.")
    folder_name = f"bfcl_{split}"
    env = os.environ.get("TOOLMGMT_BFCL_DIR")
    if env:
        root = Path(env).expanduser()
        if (root / folder_name / "bfcl_pool.json").is_file():
            return root / folder_name
        if (root / "bfcl_pool.json").is_file():
            return root
        raise FileNotFoundError(
            f"TOOLMGMT_BFCL_DIR={env} holds neither {folder_name}/bfcl_pool.json nor "
            "bfcl_pool.json."
        )
    candidate = REPO.parent / "shared" / "bench" / folder_name
    if (candidate / "bfcl_pool.json").is_file():
        return candidate
    raise FileNotFoundError(
        f"BFCL {split} split not found at {candidate}: set TOOLMGMT_BFCL_DIR to the folder "
        f"holding {folder_name}/ (or to the folder holding bfcl_pool.json)."
    )


def bfcl_missing(split: Split = "dev") -> str | None:
    """Why ``split`` is not found (a test's reason to skip), or None when it is there."""
    try:
        bfcl_dir(split)
    except FileNotFoundError as exc:
        return str(exc)
    return None
