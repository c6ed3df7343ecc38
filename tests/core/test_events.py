"""The event stream: what the core emits for searches, loads, listings and calls, in which
order and task, how the hub treats listeners, and the JSONL usage log it writes."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from toolmgmt_core import (
    Approval,
    ResultBudget,
    ToolAnnotations,
    ToolCatalog,
    ToolManager,
)
from toolmgmt_core._events import (
    ApprovalAnswered,
    ApprovalAsked,
    CallFinished,
    CallStarted,
    Event,
    EventHub,
    JsonlListener,
    ResultTruncated,
    SearchDone,
    ToolsListed,
    ToolsLoaded,
    read_jsonl,
)
from toolmgmt_core._runtime.control import passthrough

SECRET = "hunter2-8c41"


class Recorder:
    """Keeps every event, and the thread and task it came in."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.where: list[tuple[int, Any]] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        try:
            task = asyncio.current_task()
        except RuntimeError:
            task = None
        self.where.append((threading.get_ident(), task))

    def of(self, kind: type[Any]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]


def _catalog() -> ToolCatalog:
    def find_invoice(invoice_id: str) -> dict[str, str]:
        """Find an invoice by its id."""
        return {"invoice": invoice_id}

    def export_ledger(year: int) -> str:
        """Export the whole ledger of a year."""
        return " ".join(f"row-{i}" for i in range(2000))

    def close_account(account_id: str) -> str:
        """Close a customer account."""
        return "closed"

    catalog = ToolCatalog()
    catalog.add_function(find_invoice)
    catalog.add_function(export_ledger)
    catalog.add_function(close_account, annotations=ToolAnnotations(destructive=True))
    return catalog


def test_a_search_and_a_call_emit_their_events_in_order_in_one_task() -> None:
    recorder = Recorder()
    manager = ToolManager(
        _catalog(),
        listeners=[recorder],
        approval=Approval(lambda request: True),
        results=ResultBudget(max_result_tokens=100),
    )
    session = manager.session()
    session.tools()
    asyncio.run(session.call("tool_search", {"query": "find an invoice"}, call_id="c1"))
    asyncio.run(session.call("find_invoice", {"invoice_id": "in_1"}, call_id="c2"))
    asyncio.run(session.call("tool_search", {"query": "export ledger, close account"}))
    asyncio.run(session.call("export_ledger", {"year": 2025}))
    asyncio.run(session.call("close_account", {"account_id": "a1"}))
    kinds = [type(e).__name__ for e in recorder.events]
    assert kinds[:6] == [
        "ToolsListed",
        "CallStarted",
        "SearchDone",
        "ToolsLoaded",
        "CallFinished",
        "CallStarted",
    ]
    listed = recorder.of(ToolsListed)[0]
    # tool_search and call_tool, which cost more than these three small tools flat
    assert listed.tools == 2 and listed.definition_tokens > listed.flat_tokens > 0
    search = recorder.of(SearchDone)[0]
    assert search.hits[0] == "find_invoice" and search.engine == "bm25" and search.duration > 0
    assert recorder.of(ToolsLoaded)[0].names[0] == "find_invoice"
    started = recorder.of(CallStarted)
    finished = recorder.of(CallFinished)
    assert [f.started for f in finished] == started
    assert [(s.tool, s.meta, s.call_id) for s in started[:2]] == [
        ("tool_search", True, "c1"),
        ("find_invoice", False, "c2"),
    ]
    assert [f.outcome for f in finished] == ["success"] * 5
    (cut,) = recorder.of(ResultTruncated)
    assert cut.tool == "export_ledger" and cut.tokens_after <= 100 < cut.tokens_before
    assert finished[3].truncated and finished[3].original_tokens == cut.tokens_before
    assert [
        type(e).__name__ for e in recorder.events if isinstance(e, ApprovalAsked | ApprovalAnswered)
    ] == [
        "ApprovalAsked",
        "ApprovalAnswered",
    ]
    assert recorder.of(ApprovalAnswered)[0].verdict == "approved"
    # One conversation id throughout, made for this session object.
    assert {e.conversation for e in recorder.events} == {session.conversation}
    assert session.conversation.startswith("local-")
    # A call's events come in the task that ran it.
    first_call = recorder.where[1:5]
    assert len({task for _, task in first_call}) == 1 and first_call[0][1] is not None


def test_a_stored_conversation_is_named_by_its_id_and_an_adapter_may_name_one() -> None:
    recorder = Recorder()
    manager = ToolManager(_catalog(), listeners=[recorder])
    asyncio.run(manager.session("conv-7").call("tool_search", {"query": "invoice"}))
    session = manager.session()
    session.conversation = "thread-42"
    asyncio.run(session.call("tool_search", {"query": "invoice"}))
    assert [e.conversation for e in recorder.of(SearchDone)] == ["conv-7", "thread-42"]
    from toolmgmt_core import ConfigError

    with pytest.raises(ConfigError, match="non-empty string"):
        session.conversation = ""


def test_a_signal_that_leaves_a_call_still_finishes_it() -> None:
    recorder = Recorder()

    class Pause(Exception):
        """A framework's control flow (as LangGraph's interrupt)."""

    def wait_for_human(question: str) -> str:
        """Ask a human."""
        raise Pause(question)

    catalog = ToolCatalog()
    catalog.add_function(wait_for_human)
    session = ToolManager(catalog, "flat", listeners=[recorder]).session()

    async def run() -> None:
        with passthrough(Pause), pytest.raises(Pause):
            await session.call("wait_for_human", {"question": "ok?"})

    asyncio.run(run())
    (finished,) = recorder.of(CallFinished)
    assert finished.outcome == "interrupted" and finished.signal == "Pause"
    assert finished.started is recorder.of(CallStarted)[0]


def test_a_listener_that_fails_is_logged_and_the_call_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    recorder = Recorder()

    def broken(event: Event) -> None:
        raise ValueError("listener bug")

    session = ToolManager(_catalog(), "flat", listeners=[broken, recorder]).session()
    with caplog.at_level(logging.ERROR, logger="toolmgmt"):
        result = asyncio.run(session.call("find_invoice", {"invoice_id": "x"}))
    assert result.outcome == "success"
    assert len(recorder.of(CallFinished)) == 1
    assert "listener" in caplog.text and "ValueError" in caplog.text


def test_a_listener_that_is_not_enabled_gets_nothing_and_costs_no_event() -> None:
    class Gated(Recorder):
        on = False

        def enabled(self) -> bool:
            return self.on

    gated = Gated()
    hub = EventHub([gated])
    assert not hub
    session = ToolManager(_catalog(), "flat", listeners=[gated]).session()
    asyncio.run(session.call("find_invoice", {"invoice_id": "x"}))
    assert gated.events == []
    gated.on = True
    asyncio.run(session.call("find_invoice", {"invoice_id": "y"}))
    assert len(gated.of(CallFinished)) == 1
    # Beside an always-on listener, a disabled one is still skipped.
    always = Recorder()
    gated.on = False
    both = EventHub([gated, always])
    assert both
    both.emit(SearchDone(None, ("q",), "keyword", "bm25", (), 0.0))
    assert len(always.events) == 1 and len(gated.of(SearchDone)) == 0


def test_the_jsonl_log_has_one_record_per_event_and_no_content_by_default(tmp_path: Path) -> None:
    path = tmp_path / "usage.jsonl"
    with JsonlListener(path) as log:
        session = ToolManager(_catalog(), listeners=[log]).session("conv-1")
        asyncio.run(session.call("tool_search", {"query": f"invoice {SECRET}"}))
        asyncio.run(session.call("find_invoice", {"invoice_id": SECRET}, call_id="c9"))
    text = path.read_text(encoding="utf-8")
    assert SECRET not in text
    records = list(read_jsonl(path))
    assert [r["event"] for r in records] == ["search", "load", "call", "call"]
    search, _, meta_call, call = records
    assert search["query_count"] == 1 and "queries" not in search
    assert call == {
        **call,
        "conversation": "conv-1",
        "tool": "find_invoice",
        "call_id": "c9",
        "meta": False,
        "outcome": "success",
    }
    assert "arguments" not in call and "result" not in call
    assert meta_call["meta"] is True


def test_the_jsonl_log_records_content_when_asked_bounded(tmp_path: Path) -> None:
    path = tmp_path / "usage.jsonl"
    with JsonlListener(path, capture_content=True, max_content_chars=40) as log:
        session = ToolManager(_catalog(), "flat", listeners=[log]).session()
        asyncio.run(session.call("find_invoice", {"invoice_id": SECRET + "x" * 100}))
    (call,) = [r for r in read_jsonl(path) if r["event"] == "call"]
    assert SECRET in call["arguments"] and len(call["arguments"]) == 40
    assert SECRET in call["result"]


def test_reading_a_log_skips_what_is_not_a_record(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    good = json.dumps({"event": "search", "hits": ["a"]})
    path.write_text(
        "\n".join([good, "not json", "[1, 2]", json.dumps({"no": "event"}), "x" * 1_100_000, good])
        + "\n",
        encoding="utf-8",
    )
    assert len(list(read_jsonl(path))) == 2
    from toolmgmt_core import ConfigError

    with pytest.raises(ConfigError, match="Cannot read the usage log"):
        list(read_jsonl(tmp_path / "missing.jsonl"))


def test_events_are_built_as_their_dataclass_would_and_stay_frozen() -> None:
    """Events get a one-step ``__init__`` (``types._filled_at_once``): the same signature,
    defaults, equality and immutability as the dataclass's own; a field with a
    ``default_factory`` is refused, since that ``__init__`` does not run factories."""
    import dataclasses

    from toolmgmt_core._events.types import _filled_at_once

    first = CallStarted("c", "lookup", "call_1", '{"id": 1}', True)
    again = CallStarted(
        conversation="c", tool="lookup", call_id="call_1", meta=True, arguments='{"id": 1}'
    )
    assert first == again and hash(first) == hash(again)
    bare = CallStarted("c", "lookup", None)  # the fields' defaults
    assert bare.arguments is None and bare.meta is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.tool = "other"  # type: ignore[misc]

    @dataclasses.dataclass(frozen=True)
    class Listed:
        names: list[str] = dataclasses.field(default_factory=list)

    with pytest.raises(TypeError, match="default_factory"):
        _filled_at_once(Listed)
