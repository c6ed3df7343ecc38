from __future__ import annotations

from typing import Any

import pytest

from toolmgmt_core import (
    BrowseError,
    CatalogError,
    DuplicateToolError,
    InvalidToolError,
    SearchError,
    Tool,
    ToolCatalog,
    ToolNotFoundError,
)


def send_email(to: list[str], subject: str, body: str = "") -> dict:
    """Send an email message to one or more recipients.

    Args:
        to: Recipient email addresses.
        subject: The subject line.
        body: The message body.
    """
    return {"sent": True, "to": to}


@pytest.fixture
def catalog() -> ToolCatalog:
    cat = ToolCatalog()
    cat.add_function(send_email, domain="email", group="messages")
    cat.add_schemas(
        [
            {
                "type": "function",
                "function": {
                    "name": "book_flight",
                    "description": "Book a flight ticket between two airports.",
                    "parameters": {
                        "type": "object",
                        "properties": {"origin": {"type": "string"}, "dest": {"type": "string"}},
                        "required": ["origin", "dest"],
                    },
                },
            },
            {
                "name": "getWeatherForecast",
                "description": "Get the weather forecast for a city.",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
            },
            {
                "type": "function",
                "name": "cancel_booking",
                "description": "Cancel a travel booking.",
                "parameters": {"type": "object", "properties": {"booking_id": {"type": "string"}}},
            },
            {
                "name": "list_hotels",
                "description": "List hotels in a city.",
                "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}},
                "annotations": {"readOnlyHint": True},
            },
        ],
        domain="travel",
        group="trips",
    )
    return cat


def test_function_schema_from_hints_and_docstring(catalog: ToolCatalog) -> None:
    tool = catalog.get("send_email")
    props = tool.parameters["properties"]
    assert props["to"] == {
        "type": "array",
        "items": {"type": "string"},
        "description": "Recipient email addresses.",
    }
    assert tool.required == ("to", "subject")
    assert tool.description == "Send an email message to one or more recipients."


def test_every_accepted_shape_is_ingested(catalog: ToolCatalog) -> None:
    assert len(catalog) == 5
    assert catalog.get("list_hotels").annotations.read_only is True
    assert catalog.get("book_flight").required == ("origin", "dest")


def test_bad_input_changes_nothing(catalog: ToolCatalog) -> None:
    version = catalog.version
    with pytest.raises(DuplicateToolError, match="already in the catalog"):
        catalog.add(Tool(name="book_flight"))
    with pytest.raises(CatalogError, match="#1"):
        catalog.add_schemas(
            [{"name": "ok_tool"}, {"name": "bad", "parameters": {"type": "string"}}]
        )
    with pytest.raises(InvalidToolError, match="non-empty"):
        Tool(name="")
    with pytest.raises(InvalidToolError, match="callable"):
        Tool(name="x", handler="not callable")  # type: ignore[arg-type]
    assert catalog.version == version
    assert "ok_tool" not in catalog


def test_skip_mode_reports_bad_definitions(catalog: ToolCatalog) -> None:
    report = catalog.add_schemas(
        [{"name": "fine"}, {"name": "broken", "parameters": {"type": 3}}], on_error="skip"
    )
    assert report.added == ["fine"]
    assert report.skipped[0][0] == "broken"


def test_search_ranks_the_right_tool_first(catalog: ToolCatalog) -> None:
    assert catalog.search("book a flight")[0].name == "book_flight"
    assert catalog.search("weather forecast")[0].name == "getWeatherForecast"


def test_multi_query_covers_each_need(catalog: ToolCatalog) -> None:
    names = [h.name for h in catalog.search(["book a flight", "email the itinerary"], limit=2)]
    assert names == ["book_flight", "send_email"]


def test_search_scoped_and_filtered(catalog: ToolCatalog) -> None:
    assert all(h.domain == "email" for h in catalog.search("send", domain="email"))
    hits = catalog.search("flight booking", where=lambda t: t.name != "book_flight")
    assert "book_flight" not in [h.name for h in hits]
    with pytest.raises(BrowseError, match="Valid domains: email, travel"):
        catalog.search("x", domain="nope")
    with pytest.raises(SearchError):
        catalog.search("   ")


def test_regex_search_bounds(catalog: ToolCatalog) -> None:
    assert [h.name for h in catalog.search_regex("^get")] == ["getWeatherForecast"]
    with pytest.raises(SearchError, match="does not compile"):
        catalog.search_regex("(unclosed")
    with pytest.raises(SearchError, match="at most 200"):
        catalog.search_regex("a" * 201)


def test_suggest_and_unknown(catalog: ToolCatalog) -> None:
    assert catalog.suggest("send_emial")[0] == "send_email"
    with pytest.raises(ToolNotFoundError, match="send_email") as caught:
        catalog.get("send_emial")
    # One error for a name that names nothing: a KeyError as a lookup's, a call's answer too.
    assert isinstance(caught.value, KeyError) and caught.value.code == "unknown_tool"
    assert caught.value.suggestions[0] == "send_email"
    with pytest.warns(DeprecationWarning, match="ToolNotFoundError now"):
        from toolmgmt_core import UnknownToolError
    assert UnknownToolError is ToolNotFoundError


def test_browse_tree(catalog: ToolCatalog) -> None:
    toc = catalog.browse()
    assert [(d.name, d.tool_count) for d in toc] == [("email", 1), ("travel", 4)]
    assert {e.name for e in catalog.browse("travel", "trips")} == {
        "book_flight",
        "getWeatherForecast",
        "cancel_booking",
        "list_hotels",
    }
    with pytest.raises(BrowseError, match="Valid groups: trips"):
        catalog.browse("travel", "nope")


def test_adding_many_tools_builds_index_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolmgmt_core._search import index as index_module

    builds = []
    real = index_module.BM25Index.build.__func__  # type: ignore[attr-defined]

    def counting(cls, tools, **kw):  # type: ignore[no-untyped-def]
        builds.append(len(tools))
        return real(cls, tools, **kw)

    monkeypatch.setattr(index_module.BM25Index, "build", classmethod(counting))
    cat = ToolCatalog()
    for i in range(2000):
        cat.add(Tool(name=f"tool_{i}", description=f"does thing number {i}"))
    cat.search("thing")
    cat.search("number")
    assert builds == [2000]


def test_result_settings_survive_a_dict_round_trip() -> None:
    tool = Tool(name="export_rows", max_result_tokens=500, truncation="tail", keywords=("csv",))
    cat = ToolCatalog()
    cat.add_schemas([{**tool.to_dict(), "max_result_tokens": 500, "truncation": "tail"}])
    again = cat.get("export_rows")
    assert (again.max_result_tokens, again.truncation) == (500, "tail")


def test_invalid_schema_is_refused_every_time() -> None:
    bad = {"type": "object", "properties": {"x": {"type": "nope"}}}
    for _ in range(2):  # the meta-schema check is cached; a cached failure must still fail
        with pytest.raises(InvalidToolError, match="not a valid JSON Schema"):
            Tool(name="t", parameters=bad)


def test_a_tool_owns_its_schema() -> None:
    params = {"type": "object", "properties": {"city": {"type": "string"}}}
    tool = Tool(name="weather", parameters=params)
    params["properties"]["city"]["type"] = "integer"  # the caller edits its own dict later
    assert tool.parameters["properties"]["city"]["type"] == "string"


def test_a_tool_larger_than_the_catalog_s_limits_is_refused_when_added() -> None:
    from toolmgmt_core import InvalidToolError, ToolLimits

    huge = "Reads a note. " + "x" * 950_000  # issue 25: it reached the model whole
    catalog = ToolCatalog()
    with pytest.raises(InvalidToolError, match="its description is 950,014 characters, over"):
        catalog.add(Tool("notes_get_note", huge))
    report = catalog.add_schemas(
        [
            {"name": "fine", "description": "Fine."},
            {"name": "wordy", "description": "Fine.", "usage_notes": "y" * 20_000},
            {"name": "wide", "parameters": _wide_schema(10_000)},
        ],
        on_error="skip",
    )
    assert report.added == ["fine"]
    assert [reason.split(": its ")[1].split(" is")[0] for _, reason in report.skipped] == [
        "usage_notes",
        "parameters",
    ]
    assert "ToolLimits(schema_chars=...)" in report.skipped[1][1]
    with pytest.raises(InvalidToolError, match="description"):  # replacing is adding too
        catalog.replace(Tool("fine", huge))
    roomy = ToolCatalog(limits=ToolLimits(description_chars=1_000_000, schema_chars=1_000_000))
    roomy.add(Tool("notes_get_note", huge))  # a deployer may allow it
    with pytest.raises(CatalogError, match="positive whole number"):
        ToolLimits(description_chars=0)


def _wide_schema(properties: int) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {f"field_{i}": {"type": "string"} for i in range(properties)},
    }
