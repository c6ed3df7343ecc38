"""Tools that go together (issue 44): a search answer suggests, apart from its hits, the tools
conversations of several principals used with them; and the same tool served by several
servers fills one slot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolmgmt_core import (
    Access,
    Discovery,
    Search,
    Tool,
    ToolAnnotations,
    ToolCatalog,
    ToolManager,
)
from toolmgmt_core._catalog.equivalents import one_per_tool
from toolmgmt_core._learning.keys import LearnedKey
from toolmgmt_core._learning.requests import LearnedRequest
from toolmgmt_core._learning.teaching import LearningOptions
from toolmgmt_core._session.modes import Code

KEY = "the learned store's key"
ROUTE, GEOCODE, SHARE, WIPE = (
    "maps_get_route_directions",
    "maps_geocode_address",
    "maps_share_route",
    "maps_delete_places",
)


def _tools() -> list[Tool]:
    def run(**arguments: Any) -> str:
        return json.dumps(arguments)

    def tool(name: str, description: str, **annotations: Any) -> Tool:
        return Tool(
            name=name,
            description=description,
            parameters={"type": "object", "properties": {"place": {"type": "string"}}},
            domain="maps",
            annotations=ToolAnnotations(**annotations),
            handler=run,
        )

    return [
        tool(ROUTE, "Route directions between two points, with travel time.", read_only=True),
        tool(GEOCODE, "Convert an address to geographic coordinates.", read_only=True),
        tool(SHARE, "Share a planned route with a friend.", read_only=False),
        tool(WIPE, "Delete saved places.", destructive=True),
        tool("maps_weather", "Current weather at a place.", read_only=True),
    ]


def _teach(catalog: ToolCatalog, principals: int, *tools: str, secret: str = "") -> None:
    """``principals`` different principals, each in a conversation of its own, used ``tools``
    together (a search for each, then a call: what learning from use records)."""
    pairs = []
    for p in range(principals):
        for name in tools:
            words = name.split("_", 2)[-1].replace("_", " ")
            pairs.append((f"{words} {secret}".strip(), name, f"conv-{p}", f"user-{p}"))
    catalog.learn(pairs, source="use")


def _search(manager: ToolManager, query: str = "bike route directions") -> dict[str, Any]:
    result = manager.session().call_sync("tool_search", {"query": query})
    assert result.outcome == "success", result.content
    return json.loads(result.content)  # type: ignore[no-any-return]


def _manager(catalog: ToolCatalog, **options: Any) -> ToolManager:
    return ToolManager(catalog, discovery=Discovery(max_results=1), **options)


def test_cold_start_and_below_the_floor_suggest_nothing() -> None:
    catalog = ToolCatalog(_tools(), learning=LearningOptions())
    assert "often_used_with" not in _search(_manager(catalog))
    _teach(catalog, 2, ROUTE, GEOCODE)  # two principals: under the floor of three
    assert catalog.companions([ROUTE]) == []
    assert "often_used_with" not in _search(_manager(catalog))


def test_a_companion_is_suggested_apart_loaded_and_callable() -> None:
    catalog = ToolCatalog(_tools(), learning=LearningOptions())
    _teach(catalog, 3, ROUTE, GEOCODE)
    manager = _manager(catalog)
    session = manager.session()
    answer = json.loads(session.call_sync("tool_search", {"query": "bike route"}).content)
    assert list(answer["found"]) == [ROUTE]
    assert answer["often_used_with"] == {GEOCODE: "Convert an address to geographic coordinates."}
    # a name and one line: no schema, and fewer tokens than a definition
    assert "properties" not in json.dumps(answer["often_used_with"])
    called = session.call_sync("call_tool", {"name": GEOCODE, "arguments": {"place": "Oslo"}})
    assert called.outcome == "success", called.content
    # the catalog's own answer and its explanation say why
    [companion] = catalog.companions([ROUTE])
    assert companion.name == GEOCODE and companion.principals == 3
    explained = catalog.explain_search("bike route", 1, companions=1)
    assert [e.name for e in explained] == [ROUTE, GEOCODE]
    assert "used with maps_get_route_directions by 3 different principals" in explained[1].suggested


def test_appending_search_loads_the_companion_into_the_list() -> None:
    catalog = ToolCatalog(_tools(), learning=LearningOptions())
    _teach(catalog, 3, ROUTE, GEOCODE)
    session = ToolManager(
        catalog, mode=Search(appends=True), discovery=Discovery(max_results=1)
    ).session()
    session.call_sync("tool_search", {"query": "bike route"})
    assert {ROUTE, GEOCODE} <= {t.name for t in session.tools()}
    assert session.call_sync(GEOCODE, {"place": "Oslo"}).outcome == "success"


def test_hidden_destructive_and_data_sending_tools_are_never_suggested() -> None:
    catalog = ToolCatalog(_tools(), learning=LearningOptions(key=KEY))
    _teach(catalog, 3, ROUTE, GEOCODE)
    # rows of tools that may not learn, as another replica (or an older version) kept them
    rows = [
        r
        for name in (SHARE, WIPE)
        for r in (
            _row(name, f"conv-{p}", f"user-{p}", i)
            for i, p in enumerate(range(3), start=1000 * len(name))
        )
    ]
    catalog.absorb_learned(rows)
    suggested = [c.name for c in catalog.companions([ROUTE], 5)]
    assert suggested == [GEOCODE]  # not the share tool, not the destructive one
    assert "often_used_with" in _search(_manager(catalog))
    assert catalog.companions([ROUTE], 5, where=lambda t: t.name != GEOCODE) == []
    manager = ToolManager(
        catalog,
        discovery=Discovery(max_results=1),
        access=Access(policies=[{"label": "agent", "deny": [GEOCODE]}]),
    )
    assert "often_used_with" not in _search(manager)


def _row(tool: str, conversation: str, principal: str, row_id: int) -> Any:
    key = LearnedKey(KEY)
    return LearnedRequest(
        tool, "route", key.conversation(conversation), 1.0, row_id, "use", key.principal(principal)
    )


def test_no_request_text_reaches_an_answer() -> None:
    catalog = ToolCatalog(_tools(), learning=LearningOptions())
    _teach(catalog, 3, ROUTE, GEOCODE, secret="zanzibar7")
    answer = json.dumps(_search(_manager(catalog)))
    assert GEOCODE in answer and "zanzibar7" not in answer
    assert "zanzibar7" not in json.dumps([c.reason for c in catalog.companions([ROUTE])])


def test_companions_persist_in_the_learned_store(tmp_path: Path) -> None:
    store = tmp_path / "learned.sqlite"
    _teach(ToolCatalog(_tools(), learning=LearningOptions(store=store)), 3, ROUTE, GEOCODE)
    again = ToolCatalog(_tools(), learning=LearningOptions(store=store))
    assert [c.name for c in again.companions([ROUTE])] == [GEOCODE]


def test_the_floor_is_an_option() -> None:
    catalog = ToolCatalog(_tools(), learning=LearningOptions(companion_principals=2))
    _teach(catalog, 2, ROUTE, GEOCODE)
    assert [c.name for c in catalog.companions([ROUTE])] == [GEOCODE]
    off = ToolManager(catalog, discovery=Discovery(max_results=1, companions=0))
    assert "often_used_with" not in _search(off)


def test_code_mode_shows_companions_as_signatures() -> None:
    pytest.importorskip("pydantic_monty")
    catalog = ToolCatalog(_tools(), learning=LearningOptions())
    _teach(catalog, 3, ROUTE, GEOCODE)
    manager = ToolManager(catalog, mode=Code(), discovery=Discovery(max_results=1))
    result = manager.session().call_sync("tool_search", {"query": "bike route"})
    assert "def maps_geocode_address(" in result.value["often_used_with"]
    found, companions = result.content.split("# Often used with them:\n")
    assert "def maps_geocode_address(" in companions and "def maps_geocode_address(" not in found


def test_one_result_per_tool_across_servers() -> None:
    def tool(name: str, domain: str, description: str) -> Tool:
        return Tool(name=name, description=description, domain=domain)

    catalog = ToolCatalog(
        [
            tool("web_search", "web", "Search the web for pages matching a query."),
            tool("ddg_search", "ddg", "Search the web for pages matching a query, privately."),
            tool("arxiv_search", "arxiv", "Find arXiv papers by author, title or abstract."),
            tool("web_search_news", "web", "Search the web for news matching a query."),
            tool("web_fetch", "web", "Fetch a web page."),
        ]
    )
    hits = one_per_tool(catalog.search("search the web pages query", 5), catalog.find)
    names = [h.name for h in hits]
    assert names.count("web_search") + names.count("ddg_search") == 1  # one of the two
    kept = next(h for h in hits if h.name in ("web_search", "ddg_search"))
    assert set(kept.also) == {"web_search", "ddg_search"} - {kept.name}
    assert "arxiv_search" in names  # same bare name, another tool: kept
    answer = _search(ToolManager(catalog, discovery=Discovery(max_results=2)), "search the web")
    assert len(answer["found"]) == 2 and answer["also_as"]
