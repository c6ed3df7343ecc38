"""An upstream MCP server that records its own spans, for the one-trace test.

Run as ``python traced_server.py --http PORT`` (streamable HTTP on 127.0.0.1) or with no
argument (stdio). With ``TRACED_SPANS=path``, it sets up the OpenTelemetry SDK and writes each
span it ends as one JSON line (name, trace id, span id, parent span id) to that file; the MCP
SDK's server span of each request takes its parent from the request's ``params._meta``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Sequence

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from opentelemetry import trace

server = MCPServer("traced", instructions="Says which trace it runs in.")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def trace_of_call(label: str) -> dict[str, str]:
    """Tell which trace this call runs in, and echo the label."""
    context = trace.get_current_span().get_span_context()
    return {"label": label, "trace_id": format(context.trace_id, "032x")}


def _record_spans(path: str) -> None:
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    lock = threading.Lock()

    class JsonLines(SpanExporter):
        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            with lock, open(path, "a", encoding="utf-8") as out:
                for span in spans:
                    record = {
                        "name": span.name,
                        "trace_id": format(span.context.trace_id, "032x"),
                        "span_id": format(span.context.span_id, "016x"),
                        "parent_id": format(span.parent.span_id, "016x") if span.parent else None,
                        "attributes": {k: str(v) for k, v in (span.attributes or {}).items()},
                    }
                    out.write(json.dumps(record) + "\n")
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(JsonLines()))
    trace.set_tracer_provider(provider)


if __name__ == "__main__":
    if os.environ.get("TRACED_SPANS"):
        _record_spans(os.environ["TRACED_SPANS"])
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
