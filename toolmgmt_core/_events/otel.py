"""OpenTelemetry on the event stream: spans and metrics after the GenAI semantic conventions.

Through the OpenTelemetry API only: without an SDK nothing is recorded, and a manager pays one
check per event site (:meth:`OtelListener.enabled`), which is why every
:class:`~toolmgmt_core.ToolManager` installs one by default (:func:`default_listeners`; the
variable ``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=toolmgmt`` leaves it out). With an SDK:

- each call is an ``execute_tool {tool}`` span (``gen_ai.operation.name``, ``gen_ai.tool.name``,
  ``gen_ai.tool.call.id``, ``error.type`` on a failure), current while the call runs, so the
  handler's own spans (an HTTP request, a database query) nest under it, and it nests under the
  framework's span that is current when the call starts (PydanticAI's tool run, an MCP request);
- each code-mode program is a ``run_code program`` span (calls made, tokens kept out of the
  context), under ``run_code``'s call span, with its calls' ``execute_tool`` spans under it;
- each search is a ``retrieval toolmgmt.catalog`` span (engine, method, the tools found, best
  first), under the meta-tool's call span;
- loads, policy denials, approvals, truncation and a spent budget are events (and attributes)
  on the call's span;
- metrics: the ``gen_ai.execute_tool.duration`` histogram, and counters of searches, policy
  denials, approval requests and answers, truncated tokens and tokens saved by discovery.

Argument, result and query text are recorded only when the user opts in, bounded
(:mod:`toolmgmt_core._events.content`). Error messages echo what the model sent, so a failed
call's span carries its error code, and its message only with content capture on.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextvars import Token
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import metrics, trace
from opentelemetry.context import Context
from opentelemetry.trace import Status, StatusCode

from toolmgmt_core._compat import package_version
from toolmgmt_core._events.content import ContentCapture
from toolmgmt_core._events.types import (
    ApprovalAnswered,
    ApprovalAsked,
    BudgetExhausted,
    CallFinished,
    CallStarted,
    Event,
    PolicyDenied,
    ProgramFinished,
    ProgramStarted,
    ResultTruncated,
    SearchDone,
    ToolsListed,
    ToolsLoaded,
)

__all__ = [
    "DATA_SOURCE",
    "DISABLE_ENV",
    "DURATION_BUCKETS",
    "INSTRUMENTATION_NAME",
    "UNKNOWN_TOOL",
    "OtelListener",
    "default_listeners",
]

INSTRUMENTATION_NAME = "toolmgmt"
"""The tracer's and meter's name (the instrumentation scope)."""

DATA_SOURCE = "toolmgmt.catalog"
"""``gen_ai.data_source.id`` of a search: the tool catalog."""

DISABLE_ENV = "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS"
"""OpenTelemetry's list of instrumentations to leave out; ``toolmgmt`` in it: no default
listener."""

DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48)
"""Bucket bounds (seconds) of ``gen_ai.execute_tool.duration``, the GenAI conventions' own."""

_MAX_OPEN = 100_000  # calls started and not finished kept at most (a bound, not a use)
_MAX_NAME = 128  # characters of a tool name a span or a metric carries
_MAX_CACHED = 4096  # tools whose span name and attributes are kept, made once (a bound)
_FAILED = frozenset({"retry", "denied", "failed"})
_RETRIEVAL = f"retrieval {DATA_SOURCE}"
UNKNOWN_TOOL = "_unknown"
"""``gen_ai.tool.name`` of a metric point for a name no tool has: the model chooses such names,
and each would be a new series."""


def _name(tool: str) -> str:
    """A tool name as telemetry carries it: the model's choice, so bounded."""
    return tool if len(tool) <= _MAX_NAME else tool[: _MAX_NAME - 1] + "…"


def _start_of(tool: str, meta: bool) -> tuple[str, dict[str, Any]]:
    """The span name and the attributes every call of ``tool`` starts with."""
    name = _name(tool)
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.type": "extension" if meta else "function",
    }
    return f"execute_tool {name}", attributes


def _point_of(tool: str, error: str | None) -> dict[str, Any]:
    """The attributes of a ``gen_ai.execute_tool.duration`` point: a name no tool has is
    :data:`UNKNOWN_TOOL` (each would be a new series)."""
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": _name(tool) if error != "unknown_tool" else UNKNOWN_TOOL,
    }
    if error is not None:
        attributes["error.type"] = error
    return attributes


def _sdk_configured() -> bool:
    """Whether a tracer or meter provider was set: the global one is not the API's own (its
    proxy, or a no-op), which is all the API has without an SDK."""
    return not (
        type(trace.get_tracer_provider()).__module__.startswith(_API_TRACE)
        and type(metrics.get_meter_provider()).__module__.startswith(_API_METRICS)
    )


_API_TRACE = trace.__name__
_API_METRICS = metrics.__name__


class OtelListener:
    """Spans and metrics for a manager's events (see the module docstring).

    Usage::

        ToolManager(catalog)                                   # one is installed by default
        ToolManager(catalog, listeners=[OtelListener(capture_content=True)])

    Args:
        capture_content: record argument, result and query text (bounded); None reads
            ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (off when unset).
        max_content_chars: characters of one recorded text at most.
        tracer_provider: where spans go (default: the global one).
        meter_provider: where metrics go (default: the global one).
    """

    def __init__(
        self,
        *,
        capture_content: bool | ContentCapture | None = None,
        max_content_chars: int | None = None,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        self.content = ContentCapture.of(capture_content, max_content_chars)
        """What of the content is recorded."""
        version = package_version()
        self._pinned = tracer_provider is not None or meter_provider is not None
        self.tracer = trace.get_tracer(
            INSTRUMENTATION_NAME, version, tracer_provider=tracer_provider
        )
        meter = metrics.get_meter(INSTRUMENTATION_NAME, version, meter_provider=meter_provider)
        self.duration = meter.create_histogram(
            "gen_ai.execute_tool.duration",
            unit="s",
            description="Duration of tool executions (toolmgmt's pipeline, approval included).",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        )
        self.searches = meter.create_counter(
            "toolmgmt.searches", unit="{search}", description="Catalog searches by meta-tools."
        )
        self.denials = meter.create_counter(
            "toolmgmt.policy.denials", unit="{call}", description="Calls the policy refused."
        )
        self.approval_requests = meter.create_counter(
            "toolmgmt.approval.requests", unit="{call}", description="Calls that asked approval."
        )
        self.approval_answers = meter.create_counter(
            "toolmgmt.approval.answers", unit="{call}", description="Approvers' answers."
        )
        self.truncated_tokens = meter.create_counter(
            "toolmgmt.truncated_tokens",
            unit="{token}",
            description="Result tokens cut to fit budgets (before minus after).",
        )
        self.saved_tokens = meter.create_counter(
            "toolmgmt.discovery.saved_tokens",
            unit="{token}",
            description="Definition tokens not sent, against listing every visible tool flat.",
        )
        self._open: dict[int, tuple[trace.Span, Token[Context] | None]] = {}
        # What every call of a tool starts with, and its duration points' attributes: made once.
        self._starts: dict[tuple[str, bool], tuple[str, dict[str, Any]]] = {}
        self._points: dict[tuple[str, str | None], dict[str, Any]] = {}
        self._searched: dict[tuple[str, bool], dict[str, Any]] = {}
        self._handlers: dict[type[Event], Callable[[Any], None]] = {
            CallStarted: self._call_started,
            CallFinished: self._call_finished,
            SearchDone: self._search_done,
            ToolsLoaded: self._tools_loaded,
            ToolsListed: self._tools_listed,
            PolicyDenied: self._policy_denied,
            ApprovalAsked: self._approval_asked,
            ApprovalAnswered: self._approval_answered,
            ResultTruncated: self._result_truncated,
            BudgetExhausted: self._budget_exhausted,
            ProgramStarted: self._program_started,
            ProgramFinished: self._program_finished,
        }

    def enabled(self) -> bool:
        """Whether anything can be recorded: providers were given, or an SDK set global ones."""
        return self._pinned or _sdk_configured()

    def __call__(self, event: Event) -> None:
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(event)

    # -- calls ------------------------------------------------------------------------------

    def _call_started(self, event: CallStarted) -> None:
        key = (event.tool, event.meta)
        known = self._starts.get(key)
        if known is None:
            known = self._remember(self._starts, key, _start_of(*key))
        span_name, attributes = known
        if event.call_id or event.conversation or self.content.enabled:
            attributes = dict(attributes)  # the shared one stays as it is
            if event.call_id:
                attributes["gen_ai.tool.call.id"] = event.call_id
            if event.conversation:
                attributes["gen_ai.conversation.id"] = event.conversation
            if self.content.enabled:
                attributes["gen_ai.tool.call.arguments"] = self.content.text(event.arguments)
        span = self.tracer.start_span(span_name, attributes=attributes)
        token = None
        if span.is_recording():  # current while the call runs: the handler's spans nest
            token = otel_context.attach(trace.set_span_in_context(span))
        if len(self._open) < _MAX_OPEN:
            self._open[id(event)] = (span, token)

    def _call_finished(self, event: CallFinished) -> None:
        opened = self._open.pop(id(event.started), None)
        if opened is not None:
            span, token = opened
            if token is not None:
                otel_context.detach(token)  # a token only for a span that records
                if event.tool != event.started.tool:  # execute_tool ran this tool: its run
                    tool = _name(event.tool)
                    span.update_name(f"execute_tool {tool}")
                    span.set_attributes(
                        {"gen_ai.tool.name": tool, "toolmgmt.call.via": _name(event.started.tool)}
                    )
                self._describe_outcome(span, event)
                span.end()
        if event.signal is None:
            error = event.error_code
            key = (event.tool if error != "unknown_tool" else UNKNOWN_TOOL, error)
            attributes = self._points.get(key)
            if attributes is None:
                attributes = self._remember(self._points, key, _point_of(*key))
            self.duration.record(event.duration, attributes)

    # -- code mode's programs ---------------------------------------------------------------

    def _program_started(self, event: ProgramStarted) -> None:
        attributes: dict[str, Any] = {"toolmgmt.program.resumed": event.resumed}
        if event.call_id:
            attributes["gen_ai.tool.call.id"] = event.call_id
        if event.conversation:
            attributes["gen_ai.conversation.id"] = event.conversation
        span = self.tracer.start_span("run_code program", attributes=attributes)
        token = None
        if span.is_recording():  # current while it runs: its calls' spans nest under it
            token = otel_context.attach(trace.set_span_in_context(span))
        if len(self._open) < _MAX_OPEN:
            self._open[id(event)] = (span, token)

    def _program_finished(self, event: ProgramFinished) -> None:
        opened = self._open.pop(id(event.started), None)
        if opened is None:
            return
        span, token = opened
        if token is not None:
            otel_context.detach(token)
            span.set_attributes(
                {
                    "toolmgmt.program.outcome": event.outcome,
                    "toolmgmt.program.calls": event.calls,
                    "toolmgmt.program.inner_tokens": event.inner_tokens,
                    "toolmgmt.program.result_tokens": event.result_tokens,
                    "toolmgmt.program.tokens_kept_out": event.tokens_kept_out,
                }
            )
            if event.outcome not in ("success", "paused"):
                span.set_status(Status(StatusCode.ERROR, event.outcome))
        span.end()

    def _remember(self, cache: dict[Any, Any], key: Any, value: Any) -> Any:
        """``value``, kept under ``key`` while ``cache`` is under its bound (a name the model
        made up is computed each time once it is full, never kept)."""
        if len(cache) < _MAX_CACHED:
            cache[key] = value
        return value

    def _describe_outcome(self, span: trace.Span, event: CallFinished) -> None:
        attributes: dict[str, Any] = {
            "toolmgmt.call.outcome": event.outcome,
            "toolmgmt.result.tokens": event.tokens,
        }
        if event.truncated:
            attributes["toolmgmt.result.original_tokens"] = event.original_tokens
        if event.signal is not None:
            attributes["toolmgmt.call.signal"] = event.signal
        if event.error_kind is not None:
            attributes["toolmgmt.error.kind"] = event.error_kind
        result = None
        if self.content.enabled and event.signal is None:
            result = attributes["gen_ai.tool.call.result"] = self.content.text(event.result)
        if event.error_code is not None:
            attributes["error.type"] = event.error_code
        span.set_attributes(attributes)
        if event.outcome in _FAILED:
            # The error's message echoes the model's input: only the code, unless opted in.
            described = result if result is not None else event.error_code
            span.set_status(Status(StatusCode.ERROR, described))

    # -- what happens during a call -----------------------------------------------------------

    def _search_done(self, event: SearchDone) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "retrieval",
            "gen_ai.data_source.id": DATA_SOURCE,
            "toolmgmt.search.engine": event.engine,
            "toolmgmt.search.method": event.method,
            "toolmgmt.search.queries": len(event.queries),
            "toolmgmt.search.hits": len(event.hits),
        }
        if event.hits:
            attributes["toolmgmt.search.results"] = event.hits
        if event.conversation:
            attributes["gen_ai.conversation.id"] = event.conversation
        if self.content.enabled:
            query = self.content.text(" | ".join(event.queries))
            attributes["gen_ai.retrieval.query.text"] = query
        end = time.time_ns()
        span = self.tracer.start_span(
            _RETRIEVAL, attributes=attributes, start_time=end - int(event.duration * 1e9)
        )
        span.end(end_time=end)
        key = (event.engine, bool(event.hits))
        counted = self._searched.get(key)
        if counted is None:
            counted = {"toolmgmt.search.engine": key[0], "toolmgmt.search.found": key[1]}
            counted = self._remember(self._searched, key, counted)
        self.searches.add(1, counted)

    def _tools_loaded(self, event: ToolsLoaded) -> None:
        span = trace.get_current_span()
        if span.is_recording():
            span.add_event(
                "toolmgmt.tools_loaded",
                {
                    "toolmgmt.tools": event.names,
                    "toolmgmt.definition_tokens": event.definition_tokens,
                },
            )
            span.set_attribute("toolmgmt.tools.loaded", len(event.names))

    def _tools_listed(self, event: ToolsListed) -> None:
        saved = event.flat_tokens - event.definition_tokens
        if saved > 0:
            self.saved_tokens.add(saved)
        _on_current(
            "toolmgmt.tools_listed",
            {
                "toolmgmt.tools": event.tools,
                "toolmgmt.definition_tokens": event.definition_tokens,
                "toolmgmt.flat_tokens": event.flat_tokens,
            },
        )

    def _policy_denied(self, event: PolicyDenied) -> None:
        self.denials.add(1, {"gen_ai.tool.name": event.tool, "error.type": event.code})
        _on_current("toolmgmt.policy_denied", {"error.type": event.code})

    def _approval_asked(self, event: ApprovalAsked) -> None:
        self.approval_requests.add(1, {"gen_ai.tool.name": event.tool})
        _on_current("toolmgmt.approval_asked", {"toolmgmt.approval.reason": event.reason})

    def _approval_answered(self, event: ApprovalAnswered) -> None:
        self.approval_answers.add(
            1, {"gen_ai.tool.name": event.tool, "toolmgmt.approval.verdict": event.verdict}
        )
        _on_current("toolmgmt.approval_answered", {"toolmgmt.approval.verdict": event.verdict})

    def _result_truncated(self, event: ResultTruncated) -> None:
        cut = max(0, event.tokens_before - event.tokens_after)
        self.truncated_tokens.add(
            cut, {"gen_ai.tool.name": event.tool, "toolmgmt.truncation.strategy": event.strategy}
        )
        attributes: dict[str, Any] = {
            "toolmgmt.truncation.strategy": event.strategy,
            "toolmgmt.truncation.tokens_before": event.tokens_before,
            "toolmgmt.truncation.tokens_after": event.tokens_after,
        }
        span = trace.get_current_span()
        if span.is_recording():
            span.add_event("toolmgmt.result_truncated", attributes)
            span.set_attributes(attributes)

    def _budget_exhausted(self, event: BudgetExhausted) -> None:
        _on_current(
            "toolmgmt.budget_exhausted",
            {
                "toolmgmt.budget.session_tokens": event.session_tokens,
                "toolmgmt.budget.spent": event.spent,
            },
        )


def _on_current(name: str, attributes: dict[str, Any]) -> None:
    """An event on the current span (the call's), when it records."""
    span = trace.get_current_span()
    if span.is_recording():
        span.add_event(name, attributes)


def default_listeners() -> list[OtelListener]:
    """The listeners every manager gets unless told otherwise: one :class:`OtelListener` (a
    check per event site until an SDK is configured), none when ``toolmgmt`` is named in
    :data:`DISABLE_ENV`."""
    disabled = {n.strip() for n in os.environ.get(DISABLE_ENV, "").split(",")}
    if INSTRUMENTATION_NAME in disabled:
        return []
    return [OtelListener()]
