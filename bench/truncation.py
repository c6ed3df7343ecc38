"""Truncation speed and memory on large tool results, against tokenising the input once.

For JSON results of about 10 KB, 1 MB and 10 MB in three shapes (a list of records as an API
returns them, a nested document with long strings and arrays, and a plain-text log), this cuts
each to 2,000 tokens with ``truncate_result`` (smart) and prints:

- the reference: tokenising the input's rendered text once (``encode_ordinary``), the least any
  exact truncation must do to know the original size;
- the time of ``truncate_result`` (which renders, tokenises once and searches the cut), and its
  ratio to the reference. Both are CPU time of this process (``time.process_time``), the best
  of several runs taken in turns, so that other work on a shared machine does not land in one
  figure and not the other;
- the tokens of the output (must be <= 2,000) and whether it parses as JSON;
- memory over 50 repeated calls on the 1 MB inputs (tracemalloc): what is still allocated after
  the 5th call and after the 50th (must not grow), and the peak of one call.

Goal (issue 5): <= 3x the reference at 1 MB, and memory that does not grow with repeated calls.

Run: ``python bench/truncation.py [--budget 2000] [--json out.json]``.
"""

from __future__ import annotations

import argparse
import array
import gc
import json
import random
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import write_results  # noqa: E402

from toolmgmt_core._calls.truncation import render_result, truncate_result  # noqa: E402
from toolmgmt_core._model.tokens import get_encoding  # noqa: E402

SIZES = {"10 KB": 10_000, "1 MB": 1_000_000, "10 MB": 10_000_000}
RUNS = {"10 KB": 21, "1 MB": 7, "10 MB": 3}
GOAL_RATIO = 3.0
_WORDS = "alpha beta gamma delta report invoice customer shipped pending refund total".split()


def _sentence(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def records(size: int, rng: random.Random) -> list[dict[str, Any]]:
    """A list of CRM-like records of about ``size`` characters of JSON."""
    out: list[dict[str, Any]] = []
    total = 0
    while total < size:
        i = len(out)
        row = {
            "id": f"cus_{i:07d}",
            "name": f"Customer {i}",
            "email": f"customer{i}@example.com",
            "balance": round(rng.uniform(-500, 5_000), 2),
            "tags": rng.sample(_WORDS, 3),
            "address": {"city": rng.choice(["Paris", "Lyon", "Oslo"]), "zip": f"{i % 99999:05d}"},
            "notes": _sentence(rng, rng.randint(5, 30)),
        }
        total += len(render_result(row)) + 1
        out.append(row)
    return out


def document(size: int, rng: random.Random) -> dict[str, Any]:
    """A nested report: sections with long strings, tables and a large metrics array."""
    sections = []
    total = 0
    while total < size * 0.8:
        body = _sentence(rng, rng.randint(200, 2_000))
        table = [[rng.randint(0, 10**6) for _ in range(8)] for _ in range(rng.randint(5, 50))]
        section = {"heading": _sentence(rng, 4), "body": body, "table": table}
        total += len(render_result(section))
        sections.append(section)
    metrics = []
    while total < size:
        point = {"t": len(metrics), "v": round(rng.random(), 6)}
        total += len(render_result(point)) + 1
        metrics.append(point)
    return {"title": "Annual report", "sections": sections, "metrics": metrics}


def log_text(size: int, rng: random.Random) -> str:
    """Plain text: a server log of about ``size`` characters."""
    lines = []
    total = 0
    while total < size:
        line = (
            f"2024-05-{rng.randint(1, 28):02d} INFO worker-{rng.randint(1, 9)} {_sentence(rng, 12)}"
        )
        total += len(line) + 1
        lines.append(line)
    return "\n".join(lines)


SHAPES: dict[str, Callable[[int, random.Random], Any]] = {
    "records": records,
    "document": document,
    "log text": log_text,
}


def _best_times(
    first: Callable[[], Any], second: Callable[[], Any], runs: int
) -> tuple[float, float]:
    """Best CPU time of each of two functions, run in turns."""
    best = [float("inf"), float("inf")]
    for _ in range(runs):
        for i, fn in enumerate((first, second)):
            start = time.process_time()
            fn()
            best[i] = min(best[i], time.process_time() - start)
    return best[0], best[1]


def measure_speed(budget: int) -> list[dict[str, Any]]:
    enc = get_encoding("o200k_base")
    rows = []
    for shape, make in SHAPES.items():
        for label, size in SIZES.items():
            value = make(size, random.Random(7))
            text = render_result(value)
            runs = RUNS[label]
            result = truncate_result(value, budget)
            reference, elapsed = _best_times(
                lambda t=text: enc.encode_ordinary(t),
                lambda v=value: truncate_result(v, budget),
                runs,
            )
            valid = True
            if not isinstance(value, str):
                try:
                    json.loads(result.text)
                except ValueError:
                    valid = False
            rows.append(
                {
                    "shape": shape,
                    "size": label,
                    "chars": len(text),
                    "original_tokens": result.original_tokens,
                    "tokens": result.tokens,
                    "reference_ms": reference * 1000,
                    "truncate_ms": elapsed * 1000,
                    "ratio": elapsed / reference,
                    "valid_json": valid,
                }
            )
            print(
                f"{shape:<9} {label:>6} {len(text):>11,} {result.original_tokens:>10,} "
                f"{result.tokens:>6,} {reference * 1000:>9.1f} {elapsed * 1000:>9.1f} "
                f"{elapsed / reference:>6.2f}x {'yes' if valid else 'NO':>5}",
                flush=True,
            )
    return rows


def measure_memory(budget: int, calls: int = 50) -> list[dict[str, Any]]:
    rows = []
    for shape, make in SHAPES.items():
        value = make(SIZES["1 MB"], random.Random(7))
        truncate_result(value, budget)  # warm caches (tokenizer) before tracing
        gc.collect()
        # Preallocated before tracing starts, so the bookkeeping is not counted as growth.
        retained = array.array("q", [0] * calls)
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        peak = 0
        for call in range(calls):
            tracemalloc.reset_peak()
            result = truncate_result(value, budget)
            peak = max(peak, tracemalloc.get_traced_memory()[1] - base)
            del result
            gc.collect()
            retained[call] = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        row = {
            "shape": shape,
            "retained_after_5_kb": retained[4] / 1024,
            "retained_after_50_kb": retained[-1] / 1024,
            "growth_kb": (retained[-1] - retained[4]) / 1024,
            "peak_per_call_mb": peak / 2**20,
        }
        rows.append(row)
        print(
            f"{shape:<9} {row['retained_after_5_kb']:>12.1f} {row['retained_after_50_kb']:>13.1f} "
            f"{row['growth_kb']:>10.1f} {row['peak_per_call_mb']:>12.1f}",
            flush=True,
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget", type=int, default=2_000)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    print(f"Cut to {args.budget:,} tokens (o200k_base); CPU times, best of several runs.\n")
    print(
        f"{'shape':<9} {'size':>6} {'chars':>11} {'orig tok':>10} {'out':>6} "
        f"{'ref ms':>9} {'trunc ms':>9} {'ratio':>7} {'json':>5}"
    )
    speed = measure_speed(args.budget)
    print("\nMemory over 50 calls on the 1 MB inputs (tracemalloc, KB retained after the call):")
    print(f"{'shape':<9} {'after 5th':>12} {'after 50th':>13} {'growth':>10} {'peak/call MB':>12}")
    memory = measure_memory(args.budget)

    at_1mb = [r["ratio"] for r in speed if r["size"] == "1 MB"]
    within = all(r["tokens"] <= args.budget and r["valid_json"] for r in speed)
    no_growth = all(r["growth_kb"] < 64 for r in memory)
    print(
        f"\nGoal <= {GOAL_RATIO:g}x the reference at 1 MB: worst {max(at_1mb):.2f}x "
        f"({'met' if max(at_1mb) <= GOAL_RATIO else 'NOT met'}); every output within budget and "
        f"valid: {'yes' if within else 'NO'}; memory growth over 50 calls < 64 KB: "
        f"{'yes' if no_growth else 'NO'}."
    )
    if args.json:
        write_results(
            args.json, "truncation", {"budget": args.budget, "speed": speed, "memory": memory}
        )


if __name__ == "__main__":
    main()
