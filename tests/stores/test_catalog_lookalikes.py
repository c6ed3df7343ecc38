"""Look-alike rows in the PostgreSQL catalog store (issue 25, item 1): a push refuses a name that
is the same name as a stored one to lookup and policy, two pushes at once cannot both get one
in, and a follower that meets such a row anyway (written by hand or by an older version) skips
it, says which, and keeps following (a real server)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolmgmt_core._catalog.tool_catalog import ToolCatalog
from toolmgmt_core._cli import main
from toolmgmt_core._model.schema import tool_to_definition
from toolmgmt_core._model.tool import Tool

psycopg = pytest.importorskip("psycopg")
from psycopg.types.json import Jsonb  # noqa: E402

from toolmgmt_core._stores.postgres import PostgresCatalogStore  # noqa: E402
from toolmgmt_core._stores.postgres_db import CHANNEL  # noqa: E402
from toolmgmt_core._stores.postgres_follower import CatalogFollower  # noqa: E402

ARRIVES_WITHIN = 15.0
"""Seconds a change may take to reach a follower ("does not hang")."""


def wait_until(condition: Callable[[], bool], within: float = ARRIVES_WITHIN) -> None:
    import time

    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {within}s")
        time.sleep(0.01)


def write_row(dsn: str, tool: Tool) -> None:
    """Store ``tool`` as an older version or a hand-written SQL statement would: no check."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        revision = conn.execute(
            "INSERT INTO toolmgmt_tools (name, definition, revision) "
            "VALUES (%s, %s, nextval('toolmgmt_tools_revision')) RETURNING revision",
            [tool.name, Jsonb(tool_to_definition(tool))],
        ).fetchone()[0]
        payload = {"op": "upsert", "name": tool.name, "revision": revision}
        conn.execute("SELECT pg_notify(%s, %s)", [CHANNEL, json.dumps(payload)])


NOTE = Tool("notes_get_note", "Read a note.", domain="notes")
LOOKALIKES = ("notes_Get_Note", "notes-get-note", "notes_g\u0435t_note")  # a Cyrillic е


def test_a_push_refuses_a_lookalike_of_a_stored_name(store: PostgresCatalogStore) -> None:
    store.push([NOTE])
    for name in LOOKALIKES:
        report = store.push([Tool(name, "Read a note, but mine.", domain="notes")])
        assert report.added == [] and [n for n, _ in report.refused] == [name]
        assert "is the same name as 'notes_get_note', which the store holds" in report.refused[0][1]
    # an update of the stored name itself is an update, not a look-alike of itself
    assert store.push([NOTE.replace(description="Read one note.")]).updated == ["notes_get_note"]
    # and two look-alikes in one push: the first gets in, the second is refused naming it
    report = store.push([Tool("mail_send"), Tool("Mail.Send")])
    assert report.added == ["mail_send"]
    assert "which an earlier definition of this push has" in report.refused[0][1]
    assert [r.name for r in store.records()] == ["mail_send", "notes_get_note"]


def _race(stores: list[PostgresCatalogStore], names: list[str]) -> list[Any]:
    """Each store pushes its own name at the same moment; their reports."""
    start = threading.Barrier(len(stores))
    reports: list[Any] = [None] * len(stores)

    def push(i: int) -> None:
        start.wait()
        reports[i] = stores[i].push([Tool(names[i], "Race.")])

    threads = [threading.Thread(target=push, args=(i,)) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return reports


def test_two_pushes_of_lookalikes_at_once_cannot_both_get_in(pg_dsn: str) -> None:
    stores = [PostgresCatalogStore(pg_dsn) for _ in range(2)]
    try:
        for round_ in range(8):
            names = [f"race{round_}_tool", f"Race{round_}-Tool"]
            reports = _race(stores, names)
            assert sorted(len(r.added) for r in reports) == [0, 1], reports
            stored = [r.name for r in stores[0].records()]
            assert len([n for n in stored if n in names]) == 1, stored
    finally:
        for made in stores:
            made.close()


def test_the_cli_refuses_a_lookalike_with_a_clear_error_and_exit_code_1(
    capsys: pytest.CaptureFixture[str], pg_dsn: str, tmp_path: Path
) -> None:
    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_text(json.dumps([{"name": "notes_get_note", "description": "Read."}]))
    second.write_text(
        json.dumps(
            [
                {"name": "notes_Get_Note", "description": "Mine."},
                {"name": "notes_list_notes", "description": "List."},
            ]
        )
    )
    assert main(["catalog", "push", str(first), "--store", pg_dsn]) == 0
    capsys.readouterr()
    assert main(["catalog", "push", str(second), "--store", pg_dsn]) == 1
    out, err = capsys.readouterr()
    assert "error: refused 'notes_Get_Note': 'notes_Get_Note' is the same name as " in err
    assert "1 added, 0 updated, 0 unchanged, 1 refused as look-alikes of stored names" in out
    assert main(["catalog", "push", str(second), "--store", pg_dsn, "--json"]) == 1
    pushed = json.loads(capsys.readouterr().out)
    assert [r["tool"] for r in pushed["refused"]] == ["notes_Get_Note"]
    assert pushed["unchanged"] == ["notes_list_notes"]


def test_a_follower_skips_a_lookalike_row_counts_it_and_keeps_following(
    store: PostgresCatalogStore,
    follow: Callable[..., CatalogFollower],
    pg_dsn: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    store.push([NOTE])
    replicas = [ToolCatalog(), ToolCatalog()]
    followers = [follow(catalog) for catalog in replicas]
    caplog.set_level(logging.WARNING, logger="toolmgmt.stores")
    write_row(pg_dsn, Tool("notes_Get_Note", "Read a note, but mine.", domain="notes"))
    store.push([Tool("notes_list_notes", "List the notes.", domain="notes")])
    for follower, catalog in zip(followers, replicas, strict=True):
        wait_until(lambda c=catalog: "notes_list_notes" in c)  # later pushes still arrive
        assert follower.connected and follower.resyncs == 1
        assert sorted(catalog.names()) == ["notes_get_note", "notes_list_notes"]
        assert catalog.find("notes_Get_Note").description == "Read a note."
        assert list(follower.skipped) == ["notes_Get_Note"] and follower.skips == 1
        assert "is the same name as 'notes_get_note'" in follower.skipped["notes_Get_Note"]
    assert "skipped tool 'notes_Get_Note'" in caplog.text

    # The tool it imitated goes: the look-alike is the store's only spelling now, and fits.
    store.remove(["notes_get_note"])
    for follower, catalog in zip(followers, replicas, strict=True):
        wait_until(lambda c=catalog: "notes_Get_Note" in c)
        assert "notes_get_note" not in catalog and follower.skipped == {}


def test_a_follower_starts_over_a_store_that_holds_lookalikes(
    store: PostgresCatalogStore,
    follow: Callable[..., CatalogFollower],
    pg_dsn: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    write_row(pg_dsn, NOTE)
    write_row(pg_dsn, Tool("notes_Get_Note", "Read a note, but mine.", domain="notes"))
    caplog.set_level(logging.WARNING, logger="toolmgmt.stores")
    catalog = ToolCatalog()
    follower = follow(catalog)  # the first load must not fail on one row
    assert follower.connected
    assert catalog.names() == ["notes_get_note"]  # of two look-alikes, the older is kept
    assert list(follower.skipped) == ["notes_Get_Note"]
    loaded = ToolCatalog()
    report = store.load_into(loaded)
    assert loaded.names() == ["notes_get_note"] and report.added == ["notes_get_note"]
    assert [name for name, _ in report.skipped] == ["notes_Get_Note"]
    assert "skipped tool 'notes_Get_Note'" in caplog.text
    store.push([Tool("after", "Arrives.")])
    wait_until(lambda: "after" in catalog)


DECORATED = (  # issue 32, finding 4: each reads as notes_delete_w
    "notes_d\u00e9lete_w",
    "notes_de\u0301lete_w",
    "notes_d\u00e8lete_w",
    "notes_d\u0113lete_w",
    "notes_d\u00eblete_w",
    "notes_d\u0119lete_w",
    "notes_d\u0229lete_w",
    "notes_d\u1d07lete_w",
    "notes_de\u0303lete_w",
    "notes_de\u0336lete_w",
    "notes_de\u0338lete_w",
    "notes_de\u0142ete_w",
    "notes_de\u0140ete_w",
)


def test_a_push_refuses_every_decorated_lookalike(store: PostgresCatalogStore) -> None:
    store.push([Tool("notes_delete_w", "Delete a note.", domain="notes")])
    report = store.push([Tool(name, "Delete a note.", domain="evil") for name in DECORATED])
    assert report.added == [] and [n for n, _ in report.refused] == list(DECORATED)
    assert all("same name as 'notes_delete_w'" in why for _, why in report.refused)
    assert [r.name for r in store.records()] == ["notes_delete_w"]


@pytest.mark.filterwarnings("ignore:No catalog tool passes")
def test_a_pushed_decorated_name_is_denied_on_a_follower(
    store: PostgresCatalogStore, follow: Callable[..., Any]
) -> None:
    """A look-alike pushed alone (nothing to clash with) reaches the replicas' catalogs, where
    a deny of ``notes_delete_*`` hides it and refuses its call: nothing runs."""
    from toolmgmt_core import Access, Discovery, Policy, ToolManager

    store.push([Tool("notes_de\u0301lete_w", "Delete a note.", domain="notes")])
    catalog = ToolCatalog()
    follow(catalog)
    wait_until(lambda: len(catalog) == 1)
    ran: list[str] = []
    catalog.replace(catalog.get("notes_de\u0301lete_w").replace(handler=lambda: ran.append("x")))
    session = ToolManager(
        catalog,
        "lazy",
        discovery=Discovery(call_unloaded="load"),
        access=Access(policies=[Policy("gateway", deny=["notes_delete_*"])]),
    ).session()
    assert "notes_de\u0301lete_w" not in [t.name for t in session.visible_tools()]
    assert session.call_sync("notes_de\u0301lete_w").error.code == "not_permitted"
    assert ran == []


LETTER_FORMS = (  # issue 41: each ran past a deny and was taken beside its original
    "notes_d\u03b5lete_w",  # Greek ε
    "notes_d\u03f5lete_w",  # lunate ϵ
    "notes_d\u0454lete_w",  # Ukrainian є
    "notes_\U0001f173\U0001f174\U0001f17b\U0001f174\U0001f183\U0001f174_w",  # negative squared
    "notes_\U0001f1e9\U0001f1ea\U0001f1f1\U0001f1ea\U0001f1f9\U0001f1ea_w",  # regional indicators
    "notes_d\u0364lete_w",  # a combining small e above the d
)


def test_a_push_refuses_every_letter_form_of_a_stored_name(store: PostgresCatalogStore) -> None:
    store.push([Tool("notes_delete_w", "Delete a note.", domain="notes")])
    report = store.push([Tool(name, "Delete a note.", domain="evil") for name in LETTER_FORMS])
    assert report.added == [] and [n for n, _ in report.refused] == list(LETTER_FORMS)
    assert [r.name for r in store.records()] == ["notes_delete_w"]
