"""A manager's conversations teach a catalog that learns from use: a search whose results led
to a successful call of a tool it found is a pair ``(query, tool, conversation)``."""

from __future__ import annotations

from typing import Any

from toolmgmt_core import Access, Discovery, Policy, Tool, ToolCatalog, ToolManager
from toolmgmt_core._learning.teaching import LearningOptions


def _catalog(learning: LearningOptions | None = LearningOptions()) -> ToolCatalog:
    def weather(city: str) -> str:
        return f"sunny in {city}"

    def broken(city: str) -> str:
        raise RuntimeError("down")

    return ToolCatalog(
        [
            Tool.from_function(
                weather, name="get_weather", description="Current weather for a city."
            ),
            Tool.from_function(
                broken, name="get_forecast", description="Weather forecast for a city."
            ),
            Tool.from_function(weather, name="delete_city", description="Delete a city record."),
        ],
        learning=learning,
    )


def _converse(manager: ToolManager, conversation: str, query: str, tool: str) -> Any:
    session = manager.session(conversation)
    found = session.call_sync("tool_search", {"query": query})
    return found, session.call_sync(tool, {"city": "Riga"})


def test_a_search_that_led_to_a_successful_call_teaches_the_catalog() -> None:
    catalog = _catalog()
    manager = ToolManager(catalog)
    assert manager.learner is not None
    for conversation in ("c1", "c2", "c3"):  # one anonymous principal: nothing moves
        _converse(manager, conversation, "what is the weather in riga right now", "get_weather")
    manager.learner.flush()
    assert len(catalog.learned("get_weather")) == 1 and not catalog.learned_terms("get_weather")
    for principal in ("ann", "bob", "cid"):
        session = manager.session(f"{principal}-1", principal=principal)
        session.call_sync("tool_search", {"query": "what is the weather in riga right now"})
        session.call_sync("get_weather", {"city": "Riga"})
    manager.learner.flush()
    learned = catalog.learned("get_weather")
    assert {r.source for r in learned} == {"use"}
    assert len({r.principal for r in learned}) == 4  # three principals and the anonymous one
    assert "riga" in catalog.learned_terms("get_weather")
    assert "weather riga right" in learned[-1].text


def test_failures_unfound_tools_and_several_needs_teach_nothing() -> None:
    catalog = _catalog()
    manager = ToolManager(catalog, discovery=Discovery(call_unloaded="load"))
    _converse(manager, "c1", "weather forecast for tomorrow", "get_forecast")  # the call fails
    session = manager.session("c2")
    session.call_sync("get_weather", {"city": "Riga"})  # no search found it first
    session = manager.session("c3")
    session.call_sync("tool_search", {"queries": ["weather now", "forecast"]})  # two needs
    session.call_sync("get_weather", {"city": "Riga"})
    manager.learner.flush()
    assert catalog.learned() == []


def test_a_tool_the_policy_hides_never_learns() -> None:
    catalog = _catalog()
    hidden = ToolManager(
        catalog,
        discovery=Discovery(call_unloaded="load"),
        access=Access(policies=[Policy("agent", deny=["delete_*"])]),
    )
    found, called = _converse(hidden, "c1", "delete a city record", "delete_city")
    assert "delete_city" not in found.content and called.error.code == "not_permitted"
    hidden.learner.flush()
    assert catalog.learned("delete_city") == []


def test_nothing_is_learned_unless_the_catalog_learns_from_use() -> None:
    assert ToolManager(_catalog(learning=None)).learner is None
    imports_only = _catalog(LearningOptions(from_use=False))
    manager = ToolManager(imports_only)
    assert manager.learner is None
    _converse(manager, "c1", "what is the weather in riga", "get_weather")
    assert imports_only.learned() == []
