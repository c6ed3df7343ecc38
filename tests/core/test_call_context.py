"""The call's context travels down with it: to the approver, the result's id and a handler."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from typing import Any

from toolmgmt_core import (
    Discovery,
    ToolAnnotations,
    ToolCatalog,
    ToolManager,
    ToolNotListedError,
)
from toolmgmt_core._calls.context import CallContext, Slot
from toolmgmt_core._calls.request import CallRequest
from toolmgmt_core._policy.steps import ApprovalRequest


def _session(mode: str = "search") -> tuple[Any, list[Any]]:
    seen: list[Any] = []

    def whoami(note: str, toolmgmt_context: CallContext) -> str:
        """Say which call this is.

        Args:
            note: anything.
        """
        seen.append(toolmgmt_context)
        return f"{note} {toolmgmt_context.call_id} {toolmgmt_context.client}"

    def wipe(target: str) -> str:
        """Wipe a target."""
        return f"wiped {target}"

    catalog = ToolCatalog()
    catalog.add_function(whoami)
    catalog.add_function(wipe, annotations=ToolAnnotations(destructive=True))
    manager = ToolManager(catalog, mode=mode, always_on=["whoami", "wipe"])
    return manager.session(), seen


def test_a_handler_that_asks_gets_the_calls_context_and_the_model_never_sees_it() -> None:
    session, seen = _session()
    whoami = session.manager.catalog.get("whoami")
    assert set(whoami.parameters["properties"]) == {"note"}  # not in the model's schema
    context = CallContext(client="alice")
    result = session.call_sync("whoami", {"note": "hi"}, call_id="c1", context=context)
    assert result.content == "hi c1 alice"
    # A model that sends the keyword itself does not replace the door's context.
    forged = {"note": "hi", "toolmgmt_context": "forged"}
    result = session.call_sync("whoami", forged, call_id="c2", context=context)
    assert seen[-1] is not None and seen[-1].client == "alice"
    assert "forged" not in result.content


def test_concurrent_calls_each_keep_their_own_context() -> None:
    session, _ = _session()

    async def both() -> list[str]:
        calls = [
            session.call("whoami", {"note": n}, context=CallContext(call_id=n, client=n))
            for n in ("a", "b", "c")
        ]
        return [r.content for r in await asyncio.gather(*calls)]

    assert asyncio.run(both()) == ["a a a", "b b b", "c c c"]


def test_the_approver_is_the_calls_own_on_every_path() -> None:
    session, _ = _session()
    asked: list[tuple[str, str]] = []
    lock = threading.Lock()

    def approver(name: str) -> Any:
        def approve(request: ApprovalRequest) -> bool:
            with lock:
                asked.append((name, request.tool.name))
            return name == "yes"

        return approve

    no = CallContext(approver=approver("no"))
    direct = session.call_sync("wipe", {"target": "x"}, context=no)
    assert direct.outcome == "denied"
    inner = {"tool_name": "wipe", "arguments": {"target": "y"}}
    through = session.call_sync("call_tool", inner, context=CallContext(approver=approver("yes")))
    assert through.content == "wiped y"
    unasked = session.call_sync("wipe", {"target": "z"})  # another call: nobody to ask
    assert unasked.outcome == "denied" and "nobody here" in unasked.content
    assert asked == [("no", "wipe"), ("yes", "wipe")]


def test_execute_tool_names_the_tool_for_the_pipeline_to_run() -> None:
    session, seen = _session()
    arguments = {"tool_name": "whoami", "arguments": {"note": "x"}}
    request = session.request("call_tool", arguments, CallContext())
    assert request.meta and request.tool is not None and request.tool.name == "call_tool"
    assert request.view.meta is not None  # the session's meta-tools answer it
    inner = asyncio.run(request.view.meta(request, session.pipeline))
    assert isinstance(inner, CallRequest) and inner.tool is not None
    assert inner.tool.name == "whoami" and not inner.meta
    assert seen == []  # nothing ran: the pipeline runs it, in the same call
    result = session.call_sync("call_tool", arguments, call_id="c9")
    assert result.content == "x c9 None" and seen[-1].call_id == "c9"


def test_a_listed_only_door_may_call_exactly_the_listed_names_and_nothing_else() -> None:
    """An MCP ``tools/call`` names a listed tool as listed: the core refuses any other name
    itself (folded, unlisted, unknown), naming the list, before anything runs."""
    catalog = ToolCatalog()

    def lookup(order: str) -> str:
        """Look up an order."""
        return f"order {order}"

    catalog.add_function(lookup)
    heard: list[object] = []
    manager = ToolManager(
        catalog, mode="gateway", discovery=Discovery(call_unloaded="load"), listeners=[heard.append]
    )
    session = manager.session()
    listed = CallContext(listed_only=True)
    ran = session.call_sync("discover_tools", {}, context=listed)
    assert ran.outcome == "success"
    before = len(heard)
    for name in ("Discover-Tools", "lookup", "nothing_like_it"):
        refused = session.call_sync(name, {"order": "1"}, context=listed)
        assert isinstance(refused.error, ToolNotListedError), (name, refused.content)
        assert refused.outcome == "retry" and refused.error.code == "unknown_tool"
        assert refused.error.listed == ["discover_tools", "execute_tool", "get_tool_schema"]
    # A protocol error, not a call: no call events (usage, spans, event log) for made-up names.
    assert len(heard) == before, heard[before:]
    # Another door forgives the folded name, and runs the unlisted tool as call_unloaded says.
    assert session.call_sync("Discover-Tools", {}).outcome == "success"
    assert session.call_sync("lookup", {"order": "1"}).content == "order 1"


def test_a_door_carries_its_own_things_in_a_typed_slot_the_core_never_names() -> None:
    """Issue 42: the core's CallContext names no door (no relay, progress or run of a
    particular framework); a door's handler reads what its door put under its own slot."""
    assert not {"relay", "progress", "run"} & {f.name for f in dataclasses.fields(CallContext)}
    run: Slot[tuple[str, int]] = Slot("a framework's run")
    other: Slot[str] = Slot("a framework's run")  # the same name is another key
    seen: list[object] = []

    def forwards(toolmgmt_context: CallContext) -> str:
        seen.append(toolmgmt_context.get(run))
        seen.append(toolmgmt_context.get(other))
        return "ok"

    catalog = ToolCatalog()
    catalog.add_function(forwards)
    session = ToolManager(catalog, mode="flat").session()
    context = CallContext(slots={run: ("run-1", 2)})
    assert session.call_sync("forwards", {}, context=context).content == "ok"
    assert seen == [("run-1", 2), None]
    assert session.call_sync("forwards", {}).content == "ok" and seen[-2:] == [None, None]
    assert repr(run) == 'Slot("a framework\'s run")'
