"""The embedded demo catalog: size, schemas, annotations, handlers, large results, search."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections import Counter
from typing import Any

import jsonschema
import pytest

from toolmgmt_core import Tool, ToolCatalog
from toolmgmt_demo import (
    DEMO_DOMAINS,
    LARGE_RESULT_CALLS,
    demo_catalog,
    demo_schemas,
    example_arguments,
)
from toolmgmt_demo._common import RecordNotFoundError

EXPECTED_DOMAINS = {
    "crm",
    "files",
    "calendar",
    "email",
    "code_hosting",
    "payments",
    "analytics",
    "web_search",
}
VERBS = {
    "add", "append", "apply", "archive", "attach", "book", "cancel", "capture", "check", "close",
    "comment", "compare", "convert", "copy", "count", "create", "delete", "export", "extract",
    "fetch", "find", "forecast", "forward", "get", "list", "log", "mark", "merge", "move", "query",
    "read", "refund", "reply", "request", "rerun", "respond", "restore", "revoke", "run",
    "schedule", "search", "send", "set", "share", "tail", "track", "update", "void", "write",
}  # fmt: skip


@pytest.fixture(scope="module")
def catalog() -> ToolCatalog:
    return demo_catalog()


def _run(tool: Tool, arguments: dict[str, Any]) -> Any:
    """Call ``tool``'s handler on a fresh backend, so earlier calls cannot change the outcome."""
    handler = tool.handler
    assert handler is not None, tool.name
    fresh = getattr(type(handler.__self__)(), handler.__name__)  # type: ignore[attr-defined]
    result = fresh(**arguments)
    if inspect.isawaitable(result):
        result = asyncio.run(result)
    return result


def test_size_domains_and_groups(catalog: ToolCatalog) -> None:
    assert 140 <= len(catalog) <= 160
    assert set(DEMO_DOMAINS) == EXPECTED_DOMAINS
    domains = {d.name: d for d in catalog.domains()}
    assert set(domains) == EXPECTED_DOMAINS
    for summary in domains.values():
        assert 2 <= len(summary.groups) <= 4, summary
        assert summary.tool_count >= 12, summary


def test_names_are_verb_led_snake_case_with_domain_prefix(catalog: ToolCatalog) -> None:
    for tool in catalog:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", tool.name), tool.name
        assert tool.name.startswith(tool.domain + "_"), tool.name
        verb = tool.name[len(tool.domain) + 1 :].split("_")[0]
        assert verb in VERBS, f"{tool.name}: {verb!r} is not a verb"
    assert len(set(catalog.names())) == len(catalog)


def test_every_schema_is_valid_and_documented(catalog: ToolCatalog) -> None:
    features: Counter[str] = Counter()
    for tool in catalog:
        jsonschema.Draft202012Validator.check_schema(tool.parameters)
        if tool.output_schema is not None:
            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        assert len(tool.description) >= 20, tool.name
        assert tool.keywords or len(tool.description) > 40, tool.name
        for name, prop in tool.parameters.get("properties", {}).items():
            assert prop.get("description"), f"{tool.name}.{name} has no description"
        text = json.dumps(tool.parameters)
        for feature in ('"enum"', '"format"', '"default"', '"items"', '"properties": {"'):
            if feature in text:
                features[feature] += 1
        if any(p.get("type") == "object" for p in tool.parameters.get("properties", {}).values()):
            features["nested object"] += 1
    assert features['"enum"'] >= 50
    assert features['"format"'] >= 40
    assert features['"default"'] >= 60
    assert features['"items"'] >= 30
    assert features["nested object"] >= 8


def test_annotations_are_set_and_truthful(catalog: ToolCatalog) -> None:
    for tool in catalog:
        a = tool.annotations
        assert None not in (a.read_only, a.destructive, a.idempotent, a.open_world), tool.name
        verb = tool.name[len(tool.domain) + 1 :].split("_")[0]
        if verb == "delete":
            assert a.destructive and not a.read_only, tool.name
        if verb in ("list", "get", "search", "count", "tail", "check", "find"):
            assert not a.destructive, tool.name
            # email_get_email marks the email read: honestly not read-only
            assert a.read_only or tool.name == "email_get_email", tool.name
        if a.read_only:
            assert not a.destructive and a.idempotent, tool.name
        if tool.domain == "web_search":
            assert a.open_world, tool.name
    assert catalog.get("payments_refund_charge").annotations.destructive
    assert catalog.get("email_send_email").annotations.open_world
    assert catalog.get("crm_search_contacts").annotations.open_world is False


def test_defer_loading_left_to_the_manager_except_everyday_tools(catalog: ToolCatalog) -> None:
    always = sorted(t.name for t in catalog if t.defer_loading is False)
    assert always == ["email_send_email", "files_read_file", "web_search_search_web"]
    assert all(t.defer_loading is not True for t in catalog)


def test_usage_notes_examples_and_output_schemas_are_present(catalog: ToolCatalog) -> None:
    tools = list(catalog)
    assert sum(bool(t.usage_notes) for t in tools) >= 5
    assert sum(bool(t.input_examples) for t in tools) >= 15
    assert sum(t.output_schema is not None for t in tools) >= 3
    for tool in tools:
        for example in tool.input_examples:
            jsonschema.validate(example, tool.parameters)


def test_handlers_mix_sync_and_async(catalog: ToolCatalog) -> None:
    kinds = Counter(t.is_async for t in catalog)
    assert kinds[True] >= 8 and kinds[False] >= 100
    assert all(t.handler is not None for t in catalog)


def test_every_handler_runs_with_its_examples_or_generated_arguments(
    catalog: ToolCatalog,
) -> None:
    failures = []
    calls = 0
    for tool in catalog:
        argument_sets = [dict(e) for e in tool.input_examples] or [example_arguments(tool)]
        for arguments in argument_sets:
            jsonschema.validate(arguments, tool.parameters)
            try:
                result = _run(tool, arguments)
                json.dumps(result)
            except Exception as exc:  # collect every failure, then report them together
                failures.append(f"{tool.name}({arguments}): {type(exc).__name__}: {exc}")
            calls += 1
    assert not failures, "\n".join(failures)
    assert calls >= len(catalog)


def test_generated_arguments_fill_required_fields_with_valid_values(catalog: ToolCatalog) -> None:
    tool = catalog.get("crm_get_contact")
    assert example_arguments(tool) == {"contact_id": "con_0001"}
    tool = catalog.get("calendar_check_availability")
    arguments = example_arguments(tool)
    assert set(arguments) == {"emails", "start", "end"}
    jsonschema.validate(arguments, tool.parameters)


def test_large_results_are_large(catalog: ToolCatalog) -> None:
    sizes = {}
    for name, arguments in LARGE_RESULT_CALLS:
        tool = catalog.get(name)
        jsonschema.validate(arguments, tool.parameters)
        result = _run(tool, arguments)
        sizes[name] = len(result if isinstance(result, str) else json.dumps(result))
    assert all(size >= 20_000 for size in sizes.values()), sizes
    assert all(size <= 1_200_000 for size in sizes.values()), sizes
    assert max(sizes.values()) >= 500_000, sizes
    log = _run(catalog.get("files_read_file"), {"path": "/logs/app.log"})["content"]
    assert log.count("\n") > 5000 and " ERROR " in log


def test_results_are_deterministic(catalog: ToolCatalog) -> None:
    for name, arguments in [
        ("web_search_fetch_page", {"url": "https://example.com/a-b"}),
        ("code_hosting_list_commits", {"repository": "acme/api", "per_page": 5}),
        ("crm_search_contacts", {"query": "patel"}),
    ]:
        tool = catalog.get(name)
        assert _run(tool, arguments) == _run(tool, arguments)
    first = _run(catalog.get("web_search_search_web"), {"query": "solar panels"})
    other = _run(catalog.get("web_search_search_web"), {"query": "wind turbines"})
    assert first != other


def test_state_is_kept_per_catalog() -> None:
    one, two = demo_catalog(), demo_catalog()
    create = one.get("crm_create_contact").handler
    assert create is not None
    contact = create(first_name="Marta", last_name="Nowak", email="marta@example.com")
    get_one = one.get("crm_get_contact").handler
    get_two = two.get("crm_get_contact").handler
    assert get_one is not None and get_two is not None
    assert get_one(contact_id=contact["id"])["email"] == "marta@example.com"
    with pytest.raises(KeyError):
        get_two(contact_id=contact["id"])


def test_unknown_id_raises_a_clear_key_error(catalog: ToolCatalog) -> None:
    with pytest.raises(KeyError) as info:
        _run(catalog.get("crm_get_contact"), {"contact_id": "con_9999"})
    assert isinstance(info.value, RecordNotFoundError)
    message = str(info.value)
    assert "con_9999" in message and "crm_search_contacts" in message
    assert not message.startswith("'")  # not KeyError's quoted repr


def test_bad_input_raises_a_clear_value_error(catalog: ToolCatalog) -> None:
    with pytest.raises(ValueError, match="only 900 USD minor units remain"):
        _run(catalog.get("payments_refund_charge"), {"charge_id": "ch_0002", "amount": 10**6})
    with pytest.raises(ValueError, match="Only read-only SELECT"):
        _run(catalog.get("analytics_run_sql_query"), {"sql": "DROP TABLE events"})


SEARCHES = [
    ("refund a customer's payment", "payments_refund_charge"),
    ("send an email to my team", "email_send_email"),
    ("schedule a meeting with Maya next week", "calendar_create_event"),
    ("find a contact by email address", "crm_search_contacts"),
    ("why did the CI build fail", "code_hosting_get_workflow_logs"),
    ("read the application log file", "files_read_file"),
    ("search the web for python release notes", "web_search_search_web"),
    ("how many users signed up by country", "analytics_count_events"),
    ("delete a file from the drive", "files_delete_file"),
    ("open a pull request", "code_hosting_create_pull_request"),
    ("cancel a subscription", "payments_cancel_subscription"),
    ("share a document with a colleague", "files_share_file"),
    ("find free time for a meeting", "calendar_find_free_slots"),
    ("what is the weather in Lisbon", "web_search_get_weather_forecast"),
    ("move a deal to closed won", "crm_update_deal_stage"),
]


@pytest.mark.parametrize(("request_text", "expected"), SEARCHES)
def test_search_finds_sensible_tools(
    catalog: ToolCatalog, request_text: str, expected: str
) -> None:
    top = [hit.name for hit in catalog.search(request_text, limit=3)]
    assert expected in top, top


def test_search_for_a_request_needing_two_tools(catalog: ToolCatalog) -> None:
    hits = catalog.search(["read the application log file", "send an email to my team"], limit=4)
    names = [h.name for h in hits]
    assert "files_read_file" in names and "email_send_email" in names


def test_demo_schemas_are_plain_json_and_load_back(catalog: ToolCatalog) -> None:
    schemas = demo_schemas()
    assert json.loads(json.dumps(schemas)) == schemas
    assert [s["name"] for s in schemas] == catalog.names()
    assert all("handler" not in s for s in schemas)
    loaded = ToolCatalog()
    report = loaded.add_schemas(schemas)
    assert len(report.added) == len(catalog) and not report.skipped
    for tool in loaded:
        original = catalog.get(tool.name)
        assert (tool.domain, tool.group, tool.keywords) == (
            original.domain,
            original.group,
            original.keywords,
        )
        assert tool.parameters == original.parameters
        assert tool.annotations == original.annotations
        assert tool.defer_loading == original.defer_loading
        assert tool.handler is None
    assert loaded.definition_tokens() == catalog.definition_tokens()


def test_python_dash_m_prints_the_schemas(
    catalog: ToolCatalog, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolmgmt_demo import _main

    _main()
    printed = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in printed] == catalog.names()


def test_state_flows_between_tools_of_one_domain(catalog: ToolCatalog) -> None:
    reply = catalog.get("email_reply_to_email").handler
    thread = catalog.get("email_get_thread").handler
    get = catalog.get("email_get_email").handler
    assert reply is not None and thread is not None and get is not None
    original = get(message_id="msg_0002")
    receipt = asyncio.run(reply(message_id="msg_0002", body="Paid today, thanks."))
    assert receipt["thread_id"] == original["thread_id"]
    messages = thread(thread_id=original["thread_id"])["messages"]
    assert messages[-1]["body"] == "Paid today, thanks."
    assert messages[-1]["subject"] == f"Re: {original['subject']}"


def test_results_match_their_output_schemas(catalog: ToolCatalog) -> None:
    checked = 0
    for tool in catalog:
        if tool.output_schema is None:
            continue
        result = _run(tool, example_arguments(tool))
        jsonschema.validate(result, tool.output_schema)
        checked += 1
    assert checked >= 3
