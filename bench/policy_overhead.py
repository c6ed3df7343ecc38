"""What policies cost per step: listing, search, schema and calls with and without a pipeline.

For the demo catalog (when ``toolmgmt_demo`` is there) and synthetic catalogs of 1,000 and
10,000 tools, this times, per operation, a session without policies (the reference) against one
with a profile and three policy steps (11 patterns, one description override). It also times
``PolicyView.allows`` cached (per catalog version, as sessions use it) against deciding afresh
each time, which is what the cache saves on every listing and search.

``--json OUT`` writes (under ``figures``, see ``bench/_results.py``)::

    {"repeat": int,
     "catalogs": [{"catalog": "demo" | "1k" | "10k", "tools": int, "visible": int,
                   "operations": [{"operation": "visible_tools()" | "tools() (search mode)" |
                                                "tool_search" | "call by name" |
                                                "allows() x every tool",
                                   "reference_ms": float, "policy_ms": float,
                                   "ratio": policy / reference}, ...]}, ...]}

Median milliseconds; for ``allows() x every tool`` the reference is deciding afresh and
``policy_ms`` the cached decision.

``--versus REF`` also measures REF's core beside this checkout's, each in a fresh subprocess,
alternating for ``--rounds`` rounds; the figures then add ``"versus": {"reference": REF,
"rounds": int, "rows": [{"catalog", "operation", "reference_ms", "ms", "ratio"}, ...]}``, each
the median over rounds (the ratio: the median of each round's ratio), both with policies.

Run: ``python bench/policy_overhead.py [--repeat 20] [--versus REF [--rounds 3]]
[--json bench/results/policy_overhead.json]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _reference import alternate, manager  # noqa: E402
from _results import write_results  # noqa: E402

DOMAINS = ("crm", "files", "calendar", "email", "code", "payments", "analytics", "web")
VERBS = ("search", "get", "create", "update", "delete", "list", "export", "admin")


def synthetic(n: int) -> Any:
    from toolmgmt_core import Tool, ToolCatalog

    tools = []
    for i in range(n):
        domain = DOMAINS[i % len(DOMAINS)]
        verb = VERBS[(i // len(DOMAINS)) % len(VERBS)]
        tools.append(
            Tool(
                f"{domain}_{verb}_item_{i}",
                f"{verb.capitalize()} {domain} item number {i}. Useful for {domain} work.",
                {"type": "object", "properties": {"id": {"type": "string"}}},
                domain=domain,
                group=f"g{i % 4}",
                keywords=(f"k{i % 7}",),
                annotations={"read_only": verb in ("search", "get", "list")},
                handler=lambda **kw: {"ok": True},
            )
        )
    return ToolCatalog(tools)


def demo() -> Any:
    try:
        from toolmgmt_demo import demo_catalog
    except ImportError:
        return None
    return demo_catalog()


def pipeline(catalog: Any) -> dict:
    from toolmgmt_core import Policy, Profile

    first = next(iter(catalog)).name
    return {
        "profile": Profile("agent", include=["domain:*"], exclude=["*_admin_*"]),
        "policies": [
            Policy("global", deny=["*delete*", "domain:payments", "openworld"]),
            Policy("agent", allow=["domain:crm", "domain:files", "domain:email", "domain:code*"]),
            Policy(
                "user",
                deny=["group:g3", "keyword:k6"],
                description_overrides={first: "Overridden for this agent."},
            ),
        ],
    }


def timed(fn: Callable[[], object], repeat: int) -> float:
    """Median milliseconds of ``fn`` over ``repeat`` runs (after one warm-up)."""
    fn()
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - start) * 1000)
    return statistics.median(runs)


def _row(operation: str, reference: float, policy: float) -> dict[str, Any]:
    return {
        "operation": operation,
        "reference_ms": reference,
        "policy_ms": policy,
        "ratio": policy / reference,
    }


def bench(name: str, catalog: Any, repeat: int) -> dict[str, Any]:
    """One catalog's figures (the shape the module docstring gives)."""
    rows = []
    plain = manager(catalog)
    guarded = manager(catalog, **pipeline(catalog))
    visible = guarded.session().visible_tools()
    target = visible[len(visible) // 2].name
    ops: dict[str, Callable[[Any], Callable[[], object]]] = {
        "visible_tools()": lambda m: m.session().visible_tools,
        "tools() (search mode)": lambda m: m.session().tools,
        "tool_search": lambda m: (
            lambda s=m.session(): s.call_sync(  # type: ignore[misc]
                "tool_search", {"query": "search crm item"}
            )
        ),
        "call by name": lambda m: lambda s=m.session(): s.call_sync(target, {"id": "1"}),  # type: ignore[misc]
    }
    for label, make in ops.items():
        rows.append(_row(label, timed(make(plain), repeat), timed(make(guarded), repeat)))
    view = guarded.policy
    tools = list(catalog)

    def cached() -> None:
        for tool in tools:
            view.allows(tool)

    def afresh() -> None:
        for tool in tools:
            view._decide(tool)

    rows.append(_row("allows() x every tool", timed(afresh, repeat), timed(cached, repeat)))
    return {"catalog": name, "tools": len(catalog), "visible": len(visible), "operations": rows}


def measure_all(repeat: int) -> list[dict[str, Any]]:
    """Every catalog's figures, with whatever toolmgmt_core imports."""
    warnings.simplefilter("ignore")
    catalogs: list[tuple[str, Any]] = []
    demo_cat = demo()
    if demo_cat is not None:
        catalogs.append(("demo", demo_cat))
    catalogs += [("1k", synthetic(1_000)), ("10k", synthetic(10_000))]
    return [bench(name, catalog, repeat) for name, catalog in catalogs]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument(
        "--versus",
        metavar="REF",
        help="also measure REF's core in the same run and compare the guarded figures",
    )
    parser.add_argument("--rounds", type=int, default=3, help="with --versus: rounds of both")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"--rounds must be at least 1, got {args.rounds}")
    theirs: list[Any] = []
    ours: list[Any] = []
    if args.versus:
        theirs, ours = alternate(
            args.versus, "policy_overhead", "measure_all", args.repeat, rounds=args.rounds
        )
        results = ours[len(ours) // 2]  # the table of one round (the middle one) of this checkout
    else:
        results = measure_all(args.repeat)
    print(f"{'catalog':<8} {'operation':<32} {'reference ms':>13} {'policy ms':>10} {'ratio':>7}")
    print("-" * 74)
    for result in results:
        name = result["catalog"]
        for row in result["operations"]:
            print(
                f"{name:<8} {row['operation']:<32} {row['reference_ms']:>13.3f} "
                f"{row['policy_ms']:>10.3f} {row['ratio']:>7.2f}"
            )
        print(f"{name:<8} (visible: {result['visible']} of {result['tools']})")
    print(
        "\nreference: the same session without policies; for allows(), deciding every tool "
        "afresh (no cache)."
    )
    figures: dict[str, Any] = {"repeat": args.repeat, "catalogs": results}
    if args.versus:
        figures["versus"] = {
            "reference": args.versus,
            "rounds": args.rounds,
            "rows": _versus(theirs, ours),
        }
        print(f"\nthis checkout against {args.versus}, both with policies (ms, median):")
        for row in figures["versus"]["rows"]:
            print(
                f"{row['catalog']:<8} {row['operation']:<32} {row['reference_ms']:>10.3f} "
                f"{row['ms']:>10.3f} {row['ratio']:>7.2f}"
            )
    if args.json:
        write_results(args.json, "policy_overhead", figures)


def _versus(theirs: list[Any], ours: list[Any]) -> list[dict[str, Any]]:
    """Per catalog and operation: this checkout's guarded time against the reference's, the
    median over rounds (each round: both sides' ``measure_all``)."""
    rows = []
    for c, catalog in enumerate(ours[0]):
        for o, operation in enumerate(catalog["operations"]):

            def ms(runs: list[Any], c: int = c, o: int = o) -> list[float]:
                return [run[c]["operations"][o]["policy_ms"] for run in runs]

            rows.append(
                {
                    "catalog": catalog["catalog"],
                    "operation": operation["operation"],
                    "reference_ms": statistics.median(ms(theirs)),
                    "ms": statistics.median(ms(ours)),
                    "ratio": statistics.median(
                        new / old for old, new in zip(ms(theirs), ms(ours), strict=True)
                    ),
                }
            )
    return rows


if __name__ == "__main__":
    main()
