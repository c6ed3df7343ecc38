"""The LiteLLM callback's own work in the completion's trace: a ``toolmgmt prepare_request`` span
beside LiteLLM's own span of the completion (its OpenTelemetry logger, with the SDK's in-memory
exporter), and under the proxy's request span in the proxy's hook."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("litellm")
pytest.importorskip("opentelemetry.sdk")

import litellm  # noqa: E402
from litellm.caching.dual_cache import DualCache  # noqa: E402
from litellm.integrations.opentelemetry import OpenTelemetry, OpenTelemetryConfig  # noqa: E402
from litellm.proxy._types import UserAPIKeyAuth  # noqa: E402
from support.demo import demo_manager  # noqa: E402
from support.otel import OtelKit, span_text  # noqa: E402
from toolmgmt_litellm import ToolManagerCallback, completion_with_tools  # noqa: E402

from toolmgmt_core import ResultBudget  # noqa: E402

SECRET = "pin-0571-secret"


@pytest.fixture(scope="module")
def logged() -> Iterator[tuple[OtelKit, OpenTelemetry]]:
    """One kit and one LiteLLM OpenTelemetry logger for the module (LiteLLM keeps the first
    logger of a kind it was given); the callbacks are put back after."""
    kit = OtelKit()
    otel = OpenTelemetry(
        config=OpenTelemetryConfig(exporter=kit.exporter, skip_set_global=True),
        tracer_provider=kit.tracer_provider,
    )
    saved = litellm.callbacks
    yield kit, otel
    litellm.callbacks = saved
    for callback in _ADDED:  # out of LiteLLM's own lists too, so no later test meets them
        litellm.logging_callback_manager.remove_callback_from_all_lists(callback)


_ADDED: list[Any] = []


def _named(kit: OtelKit, name: str) -> list[Any]:
    return [s for s in kit.spans() if s.name == name]


def _completion(logged: tuple[OtelKit, OpenTelemetry], manager: Any) -> OtelKit:
    """One ``acompletion`` in an agent step's span, with LiteLLM's OpenTelemetry logger."""
    kit, otel = logged
    kit.exporter.clear()
    callback = ToolManagerCallback(manager)
    _ADDED.extend([callback, otel])
    litellm.callbacks = [callback, otel]
    call = {"id": "c1", "type": "function", "function": {"name": "tool_search", "arguments": "{}"}}
    messages = [
        {"role": "user", "content": f"my pin is {SECRET}"},
        {"role": "assistant", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "name": "files_read_file", "content": "log " * 3000},
    ]

    async def run() -> None:
        with kit.tracer.start_as_current_span("support agent step"):
            await litellm.acompletion(
                model="openai/gpt-4o-mini",
                messages=messages,
                mock_response="ok",
                metadata={"toolmgmt_session": "conv-1"},
            )
        deadline = time.monotonic() + 20  # LiteLLM logs the completion in a task of its own
        while time.monotonic() < deadline and not _named(kit, "raw_gen_ai_request"):
            await asyncio.sleep(0.05)

    asyncio.run(run())
    return kit


def test_the_callbacks_work_is_under_the_completions_span(
    logged: tuple[OtelKit, OpenTelemetry],
) -> None:
    """With a span current, LiteLLM takes it for the completion's (its raw request span goes
    under it, no ``litellm_request`` of its own): the callback's span is its child too."""
    listener = logged[0].listener()
    manager = demo_manager(listeners=[listener], results=ResultBudget(max_result_tokens=300))
    kit = _completion(logged, manager)
    ours = kit.span("toolmgmt prepare_request")
    step = kit.span("support agent step")
    (raw,) = _named(kit, "raw_gen_ai_request")  # LiteLLM's, under the step
    assert not _named(kit, "litellm_request")
    assert ours.parent.span_id == raw.parent.span_id == step.context.span_id
    assert ours.attributes["gen_ai.conversation.id"] == "conv-1"
    assert ours.attributes["toolmgmt.tools"] == len(manager.session().tools())
    assert ours.attributes["toolmgmt.results_cut"] == 1  # the long tool result was cut
    assert step.start_time <= ours.start_time <= ours.end_time <= step.end_time
    assert SECRET not in span_text([ours])


def test_beside_litellms_own_request_span(
    logged: tuple[OtelKit, OpenTelemetry], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With LiteLLM's own ``litellm_request`` span asked for, both are children of the step,
    and the callback's work falls within the completion's time."""
    monkeypatch.setenv("USE_OTEL_LITELLM_REQUEST_SPAN", "true")
    kit = _completion(logged, demo_manager(listeners=[logged[0].listener()]))
    ours = kit.span("toolmgmt prepare_request")
    (completion,) = _named(kit, "litellm_request")
    step = kit.span("support agent step")
    assert ours.parent.span_id == completion.parent.span_id == step.context.span_id
    assert completion.start_time <= ours.start_time <= ours.end_time <= completion.end_time


def test_the_proxy_hook_puts_its_span_under_the_proxys_request_span() -> None:
    kit = OtelKit()
    callback = ToolManagerCallback(demo_manager(listeners=[kit.listener()]))
    request_span = kit.tracer.start_span("litellm_proxy_request")
    data = {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": "hi"}],
        "metadata": {"toolmgmt_session": "s1"},
    }
    key = UserAPIKeyAuth(api_key="sk-team-a", parent_otel_span=request_span)
    asyncio.run(callback.async_pre_call_hook(key, DualCache(), data, "acompletion"))
    request_span.end()
    ours = kit.span("toolmgmt prepare_request")
    assert ours.parent.span_id == request_span.get_span_context().span_id
    assert ours.attributes["gen_ai.conversation.id"].endswith("/s1")  # kept apart per key
    assert "sk-team-a" not in span_text(kit.spans())


def test_the_sync_path_and_no_sdk() -> None:
    kit = OtelKit()
    manager = demo_manager(listeners=[kit.listener()])
    session = manager.session()
    messages = [{"role": "user", "content": "hi"}]
    completion_with_tools(
        session, model="openai/gpt-4o-mini", messages=messages, mock_response="ok"
    )
    assert kit.span("toolmgmt prepare_request").attributes["toolmgmt.tools"] >= 1
    quiet = demo_manager()  # the default listener, no SDK configured here: no span, no error
    completion_with_tools(
        quiet.session(), model="openai/gpt-4o-mini", messages=messages, mock_response="ok"
    )
    assert len(kit.spans()) == 1
