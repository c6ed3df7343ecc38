"""Pinned upstream tools (issue 32, finding 5: a rug pull). An upstream subprocess flips its
destructive ``delete_note`` to read-only (description unchanged) and announces the change: on
two replicas sharing a real PostgreSQL, the tool is quarantined (not listed, not run, an error
naming the operator's command) until ``toolmgmt catalog trust`` accepts it; a change that lowers
no guard is taken at once with ``accept_changes``, one that lowers a guard never is."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp import Client  # noqa: E402
from toolmgmt_gateway import Gateway, load_config  # noqa: E402

from toolmgmt_core._cli import main  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

RUGPULL = Path(__file__).resolve().parents[1] / "adapters" / "mcp" / "servers" / "rugpull_server.py"


def _config(
    tmp_path: Path, mcp_kit: Any, extra: str = "", change: str = "", **upstream: Any
) -> Path:
    env = {"RUGPULL_FLAG": str(tmp_path / "flipped"), "RUGPULL_RUNS": str(tmp_path / "runs")}
    env["RUGPULL_CHANGE"] = change
    path = tmp_path / "gateway.toml"
    path.write_text(mcp_kit.stdio_upstream("notes", RUGPULL, env=env, **upstream) + extra)
    return path


def _runs(tmp_path: Path) -> list[str]:
    runs = tmp_path / "runs"
    return runs.read_text().splitlines() if runs.exists() else []


async def _listed(client: Client, mcp_kit: Any) -> set[str]:
    _, found = await mcp_kit.call(client, "discover_tools", {"query": "note delete read"})
    return set(found.get("tools", {})) if isinstance(found, dict) else set()


async def _until(check: Any, timeout: float = 30.0) -> None:
    with anyio.fail_after(timeout):
        while not await check():
            await anyio.sleep(0.05)


def _truncate_pins(dsn: str) -> None:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        if conn.execute("SELECT to_regclass('toolmgmt_pins')").fetchone()[0]:
            conn.execute("TRUNCATE toolmgmt_pins")


async def _refreshed(gateway: Any) -> bool:
    """Whether ``gateway`` took the flipped listing in: held back, or (without pins) served."""
    status = gateway.upstreams.status()[0]
    tool = gateway.upstreams.catalog.find("notes_delete_note")
    flipped = tool is not None and tool.annotations.read_only is True
    return flipped or "notes_delete_note" in getattr(status, "quarantined", {})


async def test_a_rug_pull_is_quarantined_on_both_replicas_until_trusted(
    mcp_kit: Any, pg_dsn: str, tmp_path: Path, caplog: Any, capsys: Any
) -> None:
    pytest.importorskip("psycopg")
    _truncate_pins(pg_dsn)
    config = _config(tmp_path, mcp_kit, f'\n[store]\ncatalog = "{pg_dsn}"\n')
    k = mcp_kit
    with caplog.at_level(logging.WARNING, logger="toolmgmt_mcp"):
        async with (
            Gateway(load_config(config)) as one,
            Gateway(load_config(config)) as two,
            Client(one.server) as a,
            Client(two.server) as b,
        ):
            # Before: destructive, so it needs an approval these clients cannot give.
            error, _ = await k.execute(a, "notes_delete_note", title="t1")
            assert error and _runs(tmp_path) == []
            for gateway, client in ((one, a), (two, b)):
                assert await k.execute(client, "notes_flip") == (False, "flipped")

                await _until(lambda gateway=gateway: _refreshed(gateway))
            for gateway, client in ((one, a), (two, b)):
                error, value = await k.execute(client, "notes_delete_note", title="t2")
                assert error, value
                assert "toolmgmt catalog trust notes_delete_note" in value["message"]
                assert "readOnlyHint None -> True" in value["message"]
                assert "notes_delete_note" not in await _listed(client, k)
                assert "notes_get_note" in await _listed(client, k)
                assert gateway.upstreams.pin_changes[("notes", "quarantined")] == 1
            assert _runs(tmp_path) == []  # it never ran
            assert "is quarantined" in caplog.text

            # The operator reviews the held change and accepts it with the real command.
            assert main(["catalog", "trust", "--config", str(config)]) == 0
            assert "notes_delete_note" in capsys.readouterr().out
            assert main(["catalog", "trust", "notes_delete_note", "--config", str(config)]) == 0
            for client in (a, b):
                error, value = await k.execute(client, "notes_delete_note", title="t3")
                assert (error, value) == (False, "deleted t3")
                assert "notes_delete_note" in await _listed(client, k)
    assert _runs(tmp_path) == ["t3", "t3"]


async def test_accept_changes_takes_a_harmless_change_and_never_a_lowered_guard(
    mcp_kit: Any, tmp_path: Path, caplog: Any
) -> None:
    k = mcp_kit
    metrics = "[gateway]\nmetrics = true\n"
    config = _config(tmp_path, mcp_kit, metrics, change="description", accept_changes=True)
    with caplog.at_level(logging.WARNING, logger="toolmgmt_mcp"):
        async with Gateway(load_config(config)) as gateway, Client(gateway.server) as client:
            assert await k.execute(client, "notes_flip") == (False, "flipped")

            async def taken() -> bool:
                tool = gateway.catalog.find("notes_get_note")
                return tool is not None and tool.description.endswith("quickly.")

            await _until(taken)
            assert gateway.upstreams.pin_changes[("notes", "accepted")] == 1
            assert "changed (description) and was accepted" in caplog.text
            text = gateway.metrics.text()[0].decode()  # what GET /metrics serves
            counted = [
                line
                for line in text.splitlines()
                if line.startswith("toolmgmt_gateway_upstream_pin_changes_total{")
            ]
            assert len(counted) == 1 and 'upstream="notes"' in counted[0]
            assert 'outcome="accepted"' in counted[0] and counted[0].endswith(" 1.0")
    (tmp_path / "flipped").unlink()
    config = _config(tmp_path, mcp_kit, accept_changes=True)
    async with Gateway(load_config(config)) as gateway, Client(gateway.server) as client:
        assert await k.execute(client, "notes_flip") == (False, "flipped")

        async def held() -> bool:
            return "notes_delete_note" in gateway.upstreams.status()[0].quarantined

        await _until(held)
        error, value = await k.execute(client, "notes_delete_note", title="x")
        assert error and "lowers a guard" in value["message"]
    assert _runs(tmp_path) == []


@pytest.mark.parametrize(
    ("extra", "kept"),
    [('\n[gateway]\npins_file = "pins.json"\n', "pins.json"), ("", "gateway.pins.json")],
    ids=["pins_file", "by-default"],
)
async def test_pins_file_keeps_pins_across_restarts_and_takes_a_trust(
    mcp_kit: Any, tmp_path: Path, extra: str, kept: str
) -> None:
    """Issue 41, finding 2: with no setting, the pins are kept beside the config."""
    k = mcp_kit
    config = _config(tmp_path, mcp_kit, extra)
    async with Gateway(load_config(config)) as gateway:  # first sight: pinned in the file
        assert "notes_delete_note" in gateway.catalog
    assert (tmp_path / kept).exists()
    (tmp_path / "flipped").touch()  # the upstream changed while the gateway was down
    async with Gateway(load_config(config)) as gateway, Client(gateway.server) as client:
        assert "notes_delete_note" not in gateway.catalog
        error, value = await k.execute(client, "notes_delete_note", title="x")
        assert error and "quarantined" in value["message"]
        assert main(["catalog", "trust", "notes_delete_note", "--config", str(config)]) == 0

        async def listed_again() -> bool:  # without a call: the replica rechecks on its own
            return "notes_delete_note" in gateway.catalog

        await _until(listed_again)
        assert await k.execute(client, "notes_delete_note", title="y") == (False, "deleted y")
    assert _runs(tmp_path) == ["y"]


def test_trust_without_a_place_for_pins_says_what_to_set(
    mcp_kit: Any, tmp_path: Path, capsys: Any
) -> None:
    config = _config(tmp_path, mcp_kit, "[gateway]\npins_file = false\n")
    assert main(["catalog", "trust", "notes_delete_note", "--config", str(config)]) == 2
    assert "accept_changes = true" in capsys.readouterr().err
    assert sys.executable  # the upstream table names this interpreter
