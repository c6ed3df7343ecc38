"""Argument validation and repair, handlers (sync/async), timeouts, and the two error kinds."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolmgmt_core import (
    InvalidArgumentsError,
    ResultBudget,
    Tool,
    ToolCallError,
    ToolCatalog,
    ToolExecutionError,
    ToolManager,
    ToolTimeoutError,
    ToolUnavailableError,
    count_tokens,
)
from toolmgmt_core._calls.execution import run_handler
from toolmgmt_core._calls.sync import run_sync
from toolmgmt_core._calls.validation import validate_arguments

SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "limit": {"type": "integer", "minimum": 1},
        "sort": {"type": "string", "enum": ["asc", "desc"]},
        "filters": {
            "type": "object",
            "properties": {"status": {"type": "string"}, "tags": {"type": "array"}},
            "additionalProperties": False,
        },
        "ids": {"type": "array", "items": {"type": "integer"}},
        "maybe": {"anyOf": [{"type": "object"}, {"type": "null"}]},
    },
    "required": ["query"],
}
TOOL = Tool(name="find_records", description="Find records.", parameters=SCHEMA)


def test_valid_arguments_pass_through_unchanged() -> None:
    args = {"query": "x", "limit": 3, "filters": {"status": "open"}}
    assert validate_arguments(TOOL, args) == args


def test_none_and_empty_string_mean_no_arguments() -> None:
    tool = Tool(name="ping")
    assert validate_arguments(tool, None) == {}
    assert validate_arguments(tool, "") == {}


def test_error_names_field_expected_and_given() -> None:
    with pytest.raises(InvalidArgumentsError) as info:
        validate_arguments(TOOL, {"query": "x", "limit": "ten"})
    message = info.value.message
    assert "limit" in message and "expected integer" in message and '"ten"' in message
    assert info.value.kind == "call" and info.value.tool_name == "find_records"


def test_missing_required_field_is_named() -> None:
    with pytest.raises(InvalidArgumentsError, match="query: required field is missing"):
        validate_arguments(TOOL, {"limit": 2})


def test_enum_error_lists_valid_values() -> None:
    with pytest.raises(InvalidArgumentsError, match='sort: expected one of "asc", "desc"'):
        validate_arguments(TOOL, {"query": "x", "sort": "up"})


def test_nested_field_path_and_unexpected_fields() -> None:
    with pytest.raises(InvalidArgumentsError) as info:
        validate_arguments(TOOL, {"query": "x", "filters": {"status": 1, "colour": "red"}})
    message = info.value.message
    assert "filters.status: expected string, got integer 1" in message
    assert "unexpected field(s) colour; valid fields: status, tags" in message


def test_huge_refused_values_and_field_names_are_clipped_in_the_message() -> None:
    long_query = {"type": "object", "properties": {"query": {"type": "string", "maxLength": 5}}}
    tool = Tool(name="find_records", description="Find records.", parameters=long_query)
    with pytest.raises(InvalidArgumentsError) as info:
        validate_arguments(tool, {"query": "q" * 20_000})
    assert "query: " in info.value.message and len(info.value.message) < 400
    extra = {"query": "x", "filters": {"k" * 20_000: 1, **{f"f{i}": i for i in range(500)}}}
    with pytest.raises(InvalidArgumentsError) as info:
        validate_arguments(TOOL, extra)
    message = info.value.message
    assert "unexpected field(s) kkk" in message and "and 498 more; valid fields: status" in message
    assert len(message) < 400


def test_array_item_path() -> None:
    with pytest.raises(InvalidArgumentsError, match=r"ids\[1\]: expected integer"):
        validate_arguments(TOOL, {"query": "x", "ids": [1, "two"]})


def test_at_most_three_errors_are_named() -> None:
    bad = {"limit": "a", "sort": "b", "ids": "c", "filters": 4}
    with pytest.raises(InvalidArgumentsError, match="and 2 more"):
        validate_arguments(TOOL, bad, repair=False)


def test_whole_arguments_as_json_string_are_parsed() -> None:
    assert validate_arguments(TOOL, '{"query": "x", "limit": 2}') == {"query": "x", "limit": 2}


def test_non_object_arguments_are_refused_clearly() -> None:
    with pytest.raises(InvalidArgumentsError, match="must be a JSON object.*got array"):
        validate_arguments(TOOL, [1, 2])


def test_stringified_nested_object_and_array_are_repaired_once() -> None:
    args = {
        "query": "x",
        "filters": json.dumps({"status": "open", "tags": ["a"]}),
        "ids": "[1, 2]",
        "maybe": '{"k": 1}',
    }
    fixed = validate_arguments(TOOL, args)
    assert fixed["filters"] == {"status": "open", "tags": ["a"]}
    assert fixed["ids"] == [1, 2]
    assert fixed["maybe"] == {"k": 1}
    assert args["ids"] == "[1, 2]", "the caller's dict is not mutated"


def test_repair_does_not_touch_strings_the_schema_wants() -> None:
    assert validate_arguments(TOOL, {"query": "[1, 2]"})["query"] == "[1, 2]"


def test_repair_then_validation_still_fails_on_bad_content() -> None:
    with pytest.raises(InvalidArgumentsError, match=r"ids\[0\]: expected integer"):
        validate_arguments(TOOL, {"query": "x", "ids": '["a"]'})


def test_unparseable_string_is_reported_not_repaired() -> None:
    with pytest.raises(InvalidArgumentsError, match="filters: expected object, got string"):
        validate_arguments(TOOL, {"query": "x", "filters": "status=open"})


def test_without_repair_strings_are_errors() -> None:
    with pytest.raises(InvalidArgumentsError):
        validate_arguments(TOOL, {"query": "x", "ids": "[1]"}, repair=False)


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=5),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=10),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(max_size=4), inner, max_size=3)
            ),
            max_leaves=8,
        ),
        max_size=4,
    )
)
def test_validation_either_returns_valid_arguments_or_raises_model_error(args: dict) -> None:
    from jsonschema import Draft202012Validator

    try:
        fixed = validate_arguments(TOOL, args)
    except InvalidArgumentsError as exc:
        assert exc.message.startswith("Invalid arguments for 'find_records'")
    else:
        assert Draft202012Validator(SCHEMA).is_valid(fixed)


# -- handlers ---------------------------------------------------------------------------------


def _tool(handler, **fields) -> Tool:
    return Tool(name=fields.pop("name", "t"), handler=handler, **fields)


def test_sync_and_async_handlers_run() -> None:
    async def add_async(a: int, b: int) -> int:
        await asyncio.sleep(0)
        return a + b

    def add_sync(a: int, b: int) -> int:
        return a + b

    assert run_sync(run_handler(_tool(add_async), {"a": 1, "b": 2}, 1.0)) == 3
    assert run_sync(run_handler(_tool(add_sync), {"a": 1, "b": 2}, 1.0)) == 3


def test_callable_object_with_async_call_is_awaited() -> None:
    class Upstream:
        async def __call__(self, x: int) -> int:
            return x * 2

    assert run_sync(run_handler(_tool(Upstream()), {"x": 4}, 1.0)) == 8


def test_sync_handler_runs_off_the_event_loop_thread() -> None:
    seen: list[str] = []

    def handler() -> str:
        seen.append(threading.current_thread().name)
        return "ok"

    async def main() -> None:
        await run_handler(_tool(handler), {}, 1.0)
        assert seen[0] != threading.current_thread().name

    asyncio.run(main())


def test_handler_exception_becomes_tool_error() -> None:
    def broken() -> None:
        raise KeyError("customer 42")

    with pytest.raises(ToolExecutionError) as info:
        run_sync(run_handler(_tool(broken, name="lookup"), {}, 1.0))
    assert info.value.kind == "tool"
    assert "lookup" in info.value.message and "KeyError" in info.value.message
    assert "customer 42" in info.value.message


def test_handler_reported_error_becomes_tool_error() -> None:
    def reports() -> dict:
        return {"isError": True, "content": [{"type": "text", "text": "quota exceeded"}]}

    with pytest.raises(ToolExecutionError, match="quota exceeded"):
        run_sync(run_handler(_tool(reports), {}, 1.0))


def test_gateway_errors_from_a_handler_pass_through() -> None:
    def upstream_down() -> None:
        raise ToolUnavailableError("Domain 'crm' is unavailable: its server is down.")

    with pytest.raises(ToolUnavailableError) as info:
        run_sync(run_handler(_tool(upstream_down), {}, 1.0))
    assert info.value.kind == "call"


def test_missing_handler_is_unavailable() -> None:
    with pytest.raises(ToolUnavailableError, match="no handler"):
        run_sync(run_handler(Tool(name="remote"), {}, 1.0))


def test_sync_timeout_returns_promptly() -> None:
    release = threading.Event()

    def slow() -> None:
        release.wait(120)

    start = time.monotonic()
    with pytest.raises(ToolTimeoutError, match=r"within 0\.1s") as info:
        run_sync(run_handler(_tool(slow, name="slow"), {}, 0.1))
    release.set()
    assert time.monotonic() - start < 60  # did not wait for the handler (a generous bound)
    assert info.value.kind == "call"


def test_async_timeout_cancels_the_handler() -> None:
    cancelled = []

    async def slow() -> None:
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    with pytest.raises(ToolTimeoutError):
        run_sync(run_handler(_tool(slow), {}, 0.05))
    assert cancelled == [True]


def test_run_sync_works_inside_a_running_loop() -> None:
    async def main() -> int:
        return run_sync(asyncio.sleep(0, result=7))

    assert asyncio.run(main()) == 7


# -- through a session ----------------------------------------------------------------------


@pytest.fixture
def session():
    def slow_sync(seconds: float) -> str:
        """Sleep."""
        time.sleep(seconds)
        return "done"

    def explode() -> None:
        """Raise."""
        raise RuntimeError("disk on fire")

    def report() -> dict:
        """Report a dataclass-ish value."""
        return {"when": __import__("datetime").date(2026, 1, 2), "ids": {3}}

    catalog = ToolCatalog()
    catalog.add_function(slow_sync, timeout=0.2)
    catalog.add_function(explode)
    catalog.add_function(report)
    manager = ToolManager(catalog, always_on=["slow_sync", "explode", "report"])
    return manager.session()


def test_session_reports_tool_and_call_errors_apart(session) -> None:
    tool_error = session.call_sync("explode", {})
    assert tool_error.is_error and isinstance(tool_error.error, ToolCallError)
    assert tool_error.value["kind"] == "tool" and "disk on fire" in tool_error.content
    call_error = session.call_sync("slow_sync", {"seconds": "long"})
    assert call_error.value == {  # a plain library session: no gateway to name
        "error": "invalid_arguments",
        "kind": "call",
        "message": call_error.error.message,
    }


def test_session_per_tool_timeout(session) -> None:
    result = session.call_sync("slow_sync", {"seconds": 1.0})
    assert result.is_error and result.error.code == "timeout"
    assert session.call_sync("slow_sync", {"seconds": 0.0}).content == "done"


def test_session_results_are_json_compatible(session) -> None:
    result = session.call_sync("report", {})
    assert result.value == {"when": "2026-01-02", "ids": [3]}
    assert json.loads(result.to_message()) == result.value
    assert result.tokens == result.original_tokens > 0 and not result.truncated


def test_a_huge_handler_error_is_cut_to_the_result_budget() -> None:
    def crash(page: str = "") -> None:
        """Fail with a whole error page."""
        raise RuntimeError("upstream said: " + "<div>oops</div>" * 5_000 + " (code 503)")

    catalog = ToolCatalog()
    catalog.add_function(crash)
    catalog.add_function(crash, name="crash_small", max_result_tokens=40)
    for mode, name, arguments in [
        ("lazy", "crash", {}),
        ("gateway", "execute_tool", {"tool_name": "crash"}),
        ("lazy", "crash_small", {}),
    ]:
        manager = ToolManager(catalog, mode, results=ResultBudget(max_result_tokens=120))
        result = manager.session().call_sync(name, arguments)
        budget = 40 if name == "crash_small" else 120
        assert result.is_error and result.value["kind"] == "tool"
        assert result.tokens <= budget and count_tokens(result.content) == result.tokens
        message = result.value["message"]
        assert message.startswith("Tool 'crash") and message.endswith("(code 503)")
        assert "omitted" in message
