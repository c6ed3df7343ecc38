"""What the shared stores cost: Redis session load+save against memory, and catalog follow latency.

Sessions: a realistic session state (the demo catalog in search mode after a few searches and
calls, and a heavier one with 100 loaded tools) is updated with ``update_session`` (one load and
one compare-and-set save) over and over, in the in-memory store (the reference) and in a Redis
store, in the same run; then two threads update one session at once (conflicts and retries).

Catalog: two followers (two replicas, each a catalog of the demo tools with its BM25 index
built) follow a PostgreSQL catalog store; each round pushes a new tool and times until it is
searchable on both, then removes it and times until it is gone from both. The reference is the
same change made in-process (``catalog.replace`` + the first search, which rebuilds the index).
"present" is when the tool is in both catalogs; "searchable" adds the first search on each, which
rebuilds that replica's BM25 index.

Real servers: by default a local redis-server and PostgreSQL on loopback (``LocalRedis``,
``LocalPostgres``; PostgreSQL without fsync, as in the tests), or ``--redis URL`` and
``--postgres DSN``.

``--json OUT`` writes (under ``figures``, see ``bench/_results.py``; ``P`` is
``{"p50_ms": float, "p95_ms": float, "max_ms": float, "n": int}``)::

    {"rounds": int, "follow_rounds": int,
     "sessions": [{"store": "memory" | "redis", "state": "typical" | "heavy (100 loaded)",
                   "state_bytes": int, **P}, ...],
     "contended": [{"store": "memory" | "redis", "updates": int, "attempts": int,
                    "names_kept": int, "lost": int, **P}, ...],
     "catalog_follow": {"catalog_tools": int, "push_to_present_on_2_replicas": P,
                        "push_to_searchable_on_2_replicas": P,
                        "remove_to_gone_on_2_replicas": P,
                        "reference_in_process_add_and_search": P}}

Run: ``python bench/stores.py [--rounds 2000] [--json bench/results/stores.json]``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _results import write_results  # noqa: E402
from toolmgmt_deploy import LocalPostgres, LocalRedis  # noqa: E402

from toolmgmt_core import ResultBudget, Tool, ToolCatalog, ToolManager  # noqa: E402
from toolmgmt_core._stores import (  # noqa: E402
    InMemorySessionStore,
    SessionStore,
    update_session,
)
from toolmgmt_demo import demo_catalog  # noqa: E402


def percentiles(samples: list[float]) -> dict[str, float]:
    """p50, p95 and max of ``samples`` (seconds) in milliseconds."""
    ordered = sorted(samples)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 3),
        "max_ms": round(ordered[-1] * 1000, 3),
        "n": len(ordered),
    }


def session_states() -> dict[str, dict[str, Any]]:
    """A typical session state and a heavy one, as ToolSession.to_json() makes them."""
    manager = ToolManager(
        demo_catalog(), mode="search", results=ResultBudget(max_result_tokens=2_000)
    )
    session = manager.session()
    for query in ("refund a payment", "send an email", "search the web", "read a file"):
        session.call_sync("tool_search", {"query": query})
    session.call_sync("payments_refund_charge", {"charge_id": "ch_0001", "amount": 500})
    typical = session.to_json()
    heavy = dict(typical, loaded=[tool.name for tool in list(manager.catalog)[:100]])
    return {"typical": typical, "heavy (100 loaded)": heavy}


def time_updates(store: SessionStore, state: dict[str, Any], rounds: int) -> dict[str, float]:
    """Latency of one update_session (load + compare-and-set save) of ``state``."""
    session_id = f"bench-{id(store)}-{len(json.dumps(state))}"
    samples = []
    for i in range(rounds + 50):
        started = time.perf_counter()
        update_session(store, session_id, lambda _: dict(state, step=i))  # noqa: B023
        if i >= 50:  # warm-up: connections, script loading
            samples.append(time.perf_counter() - started)
    store.delete(session_id)
    return percentiles(samples)


def contended(store: SessionStore, rounds: int) -> dict[str, Any]:
    """Two threads adding different names to one session: conflicts, retries, nothing lost."""
    attempts = [0, 0]
    samples: list[float] = []
    barrier = threading.Barrier(2)

    def writer(index: int) -> None:
        for i in range(rounds):
            name = f"tool-{index}-{i}"

            def change(state: dict[str, Any] | None, name: str = name) -> dict[str, Any]:
                attempts[index] += 1
                state = state or {"loaded": []}
                state["loaded"].append(name)
                return state

            barrier.wait()
            started = time.perf_counter()
            update_session(store, "bench-contended", change, retries=100)
            samples.append(time.perf_counter() - started)

    threads = [threading.Thread(target=writer, args=(i,)) for i in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stored = store.load("bench-contended")
    kept = len(stored.state["loaded"]) if stored else 0
    store.delete("bench-contended")
    return {
        **percentiles(samples),
        "updates": 2 * rounds,
        "attempts": sum(attempts),
        "names_kept": kept,
        "lost": 2 * rounds - kept,
    }


def wait_for(condition: Callable[[], bool], limit: float = 10.0) -> float:
    started = time.perf_counter()
    while not condition():
        if time.perf_counter() - started > limit:
            raise TimeoutError("a follower did not catch up within 10 s")
        time.sleep(0.0002)
    return time.perf_counter() - started


def follow_latency(dsn: str, rounds: int) -> dict[str, Any]:
    from toolmgmt_core._stores.postgres import PostgresCatalogStore

    store = PostgresCatalogStore(dsn)
    store.remove([r.name for r in store.records()])
    store.push(list(demo_catalog()))
    replicas = [ToolCatalog(), ToolCatalog()]
    followers = [store.follow(catalog) for catalog in replicas]
    reference = demo_catalog()
    for catalog in (*replicas, reference):
        catalog.search("warm the index")

    def searchable(catalog: ToolCatalog, name: str, word: str) -> bool:
        return any(hit.name == name for hit in catalog.search(word, limit=3))

    pushed, arrived, removed, local_add = [], [], [], []
    try:
        for i in range(rounds):
            word = f"zyzzyva{i}"
            tool = Tool(f"zoo_feed_{i}", f"Feed the {word} at the zoo.", domain="zoo")
            started = time.perf_counter()
            reference.replace(tool)
            searchable(reference, tool.name, word)
            local_add.append(time.perf_counter() - started)
            reference.remove(tool.name)

            started = time.perf_counter()
            store.push([tool])
            for catalog in replicas:
                wait_for(lambda c=catalog, n=tool.name: n in c)
            arrived.append(time.perf_counter() - started)
            for catalog in replicas:
                wait_for(lambda c=catalog, n=tool.name, w=word: searchable(c, n, w))
            pushed.append(time.perf_counter() - started)

            started = time.perf_counter()
            store.remove([tool.name])
            for catalog in replicas:
                wait_for(lambda c=catalog, n=tool.name: n not in c)
            removed.append(time.perf_counter() - started)
    finally:
        for follower in followers:
            follower.close()
        store.close()
    return {
        "catalog_tools": len(replicas[0]),
        "push_to_present_on_2_replicas": percentiles(arrived),
        "push_to_searchable_on_2_replicas": percentiles(pushed),
        "remove_to_gone_on_2_replicas": percentiles(removed),
        "reference_in_process_add_and_search": percentiles(local_add),
    }


@contextlib.contextmanager
def server(kind: str, given: str | None) -> Iterator[str]:
    if given:
        yield given
        return
    with LocalRedis() if kind == "redis" else LocalPostgres() as local:
        yield local.url if kind == "redis" else local.dsn


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000, help="session updates per case")
    parser.add_argument("--follow-rounds", type=int, default=50, help="catalog pushes timed")
    parser.add_argument("--redis", metavar="URL", help="an existing Redis (default: a local one)")
    parser.add_argument("--postgres", metavar="DSN", help="an existing PostgreSQL (default: local)")
    parser.add_argument("--json", metavar="OUT", help="write the figures to this file")
    args = parser.parse_args()
    from toolmgmt_core._stores.redis import RedisSessionStore

    results: dict[str, Any] = {
        "rounds": args.rounds,
        "follow_rounds": args.follow_rounds,
        "sessions": [],
        "contended": [],
    }
    states = session_states()
    with server("redis", args.redis) as url:
        stores: dict[str, SessionStore] = {
            "memory": InMemorySessionStore(),
            "redis": RedisSessionStore(url),
        }
        for label, state in states.items():
            size = len(json.dumps(state, separators=(",", ":")))
            for kind, store in stores.items():
                results["sessions"].append(
                    {
                        "store": kind,
                        "state": label,
                        "state_bytes": size,
                        **time_updates(store, state, args.rounds),
                    }
                )
        for kind, store in stores.items():
            results["contended"].append({"store": kind, **contended(store, args.rounds // 4)})
    with server("postgres", args.postgres) as dsn:
        results["catalog_follow"] = follow_latency(dsn, args.follow_rounds)

    print("session update (load + compare-and-set save), one writer")
    print(f"{'store, state':<34}{'bytes':>7}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    for row in results["sessions"]:
        label = f"{row['store']}, {row['state']}"
        print(
            f"{label:<34}{row['state_bytes']:>7}{row['p50_ms']:>9.3f}{row['p95_ms']:>9.3f}"
            f"{row['max_ms']:>9.3f}"
        )
    print("\ntwo writers, one session (each update retried until it lands)")
    print(f"{'store':<10}{'updates':>8}{'attempts':>9}{'lost':>6}{'p50 ms':>9}{'p95 ms':>9}")
    for row in results["contended"]:
        print(
            f"{row['store']:<10}{row['updates']:>8}{row['attempts']:>9}{row['lost']:>6}"
            f"{row['p50_ms']:>9.3f}{row['p95_ms']:>9.3f}"
        )
    follow = results["catalog_follow"]
    print(f"\ncatalog follow, {follow['catalog_tools']} tools, 2 replicas")
    print(f"{'change':<40}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    for key in (
        "push_to_present_on_2_replicas",
        "push_to_searchable_on_2_replicas",
        "remove_to_gone_on_2_replicas",
        "reference_in_process_add_and_search",
    ):
        row = follow[key]
        print(f"{key:<40}{row['p50_ms']:>9.3f}{row['p95_ms']:>9.3f}{row['max_ms']:>9.3f}")
    if args.json:
        write_results(args.json, "stores", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
