"""Regenerate the README's figure tables from ``bench/results/*.json``; never type a figure.

The README marks each generated block::

    <!-- figures:NAME -->
    ...generated, do not edit...
    <!-- /figures:NAME -->

and this script rewrites every marked block from the result files the benchmarks wrote
(``python bench/X.py --json bench/results/X.json``), with a line saying when and on which
machine each block's figures were measured (the commit stays in the results file). ``--check``
changes nothing and exits 1 when the README differs from what the results give (a test runs
it).

Each ``@renders(NAME)`` function below makes the tables of the block ``NAME`` from the figures
of ``bench/results/NAME.json`` (most with :func:`_rows`: a heading and a cell writer a column),
and :func:`renders` adds the provenance line (timing blocks add the load average, since the
figures of a busy machine are noisy). ``--show NAME`` prints one block, to place it in the
README.

The documents are the README, docs/code-mode.md, docs/deploy.md, docs/cost.md,
docs/observability.md and docs/performance.md
(:data:`DOCUMENTS`).

Run: ``python bench/readme_figures.py [--check] [--readme FILE] [--show NAME]``.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import RESULTS_DIR, read_results  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCUMENTS = (
    README,
    ROOT / "docs" / "code-mode.md",
    ROOT / "docs" / "deploy.md",
    ROOT / "docs" / "cost.md",
    ROOT / "docs" / "observability.md",
    ROOT / "docs" / "performance.md",
    ROOT / "docs" / "mcp-gateway.md",
)
"""The documents whose figure blocks this script writes (all of them unless ``--readme``)."""
BLOCK = re.compile(
    r"(<!-- figures:(?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- /figures:(?P=name) -->)", re.S
)

Renderer = Callable[[Path], str]
RENDERERS: dict[str, Renderer] = {}


def renders(
    name: str, *, results: str | None = None, timed: bool = False, peers: Sequence[str] = ()
) -> Callable[[Callable[[dict[str, Any]], str]], Renderer]:
    """Register a function from a results file's figures to the block ``name``'s tables.

    The block is what it returns, then the provenance line (:func:`_source`) of
    ``bench/results/<results or name>.json``; ``timed`` adds the load average to that line,
    ``peers`` the versions of the libraries the block compares against.
    """

    def register(fn: Callable[[dict[str, Any]], str]) -> Renderer:
        def render_block(folder: Path) -> str:
            data = read_results(results or name, folder)
            return fn(data["figures"]) + "\n" + _source(data, load=timed, peers=peers)

        render_block.__doc__ = fn.__doc__
        RENDERERS[name] = render_block
        return render_block

    return register


def _n(value: float) -> str:
    return f"{value:,.0f}"


def _pct(share: float) -> str:
    return f"{100 * share:.1f}%"


def _source(*results: dict[str, Any], load: bool = False, peers: Sequence[str] = ()) -> str:
    """The provenance line under a block: which script, when and on which machine (the
    commit stays in the results file: a reader has no use for a hash).

    ``load`` adds the machine's load average (1 minute) when the file was written: times
    measured on a busy machine say so. ``peers``: the versions of these libraries the file
    recorded (a file from before versions were recorded says so).
    """
    parts = []
    for data in results:
        machine = data["machine"]
        dirty = " (uncommitted code)" if data.get("dirty") else ""
        busy = ""
        if load and machine.get("load_average"):
            busy = f" at load {machine['load_average'][0]:.1f}"
        recorded = data.get("peers", {})
        versions = "".join(
            f", {peer} {recorded.get(peer, '(version not recorded)')}" for peer in peers
        )
        parts.append(
            f"`bench/{data['bench']}.py`{dirty}, {data['date']}, "
            f"{machine['cpus']} CPUs{busy} ({machine['processor']}, Python {machine['python']}"
            f"{versions})"
        )
    return "<sub>Measured by " + "; ".join(parts) + ".</sub>\n"


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


Cell = Callable[[Any], str]


def _rows(items: Iterable[Any], columns: dict[str, Cell], last: Sequence[list[str]] = ()) -> str:
    """A table of a row per item: each column's heading and how it writes an item's cell
    (``last``: rows written out, after them)."""
    rows = [[cell(item) for cell in columns.values()] for item in items]
    return _table(list(columns), rows + list(last))


def _get(key: Any, write: Callable[[Any], str] = str) -> Cell:
    """The cell ``write(item[key])``."""
    return lambda item: write(item[key])


def _p(prefix: str, suffix: str = "") -> Cell:
    """The ``p50 / p95`` cell of ``<prefix>p50<suffix>`` and ``<prefix>p95<suffix>``."""
    return lambda r: _pair(r[f"{prefix}p50{suffix}"], r[f"{prefix}p95{suffix}"])


def _mb(key: str) -> Cell:
    return lambda r: f"{_num(r[key])} MB"


def _with_cpu(wall: str, cpu: str) -> Cell:
    return lambda r: f"{_num(r[wall])} ({_num(r[cpu])})"


def token_rows(figures: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The tokens bench's rows by catalog label."""
    return {row["catalog"]: row for row in figures["catalogs"]}


TOKEN_CATALOGS = {
    "bfcl-80": "80 BFCL tools",
    "bfcl-200": "200 BFCL tools",
    "demo": "demo catalog",
    "bfcl-pool": "whole BFCL dev pool",
}
"""The tokens table's rows: catalog labels and what the README calls them."""


@renders("tokens")
def render_tokens(figures: dict[str, Any]) -> str:
    """Definition tokens flat and per mode, and a cold start, per catalog."""
    rows = token_rows(figures)

    def initial(mode: str) -> Cell:
        def cell(key: str) -> str:
            entry = rows[key]["modes"][mode]
            return f"{_n(entry['initial'])} ({_pct(entry['share'])})"

        return cell

    def cold(key: str) -> str:
        modes = rows[key]["modes"]
        return " / ".join(
            _n(modes[m]["cold_start"]["tokens"]) for m in ("gateway", "search", "lazy")
        )

    return _rows(
        TOKEN_CATALOGS,
        {
            "catalog": TOKEN_CATALOGS.__getitem__,
            "tools": lambda key: str(rows[key]["tools"]),
            "flat": lambda key: _n(rows[key]["flat"]),
            **{mode: initial(mode) for mode in ("search", "gateway", "lazy")},
            "cold start: gateway / search / lazy": cold,
        },
    )


CONVERSATION_DESIGNS = {
    "flat": "flat + truncation",
    "flat-raw": "flat, raw results",
    "floor": "floor: the calls and results alone",
    "search": '**search** (`mode="search"`: native deferral, toolmgmt\'s search)',
    "search-listed": "search, `native=False` (stable list + `call_tool`; any provider)",
    "search-3": "search, 3 results a search",
    "search-append": "search, growing list (`Search(appends=True)`: found tools join the list)",
    "gateway": "gateway",
    "lazy": "lazy",
    "native": "provider's own tool search (`native=True, namespaces=False`)",
    "native-ns": "provider's own tool search, namespaced (`native=True`, the default)",
    "stable-promote": "(b) stable, grows when the cache is cold",
    "additions": "(d) mid-conversation tool additions",
}
"""The conversation table's rows: design keys and what the README calls them."""

CONVERSATION_RULES = {
    "anthropic": ("anthropic", "Anthropic"),
    "openai-prefix": ("openai-responses", "OpenAI < GPT-5.6"),
    "openai": ("openai-responses", "OpenAI GPT-5.6+"),
}
"""The conversation table's billing columns: rules, the provider whose requests they bill,
and their heading."""


def _conversation_table(rows_list: list[dict[str, Any]], model: str) -> str:
    """Billed input per design against flat + truncation, by size and billing rules."""
    rows = {(r["design"], r["size"], r["provider"]): r for r in rows_list}
    sizes = list(dict.fromkeys(r["size"] for r in rows_list))
    tools = {r["size"]: r["tools"] for r in rows_list}

    def billed(size: str, rules: str) -> Cell:
        provider = CONVERSATION_RULES[rules][0]

        def cell(design: str) -> str:
            row = rows.get((design, size, provider))
            if row is None:
                return "-"
            if design == "flat":
                return f"{row['billed'][rules] / 1000:,.1f}K"
            return _ratio(row["vs_flat"][rules])

        return cell

    def dollars(size: str) -> Cell:
        def cell(design: str) -> str:
            row = rows.get((design, size, "anthropic"))
            return "-" if row is None else f"${row['dollars'][model]:.3f}"

        return cell

    columns: dict[str, Cell] = {
        "design (flat: billed input tokens; the rest: x flat)": CONVERSATION_DESIGNS.__getitem__
    }
    for size in sizes:
        for rules, (_, heading) in CONVERSATION_RULES.items():
            columns[f"{tools[size]:,} tools: {heading}"] = billed(size, rules)
        columns[f"{tools[size]:,} tools: {model} $"] = dollars(size)
    present = [d for d in CONVERSATION_DESIGNS if any(k[0] == d for k in rows)]
    return _rows(present, columns)


@renders("conversation")
def render_conversation(figures: dict[str, Any]) -> str:
    """A whole conversation's billed input per mode and design, prompt caching included,
    against flat + truncation (its own figure in base-price tokens), at two catalog sizes: a
    search per need."""
    return _conversation_table(figures["rows"], figures["prices"]["models"][0]["model"])


PICK_DESIGNS = ("flat-raw", "flat", "search", "search-listed", "search-append", "gateway", "lazy")
"""The modes a reader picks from (the prototypes stay in docs/cost.md's full tables)."""


@renders("conversation_caching", results="conversation")
def render_conversation_caching(figures: dict[str, Any]) -> str:
    """Each mode's conversation against flat + truncation, without prompt caching (every input
    token at the full price) and with Anthropic's and OpenAI's, at both catalog sizes."""
    rows = {(r["design"], r["size"], r["provider"]): r for r in figures["rows"]}
    tools = {r["size"]: r["tools"] for r in figures["rows"]}

    def ratio(size: str, provider: str, rules: str | None) -> Cell:
        def cell(design: str) -> str:
            row = rows.get((design, size, provider))
            ref = rows[("flat", size, provider)]
            if row is None:
                return "-"
            if rules is None:
                return _ratio(row["input_tokens"] / ref["input_tokens"])
            return _ratio(row["vs_flat"][rules])

        return cell

    columns: dict[str, Cell] = {"mode": CONVERSATION_DESIGNS.__getitem__}
    for size in dict.fromkeys(r["size"] for r in figures["rows"]):
        columns[f"{tools[size]:,} tools: no caching"] = ratio(size, "anthropic", None)
        columns[f"{tools[size]:,} tools: Anthropic caching"] = ratio(size, "anthropic", "anthropic")
        columns[f"{tools[size]:,} tools: OpenAI caching"] = ratio(
            size, "openai-responses", "openai-prefix"
        )
    return _rows([d for d in PICK_DESIGNS if any(k[0] == d for k in rows)], columns)


@renders("conversation_tasks")
def render_conversation_tasks(figures: dict[str, Any]) -> str:
    """The search mode's bill for the conversation task as measured (two of its ten calls are
    tools the catalog lists up front, called without a search) and for the same calls with
    none of them listed up front, against flat + truncation, at the demo size."""
    rows = {(r["task"], r["design"], r["provider"]): r for r in figures["rows"]}
    tasks = {
        "listed": "the task above: 2 of its 10 calls listed up front",
        "unlisted": "the same 10 calls, none listed up front (a search for each)",
    }

    def ratio(design: str, provider: str, rules: str | None) -> Cell:
        def cell(task: str) -> str:
            row, ref = rows[(task, design, provider)], rows[(task, "flat", provider)]
            if rules is None:
                return _ratio(row["input_tokens"] / ref["input_tokens"])
            return _ratio(row["vs_flat"][rules])

        return cell

    columns: dict[str, Cell] = {"search mode, 151 tools": tasks.__getitem__}
    for design, name in (("search", "native"), ("search-listed", "`native=False`")):
        columns[f"{name}: no caching"] = ratio(design, "anthropic", None)
        columns[f"{name}: Anthropic caching"] = ratio(design, "anthropic", "anthropic")
        columns[f"{name}: OpenAI caching"] = ratio(design, "openai-responses", "openai-prefix")
    return _rows([t for t in tasks if any(k[0] == t for k in rows)], columns)


@renders("conversation_batched", results="conversation")
def render_conversation_batched(figures: dict[str, Any]) -> str:
    """As ``conversation``, with a model that searches every need of the user's message at
    once."""
    return _conversation_table(figures["batched"], figures["prices"]["models"][0]["model"])


@renders("conversation_pause", results="conversation")
def render_conversation_pause(figures: dict[str, Any]) -> str:
    """As ``conversation`` on the demo catalog, over two user messages ten minutes apart."""
    return _conversation_table(figures["pause"], figures["prices"]["models"][0]["model"])


CODE_COST_DESIGNS = {
    "flat": "flat + truncation, a call per turn",
    "flat-batched": "flat + truncation, parallel reads in one turn",
    "code": '**code** (`mode="code"`: `tool_search` + one program)',
}
"""The code-cost table's rows: design keys and what the documents call them."""
CODE_COST_SIZES = {"demo": "151 tools", "demo+bfcl": "1,124 tools"}


@renders("code_cost")
def render_code_cost(figures: dict[str, Any]) -> str:
    """Code mode's conversation in dollars at list prices, input plus output, against flat +
    truncation one call per turn and with its reads batched, at both catalog sizes; a flat
    request OpenAI would refuse (over 128 tools) is marked."""
    models = figures["prices"]["models"]
    rows = {(r["size"], r["design"], r["provider"]): r for r in figures["rows"]}
    keys = [
        (size, d)
        for size in CODE_COST_SIZES
        for d in CODE_COST_DESIGNS
        if (size, d, "anthropic") in rows
    ]

    def tokens(key: tuple[str, str]) -> str:
        row = rows[(*key, "anthropic")]
        return f"{_n(row['input_tokens'])} / {_n(row['output_tokens'])}"

    def dollars(model: dict[str, Any]) -> Cell:
        def cell(key: tuple[str, str]) -> str:
            row = rows[(*key, model["provider"])]
            refused = " †" if row["over_openai_limit"] else ""
            name = model["model"]
            return f"${row['dollars'][name]:.3f} ({_ratio(row['vs_flat'][name])}){refused}"

        return cell

    columns: dict[str, Cell] = {
        "catalog": lambda key: CODE_COST_SIZES[key[0]],
        "design": lambda key: CODE_COST_DESIGNS[key[1]],
        "input / output tokens (Anthropic)": tokens,
        **{f"{m['model']} $ (x flat)": dollars(m) for m in models},
    }
    table = _rows(keys, columns)

    def span(size: str, design: str, against: str) -> str:
        ratios = []
        for model in models:
            row, ref = (
                rows[(size, design, model["provider"])],
                rows[(size, against, model["provider"])],
            )
            ratios.append(row["dollars"][model["model"]] / ref["dollars"][model["model"]])
        return f"{min(ratios):.3f}-{max(ratios):.3f}x"

    goals = figures["goals"]
    lines = []
    for size, bound in (("demo", 0.20), ("demo+bfcl", 0.06)):
        if (size, "code", "anthropic") not in rows:
            continue
        met = [ok for text, ok in goals.items() if text.startswith(f"{size} /")]
        verdict = "met for every model" if all(met) else f"met for {sum(met)} of {len(met)} models"
        lines.append(
            f"- {CODE_COST_SIZES[size]}: code mode costs {span(size, 'code', 'flat')} flat + "
            f"truncation ({verdict}; the goal is {bound:.2f}x), "
            f"{span(size, 'code', 'flat-batched')} a flat model that batches its reads."
        )
    prices = (
        f"List prices of {figures['prices']['date']} (`bench/conversation.py`'s `PRICES`: "
        + "; ".join(
            f"{m['model']} ${m['input']:.2f} in, ${m['cache_read']:.2f} cached, "
            f"${m['output']:.2f} out per million"
            for m in models
        )
        + "), each model's prompt caching included.\n"
    )
    refused = (
        "† A request OpenAI refuses: it takes at most 128 tools (billed here as if sent).\n\n"
        if any(r["over_openai_limit"] for r in figures["rows"])
        else ""
    )
    for model in models:
        cold = [
            CODE_COST_SIZES[r["size"]]
            for r in figures["rows"]
            if r["design"] == "code"
            and r["provider"] == model["provider"]
            and r["read"].get(model["model"]) == 0
        ]
        if cold:
            lines.append(
                f"- {model['model']} reads nothing from its cache in code mode's conversation at "
                f"{' and '.join(cold)}: no request before the last reaches its minimum cacheable "
                f"prefix ({_n(model.get('min_tokens') or 0)} tokens), so they are billed in "
                "full and the last as a cache write."
            )
    floored = {
        r["size"]: r["vs_flat_at_floor"]
        for r in figures["rows"]
        if r["design"] == "code" and r.get("vs_flat_at_floor")
    }
    if floored:
        spans = []
        for size, f in floored.items():
            low, high = f"{min(f.values()):.3f}", f"{max(f.values()):.3f}"
            spans.append(f"{low if low == high else low + '-' + high}x at {CODE_COST_SIZES[size]}")
        lines.append(
            f"- Were every Anthropic model's minimum cacheable prefix "
            f"{_n(figures['floor'])} tokens (the highest documented: Opus 4.5-4.7, Haiku 4.5; "
            f"5.5's are assumed), code mode would cost {' and '.join(spans)} on Anthropic: "
            "its requests are small, so a higher minimum leaves more of them uncached."
        )
    return table + "\n" + refused + "\n".join(lines) + "\n\n" + prices


BREAKPOINT_RULES = {"anthropic": "anthropic", "openai-responses": "openai"}
"""The rules a breakpoint row is billed under: placing breakpoints is moot for OpenAI's
automatic prefix caching."""


@renders("code_mode", timed=True)
def render_code_mode(figures: dict[str, Any]) -> str:
    """A 10-call program's time beyond its tools' own, against the same calls made directly."""
    rows = [
        ("`run_code` (the program)", figures["program_ms"]),
        ("the same calls made directly", figures["direct_ms"]),
        ("**overhead**", figures["overhead_ms"]),
    ]
    goal = "met" if figures["meets_goal"] else "not met"
    return (
        _table(
            [f"{figures['calls']}-call program, {figures['rounds']:,} rounds", "p50 ms", "p90 ms"],
            [[label, _num(q["p50"]), _num(q["p90"])] for label, q in rows],
        )
        + f"\nGoal: overhead p50 <= {_num(figures['goal_p50_ms'])} ms ({goal}); "
        f"pydantic-monty {figures['monty']}.\n"
    )


@renders("conversation_breakpoints", results="conversation")
def render_conversation_breakpoints(figures: dict[str, Any]) -> str:
    """Per breakpoint placement: a conversation's billed input, and the next conversation's
    with the same tools and system prompt."""
    return _rows(
        figures["breakpoints"],
        {
            "design": _get("design", lambda key: CONVERSATION_DESIGNS[key]),
            "provider": _get("provider"),
            "breakpoints": _get("breakpoints", lambda p: " + ".join(p) or "implicit only"),
            "billed: this conversation": lambda r: _n(r["first"][BREAKPOINT_RULES[r["provider"]]]),
            "the next one (same tools and system)": lambda r: _n(
                r["next"][BREAKPOINT_RULES[r["provider"]]]
            ),
        },
    )


@renders("search_speed", timed=True, peers=("bm25s",))
def render_search_speed(figures: dict[str, Any]) -> str:
    """Index build and keyword search latency at 1k/10k/100k tools, against raw bm25s (its
    version named: a peer's figure holds for that version only)."""
    versions = figures["versions"]
    rounds = figures["rounds"]
    intro = (
        f"Against bm25s {versions['bm25s']} (numpy {versions['numpy']}) in the same run; builds "
        f"are the median of {rounds}, peak memory is the growth of the peak resident set in a "
        "fresh process (tracemalloc's peak in brackets); the last column is toolmgmt's figure "
        "over bm25s's (below 1x: toolmgmt needs less).\n\n"
    )

    def mem(key: str) -> Cell:
        return lambda r: f"{_num(r[f'{key}_rss'])} MB ({_num(r[f'{key}_mem'])})"

    def against(r: dict[str, Any]) -> str:
        memory = _ratio(r["tm_rss"] / r["bs_rss"]) if r["bs_rss"] > 0 else "-"
        build, p50 = _ratio(r["tm_build"] / r["bs_build"]), _ratio(r["tm_p50"] / r["bs_p50"])
        return f"{build} / {memory} / {p50}"

    return intro + _rows(
        figures["rows"],
        {
            "tools": _get("size", lambda size: f"{int(size):,}"),
            "index build s (CPU s)": _with_cpu("tm_build", "tm_cpu"),
            "search p50 / p95 ms": _p("tm_"),
            "two-need request p50 / p95 ms": _p("tm2_"),
            "peak memory": mem("tm"),
            "bm25s: build s (CPU s)": _with_cpu("bs_build", "bs_cpu"),
            "bm25s p50 / p95 ms": _p("bs_"),
            "bm25s peak memory": mem("bs"),
            "toolmgmt / bm25s: build, memory, p50": against,
        },
    )


@renders("truncation", timed=True)
def render_truncation(figures: dict[str, Any]) -> str:
    """Truncation time against tokenising the input once, validity, budget and memory growth."""
    budget = figures["budget"]
    sizes = list(dict.fromkeys(r["size"] for r in figures["speed"]))
    growth = {r["shape"]: r["growth_kb"] for r in figures["memory"]}
    cells = {
        shape: {r["size"]: r for r in figures["speed"] if r["shape"] == shape}
        for shape in dict.fromkeys(r["shape"] for r in figures["speed"])
    }

    def ratio(size: str) -> Cell:
        return lambda shape: _ratio(cells[shape][size]["ratio"]) if size in cells[shape] else "-"

    def ok(shape: str) -> str:
        fine = all(r["valid_json"] and r["tokens"] <= budget for r in cells[shape].values())
        return "yes" if fine else "NO"

    return _rows(
        cells,
        {
            f"result cut to {budget:,} tokens: time / tokenising it once": str,
            **{size: ratio(size) for size in sizes},
            f"every output valid JSON and <= {budget:,} tokens": ok,
            "memory growth over 50 calls (1 MB)": lambda shape: (
                f"{growth[shape]:.1f} KB" if shape in growth else "-"
            ),
        },
    )


@renders("gateway_load", timed=True)
def render_gateway_load(figures: dict[str, Any]) -> str:
    """Calls answered, lost and mixed up, and the latency the MCP gateway adds."""
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
                    _num(row["calls_per_s"]) if "calls_per_s" in row else "-",
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
        "calls/s",
    ]
    return _table(header, rows)


@renders("admission", timed=True)
def render_admission(figures: dict[str, Any]) -> str:
    """Another client's latency while one client floods a replica, with and without limits."""
    default = figures.get("default_max_requests", 64)
    limits = {
        "alone": "-",
        "flood, no limit": "none",
        "flood, defaults": f"{default} a replica, {default // 2} a client, "
        f"{max(2, default // 32)} of its requests worked on at once (the defaults)",
        "flood, tight": f"{figures['max_requests']} a replica, {figures['share']} for `bulk`",
        "flood elsewhere": "the defaults; the flood sent to another replica on the same host",
    }
    rows = []
    for name, row in figures["phases"].items():
        flood = row["flood"]
        rows.append(
            [
                name,
                limits.get(name, "?"),
                f"{row['answered']:,} of {row['calls']:,}",
                _pair(row["p50_ms"], row["p95_ms"]),
                "-" if row["max_ms"] is None else _num(row["max_ms"]),
                "-" if flood is None else f"{flood['answered']:,} / {flood['refused']:,}",
            ]
        )
    header = [
        f"phase ({figures['flood_sessions']:,} `bulk` sessions"
        + (f", {figures['at_once']:,} at a time)" if figures.get("at_once") else ")"),
        "max_requests",
        "`interactive` calls answered",
        "p50 / p95 ms",
        "max ms",
        "`bulk` calls answered / refused (503)",
    ]
    ratio, elsewhere = figures.get("p50_ratio_defaults"), figures.get("p50_ratio_elsewhere")
    if ratio is None:
        return _table(header, rows)
    phases = figures["phases"]
    host = phases.get("flood elsewhere", {}).get("p50_ms")
    alone = phases["alone"]["p50_ms"]
    line = (
        f"`interactive`'s p50 under the flood with the defaults: {ratio:g}x its p50 alone "
        "(the goal: within 2x)"
    )
    if elsewhere is not None and host and alone:
        line += (
            f"; with the flood on another replica of the same host, {host / alone:.2f}x "
            "(what the host's shared cores cost it)"
        )
    return _table(header, rows) + "\n" + line + "."


@renders("embed_speed", timed=True, peers=("sentence-transformers", "torch", "onnxruntime"))
def render_embed_speed(figures: dict[str, Any]) -> str:
    """Query embedding latency and pool embedding time per runtime, against torch."""
    return _rows(
        figures["runtimes"],
        {
            f"{figures['model']} runtime": _get("runtime"),
            "one query p50 / p95 ms": _p("query_", "_ms"),
            "p50 speedup": _get("speedup_p50", _ratio),
            f"embed {figures['tool_texts']:,} tool texts s": _get("embed_pool_s", _num),
            "cosine to the first row (mean / min)": lambda r: (
                f"{r['cosine_mean']:.4f} / {r['cosine_min']:.4f}"
            ),
        },
    )


@renders("formatting", timed=True)
def render_formatting(figures: dict[str, Any]) -> str:
    """Provider formatting time per tool, cold, same content and cached, against deepcopy."""
    heading = f"format {figures['tools']:,} tools, {figures['request_size']} a request"
    table = _rows(
        figures["configs"],
        {
            heading: _get("config"),
            "cold µs/tool": _get("cold_us_per_tool", _num),
            "same content µs/tool": _get("same_content_us_per_tool", _num),
            "cached µs/request": _get("cached_us_per_request", _num),
            "cold / deepcopy": _get("cold_vs_deepcopy", _ratio),
        },
        last=[["reference: `copy.deepcopy`", _num(figures["deepcopy_us_per_tool"]), "", "", ""]],
    )
    step = figures["native_session_step"]
    native = (
        f"A native {step['provider']} session step ({step['tools_sent']:,} tools sent, "
        f"{step['deferred']:,} deferred): cold {_num(step['cold_ms'])} ms, cached "
        f"{_num(step['cached_ms'])} ms.\n"
    )
    return table + "\n" + native


@renders("observability", timed=True)
def render_observability(figures: dict[str, Any]) -> str:
    """A call's CPU time with no listener, the default listener (no SDK) and the SDK recording
    to an in-memory exporter, and the ratios to none (bench/observability.py)."""
    goals = figures["goals"]
    table = _rows(
        figures["cases"],
        {
            "call (goal rows first)": lambda r: r["case"] + ("" if r["goal"] else " (no goal)"),
            "no listener µs": _get("reference_us", _num),
            "default, no SDK µs": _get("default_us", _num),
            "SDK, in-memory µs": _get("sdk_us", _num),
            f"no SDK (goal ≤ {goals['default']:.2f}x)": _get("default_ratio", _ratio),
            f"SDK (goal ≤ {goals['sdk']:.2f}x)": _get("sdk_ratio", _ratio),
        },
    )
    floor = (
        f"The SDK's own work per call (a span made current and ended, one histogram point, no "
        f"toolmgmt): {_num(figures['sdk_floor_us'])} µs. Median of {figures['rounds']} rounds of "
        f"{figures['calls']} calls each; goals met on the goal rows: "
        f"{'yes' if figures['met'] else 'no'}.\n"
    )
    return table + "\n" + floor


POLICY_OPERATIONS = {
    "visible_tools()": "`visible_tools()` ms (ratio)",
    "tool_search": "`tool_search` ms (ratio)",
    "call by name": "call by name ms (ratio)",
    "allows() x every tool": "`allows()` x every tool, cached ms (ratio to uncached)",
}
"""The policy_overhead operations a table shows, and their column headings."""


@renders("policy_overhead", timed=True)
def render_policy_overhead(figures: dict[str, Any]) -> str:
    """Policy pipeline cost per operation: ms with policies and the ratio to none."""

    def operation(key: str) -> Cell:
        def cell(catalog: dict[str, Any]) -> str:
            ops = {op["operation"]: op for op in catalog["operations"]}
            return (
                f"{_num(ops[key]['policy_ms'])} ({_ratio(ops[key]['ratio'])})"
                if key in ops
                else "-"
            )

        return cell

    return _rows(
        figures["catalogs"],
        {
            "catalog (with policies; ratio to none)": lambda c: (
                f"{c['catalog']} ({c['visible']:,} of {c['tools']:,} visible)"
            ),
            **{heading: operation(key) for key, heading in POLICY_OPERATIONS.items()},
        },
    )


@renders("validation", timed=True)
def render_validation(figures: dict[str, Any]) -> str:
    """A checked call's p50/p95 against the same with a reference version's code."""
    ref = f"`{figures['reference']}`"
    return _rows(
        figures["cases"],
        {
            f"case ({figures['calls']:,} calls)": _get("case"),
            f"{ref} p50 / p95 µs": _p("reference_", "_us"),
            "this p50 / p95 µs": _p("", "_us"),
            "p50 ratio": _get("ratio_p50", _ratio),
        },
    )


@renders("adapters", timed=True)
def render_adapters(figures: dict[str, Any]) -> str:
    """Tool tokens sent over one conversation and time per step, managed against flat."""
    return _rows(
        figures["frameworks"],
        {
            f"framework ({figures['catalog_tools']} demo tools)": _get("framework"),
            f"tool tokens sent, flat ({figures['steps_flat']} steps)": lambda r: (
                f"{r['tokens_flat']:,}"
            ),
            f"managed ({figures['steps_managed']} steps)": lambda r: (
                f"{r['tokens_managed']:,} ({_pct(r['share'])})"
            ),
            "ms per step, flat": _get("ms_per_step_flat", _num),
            "managed": _get("ms_per_step_managed", _num),
        },
    )


FOLLOW_ROWS = {
    "push_to_present_on_2_replicas": "catalog push until present on 2 replicas",
    "push_to_searchable_on_2_replicas": "catalog push until searchable on 2 replicas",
    "remove_to_gone_on_2_replicas": "catalog remove until gone from 2 replicas",
}
"""The stores table's catalog follow rows: figures and what they are called."""


@renders("stores", timed=True)
def render_stores(figures: dict[str, Any]) -> str:
    """Redis session updates and PostgreSQL catalog follow, against memory and in-process."""
    sessions = {(r["store"], r["state"]): r for r in figures["sessions"]}
    contended = {r["store"]: r for r in figures["contended"]}
    follow = figures["catalog_follow"]
    local = follow["reference_in_process_add_and_search"]
    rows = []  # (what, figures, reference figures or None)
    for (store, state), row in sessions.items():
        if store != "memory":
            what = f"session update, {store}, {state} state ({row['state_bytes']:,} bytes)"
            rows.append((what, row, sessions.get(("memory", state)), "in memory "))
    for store, row in contended.items():
        if store != "memory":
            what = (
                f"two writers on one session, {store} ({row['updates']:,} updates, "
                f"{row['attempts']:,} attempts, {row['lost']:,} lost)"
            )
            rows.append((what, row, contended.get("memory"), "in memory "))
    for key, label in FOLLOW_ROWS.items():
        # the in-process reference makes a tool searchable
        reference = local if key == "push_to_searchable_on_2_replicas" else None
        what = f"{label}, PostgreSQL ({follow['catalog_tools']} tools)"
        rows.append((what, follow[key], reference, "in process "))
    return _rows(
        rows,
        {
            "what": _get(0),
            "p50 / p95 ms": _get(1, _p("", "_ms")),
            "reference p50 / p95 ms": lambda r: r[3] + _p("", "_ms")(r[2]) if r[2] else "-",
        },
    )


KEYWORD_LABEL = "toolmgmt ToolCatalog.search"
"""The keyword ranker's label in ``bench/retrieval.py``'s tables."""


def _retrievers(figures: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(label, entry) of each ranker, baselines first, as ``bench/retrieval.py`` printed them."""
    return list(figures["retrievers"].items())


def _metric(entry: dict[str, Any], key: str) -> str:
    value = entry.get(key)
    return "" if value is None else f"{value:.1f}"


def _rankers(figures: dict[str, Any], metrics: dict[str, str]) -> str:
    """Every ranker's ``metrics`` (key: heading), the baselines first, toolmgmt's in bold."""

    def ranker(item: tuple[str, dict[str, Any]]) -> str:
        label, entry = item
        return label if entry["kind"] == "baseline" else f"**{label}**"

    def metric(key: str) -> Cell:
        return lambda item: _metric(item[1]["metrics"], key)

    heading = f"ranker ({figures['pool']:,} tools, {figures['queries']:,} requests)"
    return _rows(
        _retrievers(figures),
        {heading: ranker, **{title: metric(key) for key, title in metrics.items()}},
    )


@renders("retrieval_dev", peers=("rank-bm25", "bm25s"))
def render_retrieval_dev(figures: dict[str, Any]) -> str:
    """Retrieval on the BFCL dev split: every ranker, the baselines first."""
    metrics = {"R@1": "R@1", "R@5": "R@5", "R@10": "R@10", "MRR": "MRR"}
    return _rankers(figures, {**metrics, "all@5": f"all@5 ({figures['multi']} multi-tool)"})


@renders("retrieval_live", peers=("rank-bm25", "bm25s"))
def render_retrieval_live(figures: dict[str, Any]) -> str:
    """Retrieval on real users' requests (BFCL live, the published half): strict and name-level
    figures for every ranker, then toolmgmt's per category."""
    out = _rankers(figures, {k: k for k in ("R@1", "R@5", "MRR", "name-R@5")})
    ours = [(label, e) for label, e in _retrievers(figures) if e["kind"] in ("keyword", "hybrid")]
    categories = sorted(ours[0][1]["per_category"]) if ours else []

    def scores(entry: dict[str, Any]) -> Cell:
        return lambda category: " / ".join(
            _metric(entry["per_category"][category], k) for k in ("R@5", "name-R@5")
        )

    return (
        out
        + "\n"
        + _rows(
            categories,
            {
                "category": str,
                "requests": lambda category: str(ours[0][1]["per_category"][category]["n"]),
                **{f"{label}: R@5 / name-R@5": scores(entry) for label, entry in ours},
            },
        )
    )


@renders("retrieval_latency", results="retrieval_live", timed=True)
def render_retrieval_latency(figures: dict[str, Any]) -> str:
    """Search latency at 10,000 tools, keyword and hybrid (query embedding included)."""
    lat = figures.get("latency_10k") or {}
    rows = []
    if "keyword" in lat:
        rows.append(["keyword (BM25)", _pair(lat["keyword"]["p50"], lat["keyword"]["p95"]), ""])
    if "hybrid" in lat:
        hybrid = lat["hybrid"]
        rows.append(
            [
                f"hybrid ({figures['embedder']})",
                _pair(hybrid["p50"], hybrid["p95"]),
                f"{_num(hybrid['p50_one_need'])} / {_num(hybrid['p50_two_needs'])}",
            ]
        )
    header = ["10,000 tools", "search p50 / p95 ms", "p50 one need / two needs ms"]
    return _table(header, rows)


def _install_line(extra: str) -> str:
    return "`pip install -e .`" if extra == "core" else f'`pip install -e ".[{extra}]"`'


@renders("first_loop", timed=True)
def render_first_loop(figures: dict[str, Any]) -> str:
    """From a fresh clone to the README's first agent loop (``bench/first_loop.py``)."""
    rows = [
        [
            _install_line(run["extra"]),
            *(f"{run['steps'][step]:.0f} s" for step in ("clone", "venv", "install", "first loop")),
            f"**{run['total']:.0f} s**",
        ]
        for run in figures["runs"]
    ]
    header = ["install", "clone", "venv", "install", "first loop", "clone to first loop"]
    cache = "warm" if figures["pip_cache_files"] else "empty"
    return _table(header, rows) + f"\nPip's cache {cache} ({figures['pip_cache_files']:,} files).\n"


@renders("companions", peers=("bm25s",))
def render_companions(figures: dict[str, Any]) -> str:
    """Tools that go together (``bench/companions.py``): tool recall and tasks with every tool
    found on the shared LiveMCPBench half, by folds, at equal numbers of tools per query."""
    labels = list(dict.fromkeys(label.split(": ", 1)[1] for label in figures["rows"]))

    def cell(style: str, k: str) -> Cell:
        def write(label: str) -> str:
            found = figures["rows"].get(f"{style}: {label}", {}).get(k)
            return "" if found is None else f"{found['recall']:.1f} / {found['all_found']:.1f}"

        return write

    def tokens(label: str) -> str:
        spent = [
            f["extra_tokens"]
            for style in ("replay", "steps")
            for f in figures["rows"].get(f"{style}: {label}", {}).values()
        ]
        return f"{max(spent):.1f}" if spent and max(spent) else "0"

    versions = ", ".join(f"{name} {v}" for name, v in sorted(figures["versions"].items()))
    return (
        _rows(
            labels,
            {
                "results per query": str,
                **{
                    f"{style} k={k}: recall / all found": cell(style, k)
                    for style in ("replay", "steps")
                    for k in ("3", "5")
                },
                "extra tokens per query": tokens,
            },
        )
        + f"\n{figures['tasks']} tasks, {figures['tools']} tools, {figures['folds']} folds; "
        f"embedder {figures['embedder']}; {versions}.{_pair_support(figures)}\n"
    )


def _pair_support(figures: dict[str, Any]) -> str:
    """What each fold learned: how many pairs of tools one, two, three or more principals used
    together (the least and most over the folds)."""
    folds = figures.get("pair_support")
    if not folds:
        return ""

    def span(key: str) -> str:
        low, high = min(f[key] for f in folds), max(f[key] for f in folds)
        return f"{low}" if low == high else f"{low}-{high}"

    return (
        f" Pairs of tools used together per fold, by how many principals: one {span('1')}, "
        f"two {span('2')}, three or more {span('3+')}."
    )


def _arrow(before: float, after: float) -> str:
    return f"{before:.1f} -> **{after:.1f}**"


@renders("retrieval_history", timed=True)
def render_retrieval_history(figures: dict[str, Any]) -> str:
    """Search that learns from use (``bench/retrieval.py --history``): learn from one half of
    the shared live requests, rank the other, both ways; the spread over random halvings; the
    dev split; search at 10,000 tools with learning on against off."""
    metrics = ("R@1", "R@5", "MRR", "name-R@5")
    rows = []
    for label, entry in figures["rankers"].items():
        for direction, d in entry["directions"].items():
            rows.append(
                [label, direction, *(_arrow(d["before"][m], d["after"][m]) for m in metrics)]
            )
    out = _table(["ranker", "learned > ranked", *metrics], rows)
    spread = []
    for label, entry in figures["rankers"].items():
        cells = [
            f"{g['mean']:+.1f} ({g['min']:+.1f} to {g['max']:+.1f}, std {g['std']:.1f})"
            for g in (entry["gain_spread"][m] for m in ("R@5", "name-R@5"))
        ]
        same = "yes" if entry["identical_without_learning"] else "**no**"
        spread.append([label, *cells, same])
    n = next(iter(figures["rankers"].values()))["gain_spread"]["R@5"]["n"]
    out += "\n" + _table(
        [
            "ranker",
            f"R@5 gain over {n} held-out halves: mean (range, std)",
            "name-R@5 gain",
            "nothing learned: every ranking as today",
        ],
        spread,
    )
    dev = []
    keys = ("R@1", "R@5", "MRR", "all@5")
    for label, d in figures["dev"].items():
        learned = f"the live requests ({d['learned_requests']} pairs of dev's tools)"
        dev.append([label, learned, *(_arrow(d["before"][k], d["after"][k]) for k in keys)])
        own = d["own_halves"]
        dev.append(
            [
                label,
                "one half of dev, ranking the other (mean of both ways)",
                *(_arrow(own["before"][k], own["after"][k]) for k in keys),
            ]
        )
    out += "\n" + _table(["dev split", "learned from", *keys], dev)
    lat = figures.get("latency_10k") or {}
    if lat:
        out += "\n" + _table(
            ["10,000 tools", "search p50 learning off / on ms", "ratio", "p95 off / on ms"],
            [
                [
                    f"{kind} ({v['learned_tools']:,.0f} tools learned)",
                    _pair(v["p50_off"], v["p50_on"]),
                    _ratio(v["p50_ratio"]),
                    _pair(v["p95_off"], v["p95_on"]),
                ]
                for kind, v in lat.items()
            ],
        )
    return out


def _count(value: Any) -> str:
    """A count given as a number or as the list of what it counts."""
    return f"{len(value) if isinstance(value, list | tuple) else value:,}"


@renders("scaleout", timed=True)
def render_scaleout(figures: dict[str, Any]) -> str:
    """Gateway replicas behind HAProxy with Redis: calls/s and latency for 1 client in sequence
    and 50 at once, against the upstream called directly; a replica killed under load."""
    fig = figures
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
            f"the killed replica, not replayed"
            + (
                f"; {killed['clients_crashed']} clients' SDK sessions ended, "
                f"{killed['calls_not_sent']} calls not sent"
                if killed.get("clients_crashed")
                else ""
            )
            + ")",
            str(killed["lost"]),
        ]
    )
    header = ["load", "path", "calls/s", "p50 / p95 ms", "answered", "lost"]
    goals = fig["goals"]
    direct = goals.get("added_p50_ms_one_client_direct_answers")
    note = (
        f"\nA replica adds {_num(goals['added_p50_ms_one_client'])} ms p50 to a direct call"
        + (f" ({_num(direct)} ms with direct answers, no HAProxy)" if direct is not None else "")
        + "; "
        f"2 replicas give {goals['speedup_2_vs_1']:.2f}x the calls/s of 1 and 3 give "
        f"{goals['speedup_3_vs_1']:.2f}x on these 2 cores (the clients, the upstream and HAProxy "
        f"share them); after the kill every conversation kept its state: "
        f"{'yes' if killed['state_kept'] else 'NO'}; calls run twice: "
        f"{_count(killed['duplicated'])}.\n"
    )
    return _table(header, rows) + note


@renders("scaleout_cpu", results="scaleout", timed=True)
def render_scaleout_cpu(figures: dict[str, Any]) -> str:
    """Where a call's CPU goes, per process, and a replica's time by leg and by layer (py-spy)."""

    def cpu(part: str) -> Cell:
        return lambda row: _num(row["cpu_ms_per_call"].get(part, 0.0))

    parts = ("clients", "replicas", "upstream", "haproxy", "redis")
    out = _rows(
        figures["concurrent"],
        {"50 clients: CPU ms per call": _get("path"), **{part: cpu(part) for part in parts}},
    )
    profile = figures.get("profile")
    if profile:
        share = _get(1, "{:.0f}%".format)
        mine = f"a replica's time under load ({profile['replica_cpu_ms_per_call']} ms CPU a call)"
        out += "\n" + _rows(profile["by_leg_percent"].items(), {mine: _get(0), "share": share})
        layers = profile["by_layer_percent"].items()
        out += "\n" + _rows(layers, {"by library": _get(0), "share": share})
    return out


@renders("pg_ranking", timed=True)
def render_pg_ranking(figures: dict[str, Any]) -> str:
    """PostgreSQL's full-text ranking against the catalog's BM25 on the BFCL dev split."""
    heading = f"ranker (BFCL dev: {figures['pool']:,} tools, {figures['queries']:,} requests)"
    return _rows(
        figures["rankers"],
        {
            heading: _get("ranker"),
            **{key: _get(key, "{:.1f}".format) for key in ("R@1", "R@5", "MRR")},
            "p50 / p95 ms": _p("", "_ms"),
        },
    )


MODE_GUIDE: dict[str, tuple[str, str]] = {
    "search": (
        "the default, for any catalog past a few dozen tools, on every provider: the tool "
        "list stays the same all conversation, so the provider's prompt cache holds",
        "`tool_search` and `call_tool` (natively deferred tools on Anthropic and OpenAI "
        "Responses), beside the tools you mark always listed",
    ),
    "code": (
        "tasks that chain several calls or read large results: one short Python program "
        "calls the tools in a sandbox and only what it prints reaches the model "
        '(`pip install -e ".[code]"`)',
        "`tool_search` (answering with Python signatures) and `run_code`",
    ),
    "gateway": (
        "MCP clients and fixed tool lists: the MCP gateway server (`toolmgmt serve`) shows "
        'this mode unless its config says `mode = "code"`',
        "`discover_tools`, `get_tool_schema` and `execute_tool`",
    ),
    "lazy": (
        "a few hundred tools with short, telling names",
        "every tool's name and one-line description, no parameters, and `load_tool_schema`",
    ),
    "flat": (
        "a few dozen tools or fewer: nothing to search",
        "every tool, fully defined",
    ),
    "auto": (
        "catalogs that grow: flat while the definitions are small, search beyond",
        "flat's list while all the definitions fit in {share:.0%} of the context window, "
        "search's beyond",
    ),
}
"""The mode table's words for each mode the code accepts (``toolmgmt_core._session.modes.MODES``):
when to use it and what the model sees. A mode missing here stops the generator."""


def _modes_block(folder: Path) -> str:
    """The six modes: when to use each, what the model sees, what a conversation costs in it
    against sending every tool (flat + truncation) with Anthropic's prompt caching."""
    from toolmgmt_core._session.modes import MODES, Auto

    missing = set(MODES) ^ set(MODE_GUIDE)
    if missing:
        raise KeyError(f"the mode table lacks or has extra modes: {sorted(missing)}")
    conversation = read_results("conversation", folder)
    rows = {(r["design"], r["size"], r["provider"]): r for r in conversation["figures"]["rows"]}
    sizes = {r["size"]: r["tools"] for r in conversation["figures"]["rows"]}
    sources = [conversation]
    code_rows: dict[tuple[str, str], float] = {}
    if (folder / "code_cost.json").exists():  # code mode's own task (bench/code_cost.py)
        code_cost = read_results("code_cost", folder)
        model = code_cost["figures"]["prices"]["models"][0]["model"]
        for r in code_cost["figures"]["rows"]:
            if r["design"] == "code" and r["provider"] == "anthropic":
                code_rows[(r["size"], "code")] = r["vs_flat"][model]
        sources.append(code_cost)

    def cost(mode: str) -> str:
        if mode == "flat":
            return "1.00x (the reference)"
        if mode == "auto":
            return "flat's or search's, as it picks"
        cells = []
        for size in sizes:
            if (size, mode) in code_rows:
                cells.append(_ratio(code_rows[(size, mode)]))
            else:
                cells.append(_ratio(rows[(mode, size, "anthropic")]["vs_flat"]["anthropic"]))
        return " / ".join(cells) + (" *" if code_rows and mode == "code" else "")

    share = Auto().threshold_share
    table = _table(
        [
            "mode",
            "use it for",
            "the model sees",
            "cost vs every tool sent, " + " / ".join(f"{n:,} tools" for n in sizes.values()),
        ],
        [
            [f"`{name}`", MODE_GUIDE[name][0], MODE_GUIDE[name][1].format(share=share), cost(name)]
            for name in MODE_GUIDE
        ],
    )
    task = conversation["figures"]["task"]
    note = (
        "\nCost: a whole conversation's billed input with Anthropic's prompt caching, "
        "against every tool sent, results truncated alike (`bench/conversation.py`: a task of "
        f"{len(task)} calls, most with large results)"
    )
    if code_rows:
        note += (
            "; * code mode on its own task, in dollars, input and output "
            "(`bench/code_cost.py`: the program computes the summary the answer is written "
            "from)"
        )
    return table + note + ".\n\n" + _source(*sources)


RENDERERS["modes"] = _modes_block


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
        "--readme", type=Path, help="only this document (default: every one of DOCUMENTS)"
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
