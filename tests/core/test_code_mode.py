"""Code mode: ``tool_search`` answers with Python signatures, ``run_code`` runs a program in the
sandbox, and every call the program makes goes through the session's pipeline."""

from __future__ import annotations

import ast
import json
import sys
from typing import Any

import pytest

pytest.importorskip("pydantic_monty")

from toolmgmt_core import (  # noqa: E402
    Access,
    Policy,
    ResultBudget,
    ToolCatalog,
    ToolManager,
)
from toolmgmt_core._calls.code import CodeLimits, python_signature  # noqa: E402
from toolmgmt_core._events import CallFinished, ProgramFinished, ProgramStarted  # noqa: E402
from toolmgmt_core._model.errors import ConfigError  # noqa: E402
from toolmgmt_core._model.tool import Tool  # noqa: E402
from toolmgmt_core._session.modes import Code, mode_of  # noqa: E402

RAN: list[tuple[str, Any]] = []


def weather(city: str, units: str = "metric") -> dict[str, Any]:
    """Current weather of a city, with a long forecast."""
    RAN.append(("weather", city))
    return {"city": city, "temp": len(city), "forecast": "sunny " * 400}


def cities(country: str) -> list[str]:
    """Cities of a country."""
    RAN.append(("cities", country))
    return ["Paris", "Lyon", "Nice"]


def admin_reset(confirm: bool) -> str:
    """Reset every account."""
    RAN.append(("admin_reset", confirm))
    return "reset"


def make_catalog() -> ToolCatalog:
    catalog = ToolCatalog()
    for fn in (weather, cities, admin_reset):
        catalog.add_function(fn)
    return catalog


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def test_code_mode_lists_its_two_meta_tools_and_direct_ones() -> None:
    session = ToolManager(make_catalog(), mode="code").session()
    assert [t.name for t in session.tools()] == ["tool_search", "run_code"]
    direct = ToolManager(make_catalog(), mode=Code(direct=["cities"])).session()
    assert [t.name for t in direct.tools()] == ["tool_search", "run_code", "cities"]
    assert isinstance(mode_of("code"), Code)
    with pytest.raises(ConfigError, match="list of tool names"):
        Code(direct="cities")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="seconds"):
        CodeLimits(seconds=0)


def test_tool_search_answers_with_python_signatures() -> None:
    session = ToolManager(make_catalog(), mode="code").session()
    result = session.call_sync("tool_search", {"query": "weather of a city"})
    # The answer is the Python itself, not JSON around it (whose escaped quotes and line
    # breaks the model would pay for): it parses as a module, each tool a commented stub.
    tree = ast.parse(result.content)
    assert [f.name for f in tree.body if isinstance(f, ast.AsyncFunctionDef)][0] == "weather"
    assert result.content == result.value["found"]
    # dict[str, Any] says no more than dict; a comment needs no full stop.
    assert "async def weather(city: str, *, units: str='metric') -> dict: ..." in result.content
    assert "# Current weather of a city, with a long forecast\n" in result.content
    nothing = session.call_sync("tool_search", {"query": "zzzz qqqq"})
    assert nothing.content.startswith("# No tool matched 'zzzz qqqq'")
    ast.parse(nothing.content)


def test_run_code_says_how_to_call_tools_and_what_comes_back() -> None:
    """Its description is paid for on every request: short, but every fact a program's author
    needs is there."""
    tools = ToolManager(make_catalog(), mode="code").session().tools()
    text = next(t for t in tools if t.name == "run_code").description
    for fact in (
        "`await name(arg=...)`",  # how a tool is called
        "listed here or shown by tool_search",  # which tools a program calls
        "JSON parsed",  # what a call returns
        "raises",  # what a failed call does
        "`import asyncio`",  # gather needs the import
        "asyncio.gather(",
        "no files or network",  # the sandbox's limits
        "json, re, math, datetime, asyncio",
        "print",  # what comes back...
        "last expression",
        "output cut",  # ...and that long output is cut
    ):
        assert fact in text, fact
    assert len(text) <= 450  # it was 508 characters before every word was weighed
    tool = Tool(
        name="pick",
        description="Pick one.",
        parameters={
            "type": "object",
            "properties": {
                "kind": {"enum": ["a", "b"]},
                "ids": {"type": "array", "items": {"type": "integer"}},
                "class": {"type": "string"},
            },
            "required": ["kind"],
        },
    )
    assert python_signature(tool) == (
        "# Pick one\nasync def pick(kind: Literal['a', 'b'], *, ids: list[int]=None, "
        "class_: str=None): ..."
    )


def test_a_program_calls_tools_and_only_its_output_returns() -> None:
    events: list[Any] = []
    manager = ToolManager(make_catalog(), mode="code", listeners=[events.append])
    session = manager.session()
    code = (
        "names = await cities('FR')\n"
        "temps = {}\n"
        "for name in names:\n"
        "    w = await weather(city=name)\n"
        "    temps[name] = w['temp']\n"
        "print('hottest:', max(temps, key=lambda n: temps[n]))\n"
        "temps"
    )
    result = session.call_sync("run_code", {"code": code})
    assert result.outcome == "success"
    assert result.content == 'hottest: Paris\n{"Paris":5,"Lyon":4,"Nice":4}'
    assert RAN == [("cities", "FR"), ("weather", "Paris"), ("weather", "Lyon"), ("weather", "Nice")]
    inner = [e for e in events if isinstance(e, CallFinished) and e.tool != "run_code"]
    assert [e.tool for e in inner] == ["cities", "weather", "weather", "weather"]
    finished = [e for e in events if isinstance(e, ProgramFinished)]
    assert len(finished) == 1 and finished[0].calls == 4 and finished[0].outcome == "success"
    # The forecasts stayed in the sandbox: thousands of tokens kept out of the context.
    assert finished[0].tokens_kept_out > 1000
    assert any(isinstance(e, ProgramStarted) for e in events)
    # Only the program's result counts against the session's result budget.
    assert [r.tool_name for r in session.result_budget.records()] == ["run_code"]


def test_inner_values_are_whole_and_the_programs_result_is_cut() -> None:
    budget = ResultBudget(max_result_tokens=100)
    session = ToolManager(make_catalog(), mode="code", results=budget).session()
    code = "w = await call_tool('weather', {'city': 'Oslo'})\nprint(len(w['forecast']))\nw"
    result = session.call_sync("run_code", {"code": code})
    assert result.content.startswith("2400")  # the whole forecast reached the program
    assert result.truncated and result.tokens <= 100


def test_a_hidden_tool_cannot_be_called_or_found_from_code() -> None:
    access = Access(policies=[Policy("global", deny=["admin_*"])])
    session = ToolManager(make_catalog(), mode="code", access=access).session()
    direct = session.call_sync("admin_reset", {"confirm": True})
    found = session.call_sync("run_code", {"code": "await search_tools('reset every account')"})
    assert "admin_reset" not in found.content
    result = session.call_sync(
        "run_code",
        {"code": "try:\n    await admin_reset(confirm=True)\nexcept Exception as e:\n    print(e)"},
    )
    assert result.outcome == "success"
    assert result.content == json.loads(direct.content)["message"]
    called = session.call_sync("run_code", {"code": "await call_tool('admin_reset', {})"})
    assert called.outcome == "failed" and "PermissionError" in called.content
    assert RAN == []


def test_approval_through_the_managers_callback_applies_to_inner_calls() -> None:
    asked: list[Any] = []

    def approve(request: Any) -> bool:
        asked.append((request.tool.name, request.arguments))
        return False

    access = Access(policies=[Policy("global", require_approval=["admin_*"])])
    session = ToolManager(make_catalog(), mode="code", access=access, approval=approve).session()
    result = session.call_sync(
        "run_code", {"code": "await cities('FR')\nawait admin_reset(confirm=True)"}
    )
    assert asked == [("admin_reset", {"confirm": True})]
    assert result.outcome == "failed" and "refused by the approver" in result.content
    assert RAN == [("cities", "FR")]


def test_bad_arguments_raise_inside_the_program_and_can_be_caught() -> None:
    session = ToolManager(make_catalog(), mode="code").session()
    code = "try:\n    await weather(town='x')\nexcept ValueError as e:\n    print('fix:', e)"
    result = session.call_sync("run_code", {"code": code})
    assert result.outcome == "success" and result.content.startswith("fix:")
    assert "city" in result.content


def test_bad_programs_get_clear_errors() -> None:
    session = ToolManager(make_catalog(), mode="code").session()
    syntax = session.call_sync("run_code", {"code": "x = 1\ndef (:"})
    assert syntax.outcome == "retry"
    assert "line 2" in syntax.content and "SyntaxError" in syntax.content
    raised = session.call_sync("run_code", {"code": "def f():\n    return 1 / 0\nf()"})
    assert raised.outcome == "failed"
    assert "ZeroDivisionError" in raised.content and "line 2" in raised.content
    empty = session.call_sync("run_code", {"code": "  "})
    assert empty.outcome == "retry" and "needs \\\"code\\\"" in empty.content


def test_gather_runs_several_calls_and_keeps_their_order() -> None:
    session = ToolManager(make_catalog(), mode="code").session()
    code = (
        "import asyncio\n"
        "ws = await asyncio.gather(weather('Rome'), weather('Bern'), weather('Riga'))\n"
        "[w['city'] for w in ws]"
    )
    result = session.call_sync("run_code", {"code": code})
    assert result.content == '["Rome","Bern","Riga"]'


def test_the_call_limit_stops_a_program() -> None:
    mode = Code(limits=CodeLimits(max_calls=3))
    session = ToolManager(make_catalog(), mode=mode).session()
    result = session.call_sync("run_code", {"code": "for i in range(10):\n    await cities('x')"})
    assert result.outcome == "failed" and "call limit" in result.content
    assert len(RAN) == 3


def test_the_program_is_a_span_with_its_calls_under_it() -> None:
    pytest.importorskip("opentelemetry.sdk")
    from support.otel import OtelKit

    kit = OtelKit()
    manager = ToolManager(make_catalog(), mode="code", listeners=[kit.listener()])
    session = manager.session()
    session.call_sync("run_code", {"code": "await cities('FR')\nawait weather('Oslo')\n1"})
    run_code = kit.span("execute_tool run_code")
    program = kit.span("run_code program")
    assert program.parent is not None and program.parent.span_id == run_code.context.span_id
    for name in ("execute_tool cities", "execute_tool weather"):
        assert kit.span(name).parent.span_id == program.context.span_id  # type: ignore[union-attr]
    attributes = dict(program.attributes or {})
    assert attributes["toolmgmt.program.calls"] == 2
    assert attributes["toolmgmt.program.tokens_kept_out"] > 300


def test_the_usage_report_counts_programs_calls_and_tokens_kept_out(tmp_path: Any) -> None:
    from toolmgmt_core._events import JsonlListener, read_jsonl
    from toolmgmt_core._events.usage import usage_report

    log = tmp_path / "usage.jsonl"
    listener = JsonlListener(log)
    session = ToolManager(make_catalog(), mode="code", listeners=[listener]).session()
    session.call_sync("run_code", {"code": "for c in ['A', 'B']:\n    await weather(c)\n'ok'"})
    session.call_sync("run_code", {"code": "await cities('FR')"})
    listener.close()
    report = usage_report(read_jsonl(log)).to_dict()
    programs = report["programs"]
    assert programs["programs"] == 2 and programs["calls"] == 3
    assert programs["tokens_kept_out"] > 600


def test_code_mode_without_the_sandbox_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pydantic_monty", None)  # as if it were not installed
    with pytest.raises(ImportError, match=r'pip install "toolmgmt\[code\]"'):
        ToolManager(make_catalog(), mode="code")
    assert ToolManager(make_catalog(), mode="search").mode.name == "search"


def test_too_old_a_sandbox_is_refused_naming_the_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    import toolmgmt_core._calls.code.workers as sandbox
    import toolmgmt_core._compat as compat

    monkeypatch.setattr(sandbox, "_CHECKED", False)
    monkeypatch.setattr(compat.metadata, "version", lambda name: "1.0.0")
    with pytest.raises(ImportError, match=r"pydantic-monty-client>=1\.4, found 1\.0\.0"):
        ToolManager(make_catalog(), mode="code")


def test_toolmgmt_usage_shows_the_tokens_code_mode_kept_out(
    tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolmgmt_core._cli import main
    from toolmgmt_core._events import JsonlListener

    log = tmp_path / "usage.jsonl"
    listener = JsonlListener(log)
    session = ToolManager(make_catalog(), mode="code", listeners=[listener]).session()
    session.call_sync("run_code", {"code": "await weather('Oslo')\n'ok'"})
    listener.close()
    main(["usage", str(log)])
    out = capsys.readouterr().out
    assert "tokens kept out by code mode" in out and "(over 1 programs, 1 calls)" in out


def test_the_programs_result_is_recorded_under_its_own_call_id() -> None:
    session = ToolManager(make_catalog(), mode="code").session()
    result = session.call_sync(
        "run_code", {"code": "await cities('FR')\nawait weather('Oslo')\n1"}, call_id="call-7"
    )
    assert result.outcome == "success"
    assert [(r.call_id, r.tool_name) for r in session.result_budget.records()] == [
        ("call-7", "run_code")
    ]
