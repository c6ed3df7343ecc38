"""Auto mode under a definitions budget: list what fits, defer the rest behind tool_search."""

from __future__ import annotations

import json

import pytest

from toolmgmt_core import Auto, ConfigError, ToolManager
from toolmgmt_demo import demo_catalog


def _catalog_tools(session):  # type: ignore[no-untyped-def]
    return [t for t in session.tools() if not t.metadata.get("meta")]


def test_tools_that_fit_are_listed_and_the_rest_deferred() -> None:
    manager = ToolManager(demo_catalog(), mode=Auto(definitions_budget=3_000))
    session = manager.session()
    listed = _catalog_tools(session)
    assert 3 < len(listed) < len(manager.catalog)
    assert manager.definition_tokens(listed) <= 3_000
    assert [t.name for t in session.tools()][0] == "tool_search"
    # Always-on (defer_loading=False) tools come first, whatever the budget.
    assert [t.name for t in listed[:3]] == [
        t.name for t in manager.catalog if t.defer_loading is False
    ]
    # A listed tool runs directly; a deferred one is found with tool_search and then listed.
    deferred = next(t for t in manager.catalog if t.name not in {x.name for x in listed})
    before = json.dumps([t.to_dict() for t in session.tools()])
    session.call_sync("tool_search", {"query": deferred.description})
    assert deferred.name in session.loaded()
    after = json.dumps([t.to_dict() for t in session.tools()])
    assert after.startswith(before[:-1])  # the list only grew by appending


def test_a_budget_that_holds_everything_lists_flat() -> None:
    manager = ToolManager(demo_catalog(), mode=Auto(definitions_budget=10**6))
    session = manager.session()
    assert session.mode == "flat"
    assert len(_catalog_tools(session)) == len(manager.catalog)


def test_budget_must_be_positive() -> None:
    with pytest.raises(ConfigError, match="definitions_budget"):
        ToolManager(demo_catalog(), mode=Auto(definitions_budget=0))
