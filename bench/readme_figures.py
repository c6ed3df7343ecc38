"""Regenerate the README's figure tables from ``bench/results/*.json``; never type a figure.

The README marks each generated block::

    <!-- figures:NAME -->
    ...generated, do not edit...
    <!-- /figures:NAME -->

and this script rewrites every marked block from the result files the benchmarks wrote
(``python bench/X.py --json bench/results/X.json``), with a line naming the commit and the
machine each block's figures were measured on. ``--check`` changes nothing and exits 1 when the
README differs from what the results give (a test runs it).

Each ``@renders(NAME)`` function below makes the block ``NAME`` from ``bench/results/NAME.json``:
a small table and the provenance line (timing blocks add the load average, since the figures
of a busy machine are noisy). ``--show NAME`` prints one block, to place it in the README.

The documents are the README and docs/deploy.md (:data:`DOCUMENTS`).

Run: ``python bench/readme_figures.py [--check] [--readme FILE] [--show NAME]``.
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
DOCUMENTS = (README, ROOT / "docs" / "deploy.md")
"""The documents whose figure blocks this script writes (all of them unless ``--readme``)."""
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


def _source(*results: dict[str, Any], load: bool = False) -> str:
    """The provenance line under a block: which script, commit and machine.

    ``load`` adds the machine's load average (1 minute) when the file was written: times
    measured on a busy machine say so.
    """
    parts = []
    for data in results:
        machine = data["machine"]
        dirty = "+local changes" if data.get("dirty") else ""
        busy = ""
        if load and machine.get("load_average"):
            busy = f" at load {machine['load_average'][0]:.1f}"
        parts.append(
            f"`bench/{data['bench']}.py` at {data['commit'][:8]}{dirty}, {data['date']}, "
            f"{machine['cpus']} CPUs{busy} ({machine['processor']}, Python {machine['python']})"
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


def _num(value: float) -> str:
    """A time or size with about three significant digits (0.013, 0.187, 1.06, 18.2, 128)."""
    size = abs(value)
    if size >= 100:
        return f"{value:,.0f}"
    if size >= 10:
        return f"{value:.1f}"
    if size >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def _pair(first: float | None, second: float | None) -> str:
    """``p50 / p95`` (a dash for a percentile of nothing)."""
    return " / ".join("-" if v is None else _num(v) for v in (first, second))


def _ratio(value: float) -> str:
    return f"{value:.2f}x"


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


@renders("search_speed")
def render_search_speed(folder: Path) -> str:
    """Index build and keyword search latency at 1k/10k/100k tools, against raw bm25s."""
    data = read_results("search_speed", folder)
    rows = [
        [
            f"{int(r['size']):,}",
            f"{_num(r['tm_build'])} ({_num(r['tm_cpu'])})",
            _pair(r["tm_p50"], r["tm_p95"]),
            _pair(r["tm2_p50"], r["tm2_p95"]),
            f"{_num(r['tm_mem'])} MB",
            f"{_num(r['bs_build'])} ({_num(r['bs_cpu'])})",
            _pair(r["bs_p50"], r["bs_p95"]),
            f"{_num(r['bs_mem'])} MB",
        ]
        for r in data["figures"]["rows"]
    ]
    header = [
        "tools",
        "index build s (CPU s)",
        "search p50 / p95 ms",
        "two-need request p50 / p95 ms",
        "peak memory",
        "raw bm25s: build s (CPU s)",
        "bm25s p50 / p95 ms",
        "bm25s peak memory",
    ]
    return _table(header, rows) + "\n" + _source(data, load=True)


@renders("truncation")
def render_truncation(folder: Path) -> str:
    """Truncation time against tokenising the input once, validity, budget and memory growth."""
    data = read_results("truncation", folder)
    figures = data["figures"]
    budget = figures["budget"]
    sizes = list(dict.fromkeys(r["size"] for r in figures["speed"]))
    growth = {r["shape"]: r["growth_kb"] for r in figures["memory"]}
    rows = []
    for shape in dict.fromkeys(r["shape"] for r in figures["speed"]):
        cells = {r["size"]: r for r in figures["speed"] if r["shape"] == shape}
        ok = all(r["valid_json"] and r["tokens"] <= budget for r in cells.values())
        rows.append(
            [
                shape,
                *(_ratio(cells[size]["ratio"]) if size in cells else "-" for size in sizes),
                "yes" if ok else "NO",
                f"{growth[shape]:.1f} KB" if shape in growth else "-",
            ]
        )
    header = [
        f"result cut to {budget:,} tokens: time / tokenising it once",
        *sizes,
        f"every output valid JSON and <= {budget:,} tokens",
        "memory growth over 50 calls (1 MB)",
    ]
    return _table(header, rows) + "\n" + _source(data, load=True)


@renders("gateway_load")
def render_gateway_load(folder: Path) -> str:
    """Calls answered, lost and mixed up, and the latency the MCP gateway adds."""
    data = read_results("gateway_load", folder)
    figures = data["figures"]
    rows = []
    phases = (
        ("one_client", f"1 client x {figures['one_client']['calls']} in sequence"),
        ("concurrent", f"{figures['clients']} clients x {figures['calls_per_client']}"),
    )
    for key, label in phases:
        phase = figures[key]
        added = phase["added"] or {}
        for path, name in (("direct", "upstream directly"), ("gateway", "through the gateway")):
            row = phase[path]
            rows.append(
                [
                    label if path == "direct" else "",
                    name,
                    f"{row['answered']:,} of {row['calls']:,}",
                    f"{row['lost']:,}",
                    f"{row['mixed']:,}",
                    _pair(row["p50_ms"], row["p95_ms"]),
                    _pair(added.get("p50_ms"), added.get("p95_ms")) if path == "gateway" else "",
                ]
            )
    header = [
        "clients x calls",
        "path",
        "answered",
        "lost",
        "mixed up",
        "p50 / p95 ms",
        "added by the gateway p50 / p95 ms",
    ]
    return _table(header, rows) + "\n" + _source(data, load=True)


@renders("embed_speed")
def render_embed_speed(folder: Path) -> str:
    """Query embedding latency and pool embedding time per runtime, against torch."""
    data = read_results("embed_speed", folder)
    figures = data["figures"]
    rows = [
        [
            r["runtime"],
            _pair(r["query_p50_ms"], r["query_p95_ms"]),
            _ratio(r["speedup_p50"]),
            _num(r["embed_pool_s"]),
            f"{r['cosine_mean']:.4f} / {r['cosine_min']:.4f}",
        ]
        for r in figures["runtimes"]
    ]
    header = [
        f"{figures['model']} runtime",
        "one query p50 / p95 ms",
        "p50 speedup",
        f"embed {figures['tool_texts']:,} tool texts s",
        "cosine to the first row (mean / min)",
    ]
    return _table(header, rows) + "\n" + _source(data, load=True)


@renders("formatting")
def render_formatting(folder: Path) -> str:
    """Provider formatting time per tool, cold, same content and cached, against deepcopy."""
    data = read_results("formatting", folder)
    figures = data["figures"]
    rows = [
        [
            r["config"],
            _num(r["cold_us_per_tool"]),
            _num(r["same_content_us_per_tool"]),
            _num(r["cached_us_per_request"]),
            _ratio(r["cold_vs_deepcopy"]),
        ]
        for r in figures["configs"]
    ]
    step = figures["native_session_step"]
    rows.append(["reference: `copy.deepcopy`", _num(figures["deepcopy_us_per_tool"]), "", "", ""])
    header = [
        f"format {figures['tools']:,} tools, {figures['request_size']} a request",
        "cold µs/tool",
        "same content µs/tool",
        "cached µs/request",
        "cold / deepcopy",
    ]
    native = (
        f"A native {step['provider']} session step ({step['tools_sent']:,} tools sent, "
        f"{step['deferred']:,} deferred): cold {_num(step['cold_ms'])} ms, cached "
        f"{_num(step['cached_ms'])} ms.\n"
    )
    return _table(header, rows) + "\n" + native + "\n" + _source(data, load=True)


POLICY_OPERATIONS = {
    "visible_tools()": "`visible_tools()` ms (ratio)",
    "tool_search": "`tool_search` ms (ratio)",
    "call by name": "call by name ms (ratio)",
    "allows() x every tool": "`allows()` x every tool, cached ms (ratio to uncached)",
}
"""The policy_overhead operations a table shows, and their column headings."""


@renders("policy_overhead")
def render_policy_overhead(folder: Path) -> str:
    """Policy pipeline cost per operation: ms with policies and the ratio to none."""
    data = read_results("policy_overhead", folder)
    rows = []
    for catalog in data["figures"]["catalogs"]:
        ops = {op["operation"]: op for op in catalog["operations"]}
        rows.append(
            [
                f"{catalog['catalog']} ({catalog['visible']:,} of {catalog['tools']:,} visible)",
                *(
                    f"{_num(ops[k]['policy_ms'])} ({_ratio(ops[k]['ratio'])})" if k in ops else "-"
                    for k in POLICY_OPERATIONS
                ),
            ]
        )
    header = ["catalog (with policies; ratio to none)", *POLICY_OPERATIONS.values()]
    return _table(header, rows) + "\n" + _source(data, load=True)


@renders("validation")
def render_validation(folder: Path) -> str:
    """A checked call's p50/p95 against the same with a reference version's code."""
    data = read_results("validation", folder)
    figures = data["figures"]
    ref = f"`{figures['reference']}` ({figures['reference_commit'][:8]})"
    rows = [
        [
            r["case"],
            _pair(r["reference_p50_us"], r["reference_p95_us"]),
            _pair(r["p50_us"], r["p95_us"]),
            _ratio(r["ratio_p50"]),
        ]
        for r in figures["cases"]
    ]
    header = [
        f"case ({figures['calls']:,} calls)",
        f"{ref} p50 / p95 µs",
        "this p50 / p95 µs",
        "p50 ratio",
    ]
    return _table(header, rows) + "\n" + _source(data, load=True)


@renders("adapters")
def render_adapters(folder: Path) -> str:
    """Tool tokens sent over one conversation and time per step, managed against flat."""
    data = read_results("adapters", folder)
    figures = data["figures"]
    rows = [
        [
            r["framework"],
            f"{r['tokens_flat']:,}",
            f"{r['tokens_managed']:,} ({_pct(r['share'])})",
            _num(r["ms_per_step_flat"]),
            _num(r["ms_per_step_managed"]),
        ]
        for r in figures["frameworks"]
    ]
    header = [
        f"framework ({figures['catalog_tools']} demo tools)",
        f"tool tokens sent, flat ({figures['steps_flat']} steps)",
        f"managed ({figures['steps_managed']} steps)",
        "ms per step, flat",
        "managed",
    ]
    return _table(header, rows) + "\n" + _source(data, load=True)


@renders("stores")
def render_stores(folder: Path) -> str:
    """Redis session updates and PostgreSQL catalog follow, against memory and in-process."""
    data = read_results("stores", folder)
    figures = data["figures"]
    sessions = {(r["store"], r["state"]): r for r in figures["sessions"]}
    contended = {r["store"]: r for r in figures["contended"]}
    rows = []
    for (store, state), row in sessions.items():
        if store == "memory":
            continue
        memory = sessions.get(("memory", state))
        rows.append(
            [
                f"session update, {store}, {state} state ({row['state_bytes']:,} bytes)",
                _pair(row["p50_ms"], row["p95_ms"]),
                f"in memory {_pair(memory['p50_ms'], memory['p95_ms'])}" if memory else "-",
            ]
        )
    for store, row in contended.items():
        if store == "memory":
            continue
        memory = contended.get("memory")
        rows.append(
            [
                f"two writers on one session, {store} ({row['updates']:,} updates, "
                f"{row['attempts']:,} attempts, {row['lost']:,} lost)",
                _pair(row["p50_ms"], row["p95_ms"]),
                f"in memory {_pair(memory['p50_ms'], memory['p95_ms'])}" if memory else "-",
            ]
        )
    follow = figures["catalog_follow"]
    local = follow["reference_in_process_add_and_search"]
    for key, label in (
        ("push_to_present_on_2_replicas", "catalog push until present on 2 replicas"),
        ("push_to_searchable_on_2_replicas", "catalog push until searchable on 2 replicas"),
        ("remove_to_gone_on_2_replicas", "catalog remove until gone from 2 replicas"),
    ):
        row = follow[key]
        reference = "-"
        if key == "push_to_searchable_on_2_replicas":  # what the in-process reference does
            reference = f"in process {_pair(local['p50_ms'], local['p95_ms'])}"
        rows.append(
            [
                f"{label}, PostgreSQL ({follow['catalog_tools']} tools)",
                _pair(row["p50_ms"], row["p95_ms"]),
                reference,
            ]
        )
    header = ["what", "p50 / p95 ms", "reference p50 / p95 ms"]
    return _table(header, rows) + "\n" + _source(data, load=True)


KEYWORD_LABEL = "toolmgmt ToolCatalog.search"
"""The keyword ranker's label in ``bench/retrieval.py``'s tables."""


def _retrievers(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(label, entry) of each ranker, baselines first, as ``bench/retrieval.py`` printed them."""
    return list(data["figures"]["retrievers"].items())


def _metric(entry: dict[str, Any], key: str) -> str:
    value = entry.get(key)
    return "" if value is None else f"{value:.1f}"


@renders("retrieval_dev")
def render_retrieval_dev(folder: Path) -> str:
    """Retrieval on the BFCL dev split: every ranker, the baselines first."""
    data = read_results("retrieval_dev", folder)
    fig = data["figures"]
    rows = [
        [f"**{label}**" if entry["kind"] != "baseline" else label]
        + [_metric(entry["metrics"], k) for k in ("R@1", "R@5", "R@10", "MRR", "all@5")]
        for label, entry in _retrievers(data)
    ]
    header = [
        f"ranker ({fig['pool']:,} tools, {fig['queries']:,} requests)",
        "R@1",
        "R@5",
        "R@10",
        "MRR",
        f"all@5 ({fig['multi']} multi-tool)",
    ]
    return _table(header, rows) + "\n" + _source(data)


@renders("retrieval_live")
def render_retrieval_live(folder: Path) -> str:
    """Retrieval on real users' requests (BFCL live, the published half): strict and name-level
    figures for every ranker, then toolmgmt's per category."""
    data = read_results("retrieval_live", folder)
    fig = data["figures"]
    rows = [
        [f"**{label}**" if entry["kind"] != "baseline" else label]
        + [_metric(entry["metrics"], k) for k in ("R@1", "R@5", "MRR", "name-R@5")]
        for label, entry in _retrievers(data)
    ]
    header = [
        f"ranker ({fig['pool']:,} tools, {fig['queries']:,} requests)",
        "R@1",
        "R@5",
        "MRR",
        "name-R@5",
    ]
    out = _table(header, rows)
    ours = [(label, e) for label, e in _retrievers(data) if e["kind"] in ("keyword", "hybrid")]
    categories = sorted(ours[0][1]["per_category"]) if ours else []
    cat_rows = [
        [category, str(ours[0][1]["per_category"][category]["n"])]
        + [
            " / ".join(_metric(entry["per_category"][category], k) for k in ("R@5", "name-R@5"))
            for _, entry in ours
        ]
        for category in categories
    ]
    out += "\n" + _table(
        ["category", "requests", *[f"{label}: R@5 / name-R@5" for label, _ in ours]], cat_rows
    )
    return out + "\n" + _source(data)


@renders("retrieval_latency")
def render_retrieval_latency(folder: Path) -> str:
    """Search latency at 10,000 tools, keyword and hybrid (query embedding included)."""
    data = read_results("retrieval_live", folder)
    fig = data["figures"]
    lat = fig.get("latency_10k") or {}
    rows = []
    if "keyword" in lat:
        rows.append(["keyword (BM25)", _pair(lat["keyword"]["p50"], lat["keyword"]["p95"]), ""])
    if "hybrid" in lat:
        hybrid = lat["hybrid"]
        rows.append(
            [
                f"hybrid ({fig['embedder']})",
                _pair(hybrid["p50"], hybrid["p95"]),
                f"{_num(hybrid['p50_one_need'])} / {_num(hybrid['p50_two_needs'])}",
            ]
        )
    header = ["10,000 tools", "search p50 / p95 ms", "p50 one need / two needs ms"]
    return _table(header, rows) + "\n" + _source(data, load=True)


def _count(value: Any) -> str:
    """A count given as a number or as the list of what it counts."""
    return f"{len(value) if isinstance(value, list | tuple) else value:,}"


@renders("scaleout")
def render_scaleout(folder: Path) -> str:
    """Gateway replicas behind HAProxy with Redis: calls/s and latency for 1 client in sequence
    and 50 at once, against the upstream called directly; a replica killed under load."""
    data = read_results("scaleout", folder)
    fig = data["figures"]
    rows = []
    for phase, label in (("sequential", "1 client in sequence"), ("concurrent", "")):
        for row in fig[phase]:
            rows.append(
                [
                    label or f"{fig['clients']} clients x {fig['calls_per_client']}",
                    row["path"],
                    _num(row["calls_per_s"]),
                    _pair(row["p50_ms"], row["p95_ms"]),
                    f"{row['answered']:,} of {row['calls']:,}",
                    str(row["lost"]),
                ]
            )
            label = " "
    killed = fig["killed"]
    rows.append(
        [
            f"{fig['clients']} clients x {fig['calls_per_client']}",
            f"{killed['path']} (SIGKILL mid-run)",
            _num(killed["calls_per_s"]),
            _pair(killed["p50_ms"], killed["p95_ms"]),
            f"{killed['answered']:,} of {killed['calls']:,} ({killed['interrupted']} in flight on "
            f"the killed replica, not replayed)",
            str(killed["lost"]),
        ]
    )
    header = ["load", "path", "calls/s", "p50 / p95 ms", "answered", "lost"]
    goals = fig["goals"]
    note = (
        f"\nA replica adds {_num(goals['added_p50_ms_one_client'])} ms p50 to a direct call; "
        f"2 replicas give {goals['speedup_2_vs_1']:.2f}x the calls/s of 1 and 3 give "
        f"{goals['speedup_3_vs_1']:.2f}x on these 2 cores (the clients, the upstream and HAProxy "
        f"share them); after the kill every conversation kept its state: "
        f"{'yes' if killed['state_kept'] else 'NO'}; calls run twice: "
        f"{_count(killed['duplicated'])}.\n"
    )
    return _table(header, rows) + note + "\n" + _source(data, load=True)


@renders("scaleout_cpu")
def render_scaleout_cpu(folder: Path) -> str:
    """Where a call's CPU goes, per process, and a replica's time by leg and by layer (py-spy)."""
    data = read_results("scaleout", folder)
    fig = data["figures"]
    parts = ("clients", "replicas", "upstream", "haproxy", "redis")
    rows = [
        [row["path"], *[_num(row["cpu_ms_per_call"].get(p, 0.0)) for p in parts]]
        for row in fig["concurrent"]
    ]
    out = _table(["50 clients: CPU ms per call", *parts], rows)
    profile = fig.get("profile")
    if profile:
        legs = [[leg, f"{share:.0f}%"] for leg, share in profile["by_leg_percent"].items()]
        layers = [[lay, f"{share:.0f}%"] for lay, share in profile["by_layer_percent"].items()]
        out += "\n" + _table(
            [
                f"a replica's time under load ({profile['replica_cpu_ms_per_call']} ms CPU a call)",
                "share",
            ],
            legs,
        )
        out += "\n" + _table(["by library", "share"], layers)
    return out + "\n" + _source(data, load=True)


@renders("pg_ranking")
def render_pg_ranking(folder: Path) -> str:
    """PostgreSQL's full-text ranking against the catalog's BM25 on the BFCL dev split."""
    data = read_results("pg_ranking", folder)
    fig = data["figures"]
    rows = [
        [
            row["ranker"],
            *[f"{row[k]:.1f}" for k in ("R@1", "R@5", "MRR")],
            _pair(row["p50_ms"], row["p95_ms"]),
        ]
        for row in fig["rankers"]
    ]
    header = [
        f"ranker (BFCL dev: {fig['pool']:,} tools, {fig['queries']:,} requests)",
        "R@1",
        "R@5",
        "MRR",
        "p50 / p95 ms",
    ]
    return _table(header, rows) + "\n" + _source(data, load=True)


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
    parser.add_argument("--check", action="store_true", help="exit 1 if a document is stale")
    parser.add_argument(
        "--readme", type=Path, help="only this document (default: README.md and docs/deploy.md)"
    )
    parser.add_argument("--results", type=Path, default=RESULTS_DIR)
    parser.add_argument("--show", choices=sorted(RENDERERS), help="print this block and exit")
    args = parser.parse_args(argv)
    if args.show:
        print(
            f"<!-- figures:{args.show} -->\n{RENDERERS[args.show](args.results)}"
            f"<!-- /figures:{args.show} -->"
        )
        return 0
    stale_documents = 0
    for document in [args.readme] if args.readme else DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        new = render(text, args.results)
        if args.check:
            stale = [n for n, body in blocks(new).items() if blocks(text).get(n) != body]
            if stale:
                print(f"{document}: stale figure blocks: {', '.join(stale)}", file=sys.stderr)
                stale_documents += 1
            else:
                print(f"{document}: {len(blocks(new))} figure blocks up to date")
            continue
        document.write_text(new, encoding="utf-8")
        print(f"{document}: {len(blocks(new))} figure blocks regenerated")
    return 1 if stale_documents else 0


if __name__ == "__main__":
    raise SystemExit(main())
