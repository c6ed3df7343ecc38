"""An approval is used once: the in-process set of used approvals, a store's atomic claim, and a
framework's own approval marker decided on the resolved tool."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from toolmgmt_core import ApprovalDeniedError, Tool, ToolCatalog, ToolManager
from toolmgmt_core._calls.approval import (
    UsedApprovals,
    approval_key,
    replayed_approval,
)
from toolmgmt_core._calls.context import CallContext


def test_a_key_is_claimed_once_until_it_expires() -> None:
    used = UsedApprovals(ttl=0.2)
    assert used.claim("a") and not used.claim("a") and used.claim("b")
    time.sleep(0.3)
    assert used.claim("a")  # expired: remembered no longer


def test_the_used_set_is_bounded_and_never_forgets_a_key_before_it_expires() -> None:
    used = UsedApprovals(ttl=0.2, limit=3)
    for key in "abc":
        assert used.claim(key)
    with pytest.raises(RuntimeError, match="no more can be recorded"):
        used.claim("d")  # full: refused, rather than forgetting "a" (used again after)
    assert len(used) == 3 and not used.claim("a")
    time.sleep(0.3)
    assert used.claim("d") and len(used) == 1  # the expired ones made room


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="ttl"):
        UsedApprovals(ttl=0)


def test_an_approval_key_covers_the_tool_its_arguments_and_the_grant() -> None:
    key = approval_key("c1", "drop_table", {"table": "t1"}, "n1")
    assert key == approval_key("c1", "drop_table", {"table": "t1"}, "n1")
    others = [
        approval_key("c2", "drop_table", {"table": "t1"}, "n1"),
        approval_key("c1", "drop_index", {"table": "t1"}, "n1"),
        approval_key("c1", "drop_table", {"table": "t2"}, "n1"),
        approval_key("c1", "drop_table", {"table": "t1"}, "n2"),
    ]
    assert key not in others and len(set(others)) == 4
    error = replayed_approval("drop_table")
    assert isinstance(error, ApprovalDeniedError) and "already used" in error.message


def test_twenty_threads_claiming_one_key_in_redis_get_one_yes(redis_url: str) -> None:
    from toolmgmt_core._stores.redis import RedisSessionStore

    stores = [RedisSessionStore(redis_url) for _ in range(2)]  # two replicas
    with ThreadPoolExecutor(20) as pool:
        claims = list(pool.map(lambda i: stores[i % 2].claim_once("k1", 30), range(20)))
    assert claims.count(True) == 1
    assert stores[0].claim_once("k2", 0.05) and not stores[1].claim_once("k2", 0.05)
    time.sleep(0.15)
    assert stores[1].claim_once("k2", 0.05)  # expired
    with pytest.raises(ValueError, match="positive ttl"):
        stores[0].claim_once("k3", 0)


def _catalog(runs: list[str]) -> ToolCatalog:
    def wipe(target: str) -> str:
        """Wipe a target."""
        runs.append(target)
        return "wiped"

    catalog = ToolCatalog()
    catalog.add(Tool.from_function(wipe, metadata={"requires_approval": "a framework says so"}))
    return catalog


@pytest.mark.parametrize("mode", ["flat", "search", "gateway"])
def test_a_tools_own_approval_marker_holds_on_every_path(mode: str) -> None:
    runs: list[str] = []
    session = ToolManager(_catalog(runs), mode=mode).session()
    runner = {"search": "call_tool", "gateway": "execute_tool"}.get(mode)
    call: tuple[str, Any] = (
        (runner, {"tool_name": "wipe", "arguments": {"target": "x"}})
        if runner
        else ("wipe", {"target": "x"})
    )
    refused = session.call_sync(*call)
    assert refused.outcome == "denied" and "a framework says so" in refused.content
    asked: list[str] = []
    approver = CallContext(approver=lambda request: asked.append(request.tool.name) or True)
    done = session.call_sync(*call, context=approver)
    assert done.outcome == "success" and asked == ["wipe"] and runs == ["x"]


def test_a_frameworks_marker_held_apart_from_the_tool_is_asked_about_the_inner_call() -> None:
    runs: list[str] = []
    catalog = _catalog(runs)
    catalog.add(Tool.from_function(lambda: "ok", name="plain", description="A plain tool."))
    session = ToolManager(catalog, mode="search").session()
    seen: list[tuple[str, dict[str, Any]]] = []

    def requires(tool: Tool, arguments: Any) -> str | None:
        seen.append((tool.name, dict(arguments)))
        return "HITL says so" if tool.name == "plain" else None

    context = CallContext(requires=requires)
    call = {"tool_name": "plain", "arguments": {}}
    result = session.call_sync("call_tool", call, context=context)
    assert result.outcome == "denied" and "HITL says so" in result.content
    assert seen == [("plain", {})]
