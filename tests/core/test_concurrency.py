"""100 sessions on one manager, on threads and on asyncio: no session sees another's tools."""

from __future__ import annotations

import asyncio
import random
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from toolmgmt_core import Discovery, Search, Tool, ToolCatalog, ToolManager, ToolSession

SESSIONS = 100


def word(i: int) -> str:
    """A made-up word unique to ``i``, so a keyword search finds exactly one tool."""
    return "zq" + "".join(chr(97 + (i // 26**k) % 26) for k in range(3))


def make_catalog() -> ToolCatalog:
    catalog = ToolCatalog()
    for i in range(SESSIONS + 20):

        def sync_handler(token: str, _i: int = i) -> dict:
            time.sleep(random.random() / 1000)
            return {"tool": _i, "token": token}

        async def async_handler(token: str, _i: int = i) -> dict:
            await asyncio.sleep(random.random() / 1000)
            return {"tool": _i, "token": token}

        schema = {
            "type": "object",
            "properties": {"token": {"type": "string"}},
            "required": ["token"],
        }
        catalog.add(
            Tool(
                name=f"tool_{i:03d}",
                description=f"Tool number {i}: {word(i)}.",
                parameters=schema,
                domain=f"d{i % 7}",
                handler=sync_handler,
            )
        )
        catalog.add(
            Tool(
                name=f"atool_{i:03d}",
                description=f"Async tool number {i}: {word(i + 500)}.",
                parameters=schema,
                domain=f"d{i % 7}",
                handler=async_handler,
            )
        )
    return catalog


@pytest.fixture(scope="module")
def manager() -> ToolManager:
    # Found tools join the list: what this checks is that parallel loads append each once.
    return ToolManager(
        make_catalog(), mode=Search(appends=True), discovery=Discovery(max_results=3)
    )


def _word_of(name: str) -> str:
    return word(int(name[-3:]) + (500 if name.startswith("a") else 0))


def _expected(i: int) -> list[str]:
    return ["tool_search", f"tool_{i:03d}", f"atool_{(i + 7) % SESSIONS:03d}"]


def _run_thread(manager: ToolManager, i: int) -> ToolSession:
    session = manager.session()
    own, other = f"tool_{i:03d}", f"atool_{(i + 7) % SESSIONS:03d}"
    for name in (own, other):
        found = session.call_sync("tool_search", {"query": _word_of(name)})
        assert found.value["added"] == [name], found.content
    for round_ in range(3):
        for name in (own, other):
            token = f"s{i}-r{round_}-{name}"
            result = session.call_sync(name, {"token": token})
            assert result.value == {"tool": int(name[-3:]), "token": token}, result.content
    return session


def test_100_sessions_on_threads(manager: ToolManager) -> None:
    with ThreadPoolExecutor(max_workers=32) as pool:
        sessions = list(pool.map(lambda i: _run_thread(manager, i), range(SESSIONS)))
    for i, session in enumerate(sessions):
        assert [t.name for t in session.tools()] == _expected(i)
        assert session.loaded() == _expected(i)[1:]


def test_100_sessions_on_asyncio(manager: ToolManager) -> None:
    async def run(i: int) -> ToolSession:
        session = manager.session()
        own, other = f"atool_{i:03d}", f"tool_{(i + 7) % SESSIONS:03d}"
        results = await asyncio.gather(
            session.call("tool_search", {"query": _word_of(own)}),
            session.call("tool_search", {"query": _word_of(other)}),
        )
        assert sorted(n for r in results for n in r.value["added"]) == sorted([own, other])
        calls = [(name, f"s{i}-{k}-{name}") for k in range(3) for name in (own, other)]
        outcomes = await asyncio.gather(*(session.call(n, {"token": t}) for n, t in calls))
        for (name, token), result in zip(calls, outcomes, strict=True):
            assert result.value == {"tool": int(name[-3:]), "token": token}, result.content
        return session

    async def main() -> list[ToolSession]:
        return await asyncio.gather(*(run(i) for i in range(SESSIONS)))

    sessions = asyncio.run(main())
    for i, session in enumerate(sessions):
        names = {f"atool_{i:03d}", f"tool_{(i + 7) % SESSIONS:03d}"}
        assert set(session.loaded()) == names
        assert {t.name for t in session.tools()} == {"tool_search", *names}


def test_one_session_shared_by_parallel_calls_loads_each_tool_once(manager) -> None:
    session = manager.session()

    async def main() -> None:
        await asyncio.gather(
            *(
                session.call("tool_search", {"queries": [word(k) for k in range(3)]})
                for _ in range(20)
            )
        )

    asyncio.run(main())
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(
            pool.map(
                lambda _: session.call_sync(
                    "tool_search", {"queries": [word(k) for k in range(10, 13)]}
                ),
                range(20),
            )
        )
    loaded = session.loaded()
    assert len(loaded) == len(set(loaded)) == 6


def test_max_active_holds_under_parallel_loads() -> None:
    capped = ToolManager(
        make_catalog(),
        mode=Search(appends=True),
        discovery=Discovery(max_active=5, call_unloaded="load"),
    )
    session = capped.session()
    names = [f"tool_{i:03d}" for i in range(40)]
    with ThreadPoolExecutor(max_workers=16) as pool:
        results = list(pool.map(lambda n: session.call_sync(n, {"token": n}), names))
    assert len(session.loaded()) == 5
    ran = [r for r in results if not r.is_error]
    assert len(ran) == 5 and {r.tool_name for r in ran} == set(session.loaded())
    assert all("active tool limit (5)" in r.error.message for r in results if r.is_error)
