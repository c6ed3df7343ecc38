"""Search that learns from use: ToolCatalog.learn / forget / explain_search, its bounds and its
safety rules (off by default, principals not conversations, bounded influence, nothing private
kept, eviction by principal, policy first)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.bfcl import bfcl_dir, bfcl_missing
from support.embedders import HashingEmbedder

from toolmgmt_core import Tool, ToolCatalog
from toolmgmt_core._learning.store import LearnedFile
from toolmgmt_core._learning.teaching import LearningOptions, redact
from toolmgmt_core._model.errors import ConfigError
from toolmgmt_demo import demo_tools

VICTIM = "I need to get my money back for a broken order"
"""A request whose top 5 a hostile client tries to get a tool into."""
INTRUDER = "files_delete_file"
"""The tool it pushes (unrelated to refunds, and destructive)."""
REQUEST = "my parcel never arrived, sort out the charge"
TOOL = "payments_list_refunds"
"""A tool the request already reaches (7th), that users who said it wanted."""


def _catalog(**options: object) -> ToolCatalog:
    return ToolCatalog(demo_tools(), learning=LearningOptions(**options))  # type: ignore[arg-type]


def _names(catalog: ToolCatalog, query: str, limit: int = 5, **kw: object) -> list[str]:
    return [h.name for h in catalog.search(query, limit, **kw)]  # type: ignore[arg-type]


def _teach(
    catalog: ToolCatalog,
    principals: list[str],
    text: str = "the parcel never arrived",
    tool: str = TOOL,
    source: str = "use",
) -> None:
    catalog.learn([(text, tool, f"conversation-{p}", p) for p in principals], source=source)


def test_learning_is_off_by_default() -> None:
    catalog = ToolCatalog(demo_tools())
    assert catalog.learning is None and catalog.learned() == []
    with pytest.raises(ConfigError, match="LearningOptions"):
        catalog.learn([("refund my order", "payments_refund_charge", "c1")])
    with pytest.raises(ConfigError, match="off by default"):
        catalog.forget()
    with pytest.raises(ConfigError, match="LearningOptions"):
        ToolCatalog(learning={"store": "x"})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="min_principals"):
        LearningOptions(min_principals=0)
    with pytest.raises(ConfigError, match="destructive"):
        LearningOptions(destructive="yes")  # type: ignore[arg-type]


def test_a_learned_request_moves_its_tool_once_three_principals_taught_it() -> None:
    catalog = _catalog()
    assert _names(catalog, REQUEST)[0] != TOOL
    _teach(catalog, ["ann", "bob"])
    assert catalog.learned_terms(TOOL) == {}  # two principals: nothing
    assert [r.text for r in catalog.learned(TOOL)] == ["", ""]  # and nothing shown
    assert _names(catalog, REQUEST)[0] != TOOL
    _teach(catalog, ["cid"], "my parcel never arrived!")
    assert catalog.learned_terms(TOOL) == {"parcel": 3, "never": 3, "arriv": 3}
    assert _names(catalog, REQUEST)[0] == TOOL
    assert [r.text for r in catalog.learned(TOOL)][-1] == "parcel never arrived"
    explained = catalog.explain_search(REQUEST)
    assert explained[0].name == TOOL and explained[0].moved
    assert set(explained[0].learned_terms) == {"parcel", "never", "arriv"}
    assert explained[0].rank_without_learning is not None
    assert explained[0].rank_without_learning > 1
    assert catalog.forget(principal="cid") == 1
    assert _names(catalog, REQUEST)[0] != TOOL
    catalog.forget(TOOL)
    assert catalog.learned(TOOL) == []


def test_one_principal_with_a_thousand_conversations_cannot_move_a_tool() -> None:
    catalog = _catalog(destructive=True)
    before = catalog.search(VICTIM)
    pairs = [
        (f"{VICTIM} money back refund order {i}", INTRUDER, f"c{i}", "mallory") for i in range(1000)
    ]
    report = catalog.learn(pairs, source="use")
    assert len(catalog.learned(INTRUDER)) <= catalog.learning.max_per_principal  # type: ignore[union-attr]
    assert report.ignored or len(report.learned) == 1000
    assert catalog.learned_terms(INTRUDER) == {}
    assert catalog.search(VICTIM) == before


def test_pairs_without_a_principal_count_as_one_anonymous_principal() -> None:
    catalog = _catalog()
    for i, word in enumerate(["alpha", "bravo", "charlie", "delta", "echo"]):
        catalog.learn([(f"the parcel never arrived {word}", TOOL, f"c{i}")], source="use")
    assert catalog.learned_terms(TOOL) == {}
    assert len(catalog.learned(TOOL)) == 2  # the anonymous principal's quota
    # an import (an operator's act) counts its conversation ids as principals
    catalog.learn([("the parcel never arrived", TOOL, f"import-{i}") for i in range(3)])
    assert catalog.learned_terms(TOOL)["parcel"] == 4


def test_the_report_says_what_was_ignored_and_why() -> None:
    catalog = _catalog()
    report = catalog.learn(
        [
            ("refund it", "no_such_tool", "c1"),
            ("refund it",),  # type: ignore[list-item]
            (42, "payments_get_charge"),  # type: ignore[list-item]
            ("   ", "payments_get_charge", "c1"),
            ("bob@example.com 12345678", "payments_get_charge", "c1"),
            ("refund it", "payments_get_charge", 7),  # type: ignore[list-item]
            ("refund it", "payments_get_charge", "c1"),
            ("refund it", "payments_get_charge", "c1"),
            ("refund it", "payments_refund_charge", "c1"),
            ("refund it", "payments_get_charge", "c1", ""),
        ]
    )
    reasons = {position: reason for position, _, reason in report.ignored}
    assert "no tool of this name" in reasons[0]
    assert "not a pair" in reasons[1]
    assert "must be strings" in reasons[2]
    assert "no search term" in reasons[3] and "no search term" in reasons[4]
    assert "conversation id" in reasons[5]
    assert "duplicate" in reasons[7]
    assert "destructive" in reasons[8]
    assert "principal" in reasons[9]
    assert len(report.learned) == 1
    assert json.dumps(report.to_dict())


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("write to ann.lee+x@mail.example.org now", "write to <email> now"),
        ("see https://example.com/a?b=1 and www.test.io", "see <url> and <url>"),
        ("call +1 (415) 555-0100 or 4111 1111 1111 1111", "call <number> or <card>"),
        ("book 3 rooms for 2 nights in 2026", "book 3 rooms for 2 nights in 2026"),
        ("account 12345678", "account <number>"),
        ("refund john smith at 221b baker street london", "refund <name> at <address> london"),
        ("use sk-live-4f9a8b7c6d5e4f3a and ghp_abcdEFGH12345678", "use <secret> and <secret>"),
        ("slack xoxb-123456-abcdef, aws AKIAIOSFODNN7EXAMPLE", "slack <secret>, aws <secret>"),
        ("my password is swordfish, cvv 123", "my password <secret>, cvv <secret>"),
        ("pay GB29 NWBK 6016 1331 9268 19 for mr jones", "pay <iban> for <name>"),
        ("token aGVsbG8gd29ybGQ1234abcd", "token <secret>"),
        (
            "reset my password for gmail and pin the message",
            "reset my password for gmail and pin the message",
        ),
    ],
)
def test_redaction(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_what_is_kept_is_terms_redacted_cut_and_digested() -> None:
    catalog = _catalog(max_request_chars=40)
    text = "User: email jo@example.com the invoice 99887766 " + "please " * 30
    catalog.learn([(text, TOOL, "conversation-1")])
    (kept,) = catalog._learning.requests.requests(TOOL)  # type: ignore[union-attr]
    assert "jo@example.com" not in kept.text and "99887766" not in kept.text
    assert "email" not in kept.text.split()  # one principal: digests only
    assert all(word.startswith("#") for word in kept.text.split())
    key = catalog._learning.key  # type: ignore[union-attr]
    assert kept.conversation == key.conversation("conversation-1") != "conversation-1"


def test_bounds_per_tool_and_per_principal() -> None:
    catalog = _catalog(max_per_tool=5, max_per_principal=2)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
    catalog.learn([(f"request {w}", "files_read_file", f"c-{w}", "same") for w in words[:4]])
    held = catalog._learning.requests.requests("files_read_file")  # type: ignore[union-attr]
    assert len(held) == 2
    catalog.learn([(f"another {w}", "files_read_file", f"c{w}") for w in words])
    held = catalog._learning.requests.requests("files_read_file")  # type: ignore[union-attr]
    assert len(held) == 5 and len({r.teacher for r in held}) == 5


def test_a_hidden_or_denied_tool_never_learns_nor_surfaces_through_what_was_learned() -> None:
    catalog = _catalog()
    hidden = TOOL

    def visible(tool: Tool) -> bool:
        return tool.name != hidden

    report = catalog.learn(
        [("the parcel never arrived", hidden, f"c{i}") for i in range(3)], where=visible
    )
    assert not report.learned and all("not permitted" in r for *_, r in report.ignored)
    # taught while visible elsewhere (another profile), then hidden here
    _teach(catalog, ["a", "b", "c"])
    assert _names(catalog, REQUEST)[0] == hidden
    assert hidden not in _names(catalog, REQUEST, 20, where=visible)
    assert hidden not in [h.name for h in catalog.explain_search(REQUEST, 20, where=visible)]


def test_with_nothing_learned_every_ranking_is_todays_demo() -> None:
    plain, learning = ToolCatalog(demo_tools()), _catalog()
    requests = [t.description for t in demo_tools()] + [VICTIM, "book a flight and email it"]
    for request in requests:
        assert learning.search(request, 10) == plain.search(request, 10)
    _teach(learning, ["a", "b", "c"])
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
    assert learning.search(REQUEST, 10) == plain.search(REQUEST, 10)
    _teach(learning, ["a", "b", "c"])
    assert _names(learning, REQUEST)[0] == TOOL
    assert _names(plain, REQUEST)[0] != TOOL


def test_a_file_keeps_what_was_learned_across_processes(tmp_path: Path) -> None:
    path = tmp_path / "learned.sqlite"
    first = _catalog(store=path)
    _teach(first, ["a", "b", "c"])
    first.learn([("zebra", "files_read_file", "c1")])
    second = _catalog(store=str(path))
    assert [r.to_dict() for r in second.learned()] == [r.to_dict() for r in first.learned()]
    assert all(r.id > 0 for r in second.learned())
    assert _names(second, REQUEST)[0] == TOOL
    second.forget(TOOL)
    assert [r.tool for r in LearnedFile(path).load()] == ["files_read_file"]
    assert [r.tool for r in _catalog(store=path).learned()] == ["files_read_file"]


def test_the_file_is_bounded_too(tmp_path: Path) -> None:
    path = tmp_path / "learned.sqlite"
    catalog = _catalog(store=path, max_per_tool=3)
    words = ["alpha", "bravo", "charlie", "delta", "echo"]
    catalog.learn([(f"request {w}", "files_read_file", f"c{w}") for w in words])
    assert len(LearnedFile(path).load()) == 3


def test_a_word_too_many_tools_learned_moves_none_of_them() -> None:
    catalog = _catalog()
    names = [t.name for t in demo_tools() if not t.annotations.destructive]
    teach = [
        (f"zebra {w}", name, c)
        for name in names[:5]
        for w, c in (("one", "a"), ("two", "b"), ("three", "c"))
    ]
    catalog.learn(teach)
    assert catalog.learned_terms(names[0])["zebra"] == 3
    teach = [
        (f"zebra {w}", name, c)
        for name in names[5:30]
        for w, c in (("one", "a"), ("two", "b"), ("three", "c"))
    ]
    catalog.learn(teach)
    # past a share of the catalog, the word says nothing of any tool (and would cost time)
    assert catalog.learned_terms(names[0])["zebra"] == 3
    assert catalog.search("zebra") == []


def test_rows_kept_before_principals_are_rewritten_without_their_text(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "learned.sqlite"
    with sqlite3.connect(path) as conn:  # the table as it was, with requests in clear
        conn.execute(
            "CREATE TABLE learned (id INTEGER PRIMARY KEY AUTOINCREMENT, tool TEXT NOT NULL, "
            "text TEXT NOT NULL, conversation TEXT NOT NULL, at REAL NOT NULL, "
            "source TEXT NOT NULL)"
        )
        conn.executemany(
            "INSERT INTO learned (tool, text, conversation, at, source) VALUES (?, ?, ?, ?, ?)",
            [
                (TOOL, f"the parcel never arrived, ask {name}", c, 1.0, "use")
                for c, name in zip("abc", ("smith", "jones", "brown"), strict=True)
            ],
        )
    catalog = _catalog(store=path)
    rows = LearnedFile(path).load()
    assert len(rows) == 3 and all(r.principal for r in rows)
    assert not {"smith", "jones", "brown"} & set(" ".join(r.text for r in rows).split())
    assert catalog.learned_terms(TOOL)["parcel"] == 3
    assert _names(catalog, REQUEST)[0] == TOOL


def test_a_file_keeps_the_key_of_its_digests_beside_it_never_in_it(tmp_path: Path) -> None:
    import sqlite3
    import stat

    path = tmp_path / "learned.sqlite"
    _teach(_catalog(store=path), ["ann", "bob"])
    key_file = LearnedFile(path).key_path
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600 and len(key_file.read_bytes()) == 32
    with sqlite3.connect(path) as conn:
        tables = {
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        blobs = [v for t in tables for row in conn.execute(f"SELECT * FROM {t}") for v in row]
    assert "learned_salt" not in tables and not [v for v in blobs if isinstance(v, bytes)]
    again = _catalog(store=path)  # the same key: what was taught still counts
    _teach(again, ["cy"])
    assert again.learned_terms(TOOL)["parcel"] == 3
    given = _catalog(store=path, key="another key")  # rows of another key are ignored
    assert given.learned() == []
