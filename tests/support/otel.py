"""The OpenTelemetry SDK for tests: an in-memory span exporter and metric reader, found by name.

``OtelKit()`` gives private providers (nothing global). :func:`global_providers` is for a test
whose spans come from code that only uses the global tracer provider (the MCP SDK's): the API
takes a global provider once per process and its proxies keep the tracers they got, so one
global SDK provider is set on first use, for the rest of the run, and routes the spans ended
within the block to the kit's exporter (and drops them outside any block)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from toolmgmt_core._events import OtelListener

__all__ = ["OtelKit", "global_providers", "span_text"]


@dataclass
class OtelKit:
    """An SDK tracer and meter provider recording in memory, and a listener writing to them."""

    exporter: InMemorySpanExporter = field(default_factory=InMemorySpanExporter)
    reader: InMemoryMetricReader = field(default_factory=InMemoryMetricReader)

    def __post_init__(self) -> None:
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.tracer = self.tracer_provider.get_tracer("tests")

    def listener(self, **options: Any) -> OtelListener:
        return OtelListener(
            tracer_provider=self.tracer_provider, meter_provider=self.meter_provider, **options
        )

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def span(self, name: str) -> ReadableSpan:
        found = [s for s in self.spans() if s.name == name]
        assert len(found) == 1, (
            f"{len(found)} spans named {name!r}: {[s.name for s in self.spans()]}"
        )
        return found[0]

    def points(self, name: str) -> list[Any]:
        """The data points of the metric ``name`` (empty when it was never recorded)."""
        data = self.reader.get_metrics_data()
        found: list[Any] = []
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == name:
                        found.extend(metric.data.data_points)
        return found

    def total(self, name: str, **attributes: Any) -> float:
        """The sum of a counter's points whose attributes include ``attributes``."""
        return sum(
            p.value
            for p in self.points(name)
            if all(p.attributes.get(k) == v for k, v in attributes.items())
        )


def span_text(spans: list[ReadableSpan]) -> str:
    """Everything a span carries, as text: names, attributes, events and their attributes,
    status descriptions, links (what a no-leak test searches)."""
    parts: list[str] = []
    for span in spans:
        parts.append(span.name)
        parts.append(repr(dict(span.attributes or {})))
        parts.append(str(span.status.description))
        for event in span.events:
            parts.append(event.name)
            parts.append(repr(dict(event.attributes or {})))
        for link in span.links:
            parts.append(repr(dict(link.attributes or {})))
    return "\n".join(parts)


class _Router(SpanProcessor):
    """Hands each span to the current block's exporter (none: dropped)."""

    def __init__(self) -> None:
        self.current: SpanProcessor | None = None

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        if self.current is not None:
            self.current.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        if self.current is not None:
            self.current.on_end(span)


_ROUTER = _Router()


@contextlib.contextmanager
def global_providers(kit: OtelKit) -> Iterator[OtelKit]:
    """Spans of the global tracer provider go to ``kit``'s exporter within the block."""
    if not isinstance(trace.get_tracer_provider(), TracerProvider):
        provider = TracerProvider()
        provider.add_span_processor(_ROUTER)
        trace.set_tracer_provider(provider)
    _ROUTER.current = SimpleSpanProcessor(kit.exporter)
    try:
        yield kit
    finally:
        _ROUTER.current = None
