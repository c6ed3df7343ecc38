"""The README's figures are the benchmarks' output: regenerated, never typed, and current."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.bench_scripts import load_bench
from support.bfcl import bfcl_missing

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


_bench = load_bench


@pytest.mark.parametrize(
    "document",
    [
        "README.md",
        "docs/code-mode.md",
        "docs/deploy.md",
        "docs/cost.md",
        "docs/observability.md",
        "docs/performance.md",
    ],
)
def test_every_figure_block_is_what_the_results_give(document: str) -> None:
    figures = _bench("readme_figures")
    assert ROOT / document in figures.DOCUMENTS
    text = (ROOT / document).read_text(encoding="utf-8")
    assert figures.blocks(text), f"{document} has lost its generated figure blocks"
    assert figures.render(text) == text, f"{document} is stale: run bench/readme_figures.py"


def test_a_typed_figure_is_caught(tmp_path: Path) -> None:
    figures = _bench("readme_figures")
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = figures.blocks(text)["tokens"]
    tampered = tmp_path / "README.md"
    tampered.write_text(text.replace(block, block.replace("|", "| 1", 1)), encoding="utf-8")
    assert figures.main(["--check", "--readme", str(tampered)]) == 1


def _token_rows_are_current(labels: list[str]) -> None:
    """``bench/results/tokens.json``'s rows of ``labels`` are what ``bench/tokens.py`` gives now."""
    tokens = _bench("tokens")
    stored = json.loads((BENCH / "results" / "tokens.json").read_text(encoding="utf-8"))
    encoding = stored["figures"]["encoding"]
    rows = {row["catalog"]: row for row in stored["figures"]["catalogs"]}
    assert list(rows) == list(tokens.CATALOGS), "the catalogs measured changed"
    now = [tokens.measure(label, catalog, encoding) for label, catalog in tokens.catalogs(labels)]
    assert now == [rows[label] for label in labels], (
        "token figures changed: run python bench/tokens.py --json bench/results/tokens.json, "
        "then python bench/readme_figures.py"
    )


def test_the_demo_token_row_is_what_the_code_computes_now() -> None:
    """Checked wherever the tests run: the demo catalog needs no shared data."""
    _token_rows_are_current(["demo"])


@pytest.mark.skipif(bfcl_missing("dev") is not None, reason=str(bfcl_missing("dev")))
def test_the_bfcl_token_rows_are_what_the_code_computes_now() -> None:
    _token_rows_are_current(["bfcl-80", "bfcl-200", "bfcl-pool"])


RENDERED_FIGURES: dict[str, list[tuple[str | int, ...]]] = {
    "tokens": [("catalogs", 1, "flat"), ("catalogs", 1, "modes", "gateway", "initial")],
    "search_speed": [
        ("rows", 1, "tm_p50"),
        ("rows", 2, "tm_p50"),
        ("rows", 2, "tm_build"),
        ("rows", 2, "bs_p50"),
        ("rows", 2, "tm_rss"),
        ("rows", 2, "bs_rss"),
        ("rounds",),
    ],
    "truncation": [
        ("speed", 4, "ratio"),
        ("speed", 1, "valid_json"),
        ("speed", 1, "tokens"),
        ("memory", 0, "growth_kb"),
    ],
    "admission": [
        ("phases", "alone", "p50_ms"),
        ("phases", "flood, no limit", "p95_ms"),
        ("phases", "flood, defaults", "p95_ms"),
        ("phases", "flood, tight", "p95_ms"),
    ],
    "gateway_load": [
        ("concurrent", "gateway", "answered"),
        ("concurrent", "gateway", "lost"),
        ("concurrent", "gateway", "mixed"),
        ("one_client", "gateway", "p50_ms"),
        ("one_client", "added", "p50_ms"),
        ("concurrent", "gateway", "calls_per_s"),
    ],
    "embed_speed": [
        ("runtimes", 0, "query_p50_ms"),
        ("runtimes", 1, "query_p50_ms"),
        ("runtimes", 2, "query_p50_ms"),
        ("runtimes", 1, "cosine_mean"),
    ],
    "formatting": [
        ("configs", 0, "cold_us_per_tool"),
        ("configs", 2, "cached_us_per_request"),
        ("deepcopy_us_per_tool",),
        ("native_session_step", "cold_ms"),
    ],
    "policy_overhead": [
        ("catalogs", 2, "operations", 2, "policy_ms"),
        ("catalogs", 2, "operations", 2, "ratio"),
        ("catalogs", 0, "visible"),
    ],
    "validation": [
        ("cases", 0, "p50_us"),
        ("cases", 0, "reference_p50_us"),
        ("cases", 3, "ratio_p50"),
    ],
    "adapters": [
        ("frameworks", 0, "tokens_managed"),
        ("frameworks", 0, "share"),
        ("frameworks", 2, "ms_per_step_managed"),
    ],
    "stores": [
        ("sessions", 1, "p50_ms"),
        ("contended", 1, "lost"),
        ("catalog_follow", "push_to_searchable_on_2_replicas", "p50_ms"),
    ],
    "retrieval_dev": [
        ("retrievers", "toolmgmt ToolCatalog.search", "metrics", "R@5"),
        ("retrievers", "toolmgmt ToolCatalog.search", "metrics", "all@5"),
        ("retrievers", "bm25s (name+desc+params)", "metrics", "R@1"),
    ],
    "retrieval_live": [
        ("retrievers", "toolmgmt ToolCatalog.search", "metrics", "name-R@5"),
        ("retrievers", "toolmgmt ToolCatalog.search", "per_category", "live_simple", "R@5"),
        ("retrievers", "bm25s (name+desc+params)", "metrics", "R@5"),
    ],
    "retrieval_history": [
        ("rankers", "toolmgmt ToolCatalog.search", "directions", "A > B", "after", "R@5"),
        ("rankers", "toolmgmt ToolCatalog.search", "directions", "mean", "before", "name-R@5"),
        ("rankers", "toolmgmt ToolCatalog.search", "gain_spread", "R@5", "std"),
        ("rankers", "toolmgmt ToolCatalog.search", "identical_without_learning"),
        ("dev", "toolmgmt ToolCatalog.search", "after", "R@1"),
        ("dev", "toolmgmt ToolCatalog.search", "own_halves", "after", "all@5"),
        ("latency_10k", "keyword", "p50_ratio"),
    ],
    "scaleout": [
        ("concurrent", 2, "calls_per_s"),
        ("concurrent", 0, "p50_ms"),
        ("killed", "lost"),
        ("killed", "interrupted"),
        ("goals", "speedup_2_vs_1"),
    ],
    "scaleout_cpu": [
        ("concurrent", 1, "cpu_ms_per_call", "replicas"),
        ("profile", "by_leg_percent", "calling the upstream (MCP client)"),
        ("profile", "replica_cpu_ms_per_call"),
    ],
    "conversation": [
        ("rows", 1, "billed", "anthropic"),
        ("rows", 9, "vs_flat", "anthropic"),
        ("rows", 9, "dollars", "claude-sonnet-5-5"),
        ("rows", 22, "vs_flat", "openai"),
        ("rows", 47, "vs_flat", "openai-prefix"),
    ],
    "conversation_tasks": [
        ("rows", 1, "vs_flat", "anthropic"),
        ("rows", 7, "vs_flat", "anthropic"),
        ("rows", 10, "vs_flat", "openai-prefix"),
    ],
    "conversation_caching": [
        ("rows", 3, "vs_flat", "anthropic"),
        ("rows", 3, "input_tokens"),
        ("rows", 16, "vs_flat", "openai-prefix"),
    ],
    "code_mode": [
        ("overhead_ms", "p50"),
        ("program_ms", "p90"),
        ("direct_ms", "p50"),
        ("rounds",),
    ],
    "code_cost": [
        ("rows", 2, "dollars", "claude-sonnet-5-5"),
        ("rows", 2, "vs_flat", "claude-sonnet-5-5"),
        ("rows", 8, "output_tokens"),
        ("rows", 11, "dollars", "gpt-6.1-sol"),
        ("rows", 2, "vs_flat_at_floor", "claude-opus-5-5"),
    ],
    "conversation_batched": [
        ("batched", 9, "vs_flat", "anthropic"),
        ("batched", 47, "vs_flat", "openai"),
    ],
    "conversation_pause": [
        ("pause", 8, "vs_flat", "anthropic"),
        ("pause", 13, "billed", "openai-prefix"),
    ],
    "conversation_breakpoints": [
        ("breakpoints", 1, "next", "anthropic"),
        ("breakpoints", 0, "first", "anthropic"),
    ],
    "pg_ranking": [
        ("rankers", 0, "R@1"),
        ("rankers", 1, "R@5"),
        ("rankers", 0, "p50_ms"),
    ],
    "retrieval_latency": [
        ("latency_10k", "keyword", "p50"),
        ("latency_10k", "hybrid", "p50"),
    ],
    "companions": [
        ("rows", "replay: plain", "5", "recall"),
        ("rows", "replay: 4 + 1 companion (floor 3)", "5", "all_found"),
        ("rows", "replay: 4 + the needed companion, a bound (floor 1)", "5", "recall"),
        ("pair_support", 0, "3+"),
        ("rows", "steps: fastmcp BM25", "3", "recall"),
        ("tasks",),
    ],
    "first_loop": [
        ("runs", 0, "total"),
        ("runs", 1, "steps", "install"),
        ("pip_cache_files",),
    ],
    "modes": [
        ("rows", 3, "vs_flat", "anthropic"),
        ("rows", 33, "vs_flat", "anthropic"),
        ("rows", 8, "vs_flat", "anthropic"),
    ],
    "observability": [
        ("cases", 0, "sdk_ratio"),
        ("cases", 1, "default_ratio"),
        ("cases", 2, "reference_us"),
        ("sdk_floor_us",),
    ],
}
"""Per renderer, figures (paths under ``figures``) it must show: the ones the README quotes."""

RESULT_FILE = {
    "retrieval_latency": "retrieval_live",
    "scaleout_cpu": "scaleout",
    "conversation_caching": "conversation",
    "conversation_batched": "conversation",
    "conversation_pause": "conversation",
    "conversation_breakpoints": "conversation",
    "modes": "conversation",
}
"""Renderers whose results file is not named after them."""


def _changed(value: object) -> object:
    """A different value of the same kind, different enough to show at any precision."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value * 3 + 7
    if isinstance(value, float):
        return value * 1.5 + 1.1
    raise TypeError(f"not a figure: {value!r}")


def _results_copy(folder: Path) -> Path:
    for path in (BENCH / "results").glob("*.json"):
        (folder / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    return folder


def test_every_renderer_says_which_figures_it_must_show() -> None:
    figures = _bench("readme_figures")
    assert set(RENDERED_FIGURES) == set(figures.RENDERERS)


@pytest.mark.parametrize("name", sorted(RENDERED_FIGURES))
def test_every_renderer_renders_the_committed_results(name: str) -> None:
    figures = _bench("readme_figures")
    out = figures.RENDERERS[name](BENCH / "results")
    tables: list[list[str]] = [[]]
    for line in out.splitlines():
        if line.startswith("|"):
            tables[-1].append(line)
        elif tables[-1]:
            tables.append([])
    tables = [t for t in tables if t]
    assert tables, out
    for table in tables:
        assert len(table) >= 3, out  # header, rule and at least one row
        assert len({line.count("|") for line in table}) == 1, f"ragged table:\n{out}"
    bench = json.loads((BENCH / "results" / f"{RESULT_FILE.get(name, name)}.json").read_text())
    assert re.search(rf"`bench/{bench['bench']}\.py`( \(uncommitted code\))?, ", out), out
    assert bench["commit"][:8] not in out  # when and where, not a hash


@pytest.mark.parametrize(
    ("name", "path"),
    [(name, path) for name, paths in RENDERED_FIGURES.items() for path in paths],
    ids=lambda v: v if isinstance(v, str) else ".".join(map(str, v)),
)
def test_a_changed_figure_changes_the_rendering(
    name: str, path: tuple[str | int, ...], tmp_path: Path
) -> None:
    figures = _bench("readme_figures")
    folder = _results_copy(tmp_path)
    before = figures.RENDERERS[name](folder)
    file = folder / f"{RESULT_FILE.get(name, name)}.json"
    data = json.loads(file.read_text(encoding="utf-8"))
    parent = data["figures"]
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = _changed(parent[path[-1]])
    file.write_text(json.dumps(data), encoding="utf-8")
    assert figures.RENDERERS[name](folder) != before, f"{name} ignores {path}"


def test_timing_blocks_say_how_busy_the_machine_was(tmp_path: Path) -> None:
    figures = _bench("readme_figures")
    folder = _results_copy(tmp_path)
    data = json.loads((folder / "search_speed.json").read_text(encoding="utf-8"))
    data["machine"]["load_average"] = [7.3, 1.0, 1.0]
    (folder / "search_speed.json").write_text(json.dumps(data), encoding="utf-8")
    out = figures.RENDERERS["search_speed"](folder)
    assert f"{data['machine']['cpus']} CPUs at load 7.3 " in out, out


def test_the_search_speed_block_names_the_bm25s_version_it_was_measured_against(
    tmp_path: Path,
) -> None:
    figures = _bench("readme_figures")
    folder = _results_copy(tmp_path)
    data = json.loads((folder / "search_speed.json").read_text(encoding="utf-8"))
    data["figures"]["versions"] = {"bm25s": "9.8.7", "numpy": "6.5.4"}
    (folder / "search_speed.json").write_text(json.dumps(data), encoding="utf-8")
    out = figures.RENDERERS["search_speed"](folder)
    assert "bm25s 9.8.7 (numpy 6.5.4)" in out, out


def test_the_code_cost_block_says_when_a_model_caches_nothing(tmp_path: Path) -> None:
    """A conversation whose requests stay under a model's minimum cacheable prefix costs more
    than a longer one that is cached: the block says why rather than leave a ratio unexplained."""
    figures = _bench("readme_figures")
    folder = _results_copy(tmp_path)
    data = json.loads((folder / "code_cost.json").read_text(encoding="utf-8"))
    models = data["figures"]["prices"]["models"]
    for row in data["figures"]["rows"]:
        if row["design"] == "code":
            for model in models:
                if model["provider"] == row["provider"]:
                    row["read"][model["model"]] = 1000
    (folder / "code_cost.json").write_text(json.dumps(data), encoding="utf-8")
    assert "reads nothing from its cache" not in figures.RENDERERS["code_cost"](folder)
    cold = next(r for r in data["figures"]["rows"] if r["design"] == "code")
    model = next(m for m in models if m["provider"] == cold["provider"])
    model["min_tokens"] = 4096
    cold["read"][model["model"]] = 0
    (folder / "code_cost.json").write_text(json.dumps(data), encoding="utf-8")
    out = figures.RENDERERS["code_cost"](folder)
    assert (
        f"- {model['model']} reads nothing from its cache in code mode's conversation at "
        "151 tools: no request before the last reaches its minimum cacheable prefix (4,096 tokens)"
    ) in out, out


def test_a_shown_block_is_up_to_date_once_placed(capsys: pytest.CaptureFixture[str]) -> None:
    figures = _bench("readme_figures")
    assert figures.main(["--show", "truncation"]) == 0
    shown = capsys.readouterr().out
    assert list(figures.blocks(shown)) == ["truncation"]
    assert figures.render(shown) == shown
