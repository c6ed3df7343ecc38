"""bench/code_cost.py: the program prints the summary the answer is written from (computed from
the whole results, not cut to a length), every request is checked with the SDKs' types, and the
committed code-mode figures are what the code computes now."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from support.bench_scripts import load_bench

pytest.importorskip("pydantic_monty")

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("code_cost")


def test_the_answer_is_written_from_what_the_program_printed(bench: ModuleType) -> None:
    catalog = bench.conv.catalogs(["demo"])["demo"]
    summary, printed = bench.run_program(catalog)
    assert printed == json.dumps(summary)  # the whole summary, nothing cut
    answer = bench.answer_text(summary)
    # Figures only the whole results give: every error of a 9,000-line log, 4,000 events.
    assert summary["log"]["levels"]["ERROR"] == 1325 and str(1325) in answer
    for kind, count in summary["log"]["top_errors"]:
        assert f"{kind} ({count})" in answer
    assert sum(summary["events"]["by_type"].values()) == 4000
    assert f"{summary['events']['purchase_revenue']:,.2f}" in answer
    for failed in summary["charges"]["failed"]:
        assert failed in answer
    email = dict(bench.writes(summary)[1].arguments)
    assert json.dumps(summary) in email["body"]


def test_the_committed_code_rows_are_what_the_code_computes_now(bench: ModuleType) -> None:
    stored = json.loads((BENCH / "results" / "code_cost.json").read_text(encoding="utf-8"))
    rows = {
        (r["design"], r["provider"]): r
        for r in stored["figures"]["rows"]
        if r["size"] == "demo" and r["design"] == "code"
    }
    now = bench.measure(["demo"], [bench.CodeProgram()], check=True)
    assert len(now) == 2
    for row in now:
        old = rows[(row["design"], row["provider"])]
        for key in ("input_tokens", "output_tokens", "requests", "dollars", "printed_tokens"):
            assert row[key] == old[key], (
                f"{key} changed: run python bench/code_cost.py --json "
                "bench/results/code_cost.json, then python bench/readme_figures.py"
            )
