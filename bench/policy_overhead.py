"""What policies cost per step: listing, search, schema and calls with and without a pipeline.

For the demo catalog (when ``toolmgmt_demo`` is there) and synthetic catalogs of 1,000 and
10,000 tools, this times, per operation, a session without policies (the reference) against one
with a profile and three policy steps (11 patterns, one description override). It also times
``PolicyView.allows`` cached (per catalog version, as sessions use it) against deciding afresh
each time, which is what the cache saves on every listing and search.

Run: ``python bench/policy_overhead.py [--repeat 20]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from toolmgmt_core import Policy, Profile, Tool, ToolCatalog, ToolManager  # noqa: E402

DOMAINS = ("crm", "files", "calendar", "email", "code", "payments", "analytics", "web")
VERBS = ("search", "get", "create", "update", "delete", "list", "export", "admin")


def synthetic(n: int) -> ToolCatalog:
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


def demo() -> ToolCatalog | None:
    try:
        from toolmgmt_demo import demo_catalog
    except ImportError:
        return None
    return demo_catalog()


def pipeline(catalog: ToolCatalog) -> dict:
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


def bench(name: str, catalog: ToolCatalog, repeat: int) -> list[tuple[str, str, float, float]]:
    rows = []
    plain = ToolManager(catalog, "search", call_unloaded="load")
    guarded = ToolManager(catalog, "search", call_unloaded="load", **pipeline(catalog))
    visible = guarded.session().visible_tools()
    target = visible[len(visible) // 2].name
    ops: dict[str, Callable[[ToolManager], Callable[[], object]]] = {
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
        rows.append((name, label, timed(make(plain), repeat), timed(make(guarded), repeat)))
    view = guarded.policy
    tools = list(catalog)

    def cached() -> None:
        for tool in tools:
            view.allows(tool)

    def afresh() -> None:
        for tool in tools:
            view._decide(tool)

    rows.append((name, "allows() x every tool", timed(afresh, repeat), timed(cached, repeat)))
    rows.append((name, f"(visible: {len(visible)} of {len(catalog)})", 0.0, 0.0))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    catalogs: list[tuple[str, ToolCatalog]] = []
    demo_cat = demo()
    if demo_cat is not None:
        catalogs.append(("demo", demo_cat))
    catalogs += [("1k", synthetic(1_000)), ("10k", synthetic(10_000))]
    print(f"{'catalog':<8} {'operation':<32} {'reference ms':>13} {'policy ms':>10} {'ratio':>7}")
    print("-" * 74)
    for name, catalog in catalogs:
        for cat, label, ref, pol in bench(name, catalog, args.repeat):
            if ref == 0.0:
                print(f"{cat:<8} {label}")
                continue
            print(f"{cat:<8} {label:<32} {ref:>13.3f} {pol:>10.3f} {pol / ref:>7.2f}")
    print(
        "\nreference: the same session without policies; for allows(), deciding every tool "
        "afresh (no cache)."
    )


if __name__ == "__main__":
    main()
