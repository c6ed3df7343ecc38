"""Regenerate the README's figure tables from ``bench/results/*.json``; never type a figure.

The README marks each generated block::

    <!-- figures:NAME -->
    ...generated, do not edit...
    <!-- /figures:NAME -->

and this script rewrites every marked block from the result files the benchmarks wrote
(``python bench/X.py --json bench/results/X.json``), with a line naming the commit and the
machine each block's figures were measured on. ``--check`` changes nothing and exits 1 when the
README differs from what the results give (a test runs it).

Run: ``python bench/readme_figures.py [--check] [--readme README.md]``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import RESULTS_DIR, read_results  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BLOCK = re.compile(
    r"(<!-- figures:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /figures:(?P=name) -->)", re.S
)

Renderer = Callable[[Path], str]
RENDERERS: dict[str, Renderer] = {}


def renders(name: str) -> Callable[[Renderer], Renderer]:
    def register(fn: Renderer) -> Renderer:
        RENDERERS[name] = fn
        return fn

    return register


def _n(value: float) -> str:
    return f"{value:,.0f}"


def _pct(share: float) -> str:
    return f"{100 * share:.1f}%"


def _source(*results: dict[str, Any]) -> str:
    """The provenance line under a block: which script, commit and machine."""
    parts = []
    for data in results:
        machine = data["machine"]
        dirty = "+local changes" if data.get("dirty") else ""
        parts.append(
            f"`bench/{data['bench']}.py` at {data['commit'][:8]}{dirty}, {data['date']}, "
            f"{machine['cpus']} CPUs ({machine['processor']}, Python {machine['python']})"
        )
    return "<sub>Measured by " + "; ".join(parts) + ".</sub>\n"


def token_rows(figures: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tokens bench's rows by catalog label."""
    return {row["catalog"]: row for row in figures["catalogs"]}


@renders("tokens")
def render_tokens(folder: Path) -> str:
    data = read_results("tokens", folder)
    rows = token_rows(data["figures"])
    names = {
        "bfcl-80": "80 BFCL tools",
        "bfcl-200": "200 BFCL tools",
        "demo": "demo catalog",
        "bfcl-pool": "whole BFCL dev pool",
    }
    lines = [
        "| catalog | tools | flat | search | gateway | lazy | cold start: gateway / search / "
        "lazy |",
        "|---|---|---|---|---|---|---|",
    ]
    for key, label in names.items():
        row = rows[key]
        modes = row["modes"]
        cells = [
            f"{_n(modes[m]['initial'])} ({_pct(modes[m]['share'])})"
            for m in ("search", "gateway", "lazy")
        ]
        cold = " / ".join(
            _n(modes[m]["cold_start"]["tokens"]) for m in ("gateway", "search", "lazy")
        )
        lines.append(
            f"| {label} | {row['tools']} | {_n(row['flat'])} | {' | '.join(cells)} | {cold} |"
        )
    return "\n".join(lines) + "\n\n" + _source(data)


def render(text: str, folder: Path = RESULTS_DIR) -> str:
    """``text`` with every marked block regenerated from the results in ``folder``.

    Raises:
        KeyError: a block names no renderer (the message lists the known ones).
    """

    def replace(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in RENDERERS:
            raise KeyError(f"README block {name!r} has no renderer; known: {sorted(RENDERERS)}")
        return f"{match.group(1)}{RENDERERS[name](folder)}{match.group(4)}"

    return BLOCK.sub(replace, text)


def blocks(text: str) -> dict[str, str]:
    """The marked blocks of ``text`` by name."""
    return {m.group("name"): m.group("body") for m in BLOCK.finditer(text)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the README is stale")
    parser.add_argument("--readme", type=Path, default=README)
    parser.add_argument("--results", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(argv)
    text = args.readme.read_text(encoding="utf-8")
    new = render(text, args.results)
    if args.check:
        stale = [n for n, body in blocks(new).items() if blocks(text).get(n) != body]
        if stale:
            print(f"{args.readme}: stale figure blocks: {', '.join(stale)}", file=sys.stderr)
            return 1
        print(f"{args.readme}: {len(blocks(new))} figure blocks up to date")
        return 0
    args.readme.write_text(new, encoding="utf-8")
    print(f"{args.readme}: {len(blocks(new))} figure blocks regenerated")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
