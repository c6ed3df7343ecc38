"""End to end on the demo catalog: a scripted model works through each mode, slips included.

Each script is what a model would do in a conversation: look at its tool list, call tools,
read results, and recover from its own mistakes (wrong names, wrong arguments, arguments sent as
JSON strings) and from a tool that fails. The tool list it would receive is checked at each
step, and must only ever grow by appending.
"""

from __future__ import annotations

import json

import pytest

import toolmgmt_demo as demo
from toolmgmt_core import Auto, Search, ToolManager, ToolSession

NEW_CONTACT = {"first_name": "Ada", "last_name": "Lovelace", "email": "ada@example.com"}
STRINGIFIED = {
    **NEW_CONTACT,
    "tags": '["vip", "engine"]',
    "address": json.dumps({"city": "London", "country": "GB"}),
}


class Model:
    """A scripted model: makes calls through a session and keeps the tool lists it was sent."""

    def __init__(self, session: ToolSession) -> None:
        self.session = session
        self.sent: list[list[dict]] = [self._snapshot()]

    def _snapshot(self) -> list[dict]:
        return [t.to_dict(full=False) for t in self.session.tools()]

    def call(self, name: str, arguments=None):
        result = self.session.call_sync(name, arguments)
        now = self._snapshot()
        assert now[: len(self.sent[-1])] == self.sent[-1], "the tool list only grows by appending"
        self.sent.append(now)
        assert isinstance(result.to_message(), str) and result.to_message()
        return result

    @property
    def names(self) -> list[str]:
        return [t["name"] for t in self.sent[-1]]


@pytest.fixture
def catalog():
    return demo.demo_catalog()


@pytest.fixture(scope="module")
def shared_catalog():
    """One demo catalog for read-only tests (building one takes most of a second)."""
    return demo.demo_catalog()


def test_search_mode_conversation(catalog) -> None:
    model = Model(ToolManager(catalog, mode="search").session())
    pinned = [t.name for t in catalog if t.defer_loading is False]
    assert model.names == ["tool_search", "call_tool", *pinned]
    first = model.sent[-1]

    # Calls a tool it has not found: told to search first.
    early = model.call("crm_create_contact", NEW_CONTACT)
    assert early.error.code == "tool_not_loaded" and "tool_search" in early.error.message

    found = model.call("tool_search", {"query": "create a new contact in the crm"})
    schema = found.value["found"]["crm_create_contact"]["parameters"]
    assert schema["required"] == ["first_name", "last_name", "email"]

    # Wrong arguments through call_tool, then stringified nested arguments.
    wrong = model.call(
        "call_tool", {"tool_name": "crm_create_contact", "arguments": {"first_name": "Ada"}}
    )
    assert wrong.error.code == "invalid_arguments"
    assert "last_name: required field is missing" in wrong.error.message
    created = model.call("call_tool", {"tool_name": "crm_create_contact", "arguments": STRINGIFIED})
    assert not created.is_error, created.content
    contact_id = created.value["id"]

    # A found tool called directly (a provider's native deferral loads it) runs too.
    model.call("tool_search", {"queries": ["get a contact by id", "create a new contact"]})
    fetched = model.call("crm_get_contact", {"contact_id": contact_id})
    assert fetched.value["tags"] == ["vip", "engine"]

    # A wrong name gets the closest names.
    typo = model.call("call_tool", {"tool_name": "crm_create_contacts", "arguments": NEW_CONTACT})
    assert typo.error.code == "unknown_tool" and "crm_create_contact" in typo.error.suggestions

    assert all(sent == first for sent in model.sent), "one tool list for the whole conversation"
    restored = ToolManager(catalog, mode="search").session(model.session.to_json())
    assert restored.loaded() == model.session.loaded()
    assert not restored.call_sync("crm_get_contact", {"contact_id": contact_id}).is_error


def test_growing_search_mode_conversation(catalog) -> None:
    model = Model(ToolManager(catalog, mode=Search(appends=True)).session())
    pinned = [t.name for t in catalog if t.defer_loading is False]
    assert model.names == ["tool_search", *pinned]

    # Calls a tool it has not loaded: told to search first.
    early = model.call("crm_create_contact", NEW_CONTACT)
    assert early.error.code == "tool_not_loaded" and "tool_search" in early.error.message

    found = model.call("tool_search", {"query": "create a new contact in the crm"})
    assert "crm_create_contact" in found.value["added"]
    assert "crm_create_contact" in model.names

    # Wrong arguments, then stringified nested arguments.
    wrong = model.call("crm_create_contact", {"first_name": "Ada"})
    assert wrong.error.code == "invalid_arguments"
    assert "last_name: required field is missing" in wrong.error.message
    created = model.call("crm_create_contact", STRINGIFIED)
    assert not created.is_error, created.content
    contact_id = created.value["id"]

    # A wrong name gets the closest loaded or catalog names.
    typo = model.call("crm_create_contacts", NEW_CONTACT)
    assert typo.error.code == "unknown_tool" and "crm_create_contact" in typo.error.suggestions

    model.call("tool_search", {"queries": ["get a contact by id", "create a new contact"]})
    fetched = model.call("crm_get_contact", {"contact_id": contact_id})
    assert fetched.value["tags"] == ["vip", "engine"]
    assert fetched.value["address"]["city"] == "London"

    # A handler that raises is a tool error; the session carries on.
    missing = model.call("crm_get_contact", {"contact_id": "con_9999"})
    assert missing.error.kind == "tool" and "con_9999" in missing.error.message
    assert not model.call("crm_get_contact", {"contact_id": contact_id}).is_error

    # An async handler, with a list sent as a JSON string.
    sent = model.call(
        "email_send_email", {"to": '["ada@example.com"]', "subject": "Hi", "body": "Welcome."}
    )
    assert not sent.is_error, sent.content

    restored = ToolManager(catalog, mode=Search(appends=True)).session(model.session.to_json())
    assert [t.name for t in restored.tools()] == model.names


def test_gateway_mode_conversation(catalog) -> None:
    model = Model(ToolManager(catalog, mode="gateway").session())
    assert model.names[:3] == ["discover_tools", "get_tool_schema", "execute_tool"]

    toc = model.call("discover_tools", {}).value["domains"]
    assert set(toc) == set(demo.DEMO_DOMAINS)
    crm = model.call("discover_tools", {"domain": "crm"}).value
    assert "crm_create_contact" in crm["groups"]["contacts"]
    wrong_group = model.call("discover_tools", {"domain": "crm", "group": "people"})
    assert "Valid groups:" in wrong_group.error.message and "contacts" in wrong_group.error.message

    schema = model.call("get_tool_schema", {"tool_name": "crm_create_contact"}).value
    assert schema["parameters"]["required"] == ["first_name", "last_name", "email"]

    bad_country = {**NEW_CONTACT, "address": {"city": "Berlin", "country": "Germany"}}
    wrong = model.call(
        "execute_tool", {"tool_name": "crm_create_contact", "arguments": bad_country}
    )
    assert wrong.error.code == "invalid_arguments" and "address.country" in wrong.error.message
    created = model.call(
        "execute_tool",
        {"tool_name": "crm_create_contact", "arguments": json.dumps(STRINGIFIED)},
    )
    assert not created.is_error, created.content
    assert created.tool_name == "crm_create_contact"

    typo = model.call("execute_tool", {"tool_name": "crm_get_contacts", "arguments": {}})
    assert typo.error.code == "unknown_tool" and "crm_get_contact" in typo.error.suggestions
    raised = model.call(
        "execute_tool", {"tool_name": "crm_get_contact", "arguments": {"contact_id": "nope"}}
    )
    assert raised.error.kind == "tool"
    fetched = model.call(
        "execute_tool",
        {"tool_name": "crm_get_contact", "arguments": {"contact_id": created.value["id"]}},
    )
    assert fetched.value["address"] == {"city": "London", "country": "GB"}
    assert all(len(sent) == len(model.sent[0]) for sent in model.sent), "the list never changes"


def test_lazy_mode_conversation(catalog) -> None:
    model = Model(ToolManager(catalog, mode="lazy").session())
    stubs = [t for t in model.sent[0] if t["name"] == "crm_create_contact"]
    assert stubs and stubs[0]["parameters"] == {"type": "object", "properties": {}}

    # Guesses the arguments without loading the schema: told where to find them.
    guessed = model.call("crm_create_contact", {"name": "Ada Lovelace"})
    assert guessed.error.code == "invalid_arguments"
    assert "load_tool_schema(tool_names=['crm_create_contact'])" in guessed.error.message

    empty = model.call("load_tool_schema", {"tool_names": []})
    assert empty.is_error and "tool_names" in empty.error.message
    loaded = model.call(
        "load_tool_schema", {"tool_names": ["crm_create_contact", "crm_get_contct"]}
    )
    assert [t["name"] for t in loaded.value["tools"]] == ["crm_create_contact"]
    assert "crm_get_contact" in loaded.value["errors"]["crm_get_contct"]

    created = model.call("crm_create_contact", STRINGIFIED)
    assert not created.is_error, created.content
    raised = model.call("crm_get_contact", {"contact_id": "con_0000"})
    assert raised.error.kind == "tool"
    assert model.call("crm_get_contact", {"contact_id": created.value["id"]}).value["tags"] == [
        "vip",
        "engine",
    ]


def test_auto_mode_on_the_demo(catalog) -> None:
    flat_tokens = catalog.definition_tokens()
    deferred = ToolManager(catalog, mode=Auto(context_window=flat_tokens * 5)).session()
    assert deferred.mode == "search"
    assert deferred.usage().definition_tokens < flat_tokens * 0.1
    roomy = ToolManager(catalog, mode=Auto(context_window=flat_tokens * 20)).session()
    assert roomy.mode == "flat"
    assert len(roomy.tools()) == len(catalog)
    created = roomy.call_sync("crm_create_contact", STRINGIFIED)
    assert not created.is_error, created.content


def test_meta_tool_answers_stay_short_whatever_the_model_sends(shared_catalog) -> None:
    # A model's slip (a pasted document as a name or query) is echoed clipped, never resent.
    big = "q" * 20_000
    attempts = {
        "search": [
            ("tool_search", {"query": big}),
            ("tool_search", {"queries": [big, big, big]}),
            (big, {}),
        ],
        "gateway": [
            ("discover_tools", {"domain": big}),
            ("discover_tools", {"domain": "email", "group": big}),
            ("get_tool_schema", {"tool_names": [f"{i}{big}" for i in range(50)]}),
            ("execute_tool", {"tool_name": big}),
        ],
        "lazy": [
            ("load_tool_schema", {"tool_names": [big]}),
            ("load_tool_schema", {"tool_names": [f"missing_{i}" for i in range(2000)]}),
        ],
    }
    for mode, calls in attempts.items():
        session = ToolManager(shared_catalog, mode).session()
        for name, arguments in calls:
            result = session.call_sync(name, arguments)
            assert result.tokens < 200, f"{mode} {name[:20]}: {result.content[:200]}"
    many = ToolManager(shared_catalog, "lazy").session()
    names = ["crm_create_contact", *(f"missing_{i}" for i in range(20))]
    answer = many.call_sync("load_tool_schema", {"tool_names": names}).value
    assert [t["name"] for t in answer["tools"]] == ["crm_create_contact"]
    assert len(answer["errors"]) == 4 and answer["errors"]["…"].startswith("17 more")


@pytest.mark.parametrize("name", [call[0] for call in demo.LARGE_RESULT_CALLS])
def test_large_results_come_back_as_results(shared_catalog, name) -> None:
    arguments = dict(demo.LARGE_RESULT_CALLS)[name]
    session = ToolManager(shared_catalog, mode="gateway").session()
    result = session.call_sync("execute_tool", {"tool_name": name, "arguments": arguments})
    assert not result.is_error, result.content
    assert result.tokens > 0 and result.tool_name == name


def test_tool_search_caps_how_many_needs_one_call_searches() -> None:
    from toolmgmt_core import ToolManager
    from toolmgmt_demo import demo_catalog

    session = ToolManager(demo_catalog(), mode="search").session()
    before = len(session.tools())
    many = session.call_sync("tool_search", {"queries": [f"need {i}" for i in range(151)]})
    assert many.is_error and "queries: expected at most 8 items, got 151" in many.content
    assert len(session.tools()) == before  # nothing was loaded
    fine = session.call_sync("tool_search", {"queries": ["refund a payment", "send an email"]})
    assert not fine.is_error
