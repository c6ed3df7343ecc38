"""bench/conversation.py end to end on a tiny task: real sessions, requests checked with the
providers' SDK types, cache-stable designs keeping their tool list byte-identical, and the
committed figures being what the code computes now."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

import pytest
from support.bench_scripts import load_bench

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"

STABLE = ("search", "search-listed", "search-3", "additions", "native", "native-ns")
"""Designs whose tool list must not change within a conversation."""


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_bench("conversation")


@pytest.fixture(scope="module")
def tiny(bench: ModuleType) -> list[dict[str, object]]:
    rows = bench.measure(["demo"], "tiny", check=True)  # every request checked with SDK types
    bench.relative(rows)
    return rows


def test_every_design_runs_with_both_providers(bench: ModuleType, tiny: list[dict]) -> None:
    expected = {(d.key, p) for d in bench.DESIGNS for p in bench.PROVIDERS if p in d.providers}
    assert {(r["design"], r["provider"]) for r in tiny} == expected
    for row in tiny:
        assert row["requests"] >= 3  # two calls and the answer
        for rules, billed in row["billed"].items():
            assert row["read"][rules] + row["written"][rules] <= row["input_tokens"]
            assert billed > 0


def test_cache_stable_designs_never_change_their_tool_list(tiny: list[dict]) -> None:
    by = {(r["design"], r["provider"]): r for r in tiny}
    for (design, _), row in by.items():
        if design in STABLE:
            assert row["list_changes"] == 0, (design, row["provider"])
    # the growing search appends what it finds: its list changes after the search
    assert by[("search-append", "anthropic")]["list_changes"] >= 1
    assert by[("search-append", "openai-responses")]["list_changes"] >= 1


def test_a_changing_list_is_billed_as_a_rewrite(tiny: list[dict]) -> None:
    by = {(r["design"], r["provider"]): r for r in tiny}
    search = by[("search-append", "anthropic")]
    native = by[("search", "anthropic")]
    # same searches, same calls: the rewrite after the list change is what costs more
    assert search["requests"] == native["requests"]
    assert search["written"]["anthropic"] > native["written"]["anthropic"]
    assert search["billed"]["anthropic"] > native["billed"]["anthropic"]
    flat = by[("flat", "anthropic")]
    assert flat["vs_flat"]["anthropic"] == 1.0
    assert by[("floor", "anthropic")]["billed"]["anthropic"] < flat["billed"]["anthropic"]


def test_the_committed_reference_rows_are_what_the_code_computes_now(bench: ModuleType) -> None:
    """Checked wherever the tests run: the demo catalog needs no shared data."""
    stored = json.loads((BENCH / "results" / "conversation.json").read_text(encoding="utf-8"))
    keep = {"flat", "search", "search-listed"}
    rows = {
        (r["design"], r["provider"]): r
        for r in stored["figures"]["rows"]
        if r["size"] == "demo" and r["design"] in keep
    }
    designs = [d for d in bench.DESIGNS if d.key in keep]
    now = bench.measure(["demo"], "task", designs, check=False)
    bench.relative(now)
    for row in now:
        old = rows[(row["design"], row["provider"])]
        assert {k: v for k, v in row.items() if k != "vs_flat"} == {
            k: v for k, v in old.items() if k != "vs_flat"
        }, (
            "conversation figures changed: run python bench/conversation.py --json "
            "bench/results/conversation.json, then python bench/readme_figures.py"
        )
