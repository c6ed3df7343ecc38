"""Property tests: every guarantee of ``truncate_result`` for arbitrary JSON, text and budgets."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolmgmt_core import ContentResult, Discovery, Tool, ToolCatalog, ToolManager, truncate_result
from toolmgmt_core._calls.truncation import MIN_RESULT_TOKENS, render_result
from toolmgmt_core._model.tokens import ApproxEncoding, count_tokens, get_encoding

ENCODING = get_encoding("o200k_base")
SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=25)
        | st.dictionaries(st.text(max_size=12), children, max_size=12)
    ),
    max_leaves=150,
)
# Long texts: unicode, one long word, whitespace runs, line-structured text.
texts = st.one_of(
    st.tuples(st.text(min_size=1, max_size=40), st.integers(1, 300)).map(lambda t: t[0] * t[1]),
    st.integers(1, 5_000).map(lambda n: "x" * n),
    st.tuples(st.sampled_from([" ", "\n", "\t", " \n "]), st.integers(1, 2_000)).map(
        lambda t: t[0] * t[1]
    ),
    st.lists(st.text(max_size=60), max_size=120).map("\n".join),
    st.text(),
)
budgets = st.integers(MIN_RESULT_TOKENS, 400)
sides = st.sampled_from(["smart", "head", "tail"])


def _check(value, budget, strategy, encoding=ENCODING):
    result = truncate_result(value, budget, strategy, encoding=encoding)
    text = render_result(result.value)
    # The text reported is the text the model gets, and it is within budget.
    assert result.text == text
    assert result.tokens == count_tokens(text, encoding) <= budget
    # Nothing is cut when it fits: the very same object comes back.
    fits = result.original_tokens <= budget
    assert result.truncated is not fits
    if fits:
        assert result.value is value
    # Cutting again changes nothing.
    again = truncate_result(result.value, budget, strategy, encoding=encoding)
    assert not again.truncated and again.value is result.value and again.text == text
    return result


@SETTINGS
@given(json_values, budgets, sides)
def test_json_values_fit_stay_json_and_are_idempotent(value, budget, strategy) -> None:
    result = _check(value, budget, strategy)
    if not isinstance(value, str):
        assert json.loads(result.text) == json.loads(render_result(result.value))
        assert result.original_tokens == count_tokens(render_result(value), ENCODING)


@SETTINGS
@given(texts, budgets, sides)
def test_strings_fit_and_stay_strings(text, budget, strategy) -> None:
    result = _check(text, budget, strategy)
    assert isinstance(result.value, str)
    assert result.original_tokens == count_tokens(text, ENCODING)


@SETTINGS
@given(
    st.one_of(st.lists(json_values, max_size=40), st.dictionaries(st.text(), json_values)), budgets
)
def test_strings_holding_json_come_back_as_json_strings(value, budget) -> None:
    text = json.dumps(value, indent=2, ensure_ascii=False)
    result = _check(text, budget, "smart")
    assert isinstance(result.value, str)
    assert isinstance(json.loads(result.value), type(value))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(json_values, texts), budgets, sides)
def test_guarantees_hold_in_the_fallback_tokenizer(value, budget, strategy) -> None:
    _check(value, budget, strategy, encoding=ApproxEncoding())


@settings(max_examples=25, deadline=None)
@given(st.integers(200, 3_000), st.integers(MIN_RESULT_TOKENS, 3_000), sides)
def test_large_record_lists(n, budget, strategy) -> None:
    records = [{"id": i, "name": f"item {i}", "text": "lorem ipsum " * (i % 7)} for i in range(n)]
    result = _check(records, budget, strategy)
    if result.truncated:
        omitted = [x for x in result.value if isinstance(x, str) and "omitted" in x]
        assert len(omitted) == 1
        kept = [x for x in result.value if isinstance(x, dict)]
        count = int(omitted[0].split()[1].replace(",", ""))
        assert count == n - len(kept)


@pytest.mark.parametrize("budget", [MIN_RESULT_TOKENS, 17, 20, 32])
@pytest.mark.parametrize(
    "value",
    [
        {f"k{i}": "v" * 50 for i in range(500)},
        [[["x" * 100] * 3] * 3] * 3,
        "€" * 10_000,
        "🙂" * 5_000,
        "\x00\x01\x02" * 1_000,
        10**80,
        {"…": ["…"] * 500, "……": "a" * 1000},
    ],
)
def test_minimum_budget_always_suffices(value, budget) -> None:
    for strategy in ("smart", "head", "tail"):
        _check(value, budget, strategy)


_BINARY = "QUJD" * 50


def _block(kind: str, text: str) -> dict:
    if kind == "text":
        return {"type": "text", "text": text}
    if kind == "resource":
        return {"type": "resource", "resource": {"uri": "file:///r", "text": text}}
    if kind == "blob":
        return {"type": "resource", "resource": {"uri": "file:///b", "blob": _BINARY}}
    if kind == "image":
        return {"type": "image", "data": _BINARY, "mimeType": "image/png"}
    return {"type": "resource_link", "uri": "file:///l", "name": text[:30]}


mcp_blocks = st.lists(
    st.tuples(st.sampled_from(["text", "resource", "blob", "image", "link"]), texts).map(
        lambda t: _block(*t)
    ),
    max_size=6,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mcp_blocks, st.none() | st.dictionaries(st.text(max_size=12), json_values), budgets)
def test_content_results_are_shaped_like_any_result(blocks, structured, budget) -> None:
    """An MCP result (content blocks, structured content) goes through the one shaping path:
    within the tool's budget, binary data never in front of the model, the media beside it."""
    tool = Tool(
        "mcp_tool", handler=lambda: ContentResult(blocks, structured), max_result_tokens=budget
    )
    session = ToolManager(ToolCatalog([tool]), discovery=Discovery(call_unloaded="load")).session()
    result = session.call_sync("mcp_tool", {})
    assert not result.is_error
    assert result.tokens <= budget or not result.truncated
    if result.original_tokens > budget:
        assert result.truncated and result.tokens <= budget
    assert _BINARY not in result.content
    assert result.media == [b for b in blocks if b["type"] != "text"]


def test_records_in_text_blocks_reach_the_model_as_one_json_array() -> None:
    """An upstream that answers a list with one text block per record (an MCP server's list
    of objects): the model gets a JSON array, whole or cut to the budget, never ``{...}\\n{...}``;
    other text blocks are joined as before."""
    records = [{"id": n, "title": f"note {n}", "body": "lorem ipsum " * 20} for n in range(40)]
    blocks = [{"type": "text", "text": json.dumps(r)} for r in records]
    for budget in (100_000, 400):
        tool = Tool(
            "list_notes", handler=lambda: ContentResult(blocks), max_result_tokens=budget
        )
        manager = ToolManager(ToolCatalog([tool]), discovery=Discovery(call_unloaded="load"))
        result = manager.session().call_sync("list_notes", {})
        shown = json.loads(result.content)  # valid JSON, whole or cut
        assert isinstance(shown, list)
        if budget == 100_000:
            assert shown == records and not result.truncated
        else:
            assert result.truncated and result.tokens <= budget
    mixed = ContentResult([{"type": "text", "text": "a"}, {"type": "text", "text": "{"}])
    assert mixed.value() == "a\n{"
    single = ContentResult([{"type": "text", "text": '{"a": 1}'}]).value()
    assert single == '{"a": 1}'  # one block: its text, as it came
