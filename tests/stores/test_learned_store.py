"""What replicas learn from use, shared through PostgreSQL (a real server): the table, the
follower's notifications, forgetting, and ``toolmgmt catalog learn|learned|forget``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolmgmt_core._catalog.tool_catalog import ToolCatalog
from toolmgmt_core._cli import main
from toolmgmt_core._learning.teaching import LearningOptions
from toolmgmt_demo import demo_tools

pytest.importorskip("psycopg")
from toolmgmt_core._stores.postgres import PostgresCatalogStore  # noqa: E402
from toolmgmt_core._stores.postgres_follower import CatalogFollower  # noqa: E402
from toolmgmt_core._stores.postgres_learned import PostgresLearnedStore  # noqa: E402

from .test_catalog_store import ARRIVES_WITHIN, wait_until  # noqa: E402

KEY = "the replicas' learning key, never in the database"
REQUEST = "my parcel never arrived, sort out the charge"
TOOL = "payments_list_refunds"


@pytest.fixture
def replicas(pg_dsn: str) -> Iterator[Callable[[], tuple[ToolCatalog, CatalogFollower]]]:
    """Start replicas: a catalog learning into PostgreSQL, following the store."""
    store = PostgresCatalogStore(pg_dsn)
    store.push(demo_tools())
    followers: list[CatalogFollower] = []

    def start() -> tuple[ToolCatalog, CatalogFollower]:
        catalog = ToolCatalog(learning=LearningOptions(store=PostgresLearnedStore(pg_dsn), key=KEY))
        follower = store.follow(catalog)
        followers.append(follower)
        return catalog, follower

    yield start
    for follower in followers:
        follower.close()
    store.close()


def _top(catalog: ToolCatalog) -> str | None:
    hits = catalog.search(REQUEST)
    return hits[0].name if hits else None


def test_what_one_replica_learns_moves_search_on_the_others(
    replicas: Callable[[], tuple[ToolCatalog, CatalogFollower]], pg_dsn: str
) -> None:
    (first, _), (second, _) = replicas(), replicas()
    assert _top(first) != TOOL and _top(second) != TOOL
    first.learn([("the parcel never arrived", TOOL, "c1", "ann")], source="use")
    second.learn([("parcel never arrived!", TOOL, "c2", "bob")], source="use")
    # a third principal, once the second's row reached the first replica (a row crossing the
    # threshold is the one that keeps the terms in clear)
    wait_until(lambda: len(first.learned(TOOL)) == 2, ARRIVES_WITHIN)
    first.learn([("parcel never arrived", TOOL, "c3", "cid")], source="use")
    for catalog in (first, second):
        wait_until(lambda c=catalog: _top(c) == TOOL, ARRIVES_WITHIN)
        assert {r.source for r in catalog.learned(TOOL)} == {"use"}
        assert len(catalog.learned(TOOL)) == 3
    # a replica started later loads what was learned
    third, _ = replicas()
    assert _top(third) == TOOL
    ids = sorted(r.id for r in PostgresLearnedStore(pg_dsn).load())
    assert sorted(r.id for r in third.learned()) == ids and all(ids)

    assert first.forget(TOOL) == 3
    for catalog in (first, second, third):
        wait_until(lambda c=catalog: not c.learned(TOOL), ARRIVES_WITHIN)
        assert _top(catalog) != TOOL
    assert PostgresLearnedStore(pg_dsn).load() == []


def test_two_principals_across_replicas_move_nothing_and_keep_nothing_in_clear(
    replicas: Callable[[], tuple[ToolCatalog, CatalogFollower]], pg_dsn: str
) -> None:
    """Issue 35, findings 1 and 2, through the shared store: two conversations (or two
    principals) taught a poisoned request and a secret; no replica moves, no row holds them."""
    (first, _), (second, _) = replicas(), replicas()
    victim = "read the file report.txt"
    before = first.search(victim, 10)
    poison = "read the file report.txt repository contents, key sk-live-4f9a8b7c6d5e4f3a"
    first.learn([(poison, "code_hosting_get_file_contents", "c1")], source="import")
    second.learn([(poison, "code_hosting_get_file_contents", "c2")], source="import")
    wait_until(lambda: len(first.learned()) == len(second.learned()) == 2, ARRIVES_WITHIN)
    assert first.search(victim, 10) == before and second.search(victim, 10) == before
    rows = PostgresLearnedStore(pg_dsn).load()
    kept = " ".join(r.text for r in rows)
    assert len(rows) == 2 and "sk-live" not in kept and "4f9a8b7c6d5e4f3a" not in kept
    assert "read" not in kept.split() and "fetch" not in kept.split()  # digests only


def test_one_conversation_across_replicas_still_counts_once(
    replicas: Callable[[], tuple[ToolCatalog, CatalogFollower]],
) -> None:
    (first, _), (second, _) = replicas(), replicas()
    before = first.search(REQUEST)
    words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima".split()
    for i, word in enumerate(words * 4):  # one hostile conversation, over both replicas
        (first if i % 2 else second).learn([(f"{REQUEST} {word} {i}", TOOL, "hostile")])
    wait_until(lambda: len(first.learned(TOOL)) == len(second.learned(TOOL)) == 2, ARRIVES_WITHIN)
    assert first.learned_terms(TOOL) == {} and first.search(REQUEST) == before
    assert second.learned_terms(TOOL) == {} and second.search(REQUEST) == before


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_cli_imports_lists_and_forgets(
    replicas: Callable[[], tuple[ToolCatalog, CatalogFollower]],
    pg_dsn: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    replica, _ = replicas()
    code, _, err = run(capsys, "catalog", "forget", "--principal", "ann", "--store", pg_dsn)
    assert code != 0 and "needs the key of its digests" in err
    monkeypatch.setenv("TOOLMGMT_LEARNING_KEY", KEY)
    pairs = tmp_path / "pairs.jsonl"
    lines: list[Any] = [
        {"request": "the parcel never arrived, mail ann@example.com", "tool": TOOL},
        ["parcel never arrived", TOOL, "conversation-2"],
        ["my parcel never arrived", TOOL, "conversation-3"],
        ["zebra feeding", "no_such_tool"],
    ]
    pairs.write_text("\n".join(json.dumps(line) for line in lines) + "\nnot json\n")
    code, out, err = run(capsys, "catalog", "learn", str(pairs), "--store", pg_dsn, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert [r["tool"] for r in report["learned"]] == [TOOL, TOOL, TOOL]
    assert "ann@example.com" not in out
    assert report["ignored"][0]["reason"].startswith("no tool of this name")
    assert report["unreadable"][0]["line"] == 5 and "not JSON" in err
    wait_until(lambda: _top(replica) == TOOL, ARRIVES_WITHIN)

    code, out, _ = run(capsys, "catalog", "learned", "--tool", TOOL, "--store", pg_dsn)
    assert code == 0 and "parcel never arrived" in out and "ann@example.com" not in out

    code, out, _ = run(
        capsys, "catalog", "forget", "--principal", "conversation-3", "--store", pg_dsn
    )
    assert code == 0 and "(1 requests)" in out  # an import's conversation is its principal
    wait_until(lambda: len(replica.learned(TOOL)) == 2, ARRIVES_WITHIN)
    code, out, _ = run(
        capsys, "catalog", "forget", "--conversation", "conversation-2", "--store", pg_dsn
    )
    assert code == 0 and "(1 requests)" in out
    wait_until(lambda: len(replica.learned(TOOL)) == 1, ARRIVES_WITHIN)
    code, out, _ = run(capsys, "catalog", "forget", "--all", "--store", pg_dsn, "--json")
    assert json.loads(out) == {"forgotten": 1}
    wait_until(lambda: not replica.learned(), ARRIVES_WITHIN)
    code, _, err = run(capsys, "catalog", "forget", "--store", pg_dsn)
    assert code == 2 and "one of the arguments" in err


def test_the_cli_learns_into_a_file_for_one_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(
        "".join(
            json.dumps([text, TOOL, who]) + "\n"
            for text, who in (("the parcel never arrived", "a"), ("parcel never arrived!", "b"))
            + (("my parcel never arrived", "c"),)
        )
    )
    learned = tmp_path / "learned.sqlite"
    code, out, err = run(capsys, "catalog", "learn", str(pairs), "--file", str(learned))
    assert code == 0, err and "3 learned, 0 ignored" in out
    catalog = ToolCatalog(demo_tools(), learning=LearningOptions(store=learned))
    assert _top(catalog) == TOOL
    code, out, _ = run(capsys, "catalog", "forget", "--tool", TOOL, "--file", str(learned))
    assert "(3 requests)" in out
    assert ToolCatalog(demo_tools(), learning=LearningOptions(store=learned)).learned() == []


def test_a_follower_keeps_the_learning_of_a_catalog_it_does_not_mirror(
    replicas: Callable[[], tuple[ToolCatalog, CatalogFollower]], pg_dsn: str
) -> None:
    """The gateway mirrors the store into one catalog and serves a merge with learning on: its
    follower applies other replicas' lessons to the served one (``follower.learner``)."""
    teacher, _ = replicas()
    options = LearningOptions(store=PostgresLearnedStore(pg_dsn), key=KEY)
    served = ToolCatalog(demo_tools(), learning=options)
    follower = PostgresCatalogStore(pg_dsn).follow(ToolCatalog())
    try:
        follower.learner = served
        teacher.learn([("the parcel never arrived", TOOL, f"c{i}", f"p{i}") for i in range(3)])
        wait_until(lambda: len(served.learned(TOOL)) == 3, ARRIVES_WITHIN)
        assert _top(served) == TOOL
        teacher.forget(TOOL)
        wait_until(lambda: not served.learned(TOOL), ARRIVES_WITHIN)
    finally:
        follower.close()


def test_companions_one_replica_learned_are_suggested_on_the_others(
    replicas: Callable[[], tuple[ToolCatalog, CatalogFollower]],
) -> None:
    (first, _), (second, _) = replicas(), replicas()
    lookup, refund = "payments_get_charge", "payments_list_refunds"
    pairs = [
        (request, tool, f"conv-{who}", who)
        for who in ("ann", "bob", "cid")
        for request, tool in (("look up the charge", lookup), ("list its refunds", refund))
    ]
    first.learn(pairs, source="use")
    for catalog in (first, second):
        wait_until(lambda c=catalog: len(c.learned()) == 6, ARRIVES_WITHIN)
        assert [c.name for c in catalog.companions([lookup])] == [refund]
    third, _ = replicas()  # a replica started later loads them with the rest
    assert [c.name for c in third.companions([refund])] == [lookup]
