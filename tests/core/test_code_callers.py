"""Who may call a tool (``Callers``): the model directly, a program, or both, chosen by name,
pattern or annotation, enforced when the tool runs (not only when listed), and sent to Anthropic
as ``allowed_callers``."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

pytest.importorskip("pydantic_monty")

from toolmgmt_core import (  # noqa: E402
    Callers,
    Discovery,
    ToolAnnotations,
    ToolCatalog,
    ToolManager,
)
from toolmgmt_core._calls.context import CallContext  # noqa: E402
from toolmgmt_core._model.errors import ConfigError  # noqa: E402
from toolmgmt_core._session.modes import Code  # noqa: E402

RUNS: Counter[str] = Counter()


def send_email(to: str, body: str) -> str:
    """Send an email to someone."""
    RUNS["send_email"] += 1
    return f"sent to {to}"


def export_contacts() -> list[dict[str, Any]]:
    """Export every CRM contact."""
    RUNS["export_contacts"] += 1
    return [{"name": f"c{n}", "notes": "x" * 500} for n in range(20)]


def lookup(key: str) -> str:
    """Look a key up."""
    RUNS["lookup"] += 1
    return key.upper()


def wipe(target: str) -> str:
    """Wipe a target."""
    RUNS["wipe"] += 1
    return f"wiped {target}"


@pytest.fixture(autouse=True)
def _fresh() -> None:
    RUNS.clear()


def _catalog() -> ToolCatalog:
    catalog = ToolCatalog()
    catalog.add_function(send_email)
    catalog.add_function(export_contacts, defer_loading=False)  # always listed by default
    catalog.add_function(lookup)
    catalog.add_function(wipe, annotations=ToolAnnotations(destructive=True))
    return catalog


def _session(callers: Callers, **options: Any) -> Any:
    mode = Code(callers=callers)
    return ToolManager(_catalog(), mode=mode, approval=lambda request: True, **options).session()


def _program(session: Any, code: str, context: CallContext | None = None) -> str:
    result = session.call_sync("run_code", {"code": code}, context=context or CallContext())
    return str(result.content)


CHOSEN = Callers(direct=["send_*", "destructive"], code=["export_contacts"], both=["lookup"])


def test_the_listing_holds_the_tools_the_model_calls_directly() -> None:
    session = _session(CHOSEN)
    names = [t.name for t in session.tools()]
    # export_contacts is always-on, but chosen code-only: not listed.
    assert names == ["tool_search", "run_code", "send_email", "lookup", "wipe"]


def test_a_direct_only_tool_is_refused_from_a_program() -> None:
    session = _session(CHOSEN)
    for code in (
        "await send_email(to='a@b.c', body='hi')",
        "await call_tool('send_email', {'to': 'a@b.c', 'body': 'hi'})",
        "await wipe(target='prod')",  # `destructive`: a pattern over annotations
    ):
        text = _program(session, code)
        assert "PermissionError" in text and "called directly, not from a program" in text, text
    assert RUNS["send_email"] == 0 and RUNS["wipe"] == 0
    assert "sent to a@b.c" in session.call_sync("send_email", {"to": "a@b.c", "body": "x"}).content


@pytest.mark.parametrize("call_unloaded", ["error", "load"])
def test_a_code_only_tool_is_refused_directly(call_unloaded: str) -> None:
    session = _session(CHOSEN, discovery=Discovery(call_unloaded=call_unloaded))  # type: ignore[arg-type]
    result = session.call_sync("export_contacts", {})
    assert result.is_error and result.outcome == "denied"
    assert json.loads(result.content)["error"] == "tool_denied"
    assert "from a program only: run_code with `await export_contacts(...)`" in result.content
    assert RUNS["export_contacts"] == 0
    assert "20" in _program(session, "print(len(await export_contacts()))")
    assert RUNS["export_contacts"] == 1


def test_both_runs_either_way() -> None:
    session = _session(CHOSEN)
    assert session.call_sync("lookup", {"key": "a"}).content == "A"
    assert _program(session, "print(await lookup(key='b'))") == "B"
    assert RUNS["lookup"] == 2


def test_tool_search_shows_no_direct_only_tool() -> None:
    session = _session(CHOSEN)
    found = session.call_sync("tool_search", {"query": "send an email to someone"}).value
    assert "send_email" not in json.dumps(found)
    searched = _program(session, "print(await search_tools('send an email'))")
    assert "send_email" not in searched
    found = session.call_sync("tool_search", {"query": "export every CRM contact"}).value
    assert "async def export_contacts" in found["found"]


def test_an_annotation_chooses_when_no_pattern_does() -> None:
    catalog = _catalog()
    catalog.add_function(lookup, name="lookup_direct", metadata={"callers": "direct"})
    session = ToolManager(catalog, mode="code").session()
    assert "lookup_direct" in [t.name for t in session.tools()]
    assert "called directly" in _program(session, "await lookup_direct(key='a')")
    # The default: always-on tools both, every other one from a program only.
    assert "export_contacts" in [t.name for t in session.tools()]
    assert "from a program only" in session.call_sync("lookup", {"key": "a"}).content


def test_code_direct_is_both() -> None:
    session = ToolManager(_catalog(), mode=Code(direct=["lookup"])).session()
    assert "lookup" in [t.name for t in session.tools()]
    assert _program(session, "print(await lookup(key='b'))") == "B"


def test_bad_callers_say_what_is_valid() -> None:
    with pytest.raises(ConfigError, match="Unknown pattern prefix 'send_\\*x'.*Valid forms"):
        Callers(direct=["send_*x:y"])
    with pytest.raises(ConfigError, match="Callers\\(code=...\\) must be a list"):
        Callers(code={"a": 1})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="must be a Callers"):
        Code(callers=["send_*"])  # type: ignore[arg-type]
