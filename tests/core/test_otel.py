"""OpenTelemetry on the event stream, checked with the SDK's in-memory exporter and reader.

Spans follow the GenAI conventions (``execute_tool {tool}``, a ``retrieval`` span per search),
are current while a call runs (a sync handler on its lane thread and an async handler both see
them), nest under the span current when the call starts, and carry no argument, result or
query text unless the user opted in; metrics count calls, searches, denials, approvals and
truncated tokens. Without an SDK the default listener costs a check and records nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry import trace  # noqa: E402
from support.otel import OtelKit, span_text  # noqa: E402

from toolmgmt_core import (  # noqa: E402
    Access,
    Approval,
    Policy,
    ResultBudget,
    Tool,
    ToolAnnotations,
    ToolCatalog,
    ToolManager,
)
from toolmgmt_core._events import OtelListener  # noqa: E402

SECRET = "s3cr3t-7d1f0c9a"


def _catalog(kit: OtelKit) -> ToolCatalog:
    inner = kit.tracer

    def lookup_order(order_id: str, note: str = "") -> dict[str, Any]:
        """Look up a customer order by its id."""
        with inner.start_as_current_span("db.query"):  # the handler's own span (a sync thread)
            return {"order": order_id, "status": "shipped", "echo": note}

    async def refund_payment(payment_id: str, amount: float) -> str:
        """Refund a customer payment."""
        with inner.start_as_current_span("payments.http"):  # the handler's own span (async)
            await asyncio.sleep(0)
            return f"refunded {amount}"

    def fail_always(reason: str) -> str:
        """A tool that always fails."""
        raise RuntimeError(f"broken: {reason}")

    def big_report(topic: str) -> str:
        """Write a long report on a topic."""
        return " ".join(f"{topic}-word-{i}" for i in range(3000))

    def delete_account(account_id: str) -> str:
        """Delete a customer account for good."""
        return "deleted"

    catalog = ToolCatalog()
    for function in (lookup_order, refund_payment, fail_always, big_report):
        catalog.add_function(function)
    catalog.add_function(delete_account, annotations=ToolAnnotations(destructive=True))
    return catalog


def _manager(kit: OtelKit, mode: str = "search", **options: Any) -> ToolManager:
    listener = options.pop("listener", None) or kit.listener()
    return ToolManager(_catalog(kit), mode, listeners=[listener], **options)


def test_a_call_is_an_execute_tool_span_under_the_current_span_with_the_handlers_inside() -> None:
    kit = OtelKit()
    session = _manager(kit, "flat").session()
    with kit.tracer.start_as_current_span("agent run") as run:
        result = asyncio.run(session.call("lookup_order", {"order_id": "A1"}, call_id="call_1"))
        asyncio.run(session.call("refund_payment", {"payment_id": "P9", "amount": 5}))
    assert result.outcome == "success"
    call = kit.span("execute_tool lookup_order")
    assert call.attributes["gen_ai.operation.name"] == "execute_tool"
    assert call.attributes["gen_ai.tool.name"] == "lookup_order"
    assert call.attributes["gen_ai.tool.call.id"] == "call_1"
    assert call.attributes["gen_ai.tool.type"] == "function"
    assert call.attributes["toolmgmt.call.outcome"] == "success"
    assert call.attributes["gen_ai.conversation.id"] == session.conversation
    assert "error.type" not in call.attributes
    assert call.parent is not None and call.parent.span_id == run.get_span_context().span_id
    # The sync handler ran on its lane thread, the async one in a task: both saw the call's span.
    assert kit.span("db.query").parent.span_id == call.context.span_id
    refund = kit.span("execute_tool refund_payment")
    assert kit.span("payments.http").parent.span_id == refund.context.span_id
    assert {s.context.trace_id for s in kit.spans()} == {run.get_span_context().trace_id}
    # Nothing is left current once the calls are done.
    assert trace.get_current_span() is trace.INVALID_SPAN


def test_sync_calls_and_calls_on_threads_nest_the_same_way() -> None:
    kit = OtelKit()
    session = _manager(kit, "flat").session()

    def on_a_thread() -> None:
        with kit.tracer.start_as_current_span("worker step"):
            session.call_sync("lookup_order", {"order_id": "B2"})

    with kit.tracer.start_as_current_span("agent run"):
        session.call_sync("lookup_order", {"order_id": "A1"})
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(2) as pool:
            for future in [pool.submit(on_a_thread) for _ in range(4)]:
                future.result()
    calls = [s for s in kit.spans() if s.name == "execute_tool lookup_order"]
    queries = [s for s in kit.spans() if s.name == "db.query"]
    assert len(calls) == len(queries) == 5
    assert {q.parent.span_id for q in queries} == {c.context.span_id for c in calls}
    steps = {s.context.span_id for s in kit.spans() if s.name == "worker step"}
    assert sum(c.parent.span_id in steps for c in calls) == 4


def test_a_search_is_a_retrieval_span_under_the_meta_tool_call() -> None:
    kit = OtelKit()
    session = _manager(kit).session()
    asyncio.run(session.call("tool_search", {"query": "look up an order"}))
    call = kit.span("execute_tool tool_search")
    assert call.attributes["gen_ai.tool.type"] == "extension"
    search = kit.span("retrieval toolmgmt.catalog")
    assert search.parent.span_id == call.context.span_id
    assert search.attributes["gen_ai.operation.name"] == "retrieval"
    assert search.attributes["toolmgmt.search.engine"] == "bm25"
    assert search.attributes["toolmgmt.search.results"][0] == "lookup_order"
    assert search.start_time < search.end_time
    loaded = [e for e in call.events if e.name == "toolmgmt.tools_loaded"]
    assert loaded and "lookup_order" in loaded[0].attributes["toolmgmt.tools"]
    assert kit.total("toolmgmt.searches", **{"toolmgmt.search.found": True}) == 1


def test_execute_tool_names_its_span_after_the_tool_it_ran() -> None:
    kit = OtelKit()
    session = _manager(kit, "gateway").session()
    asyncio.run(
        session.call("execute_tool", {"tool_name": "lookup_order", "arguments": {"order_id": "1"}})
    )
    span = kit.span("execute_tool lookup_order")
    assert span.attributes["gen_ai.tool.name"] == "lookup_order"
    assert span.attributes["toolmgmt.call.via"] == "execute_tool"
    assert kit.span("db.query").parent.span_id == span.context.span_id


def test_failures_carry_error_type_and_an_error_status() -> None:
    kit = OtelKit()
    session = _manager(kit, "flat").session()
    asyncio.run(session.call("fail_always", {"reason": "x"}))
    asyncio.run(session.call("lookup_order", {"order_id": 12}))  # wrong type: the model retries
    asyncio.run(session.call("no_such_tool", {}))
    failed = kit.span("execute_tool fail_always")
    assert failed.attributes["error.type"] == "tool_error"
    assert failed.status.status_code == trace.StatusCode.ERROR
    assert failed.status.description == "tool_error"  # the code, not the message
    retry = kit.span("execute_tool lookup_order")
    assert retry.attributes["toolmgmt.call.outcome"] == "retry"
    assert retry.attributes["error.type"] == "invalid_arguments"
    assert kit.span("execute_tool no_such_tool").attributes["error.type"] == "unknown_tool"
    errors = {p.attributes.get("error.type") for p in kit.points("gen_ai.execute_tool.duration")}
    assert {"tool_error", "invalid_arguments", "unknown_tool"} <= errors


def test_names_the_model_makes_up_are_bounded_and_make_no_new_series() -> None:
    kit = OtelKit()
    session = _manager(kit, "flat").session()
    for n in range(5):
        asyncio.run(session.call(f"made_up_{n}_" + "x" * 500, {}))
    spans = kit.spans()
    assert len(spans) == 5 and all(len(s.name) <= len("execute_tool ") + 128 for s in spans)
    (point,) = kit.points("gen_ai.execute_tool.duration")  # one series for all of them
    assert point.attributes["gen_ai.tool.name"] == "_unknown" and point.count == 5


def test_truncation_denials_and_approvals_show_on_the_span_and_in_the_counters() -> None:
    kit = OtelKit()
    asked: list[str] = []

    def approve(request: Any) -> bool:
        asked.append(request.tool.name)
        return False

    session = _manager(
        kit,
        "flat",
        results=ResultBudget(max_result_tokens=200),
        access=Access(policies=[Policy("no-fail", deny=["fail_*"])]),
        approval=Approval(approve),
    ).session()
    asyncio.run(session.call("big_report", {"topic": "sales"}))
    asyncio.run(session.call("fail_always", {"reason": "x"}))
    asyncio.run(session.call("delete_account", {"account_id": "7"}))
    report = kit.span("execute_tool big_report")
    assert report.attributes["toolmgmt.truncation.tokens_after"] <= 200
    assert report.attributes["toolmgmt.result.original_tokens"] > 1000
    assert [e.name for e in report.events] == ["toolmgmt.result_truncated"]
    cut = kit.total("toolmgmt.truncated_tokens", **{"gen_ai.tool.name": "big_report"})
    before = report.attributes["toolmgmt.truncation.tokens_before"]
    assert cut == before - report.attributes["toolmgmt.truncation.tokens_after"] > 0
    assert kit.total("toolmgmt.policy.denials", **{"gen_ai.tool.name": "fail_always"}) == 1
    assert asked == ["delete_account"]
    delete = kit.span("execute_tool delete_account")
    assert [e.name for e in delete.events] == [
        "toolmgmt.approval_asked",
        "toolmgmt.approval_answered",
    ]
    assert kit.total("toolmgmt.approval.requests") == 1
    assert kit.total("toolmgmt.approval.answers", **{"toolmgmt.approval.verdict": "denied"}) == 1


def test_the_duration_histogram_counts_every_call() -> None:
    kit = OtelKit()
    session = _manager(kit, "flat").session()
    for n in range(3):
        asyncio.run(session.call("lookup_order", {"order_id": str(n)}))
    points = [
        p
        for p in kit.points("gen_ai.execute_tool.duration")
        if p.attributes["gen_ai.tool.name"] == "lookup_order"
    ]
    assert len(points) == 1 and points[0].count == 3
    assert points[0].attributes["gen_ai.operation.name"] == "execute_tool"
    assert 0 < points[0].sum < 30
    assert list(points[0].explicit_bounds)[:3] == [0.01, 0.02, 0.04]


def test_discovery_savings_are_counted_per_listing() -> None:
    kit = OtelKit()
    session = _manager(kit).session()
    with kit.tracer.start_as_current_span("model request") as request:
        listed = session.tools()
    usage = session.usage()
    assert len(listed) == usage.listed_tools
    assert kit.total("toolmgmt.discovery.saved_tokens") == usage.saved_tokens > 0
    (event,) = kit.span("model request").events
    assert event.name == "toolmgmt.tools_listed"
    assert event.attributes["toolmgmt.flat_tokens"] == usage.flat_tokens
    assert request.is_recording() is False  # ended


def test_no_argument_result_or_query_text_leaves_by_default() -> None:
    """The no-leak test: a secret in arguments, in a search, in a failing call's input (whose
    error message echoes it) and in results is nowhere in any span or metric."""
    kit = OtelKit()
    session = _manager(kit).session()
    calls = [
        ("tool_search", {"query": f"find order {SECRET}"}),
        ("lookup_order", {"order_id": SECRET, "note": SECRET}),
        ("lookup_order", {"order_id": {"nested": SECRET}}),  # invalid: echoed in the error
        ("refund_payment", {"payment_id": SECRET, "amount": f"{SECRET}"}),
        ("fail_always", {"reason": SECRET}),
        ("tool_search", {"queries": [SECRET, "refund"]}),
    ]
    for name, arguments in calls:
        asyncio.run(session.call(name, arguments, call_id=f"c-{name}"))
    session.tools()
    spans = kit.spans()
    assert len(spans) >= 8
    assert SECRET not in span_text(spans)
    metrics = json.dumps(json.loads(kit.reader.get_metrics_data().to_json()))
    assert SECRET not in metrics
    # ...and the secret did reach the tools (the test is not vacuous).
    outcome = asyncio.run(session.call("lookup_order", {"order_id": SECRET}))
    assert SECRET in outcome.content


def test_content_capture_is_opt_in_and_bounded() -> None:
    kit = OtelKit()
    listener = kit.listener(capture_content=True, max_content_chars=64)
    session = _manager(kit, "search", listener=listener).session()
    asyncio.run(session.call("tool_search", {"query": f"order {SECRET}"}))
    asyncio.run(session.call("lookup_order", {"order_id": SECRET, "note": "n" * 500}))
    call = kit.span("execute_tool lookup_order")
    arguments = call.attributes["gen_ai.tool.call.arguments"]
    assert SECRET in arguments and len(arguments) == 64 and arguments.endswith("…")
    assert SECRET in call.attributes["gen_ai.tool.call.result"]
    assert len(call.attributes["gen_ai.tool.call.result"]) <= 64
    query = kit.span("retrieval toolmgmt.catalog").attributes["gen_ai.retrieval.query.text"]
    assert query == f"order {SECRET}"


def test_the_environment_variable_turns_capture_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    assert OtelListener().content.enabled
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "false")
    assert not OtelListener().content.enabled
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "maybe")
    from toolmgmt_core import ConfigError

    with pytest.raises(ConfigError, match="use true to record"):
        OtelListener()


def test_a_cancelled_call_ends_its_span_and_leaves_nothing_current() -> None:
    kit = OtelKit()
    started = asyncio.Event()

    async def wait_forever() -> str:
        """Wait for something that never comes."""
        started.set()
        await asyncio.sleep(3600)
        return "never"

    catalog = ToolCatalog()
    catalog.add_function(wait_forever)
    session = ToolManager(catalog, "flat", listeners=[kit.listener()]).session()

    async def run() -> None:
        task = asyncio.ensure_future(session.call("wait_forever", {}))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert trace.get_current_span() is trace.INVALID_SPAN

    asyncio.run(run())
    span = kit.span("execute_tool wait_forever")
    assert span.attributes["toolmgmt.call.outcome"] == "interrupted"
    assert span.attributes["toolmgmt.call.signal"] == "CancelledError"
    assert span.status.status_code == trace.StatusCode.UNSET
    assert kit.points("gen_ai.execute_tool.duration") == []


def test_without_an_sdk_the_default_listener_is_a_check_and_records_nothing() -> None:
    """In a fresh interpreter (no provider set): the manager's hub is falsy, so no event is
    built; once an SDK provider is set, the same manager's calls are spans."""
    script = textwrap.dedent(
        """
        import asyncio
        from toolmgmt_core import ToolCatalog, ToolManager
        from toolmgmt_core._events import OtelListener

        def ping(text: str) -> str:
            '''Echo the text.'''
            return text

        catalog = ToolCatalog()
        catalog.add_function(ping)
        manager = ToolManager(catalog, "flat")
        assert [type(l) for l in manager.events.listeners] == [OtelListener]
        assert not manager.events
        asyncio.run(manager.session().call("ping", {"text": "a"}))

        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        assert manager.events
        asyncio.run(manager.session().call("ping", {"text": "b"}))
        print([s.name for s in exporter.get_finished_spans()])
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['execute_tool ping']"


def test_the_default_listener_can_be_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = ToolCatalog([Tool("t", "A tool.", {"type": "object", "properties": {}})])
    assert any(isinstance(x, OtelListener) for x in ToolManager(catalog).events.listeners)
    monkeypatch.setenv("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS", "redis, toolmgmt")
    assert ToolManager(catalog).events.listeners == ()
    mine = OtelListener(capture_content=False)
    monkeypatch.delenv("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS")
    assert ToolManager(catalog, listeners=[mine]).events.listeners == (mine,)
