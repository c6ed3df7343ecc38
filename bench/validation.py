"""What checking a call costs: this checkout against a reference version (default: ``main``).

The hardening of issue 18 checks arguments in a bounded engine (no remote ``$ref``, regexes
with a time limit, deadlines on every keyword), moves slow validation and large results off the
event loop, and runs each sync tool on threads of its own. None of that may make the common
small call much slower. For each case this times ``await session.call(...)`` (and
``validate_arguments`` alone) on one event loop, p50 and p95 per call, first with the reference
version's code (its ``toolmgmt_core`` taken from git into a temporary folder and run in a
subprocess), then with this checkout (a subprocess too), in the same run; ``--rounds`` rounds of
both alternate, and each figure is the median over rounds (a ratio: the median of each round's
ratio), so a machine that other work slows for a while skews neither side.

``--json OUT`` writes (under ``figures``, see ``bench/_results.py``)::

    {"reference": "main", "reference_commit": "<12 hex digits>", "calls": int, "rounds": int,
     "cases": [{"case": "small call, sync handler" | "small call, async handler" |
                        "schema with a pattern, async" | "500-row argument, async" |
                        "validate_arguments alone, small",
                "reference_p50_us": float, "p50_us": float, "ratio_p50": this / reference,
                "reference_p95_us": float, "p95_us": float}, ...]}

Run: ``python bench/validation.py [--reference main] [--calls 3000] [--rounds 5] [--json OUT]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _reference import alternate, manager  # noqa: E402
from _results import write_results  # noqa: E402

SMALL = {
    "type": "object",
    "properties": {"contact_id": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["contact_id"],
}
PATTERN = {
    "type": "object",
    "properties": {"email": {"type": "string", "pattern": r"^[^@\s]+@[^@\s]+\.[a-z]+$"}},
}
ITEMS = {
    "type": "object",
    "properties": {
        "rows": {
            "type": "array",
            "items": {"type": "object", "properties": {"id": {"type": "integer"}}},
        }
    },
}
CASES: dict[str, tuple[str, dict[str, Any], dict[str, Any], bool]] = {
    # label: (tool, schema, arguments, async handler)
    "small call, sync handler": ("small_sync", SMALL, {"contact_id": "c1", "limit": 3}, False),
    "small call, async handler": ("small_async", SMALL, {"contact_id": "c1", "limit": 3}, True),
    "schema with a pattern, async": ("pattern", PATTERN, {"email": "a@b.io"}, True),
    "500-row argument, async": ("rows", ITEMS, {"rows": [{"id": i} for i in range(500)]}, True),
}


def measure(calls: int) -> dict[str, tuple[float, float]]:
    """p50 and p95 microseconds per call for each case, with whatever toolmgmt_core imports."""
    from toolmgmt_core import Tool, ToolCatalog

    try:
        from toolmgmt_core._calls.validation import validate_arguments
    except ImportError:  # a reference before the core's folders
        from toolmgmt_core.validation import validate_arguments  # type: ignore[no-redef]

    async def answer(**kwargs: Any) -> str:
        return "ok"

    tools = [
        Tool(name, "x", schema, handler=answer if is_async else (lambda **kwargs: "ok"))
        for name, schema, _, is_async in CASES.values()
    ]
    session = manager(ToolCatalog(tools)).session()
    out: dict[str, tuple[float, float]] = {}

    async def run() -> None:
        for label, (name, _, arguments, _) in CASES.items():
            times = []
            for i in range(calls + 50):
                start = time.perf_counter()
                result = await session.call(name, arguments)
                if i >= 50:  # warm-up
                    times.append((time.perf_counter() - start) * 1e6)
                assert not result.is_error, result.content
            out[label] = _p50_p95(times)

    asyncio.run(run())
    small = tools[0]
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        validate_arguments(small, {"contact_id": "c1", "limit": 3})
        times.append((time.perf_counter() - start) * 1e6)
    out["validate_arguments alone, small"] = _p50_p95(times)
    return out


def _p50_p95(times: list[float]) -> tuple[float, float]:
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95)]


def _median(runs: list[Any], label: str, at: int) -> float:
    """The median over rounds of ``label``'s p50 (``at`` 0) or p95 (1)."""
    return statistics.median(run[label][at] for run in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default="main", help="git ref to compare with")
    parser.add_argument("--calls", type=int, default=3000, help="timed calls per case")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds of both")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    theirs, ours = alternate(
        args.reference, "validation", "measure", args.calls, rounds=args.rounds
    )
    print(
        f"p50 / p95 microseconds per call (median of {args.rounds} rounds); reference = "
        f"{args.reference}, {args.calls} calls\n"
    )
    print(f"| case | {args.reference} p50 | this p50 | ratio | {args.reference} p95 | this p95 |")
    print("|---|---|---|---|---|---|")
    cases = []
    for label in ours[0]:
        ratio = statistics.median(
            mine[label][0] / old[label][0] for old, mine in zip(theirs, ours, strict=True)
        )
        ref50, ref95 = _median(theirs, label, 0), _median(theirs, label, 1)
        cur50, cur95 = _median(ours, label, 0), _median(ours, label, 1)
        print(f"| {label} | {ref50:.0f} | {cur50:.0f} | {ratio:.2f} | {ref95:.0f} | {cur95:.0f} |")
        cases.append(
            {
                "case": label,
                "reference_p50_us": ref50,
                "p50_us": cur50,
                "ratio_p50": ratio,
                "reference_p95_us": ref95,
                "p95_us": cur95,
            }
        )
    if args.json:
        commit = subprocess.run(
            ["git", "rev-parse", "--short=12", args.reference],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
        figures = {
            "reference": args.reference,
            "reference_commit": commit or "unknown",
            "calls": args.calls,
            "rounds": args.rounds,
            "cases": cases,
        }
        write_results(args.json, "validation", figures)


if __name__ == "__main__":
    main()
