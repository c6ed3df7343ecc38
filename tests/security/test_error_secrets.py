"""A tool's failure message reaches the model, the logs and the events with its secrets replaced
(issue 41): a connection string's password, an API key, a bearer token, a card number, in
search mode and in code mode, raised, reported, or quoted in the core's own error a handler
raised (the MCP adapter's "Upstream ... rejected ...: <the upstream's JSON-RPC error>")."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from toolmgmt_core import ToolCatalog, ToolExecutionError, ToolManager
from toolmgmt_core._model.redaction import redact_line, redact_secrets

LEAK = (
    "could not connect to postgresql://admin:S3cr3t@db/x with key sk-live-4f9a8b7c6d5e4f3a2b1c "
    "(Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjMifQ.c2lnbmF0dXJl, card "
    "4111 1111 1111 1111)"
)
SECRETS = ["S3cr3t", "sk-live-4f9a", "eyJhbGci", "4111 1111 1111 1111"]


def lookup_order(order_id: str) -> str:
    """Look up an order in the orders database."""
    raise RuntimeError(LEAK)


def lookup_invoice(invoice_id: str) -> dict[str, Any]:
    """Look up an invoice in the billing database (reports its failure MCP's way)."""
    return {"isError": True, "content": [{"type": "text", "text": LEAK}]}


def lookup_refund(order_id: str) -> str:
    """Look up a refund on the payments server (rejected there, as an upstream's JSON-RPC
    error comes back through the MCP adapter)."""
    raise ToolExecutionError(f"Upstream 'payments' rejected 'lookup_refund': {LEAK}")


TOOLS = ["lookup_order", "lookup_invoice", "lookup_refund"]


def _catalog() -> ToolCatalog:
    catalog = ToolCatalog()
    for function in (lookup_order, lookup_invoice, lookup_refund):
        catalog.add_function(function)
    return catalog


def _argument(tool: str) -> str:
    return "invoice_id" if tool == "lookup_invoice" else "order_id"


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


@pytest.mark.parametrize("tool", TOOLS)
def test_search_mode_shows_the_failure_without_its_secrets(
    tool: str, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[Any] = []
    session = ToolManager(_catalog(), mode="search", listeners=[events.append]).session()
    with caplog.at_level(logging.DEBUG):
        result = session.call_sync(
            "call_tool",
            {"name": tool, "arguments": {_argument(tool): "7"}},
        )
    assert result.outcome in ("failed", "retry")
    assert "postgresql://admin:<secret>@db/x" in str(result.content)
    assert not _leaks(str(result.content))
    assert not _leaks(repr(events)) and not _leaks(caplog.text)


@pytest.mark.parametrize("tool", TOOLS)
def test_code_mode_shows_the_failure_without_its_secrets(
    tool: str, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("pydantic_monty")
    events: list[Any] = []
    session = ToolManager(_catalog(), mode="code", listeners=[events.append]).session()
    argument = _argument(tool)
    programs = [
        f"await {tool}({argument}='7')",
        f"try:\n    await {tool}({argument}='7')\nexcept Exception as exc:\n    print(str(exc))",
    ]
    for code in programs:
        with caplog.at_level(logging.DEBUG):
            result = session.call_sync("run_code", {"code": code})
        assert "<secret>" in str(result.content), result.content
        assert not _leaks(str(result.content))
    assert not _leaks(repr(events)) and not _leaks(caplog.text)


def test_what_redaction_replaces() -> None:
    assert redact_secrets(LEAK) == (
        "could not connect to postgresql://admin:<secret>@db/x with key <secret> "
        "(Authorization: Bearer <secret>, card <card>)"
    )
    kept = "order 1234567 not found at /srv/data/2024/orders.db: reset the password for gmail"
    assert redact_secrets(kept) == kept


def test_a_line_of_a_stream_loses_a_credential_wrapped_after_its_keyword() -> None:
    """What the gateway relays of an upstream's stderr: a log wrapped at its width may put the
    keyword on one line and the credential on the next."""
    assert redact_line("   tok3n-9f8e7d6c5b4a)", "  (Authorization: Bearer") == "   <secret>"
    assert redact_line("  hunter2 now", "the password is") == "  <secret> now"
    assert redact_line("  postgresql://admin:S3cr3t@db/x", "connect to") == (
        "  postgresql://admin:<secret>@db/x"
    )
    for innocent, before in (("  reset link", "the password"), ("  the order", "Bearer of")):
        assert redact_line(innocent, before) == innocent
