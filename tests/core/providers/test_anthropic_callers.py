"""Anthropic's programmatic tool calling: the caller choice (``Callers``, a tool's annotation)
sent as each tool's ``allowed_callers`` beside the code execution tool, checked with the SDK's
own types, and a program's call run with ``CallContext(from_program=True)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from toolmgmt_core import Callers, ProviderError, ToolAnnotations, ToolCatalog, ToolManager
from toolmgmt_core._calls.context import CallContext
from toolmgmt_core._providers import format_tools

RAN: list[str] = []


def send_email(to: str, body: str) -> str:
    """Send an email to someone."""
    RAN.append("send_email")
    return f"sent to {to}"


def lookup(key: str) -> str:
    """Look a key up."""
    RAN.append("lookup")
    return key.upper()


def wipe(target: str) -> str:
    """Wipe a target."""
    return f"wiped {target}"


def _catalog() -> ToolCatalog:
    catalog = ToolCatalog()
    catalog.add_function(send_email)
    catalog.add_function(lookup)
    catalog.add_function(wipe, annotations=ToolAnnotations(destructive=True))
    catalog.add_function(lookup, name="lookup_code", metadata={"callers": "code"})
    return catalog


Check = Callable[[str, list[dict[str, Any]]], None]


def test_anthropic_allowed_callers_follow_the_choice(check_provider: Check) -> None:
    session = ToolManager(_catalog(), mode="flat").session()
    sent = format_tools(session, "anthropic", code_execution="code_execution_20260120")["tools"]
    check_provider("anthropic", sent)
    assert sent[0] == {"type": "code_execution_20260120", "name": "code_execution"}
    by_name = {t["name"]: t.get("allowed_callers") for t in sent[1:]}
    assert by_name["send_email"] == ["direct"]
    assert by_name["lookup_code"] == ["code_execution_20260120"]
    pytest.importorskip("pydantic_monty")
    from toolmgmt_core._session.modes import Code

    chosen = Callers(direct=["send_*", "destructive"], both=["lookup"])
    code = ToolManager(_catalog(), mode=Code(callers=chosen)).session()
    sent = format_tools(code, "anthropic", code_execution="code_execution_20250825")["tools"]
    check_provider("anthropic", sent)
    by_name = {t["name"]: t.get("allowed_callers") for t in sent[1:]}
    assert by_name == {
        "tool_search": ["direct"],
        "run_code": ["direct"],
        "send_email": ["direct"],
        "lookup": ["direct", "code_execution_20250825"],
        "wipe": ["direct"],
    }


def test_code_execution_is_anthropics_alone() -> None:
    session = ToolManager(_catalog(), mode="flat").session()
    with pytest.raises(ProviderError, match="code_execution is Anthropic's"):
        format_tools(session, "openai", code_execution="code_execution_20260120")
    with pytest.raises(ProviderError, match="valid: code_execution_20250825"):
        format_tools(session, "anthropic", code_execution="code_execution_2024")
    plain = format_tools(session, "anthropic")["tools"]
    assert all("allowed_callers" not in t for t in plain)


def test_a_call_from_anthropics_code_execution_follows_the_choice() -> None:
    RAN.clear()
    session = ToolManager(_catalog(), mode="flat").session()
    program = CallContext(from_program=True)
    assert session.call_sync("lookup_code", {"key": "a"}, context=program).content == "A"
    refused = session.call_sync("lookup_code", {"key": "a"})
    assert refused.outcome == "denied" and "from a program only" in refused.content
    refused = session.call_sync("send_email", {"to": "a", "body": "b"}, context=program)
    assert refused.outcome == "denied" and "called directly" in refused.content
    assert RAN == ["lookup"]
