"""Search that learns from use: ToolCatalog.learn / forget / explain_search, its bounds and its
safety rules (off by default, two conversations per term, redaction, policy first)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.bfcl import bfcl_dir, bfcl_missing
from support.embedders import HashingEmbedder

from toolmgmt_core import Tool, ToolCatalog
from toolmgmt_core.catalog.learning import LearningOptions, conversation_digest, redact
from toolmgmt_core.catalog.learning_store import LearnedFile
from toolmgmt_core.model.errors import ConfigError
from toolmgmt_demo import demo_tools

VICTIM = "I need to get my money back for a broken order"
"""A request whose top 5 a hostile client tries to get a tool into."""
INTRUDER = "files_delete_file"
"""The tool it pushes (unrelated to refunds)."""


def _catalog(**options: object) -> ToolCatalog:
    return ToolCatalog(demo_tools(), learning=LearningOptions(**options))  # type: ignore[arg-type]


def _names(catalog: ToolCatalog, query: str, limit: int = 5, **kw: object) -> list[str]:
    return [h.name for h in catalog.search(query, limit, **kw)]  # type: ignore[arg-type]


def test_learning_is_off_by_default() -> None:
    catalog = ToolCatalog(demo_tools())
    assert catalog.learning is None and catalog.learned() == []
    with pytest.raises(ConfigError, match="LearningOptions"):
        catalog.learn([("refund my order", "payments_refund_charge", "c1")])
    with pytest.raises(ConfigError, match="off by default"):
        catalog.forget()
    with pytest.raises(ConfigError, match="LearningOptions"):
        ToolCatalog(learning={"store": "x"})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="min_conversations"):
        LearningOptions(min_conversations=0)


def test_a_learned_request_moves_its_tool_once_two_conversations_taught_it() -> None:
    catalog = _catalog()
    request = "my parcel never arrived, sort it out"
    assert "payments_refund_charge" not in _names(catalog, request)
    report = catalog.learn([("the parcel never arrived", "payments_refund_charge", "c1")])
    assert [r.tool for r in report.learned] == ["payments_refund_charge"]
    assert catalog.learned_terms("payments_refund_charge") == {}  # one conversation: nothing
    assert "payments_refund_charge" not in _names(catalog, request)
    catalog.learn([("my parcel never arrived!", "payments_refund_charge", "c2")])
    assert catalog.learned_terms("payments_refund_charge") == {
        "parcel": 2,
        "never": 2,
        "arriv": 2,
    }
    assert _names(catalog, request)[0] == "payments_refund_charge"
    explained = catalog.explain_search(request)
    assert explained[0].name == "payments_refund_charge" and explained[0].moved
    assert set(explained[0].learned_terms) == {"parcel", "never", "arriv"}
    assert explained[0].rank_without_learning is None or explained[0].rank_without_learning > 1
    assert explained[0].to_dict()["learned_terms"]
    catalog.forget("payments_refund_charge")
    assert "payments_refund_charge" not in _names(catalog, request)


def test_one_hostile_conversation_cannot_push_a_tool_into_another_requests_top_5() -> None:
    catalog = _catalog()
    before = catalog.search(VICTIM)
    assert INTRUDER not in [h.name for h in before]
    pairs = [(f"{VICTIM} money back refund order {i}", INTRUDER, "hostile") for i in range(1000)]
    report = catalog.learn(pairs)
    assert len(catalog.learned(INTRUDER)) <= catalog.learning.max_per_conversation  # type: ignore[union-attr]
    assert report.ignored  # the rest made room or were duplicates
    assert catalog.learned_terms(INTRUDER) == {}
    assert catalog.search(VICTIM) == before  # not moved at all
    # the rule, not chance, is what stopped it: a second conversation crosses it
    catalog.learn([(f"{VICTIM} money back refund order", INTRUDER, "second")])
    assert INTRUDER in _names(catalog, VICTIM)
    assert catalog.forget(conversation="second") == 1
    assert catalog.search(VICTIM) == before


def test_pairs_without_a_conversation_count_as_one_each_but_not_twice() -> None:
    catalog = _catalog()
    catalog.learn([("zebra feeding plan", "files_read_file")] * 3)
    assert len(catalog.learned("files_read_file")) == 1  # duplicates of an anonymous pair
    catalog.learn([("zebra feeding schedule", "files_read_file")])
    assert catalog.learned_terms("files_read_file") == {"zebra": 2, "feed": 2}


def test_the_report_says_what_was_ignored_and_why() -> None:
    catalog = _catalog()
    report = catalog.learn(
        [
            ("refund it", "no_such_tool", "c1"),
            ("refund it",),  # type: ignore[list-item]
            (42, "payments_refund_charge"),  # type: ignore[list-item]
            ("   ", "payments_refund_charge", "c1"),
            ("bob@example.com 12345678", "payments_refund_charge", "c1"),
            ("refund it", "payments_refund_charge", 7),  # type: ignore[list-item]
            ("refund it", "payments_refund_charge", "c1"),
            ("refund it", "payments_refund_charge", "c1"),
        ]
    )
    reasons = {position: reason for position, _, reason in report.ignored}
    assert "no tool of this name" in reasons[0]
    assert "not a pair" in reasons[1]
    assert "must be strings" in reasons[2]
    assert "no search term" in reasons[3] and "no search term" in reasons[4]
    assert "conversation id" in reasons[5]
    assert "duplicate" in reasons[7]
    assert [r.text for r in report.learned] == ["refund it"]
    assert json.dumps(report.to_dict())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("write to ann.lee+x@mail.example.org now", "write to <email> now"),
        ("see https://example.com/a?b=1 and www.test.io", "see <url> and <url>"),
        ("call +1 (415) 555-0100 or 4111 1111 1111 1111", "call <number> or <number>"),
        ("book 3 rooms for 2 nights in 2026", "book 3 rooms for 2 nights in 2026"),
        ("account 12345678", "account <number>"),
    ],
)
def test_redaction(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_what_is_kept_is_redacted_cut_and_the_conversation_digested() -> None:
    catalog = _catalog(max_request_chars=40)
    text = "User: email jo@example.com the invoice 99887766 " + "please " * 30
    catalog.learn([(text, "payments_refund_charge", "conversation-1")])
    (kept,) = catalog.learned("payments_refund_charge")
    assert "jo@example.com" not in kept.text and "99887766" not in kept.text
    assert kept.text.startswith("email <email> the invoice <number>")
    assert len(kept.text) <= 40
    assert kept.conversation == conversation_digest("conversation-1") != "conversation-1"
    terms = catalog.search_engine.learned.counts("payments_refund_charge")  # type: ignore[union-attr]
    assert "number" not in terms and terms["email"] == 1  # a word of the request, not <email>


def test_bounds_per_tool_and_per_conversation() -> None:
    catalog = _catalog(max_per_tool=5, max_per_conversation=2)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
    catalog.learn([(f"request {w}", "files_read_file", "same") for w in words[:4]])
    assert [r.text for r in catalog.learned("files_read_file")] == [
        "request charlie",
        "request delta",
    ]
    catalog.learn([(f"another {w}", "files_read_file", f"c{w}") for w in words])
    kept = catalog.learned("files_read_file")
    assert [r.text for r in kept] == [f"another {w}" for w in words[4:]]


def test_a_hidden_or_denied_tool_never_learns_nor_surfaces_through_what_was_learned() -> None:
    catalog = _catalog()
    hidden = "files_delete_file"

    def visible(tool: Tool) -> bool:
        return tool.name != hidden

    request = "get rid of the quarterly spreadsheet"
    report = catalog.learn([(request, hidden, "c1"), (request, hidden, "c2")], where=visible)
    assert not report.learned and all("not permitted" in r for *_, r in report.ignored)
    # taught while visible elsewhere (another profile), then hidden here
    catalog.learn([(request, hidden, "c1"), (f"{request} now", hidden, "c2")])
    assert _names(catalog, request)[0] == hidden
    assert hidden not in _names(catalog, request, 20, where=visible)
    assert hidden not in [h.name for h in catalog.explain_search(request, 20, where=visible)]
    assert hidden not in catalog.suggest("quarterly spreadsheet", 20, where=visible)
    assert hidden not in catalog.suggest("files_delete_fil", 20, where=visible)


def test_with_nothing_learned_every_ranking_is_todays_demo() -> None:
    plain, learning = ToolCatalog(demo_tools()), _catalog()
    requests = [t.description for t in demo_tools()] + [VICTIM, "book a flight and email it"]
    for request in requests:
        assert learning.search(request, 10) == plain.search(request, 10)
    learning.learn([(VICTIM, INTRUDER, "c1"), (VICTIM, INTRUDER, "c2")])
    learning.forget()
    assert all(learning.search(r, 10) == plain.search(r, 10) for r in requests)


@pytest.mark.parametrize("split", ["dev", "live"])
def test_with_nothing_learned_every_ranking_is_todays_on_the_bfcl_pools(split: str) -> None:
    missing = bfcl_missing(split)  # type: ignore[arg-type]
    if missing is not None:
        pytest.skip(str(missing))
    folder = bfcl_dir(split)  # type: ignore[arg-type]
    pool = json.loads((folder / "bfcl_pool.json").read_text(encoding="utf-8"))["tools"]
    queries = json.loads((folder / "bfcl_queries.json").read_text(encoding="utf-8"))["queries"]
    plain, learning = ToolCatalog(), ToolCatalog(learning=LearningOptions())
    for catalog in (plain, learning):
        catalog.add_schemas(pool, on_error="skip")
    for q in queries:
        assert learning.search(q["query"], 10) == plain.search(q["query"], 10), q["id"]


def test_hybrid_search_learns_and_is_unchanged_with_nothing_learned() -> None:
    embedder = HashingEmbedder()
    plain = ToolCatalog(demo_tools(), embedder=embedder)
    learning = ToolCatalog(demo_tools(), embedder=embedder, learning=LearningOptions())
    request = "my parcel never arrived, sort it out"
    assert learning.search(request, 10) == plain.search(request, 10)
    learning.learn(
        [
            ("the parcel never arrived", "payments_refund_charge", "c1"),
            ("parcel never arrived", "payments_refund_charge", "c2"),
        ]
    )
    assert _names(learning, request)[0] == "payments_refund_charge"
    assert "payments_refund_charge" not in _names(plain, request)


def test_a_file_keeps_what_was_learned_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "learned.sqlite"
    first = _catalog(store=path)
    first.learn(
        [
            ("the parcel never arrived", "payments_refund_charge", "c1"),
            ("parcel never arrived", "payments_refund_charge", "c2"),
            ("zebra", "files_read_file", "c1"),
        ]
    )
    second = _catalog(store=str(path))
    assert [r.to_dict() for r in second.learned()] == [r.to_dict() for r in first.learned()]
    assert all(r.id > 0 for r in second.learned())
    assert _names(second, "parcel never arrived")[0] == "payments_refund_charge"
    second.forget("payments_refund_charge")
    assert [r.tool for r in LearnedFile(path).load()] == ["files_read_file"]
    assert [r.tool for r in _catalog(store=path).learned()] == ["files_read_file"]


def test_the_file_is_bounded_too(tmp_path: Path) -> None:
    path = tmp_path / "learned.sqlite"
    catalog = _catalog(store=path, max_per_tool=3)
    words = ["alpha", "bravo", "charlie", "delta", "echo"]
    catalog.learn([(f"request {w}", "files_read_file", f"c{w}") for w in words])
    assert [r.text for r in LearnedFile(path).load()] == [f"request {w}" for w in words[2:]]


def test_a_word_too_many_tools_learned_moves_none_of_them() -> None:
    catalog = _catalog()
    names = [t.name for t in demo_tools()]
    teach = [(f"zebra {w}", name, c) for name in names[:5] for w, c in (("one", "a"), ("two", "b"))]
    catalog.learn(teach)
    assert set(_names(catalog, "zebra", 10)) == set(names[:5])
    # past a share of the catalog, the word says nothing of any tool (and would cost time)
    teach = [
        (f"zebra {w}", name, c) for name in names[5:30] for w, c in (("one", "a"), ("two", "b"))
    ]
    catalog.learn(teach)
    assert catalog.learned_terms(names[0])["zebra"] == 2
    assert catalog.search("zebra") == []
