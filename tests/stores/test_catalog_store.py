"""The PostgreSQL catalog store, its followers and the shared embedding cache (a real server)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.embedders import HashingEmbedder

from toolmgmt_core._catalog.tool_catalog import ToolCatalog
from toolmgmt_core._embeddings import VectorCache
from toolmgmt_core._model.errors import ConfigError, StoreUnavailableError
from toolmgmt_core._model.schema import tool_to_definition
from toolmgmt_core._model.tool import Tool, ToolAnnotations

psycopg = pytest.importorskip("psycopg")
from toolmgmt_core._stores.postgres import (  # noqa: E402
    PostgresCatalogStore,
    PostgresEmbeddingCache,
)
from toolmgmt_core._stores.postgres_db import CHANNEL  # noqa: E402
from toolmgmt_core._stores.postgres_follower import CatalogFollower  # noqa: E402

ARRIVES_WITHIN = 15.0
"""Seconds a change may take to reach a follower: "does not hang" (a follower does not poll,
so a lost notification fails this). How fast it arrives is measured by ``bench/stores.py``
(docs/deploy.md, "Measured: the stores")."""


def full_tool(name: str = "payments_refund_charge", **changes: Any) -> Tool:
    """A tool with every field set."""
    fields: dict[str, Any] = {
        "description": "Refund a charge, fully or in part. Use after a customer complaint.",
        "parameters": {
            "type": "object",
            "properties": {
                "charge_id": {"type": "string", "description": "The charge."},
                "amount": {"type": "integer", "minimum": 1},
                "reason": {"type": "string", "enum": ["duplicate", "fraudulent"]},
            },
            "required": ["charge_id"],
            "additionalProperties": False,
        },
        "domain": "payments",
        "group": "refunds",
        "keywords": ("money back", "reimburse"),
        "profiles": ("support", "finance"),
        "defer_loading": True,
        "max_result_tokens": 800,
        "truncation": "smart",
        "annotations": ToolAnnotations(
            read_only=False, destructive=True, idempotent=False, open_world=False, title="Refund"
        ),
        "input_examples": ({"charge_id": "ch_1", "amount": 500},),
        "output_schema": {"type": "object", "properties": {"refund_id": {"type": "string"}}},
        "usage_notes": "Amounts are in cents.",
        "timeout": 12.5,
        "metadata": {"strict": True},
    }
    fields.update(changes)
    return Tool(name, **fields)


def wait_until(condition: Callable[[], bool], within: float) -> float:
    """Seconds until ``condition()`` held; fails after ``within``."""
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > within:
            pytest.fail(f"not within {within}s")
        time.sleep(0.002)
    return time.monotonic() - started


def found(catalog: ToolCatalog, query: str, name: str) -> bool:
    return (
        any(hit.name == name for hit in catalog.search(query, limit=3)) if len(catalog) else False
    )


def test_push_and_read_back_every_field(store: PostgresCatalogStore) -> None:
    tool = full_tool()
    report = store.push([tool])
    assert (report.added, report.skipped) == (["payments_refund_charge"], [])
    [read] = store.tools()
    assert read == tool
    assert read.metadata.get("strict") is True
    [record] = store.records()
    assert record.definition == tool_to_definition(tool)
    assert record.revision >= 1 and record.updated_at is not None


def test_definitions_in_any_shape_are_stored_canonically(store: PostgresCatalogStore) -> None:
    anthropic = {"name": "a_tool", "description": "A.", "input_schema": {"type": "object"}}
    openai = {
        "type": "function",
        "function": {"name": "o_tool", "parameters": {"type": "object", "properties": {}}},
    }
    mcp = {
        "name": "m_tool",
        "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": True},
    }
    report = store.push([anthropic, openai, mcp])
    assert sorted(report.added) == ["a_tool", "m_tool", "o_tool"]
    by_name = {r.name: r.definition for r in store.records()}
    assert by_name["a_tool"]["parameters"] == {"type": "object"}
    assert by_name["m_tool"]["annotations"] == {"readOnlyHint": True}
    assert "function" not in by_name["o_tool"]


def test_bad_definitions_are_skipped_and_reported_not_the_batch(
    store: PostgresCatalogStore,
) -> None:
    report = store.push(
        [
            {"name": "good_one", "description": "Fine."},
            {"description": "no name"},
            {"name": "bad_schema", "parameters": {"type": "string"}},
            {"name": "not_json", "input_examples": [{"x": float("nan")}]},
            {"name": "nul_char", "description": "a\x00b"},
            "not a dict",
            {"name": "good_one", "description": "Twice in one batch."},
            {"name": "good_two"},
        ]
    )
    assert report.added == ["good_one", "good_two"]
    reasons = dict(report.skipped)
    assert set(reasons) == {"#2", "bad_schema", "not_json", "nul_char", "#6", "good_one"}
    assert "needs a non-empty 'name'" in reasons["#2"]
    assert 'must describe an object ("type": "object")' in reasons["bad_schema"]
    assert "not plain JSON" in reasons["not_json"]
    assert "NUL character" in reasons["nul_char"]
    assert "must be a dict" in reasons["#6"]
    assert "already used by an earlier one" in reasons["good_one"]
    assert [t.name for t in store.tools()] == ["good_one", "good_two"]
    assert store.tools()[0].description == "Fine."


def test_a_second_push_reports_updates_and_unchanged(store: PostgresCatalogStore) -> None:
    store.push([full_tool("a"), full_tool("b")])
    revisions = {r.name: r.revision for r in store.records()}
    report = store.push([full_tool("a"), full_tool("b", description="Changed."), full_tool("c")])
    assert (report.added, report.updated, report.unchanged) == (["c"], ["b"], ["a"])
    after = {r.name: r.revision for r in store.records()}
    assert after["a"] == revisions["a"]  # nothing written for an identical definition
    assert after["b"] > revisions["b"]
    assert store.push([]).added == [] and not store.push([{"bad": 1}])


def test_remove_returns_what_was_there(store: PostgresCatalogStore) -> None:
    store.push([full_tool("a"), full_tool("b")])
    assert store.remove(["b", "missing", "b"]) == ["b"]
    assert [t.name for t in store.tools()] == ["a"]
    assert store.remove([]) == []


def test_load_into_replaces_the_catalog_and_binds(store: PostgresCatalogStore) -> None:
    store.push([full_tool("a"), full_tool("b", domain="crm"), full_tool("c", domain="broken")])
    catalog = ToolCatalog([Tool("local_only"), full_tool("a", description="Old.")])

    def bind(tool: Tool) -> Tool:
        if tool.domain == "broken":
            raise RuntimeError("no upstream for domain 'broken'")
        return tool.replace(handler=lambda **kw: f"{tool.domain}:{kw}")

    report = store.load_into(catalog, bind=bind)
    assert report.added == ["a", "b"]
    assert report.skipped == [("c", "RuntimeError: no upstream for domain 'broken'")]
    assert sorted(catalog.names()) == ["a", "b"]  # local_only is gone: the store is the truth
    assert catalog.get("a").description == full_tool().description
    handler = catalog.get("b").handler
    assert handler is not None and handler(x=1) == "crm:{'x': 1}"
    version = catalog.version
    store.load_into(catalog, bind=lambda tool: tool if tool.domain != "broken" else 1)  # type: ignore[arg-type,return-value]
    assert catalog.version > version  # handlers changed: the tools were replaced
    version = catalog.version
    report = store.load_into(catalog, bind=lambda tool: tool if tool.domain != "broken" else 1)  # type: ignore[arg-type,return-value]
    assert catalog.version == version  # nothing changed: nothing touched, no index rebuild
    assert report.skipped == [("c", "bind returned int, not a Tool")]


def test_two_replicas_see_a_push_and_a_removal(
    store: PostgresCatalogStore, follow: Callable[..., CatalogFollower]
) -> None:
    store.push([full_tool("payments_refund_charge")])
    replicas = [ToolCatalog(), ToolCatalog()]
    followers = [follow(catalog) for catalog in replicas]
    assert all(f.connected for f in followers)
    assert [c.names() for c in replicas] == [["payments_refund_charge"]] * 2
    for catalog in replicas:
        catalog.search("refund")  # the index is built: the change must invalidate it

    zebra = Tool("zoo_feed_zebras", "Feed the zebras at the zoo.", domain="zoo")
    store.push([zebra])
    for catalog in replicas:
        wait_until(lambda c=catalog: found(c, "feed the zebras", "zoo_feed_zebras"), ARRIVES_WITHIN)

    store.push([full_tool("payments_refund_charge", description="Give money back to a buyer.")])
    for catalog in replicas:
        wait_until(
            lambda c=catalog: c.get("payments_refund_charge").description.startswith("Give"),
            ARRIVES_WITHIN,
        )

    store.remove(["zoo_feed_zebras"])
    for catalog in replicas:
        wait_until(lambda c=catalog: "zoo_feed_zebras" not in c, ARRIVES_WITHIN)
        assert not found(catalog, "feed the zebras", "zoo_feed_zebras")
    assert all(f.revision >= 4 for f in followers)


def test_a_follower_binds_every_change(
    store: PostgresCatalogStore, follow: Callable[..., CatalogFollower]
) -> None:
    catalog = ToolCatalog()
    follow(catalog, bind=lambda tool: tool.replace(handler=lambda: tool.domain))
    store.push([Tool("ping", domain="net")])
    wait_until(lambda: "ping" in catalog, ARRIVES_WITHIN)
    handler = catalog.get("ping").handler
    assert handler is not None and handler() == "net"


def test_a_big_push_arrives_whole(
    store: PostgresCatalogStore, follow: Callable[..., CatalogFollower]
) -> None:
    catalog = ToolCatalog()
    follow(catalog)
    store.push([Tool(f"tool_{i}", f"Tool number {i}.") for i in range(300)])
    wait_until(lambda: len(catalog) == 300, 2 * ARRIVES_WITHIN)


def test_a_name_too_long_for_a_notification_still_arrives(
    store: PostgresCatalogStore, follow: Callable[..., CatalogFollower]
) -> None:
    catalog = ToolCatalog()
    follower = follow(catalog)
    long_name = "n" * 9000  # over NOTIFY's 8000-byte payload: followers resynchronise fully
    store.push([Tool(long_name)])
    wait_until(lambda: long_name in catalog, ARRIVES_WITHIN)
    assert follower.resyncs == 2
    store.remove([long_name])
    wait_until(lambda: long_name not in catalog, ARRIVES_WITHIN)


def test_a_malformed_notification_is_ignored(
    store: PostgresCatalogStore, follow: Callable[..., CatalogFollower], pg_dsn: str
) -> None:
    catalog = ToolCatalog()
    follow(catalog)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        for payload in ("not json", '{"op": "upsert"}', '["list"]', '{"op": "explode", "name": 1}'):
            conn.execute("SELECT pg_notify(%s, %s)", [CHANNEL, payload])
    store.push([Tool("after_the_noise")])
    wait_until(lambda: "after_the_noise" in catalog, ARRIVES_WITHIN)


def test_a_follower_keeps_its_catalog_while_postgres_is_down_and_catches_up(
    store: PostgresCatalogStore,
    follow: Callable[..., CatalogFollower],
    postgres_server: Any,
    caplog: pytest.LogCaptureFixture,
) -> None:
    store.push([full_tool("payments_refund_charge"), Tool("to_remove", "Soon gone.")])
    replicas = [ToolCatalog(), ToolCatalog()]
    followers = [follow(c, retry_initial=0.05, retry_max=0.2) for c in replicas]
    caplog.set_level(logging.WARNING, logger="toolmgmt.stores")
    postgres_server.stop()
    try:
        for follower, catalog in zip(followers, replicas, strict=True):
            wait_until(lambda f=follower: not f.connected, 10)
            assert sorted(catalog.names()) == ["payments_refund_charge", "to_remove"]
            assert catalog.search("refund a charge")[0].name == "payments_refund_charge"
        with pytest.raises(StoreUnavailableError, match="PostgreSQL at postgresql://postgres@"):
            store.push([Tool("while_down")])
        assert "keeping the current catalog of 2 tools" in caplog.text
    finally:
        postgres_server.start()
    store.push([Tool("zoo_feed_zebras", "Feed the zebras.")])
    store.remove(["to_remove"])
    for follower, catalog in zip(followers, replicas, strict=True):
        wait_until(lambda c=catalog: found(c, "feed zebras", "zoo_feed_zebras"), 10)
        wait_until(lambda c=catalog: "to_remove" not in c, ARRIVES_WITHIN)
        assert follower.connected and follower.resyncs >= 2
        assert follower.last_error is not None


def test_a_missed_change_is_caught_by_the_resync_after_a_reconnection(
    store: PostgresCatalogStore, follow: Callable[..., CatalogFollower], pg_dsn: str
) -> None:
    store.push([Tool("kept"), Tool("deleted_quietly")])
    catalog = ToolCatalog()
    follower = follow(catalog, retry_initial=0.05)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        # changes no notification announces (as if sent while the follower was away)
        conn.execute("DELETE FROM toolmgmt_tools WHERE name = 'deleted_quietly'")
        conn.execute(
            "INSERT INTO toolmgmt_tools (name, definition, revision) VALUES (%s, %s, 999)",
            ["added_quietly", psycopg.types.json.Jsonb(tool_to_definition(Tool("added_quietly")))],
        )
        time.sleep(0.2)
        assert sorted(catalog.names()) == ["deleted_quietly", "kept"]  # nothing announced
        conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE application_name = 'toolmgmt-catalog-follower'"
        )
    wait_until(lambda: sorted(catalog.names()) == ["added_quietly", "kept"], 10)
    assert follower.resyncs == 2 and follower.connected


def test_a_row_that_does_not_build_is_skipped_by_readers(
    store: PostgresCatalogStore, pg_dsn: str, caplog: pytest.LogCaptureFixture
) -> None:
    store.push([Tool("fine")])
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO toolmgmt_tools (name, definition, revision) VALUES "
            '(\'broken\', \'{"name": "broken", "parameters": {"type": "string"}}\', 5), '
            "('renamed', '{\"name\": \"other\"}', 6)"
        )
    catalog = ToolCatalog()
    report = store.load_into(catalog)
    assert catalog.names() == ["fine"]
    assert [name for name, _ in report.skipped] == ["broken", "renamed"]
    assert "skipped tool 'broken'" in caplog.text


def test_follow_fails_clearly_when_postgres_is_unreachable(closed_port: int) -> None:
    store = PostgresCatalogStore(f"postgresql://me:s3cret@127.0.0.1:{closed_port}/db", timeout=2)
    catalog = ToolCatalog([Tool("untouched")])
    with pytest.raises(StoreUnavailableError) as caught:
        store.follow(catalog)
    message = str(caught.value)
    assert f"postgresql://me@127.0.0.1:{closed_port}/db refused the connection" in message
    assert "s3cret" not in message and "s3cret" not in repr(store)
    assert catalog.names() == ["untouched"]
    for call in (store.records, lambda: store.push([Tool("x")]), lambda: store.remove(["x"])):
        with pytest.raises(StoreUnavailableError, match="Check that PostgreSQL is running"):
            call()


def test_a_bad_dsn_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="Not a PostgreSQL DSN"):
        PostgresCatalogStore("nonsense")


def test_the_embedding_cache_is_shared_by_replicas(pg_dsn: str) -> None:
    cache = PostgresEmbeddingCache(pg_dsn)
    assert isinstance(cache, VectorCache)
    tools = [
        Tool("zoo_feed_zebras", "Feed the zebras at the zoo."),
        Tool("payments_refund_charge", "Refund a customer's charge."),
        Tool("email_send", "Send an email message."),
    ]
    first, second = HashingEmbedder(), HashingEmbedder()
    one = ToolCatalog(tools, embedder=first, embedding_cache=cache)
    two = ToolCatalog(tools, embedder=second, embedding_cache=PostgresEmbeddingCache(pg_dsn))
    assert one.search("refund money")[0].name == "payments_refund_charge"
    assert first.texts_embedded == len(tools) + 1  # the tools, then the query
    assert len(cache) == len(tools)
    assert two.search("refund money")[0].name == "payments_refund_charge"
    assert second.texts_embedded == 1  # the query only: the tools' vectors were shared
    assert one.embedder_error is None and two.embedder_error is None
    other_model = HashingEmbedder(dim=64)  # another model: its own vectors
    ToolCatalog(tools, embedder=other_model, embedding_cache=cache).search("email")
    assert other_model.texts_embedded == len(tools) + 1
    assert len(cache) == 2 * len(tools)


def test_an_unreachable_embedding_cache_is_skipped_loudly(
    closed_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    cache = PostgresEmbeddingCache(f"postgresql://127.0.0.1:{closed_port}/db", timeout=1)
    embedder = HashingEmbedder()
    catalog = ToolCatalog(
        [Tool("email_send", "Send an email.")], embedder=embedder, embedding_cache=cache
    )
    caplog.set_level(logging.WARNING, logger="toolmgmt.stores")
    assert catalog.search("send email")[0].name == "email_send"
    assert embedder.texts_embedded == 2 and catalog.embedder_error is None
    assert caplog.text.count("embedding locally until it is back") == 1  # once per outage
    with pytest.raises(StoreUnavailableError):
        len(cache)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)
field_names = st.sampled_from(
    [
        "description", "parameters", "input_schema", "domain", "group", "keywords", "profiles",
        "annotations", "usage_notes", "input_examples", "output_schema", "timeout",
        "max_result_tokens", "truncation", "defer_loading", "strict", "function",
    ]
)  # fmt: skip


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.builds(
            lambda name, fields: {"name": name, **fields},
            st.text(min_size=1, max_size=12),
            st.dictionaries(field_names, json_values, max_size=4),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_any_definitions_are_pushed_or_skipped_never_the_batch(
    store: PostgresCatalogStore, definitions: list[dict[str, Any]]
) -> None:
    report = store.push(definitions)
    counted = report.added + report.updated + report.unchanged + report.skipped + report.refused
    assert len(counted) == len(definitions)
    stored = {tool.name: tool for tool in store.tools()}  # every stored row builds again
    for name in report.added + report.updated + report.unchanged:
        assert name in stored
