"""The gateway's catalog over a real PostgreSQL catalog store (``[store] catalog``): the
upstreams' own tools and the store's side by side, stored tools running on their domain's
upstream, and a replica that keeps its last catalog while PostgreSQL is away."""

from __future__ import annotations

import logging
from typing import Any

import pytest

pytest.importorskip("mcp")
pytest.importorskip("psycopg")

import anyio  # noqa: E402
from mcp import Client  # noqa: E402
from toolmgmt_deploy import LocalPostgres  # noqa: E402
from toolmgmt_gateway import Gateway, parse_config  # noqa: E402

from toolmgmt_core._stores.postgres import (  # noqa: E402
    PostgresCatalogStore,
    PostgresEmbeddingCache,
)

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

ECHO_PARAMETERS = {
    "type": "object",
    "properties": {"token": {"type": "string"}},
    "required": ["token"],
}


def _config(mcp_kit: Any, dsn: str) -> Any:
    return parse_config(mcp_kit.stdio_upstream("notes") + f'\n[store]\ncatalog = "{dsn}"\n')


def _tool(name: str, description: str, domain: str = "notes") -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "parameters": ECHO_PARAMETERS,
        "domain": domain,
    }


async def _found(client: Client, mcp_kit: Any, query: str) -> dict[str, str]:
    _, found = await mcp_kit.call(client, "discover_tools", {"query": query})
    return found.get("tools", {}) if isinstance(found, dict) else {}


async def _until(check: Any, timeout: float = 30.0) -> None:
    with anyio.fail_after(timeout):
        while not await check():
            await anyio.sleep(0.05)


async def test_stored_tools_join_the_upstreams_own_and_run_on_their_upstream(
    mcp_kit: Any, pg_dsn: str, caplog: Any
) -> None:
    store = PostgresCatalogStore(pg_dsn)
    store.push(
        [
            # the upstream's own echo, curated: found by new words, runs the upstream's echo
            _tool("notes_echo", "Parrot a walrus token back unchanged."),
            # a name the upstream does not list: found, and its call says why it cannot run
            _tool("notes_echo_loudly", "Parrot a walrus token back, loudly."),
        ]
    )
    with caplog.at_level(logging.WARNING):
        async with Gateway(_config(mcp_kit, pg_dsn)) as gateway, Client(gateway.server) as client:
            found = await _found(client, mcp_kit, "parrot walrus")
            assert set(found) == {"notes_echo", "notes_echo_loudly"}
            assert await mcp_kit.execute(client, "notes_echo", token="w") == (False, "w")
            error, value = await mcp_kit.execute(client, "notes_echo_loudly", token="w")
            assert error and "does not list 'echo_loudly'" in value["message"]
            assert "notes_get_note" in gateway.catalog  # the upstream's others stay

            # Pushed and removed while serving: followed without a restart.
            store.push([_tool("notes_x", "Hoist the kraken flag.", domain="elsewhere")])
            store.push([_tool("notes_list_notes", "Enumerate every kraken scroll title.")])

            async def curated() -> bool:
                return "notes_list_notes" in await _found(client, mcp_kit, "kraken scroll")

            await _until(curated)
            assert "notes_x" not in await _found(client, mcp_kit, "hoist kraken flag")
            store.remove(["notes_echo", "notes_echo_loudly"])

            async def reverted() -> bool:
                found = await _found(client, mcp_kit, "parrot walrus")
                return "notes_echo_loudly" not in found and "notes_echo" in gateway.catalog

            await _until(reverted)  # the upstream's own echo is back, with its own words
            assert gateway.catalog.get("notes_echo").description == "Echo a token back."
    assert "domain 'elsewhere' is not an upstream of this gateway (notes)" in caplog.text
    store.close()


async def test_a_replica_keeps_its_catalog_while_postgres_is_down(
    mcp_kit: Any, caplog: Any
) -> None:
    with LocalPostgres() as server:
        store = PostgresCatalogStore(server.dsn)
        store.push([_tool("notes_echo", "Parrot a walrus token back unchanged.")])
        with caplog.at_level(logging.WARNING):
            gateway = Gateway(_config(mcp_kit, server.dsn))
            async with gateway, Client(gateway.server) as client:
                server.stop()

                async def noticed() -> bool:
                    return "keeping the current catalog" in caplog.text

                await _until(noticed)
                assert "notes_echo" in await _found(client, mcp_kit, "parrot walrus")
                assert await mcp_kit.execute(client, "notes_echo", token="w") == (False, "w")
                server.start()
                store.push([_tool("notes_list_notes", "Enumerate every kraken scroll title.")])

                async def caught_up() -> bool:
                    return "notes_list_notes" in await _found(client, mcp_kit, "kraken scroll")

                await _until(caught_up)

        # A replica started while the store is down serves its upstreams' tools, and follows
        # the store once it answers.
        server.stop()
        caplog.clear()
        with caplog.at_level(logging.WARNING):
            gateway = Gateway(_config(mcp_kit, server.dsn))
            async with gateway, Client(gateway.server) as client:
                assert "catalog store not available at start" in caplog.text
                assert "notes_echo" in await _found(client, mcp_kit, "echo a token")
                server.start()

                async def following() -> bool:
                    return "notes_list_notes" in await _found(client, mcp_kit, "kraken scroll")

                await _until(following)
        store.close()


async def test_the_configured_embedder_caches_its_vectors_in_the_catalog_store(
    mcp_kit: Any, pg_dsn: str
) -> None:
    # ``[search] embedder`` names it (tests/support is on the path), ``[store] catalog`` caches
    # its vectors in PostgreSQL: what ``toolmgmt serve`` reaches with the config alone.
    config = parse_config(
        mcp_kit.stdio_upstream("notes")
        + f'\n[store]\ncatalog = "{pg_dsn}"\n'
        + '\n[search]\nembedder = "support.embedders:HashingEmbedder"\n'
    )
    async with Gateway(config) as gateway, Client(gateway.server) as client:
        assert gateway.catalog.embedder.model_id == "hashing-256"
        assert "notes_echo" in await _found(client, mcp_kit, "echo a token")
    cache = PostgresEmbeddingCache(pg_dsn)
    try:
        assert len(cache) >= len(gateway.catalog)  # every tool's vector, kept for every replica
    finally:
        cache.close()


def _write_row(dsn: str, definition: dict[str, Any]) -> None:
    """A row as an older version or a hand-written statement stores it: unchecked."""
    import json

    import psycopg
    from psycopg.types.json import Jsonb

    from toolmgmt_core._model.schema import tool_from_dict, tool_to_definition

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT 1 FROM toolmgmt_tools LIMIT 0")  # made by the store before
        revision = conn.execute(
            "INSERT INTO toolmgmt_tools (name, definition, revision) "
            "VALUES (%s, %s, nextval('toolmgmt_tools_revision')) RETURNING revision",
            [definition["name"], Jsonb(tool_to_definition(tool_from_dict(definition)))],
        ).fetchone()[0]
        payload = {"op": "upsert", "name": definition["name"], "revision": revision}
        conn.execute("SELECT pg_notify('toolmgmt_catalog', %s)", [json.dumps(payload)])


async def test_lookalike_rows_neither_stop_a_replica_nor_its_follower(
    mcp_kit: Any, pg_dsn: str, caplog: Any
) -> None:
    # Issue 25, item 1: two look-alike rows made every replica's follower resync without end,
    # and a replica started over them exited with a cancel-scope RuntimeError.
    store = PostgresCatalogStore(pg_dsn)
    store.push([_tool("notes_echo", "Parrot a walrus token back unchanged.")])
    _write_row(pg_dsn, _tool("notes_Echo", "Parrot it back, mine."))
    with caplog.at_level(logging.WARNING):
        async with Gateway(_config(mcp_kit, pg_dsn)) as gateway, Client(gateway.server) as client:
            assert "skipped tool 'notes_Echo'" in caplog.text  # the message names the row
            found = await _found(client, mcp_kit, "parrot walrus")
            assert "notes_echo" in found and "notes_Echo" not in found
            assert await mcp_kit.execute(client, "notes_echo", token="w") == (False, "w")
            # one arriving while serving: skipped too, and later pushes still arrive
            _write_row(pg_dsn, _tool("notes_ECHO", "Parrot it back, mine too."))
            store.push([_tool("notes_list_notes", "Enumerate every kraken scroll title.")])

            async def followed() -> bool:
                return "notes_list_notes" in await _found(client, mcp_kit, "kraken scroll")

            await _until(followed)
            follower = gateway.shared.follower  # type: ignore[union-attr]
            assert follower.connected and follower.resyncs == 1
            assert sorted(follower.skipped) == ["notes_ECHO", "notes_Echo"]
    store.close()


async def test_a_failure_while_starting_surfaces_as_itself(
    mcp_kit: Any, pg_dsn: str, monkeypatch: Any
) -> None:
    # It used to surface as "Attempted to exit a cancel scope that isn't the current tasks's
    # current cancel scope", which hid the cause (the upstreams' task group was left open).
    from toolmgmt_gateway.catalog_store import SharedCatalog

    def fail(self: Any) -> bool:
        raise ValueError("the real cause")

    monkeypatch.setattr(SharedCatalog, "sync", fail)
    with pytest.raises(ValueError, match="the real cause"):
        async with Gateway(_config(mcp_kit, pg_dsn)):
            pass
