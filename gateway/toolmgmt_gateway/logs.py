"""What the gateway logs, and how: standard :mod:`logging`, a line an operator can use.

:func:`configure_logging` (``toolmgmt serve --log-level``, ``--log-format``, or ``[gateway]
log_level`` and ``log_format``) sends every line to stderr (stdout may be the MCP pipe), as text
(``2026-12-07T06:50:01.123Z INFO toolmgmt_gateway.access: client support: tools/call ...``) or
as one JSON object per line (``time``, ``level``, ``logger``, ``message`` and the line's own
fields: ``client``, ``method``, ``tool``, ``outcome``, ``duration_ms``, ``upstream``...).

:class:`AccessLog` writes one line per MCP request on the ``toolmgmt_gateway.access`` logger:
the client (its name, else its address, else ``stdio``), the method, the tool (and for a
meta-tool, the tool it ran), the outcome and the duration; a call's arguments and its result's
text only with ``[gateway] access_log_content = true``. A stdio upstream's stderr arrives on the
``toolmgmt_gateway.upstream`` logger with its ``upstream`` named
(:mod:`toolmgmt_gateway.upstream_stderr`).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections.abc import Mapping
from typing import Any

from mcp import MCPError
from mcp_types import CallToolResult, InputRequiredResult

from toolmgmt_gateway.clients import ClientLogFilter, scope_client

__all__ = [
    "ACCESS_LOGGER",
    "AccessLog",
    "JsonFormatter",
    "configure_logging",
]

ACCESS_LOGGER = "toolmgmt_gateway.access"
"""The logger of the access lines (one per MCP request)."""

_CONTENT_CHARS = 1000
"""Characters of a call's arguments, and of its result's text, in an access line at most."""

_TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(client_note)s%(message)s"
_OWN_LOGGERS = ("toolmgmt", "toolmgmt_mcp", "toolmgmt_gateway")
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {
    "message",
    "asctime",
    "client_note",
    "taskName",
}


class _UtcFormatter(logging.Formatter):
    """Timestamps in UTC, ISO 8601 with milliseconds (``2026-12-07T06:50:01.123Z``)."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:  # noqa: N802
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        return f"{stamp}.{int(record.msecs):03d}Z"


class JsonFormatter(_UtcFormatter):
    """One JSON object per record: ``time``, ``level``, ``logger``, ``message``, the fields a
    log call passed in ``extra`` (``client``, ``method``...), and ``exception`` when there is
    one."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": self.formatTime(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and key not in line and value not in (None, ""):
                line[key] = value if isinstance(value, str | int | float | bool) else str(value)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def configure_logging(level: str = "info", fmt: str = "text") -> logging.Handler:
    """Send the gateway's logs to stderr at ``level`` (``debug``, ``info``, ``warning``,
    ``error``) as ``text`` or ``json``; other libraries' at WARNING and above. The handler."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else _UtcFormatter(_TEXT_FORMAT))
    handler.addFilter(ClientLogFilter())
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)
    for name in _OWN_LOGGERS:
        logging.getLogger(name).setLevel(level.upper())
    return handler


class AccessLog:
    """The MCP SDK's server middleware writing one access line per request (:data:`ACCESS_LOGGER`,
    INFO): ``client``, ``method``, ``tool``, ``target`` (the tool a meta-tool ran), ``outcome``
    (``success``, ``denied``, ``failed``, ``retry``, ``input_required``, ``error``, or ``ok``
    for a method that is not a call), ``error`` (its code), ``duration_ms``; with ``content``,
    ``arguments`` and ``result`` too, each cut at 1,000 characters.

    It sits after :class:`~toolmgmt_gateway.telemetry.RequestSpans`, whose note of a call's
    outcome (:class:`~toolmgmt_gateway.telemetry.CallOutcome`) it reads.
    """

    def __init__(self, *, content: bool = False) -> None:
        self.content = content
        self.logger = logging.getLogger(ACCESS_LOGGER)

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if not self.logger.isEnabledFor(logging.INFO):
            return await call_next(ctx)
        started = time.monotonic()
        fields: dict[str, Any] = {"method": ctx.method, "client": _client(ctx)}
        name = ctx.params.get("name") if ctx.params else None
        if isinstance(name, str):
            fields["tool"] = name
        try:
            result = await call_next(ctx)
        except MCPError as exc:
            fields.update(outcome="error", error=str(exc.error.code))
            self._write(fields, started, ctx, None)
            raise
        except Exception as exc:
            fields.update(outcome="error", error=type(exc).__name__)
            self._write(fields, started, ctx, None)
            raise
        fields.update(_outcome(ctx, result))
        self._write(fields, started, ctx, result)
        return result

    def _write(self, fields: dict[str, Any], started: float, ctx: Any, result: Any) -> None:
        fields["duration_ms"] = round((time.monotonic() - started) * 1000, 1)
        if self.content and ctx.method == "tools/call":
            arguments = ctx.params.get("arguments") if ctx.params else None
            fields["arguments"] = _cut(json.dumps(arguments, default=str))
            fields["result"] = _cut(_first_text(result))
        text = " ".join(
            f"{key}={value}" for key, value in fields.items() if key != "client" and value != ""
        )
        self.logger.info(text, extra=fields)


def _client(ctx: Any) -> str:
    """The request's client: its configured name, else its address, else ``stdio``."""
    scope = getattr(getattr(ctx, "request", None), "scope", None)
    if not isinstance(scope, dict):
        return "stdio"
    name = scope_client(scope)
    if name is not None:
        return name
    peer = scope.get("client")
    return str(peer[0]) if peer else "unknown"


def _outcome(ctx: Any, result: Any) -> dict[str, Any]:
    if isinstance(result, InputRequiredResult):
        return {"outcome": "input_required"}
    if ctx.method != "tools/call":
        return {"outcome": "ok"}
    note = getattr(ctx, "call_outcome", None)
    outcome = getattr(note, "outcome", None)
    fields: dict[str, Any] = {}
    target = getattr(note, "tool", None)
    if target and target != ctx.params.get("name"):
        fields["target"] = target
    error = getattr(note, "error_type", None)
    failed = (
        bool(result.is_error)
        if isinstance(result, CallToolResult)
        else isinstance(result, Mapping) and result.get("isError") is True
    )
    fields["outcome"] = outcome or ("failed" if failed else "success")
    if error:
        fields["error"] = error
    return fields


def _first_text(result: Any) -> str:
    """The text of a call result's first block (the SDK hands a result on as a model or as
    its JSON)."""
    if isinstance(result, CallToolResult):
        blocks: Any = result.content
    else:
        blocks = result.get("content") if isinstance(result, Mapping) else None
    first = blocks[0] if isinstance(blocks, list) and blocks else None
    text = first.get("text") if isinstance(first, Mapping) else getattr(first, "text", None)
    return text if isinstance(text, str) else ""


def _cut(text: str) -> str:
    return text if len(text) <= _CONTENT_CHARS else text[:_CONTENT_CHARS] + "…"
