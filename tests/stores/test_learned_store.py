"""What replicas learn from use, shared through PostgreSQL (a real server): the table, the
follower's notifications, forgetting, and ``toolmgmt catalog learn|learned|forget``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolmgmt_core.catalog.learning import LearningOptions
from toolmgmt_core.catalog.tool_catalog import ToolCatalog
from toolmgmt_core.cli import main
from toolmgmt_demo import demo_tools

pytest.importorskip("psycopg")
from toolmgmt_core.stores.postgres import PostgresCatalogStore  # noqa: E402
from toolmgmt_core.stores.postgres_follower import CatalogFollower  # noqa: E402
from toolmgmt_core.stores.postgres_learned import PostgresLearnedStore  # noqa: E402

from .test_catalog_store import ARRIVES_WITHIN, wait_until  # noqa: E402

REQUEST = "my parcel never arrived, sort it out"
TOOL = "payments_refund_charge"


@pytest.fixture
def replicas(pg_dsn: str) -> Iterator[Callable[[], tuple[ToolCatalog, CatalogFollower]]]:
    """Start replicas: a catalog learning into PostgreSQL, following the store."""
    store = PostgresCatalogStore(pg_dsn)
    store.push(demo_tools())
    followers: list[CatalogFollower] = []

    def start() -> tuple[ToolCatalog, CatalogFollower]:
        catalog = ToolCatalog(learning=LearningOptions(store=PostgresLearnedStore(pg_dsn)))
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
    first.learn([("the parcel never arrived", TOOL, "c1")], source="use")
    second.learn([("parcel never arrived!", TOOL, "c2")], source="use")  # another conversation
    for catalog in (first, second):
        wait_until(lambda c=catalog: _top(c) == TOOL, ARRIVES_WITHIN)
        assert {r.source for r in catalog.learned(TOOL)} == {"use"}
        assert len(catalog.learned(TOOL)) == 2
    # a replica started later loads what was learned
    third, _ = replicas()
    assert _top(third) == TOOL
    ids = sorted(r.id for r in PostgresLearnedStore(pg_dsn).load())
    assert sorted(r.id for r in third.learned()) == ids and all(ids)

    assert first.forget(TOOL) == 2
    for catalog in (first, second, third):
        wait_until(lambda c=catalog: not c.learned(TOOL), ARRIVES_WITHIN)
        assert _top(catalog) != TOOL
    assert PostgresLearnedStore(pg_dsn).load() == []


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
) -> None:
    replica, _ = replicas()
    pairs = tmp_path / "pairs.jsonl"
    lines: list[Any] = [
        {"request": "the parcel never arrived, mail ann@example.com", "tool": TOOL},
        ["parcel never arrived", TOOL, "conversation-2"],
        ["zebra feeding", "no_such_tool"],
    ]
    pairs.write_text("\n".join(json.dumps(line) for line in lines) + "\nnot json\n")
    code, out, err = run(capsys, "catalog", "learn", str(pairs), "--store", pg_dsn, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert [r["tool"] for r in report["learned"]] == [TOOL, TOOL]
    assert "<email>" in report["learned"][0]["text"]
    assert report["ignored"][0]["reason"].startswith("no tool of this name")
    assert report["unreadable"][0]["line"] == 4 and "not JSON" in err
    wait_until(lambda: _top(replica) == TOOL, ARRIVES_WITHIN)

    code, out, _ = run(capsys, "catalog", "learned", "--tool", TOOL, "--store", pg_dsn)
    assert code == 0 and "parcel never arrived" in out and "ann@example.com" not in out

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
        json.dumps(["the parcel never arrived", TOOL, "a"])
        + "\n"
        + json.dumps(["parcel never arrived!", TOOL, "b"])
        + "\n"
    )
    learned = tmp_path / "learned.sqlite"
    code, out, err = run(capsys, "catalog", "learn", str(pairs), "--file", str(learned))
    assert code == 0, err and "2 learned, 0 ignored" in out
    catalog = ToolCatalog(demo_tools(), learning=LearningOptions(store=learned))
    assert _top(catalog) == TOOL
    code, out, _ = run(capsys, "catalog", "forget", "--tool", TOOL, "--file", str(learned))
    assert "(2 requests)" in out
    assert ToolCatalog(demo_tools(), learning=LearningOptions(store=learned)).learned() == []
