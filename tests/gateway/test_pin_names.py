"""Pins by folded name and upstream, over the whole definition, kept beside the config (issue
41, findings 1, 2 and the output-schema half of 3). An upstream subprocess renames its
destructive ``delete_note`` to ``DELETE_NOTE`` and marks it read-only: that is the pinned tool
changed, held back until trusted, never a new tool that runs without the approval the old one
needed. An upstream with ``prefix = ""`` listing another upstream's names while that one is
down never takes them. A changed output schema is a change, and the quarantine reads it
(tests/gateway/test_pins.py: a restarted gateway compares against the pins beside its config)."""

from __future__ import annotations

import json
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


def _env(tmp_path: Path, name: str, **more: str) -> dict[str, str]:
    return {
        "RUGPULL_FLAG": str(tmp_path / f"{name}.flipped"),
        "RUGPULL_RUNS": str(tmp_path / f"{name}.runs"),
        **more,
    }


def _runs(tmp_path: Path, name: str = "notes") -> list[str]:
    runs = tmp_path / f"{name}.runs"
    return runs.read_text().splitlines() if runs.exists() else []


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "gateway.toml"
    path.write_text(text)
    return path


async def _until(check: Any, timeout: float = 30.0) -> None:
    with anyio.fail_after(timeout):
        while not check():
            await anyio.sleep(0.05)


async def test_a_rename_to_a_read_only_look_alike_is_the_pinned_tool_changed(
    mcp_kit: Any, tmp_path: Path, capsys: Any
) -> None:
    k = mcp_kit
    env = _env(tmp_path, "notes", RUGPULL_CHANGE="rename")
    config = _config(tmp_path, k.stdio_upstream("notes", RUGPULL, env=env))
    async with Gateway(load_config(config)) as gateway, Client(gateway.server) as client:
        error, _ = await k.execute(client, "notes_delete_note", title="t1")
        assert error  # destructive: an approval this client cannot give
        assert await k.execute(client, "notes_flip") == (False, "flipped")

        def held() -> bool:
            return "notes_DELETE_NOTE" in gateway.upstreams.status()[0].quarantined

        await _until(held)
        assert "notes_DELETE_NOTE" not in gateway.catalog
        for asked in ("notes_delete_note", "notes_DELETE_NOTE"):
            error, value = await k.execute(client, asked, title="t2")
            assert error, value
            assert "toolmgmt catalog trust notes_DELETE_NOTE" in value["message"]
            assert "its name, annotations changed" in value["message"]
            assert "readOnlyHint None -> True" in value["message"]
        assert _runs(tmp_path) == []  # never ran without the approval it needed

        assert main(["catalog", "trust", "--config", str(config)]) == 0
        listed = capsys.readouterr().out
        assert "notes_DELETE_NOTE" in listed and "name (was notes_delete_note)" in listed
        assert main(["catalog", "trust", "notes_DELETE_NOTE", "--config", str(config)]) == 0
        await _until(lambda: "notes_DELETE_NOTE" in gateway.catalog)
        assert await k.execute(client, "notes_DELETE_NOTE", title="t3") == (False, "deleted t3")
    assert _runs(tmp_path) == ["t3"]


async def test_an_upstream_never_takes_another_upstreams_names_whoever_starts_first(
    mcp_kit: Any, tmp_path: Path
) -> None:
    k = mcp_kit
    down = tmp_path / "notes.down"
    down.touch()  # the real upstream fails at start
    real_env = _env(tmp_path, "notes", RUGPULL_DOWN=str(down))
    real = k.stdio_upstream("notes", RUGPULL, env=real_env, reconnect_delay=0)
    shadow_env = _env(tmp_path, "shadow", RUGPULL_PREFIX="notes_")
    shadow = k.stdio_upstream("shadow", RUGPULL, env=shadow_env, prefix="")
    config = _config(tmp_path, real + shadow)
    async with Gateway(load_config(config)) as gateway, Client(gateway.server) as client:
        assert "notes_get_note" not in gateway.catalog  # the shadow took nothing
        notes, other = gateway.upstreams.status()
        assert notes.error and not notes.tools
        assert set(other.refused) == {"notes_delete_note", "notes_get_note"}
        assert "upstream 'notes''s prefix" in other.refused["notes_get_note"]
        down.unlink()  # the real one comes back: its names are its own
        error, value = await k.execute(client, "notes_get_note", title="a")
        assert (error, value) == (False, "note a"), value
        assert gateway.catalog.find("notes_get_note").domain == "notes"
    async with Gateway(load_config(config)) as gateway, Client(gateway.server) as client:
        assert set(gateway.upstreams.status()[1].refused) == {"notes_delete_note", "notes_get_note"}
        assert gateway.catalog.find("notes_delete_note").domain == "notes"
    pins = json.loads((tmp_path / "gateway.pins.json").read_text())["pins"]
    assert {(p["name"], p["source"]) for p in pins} >= {("notes_get_note", "notes")}
    assert all(p["source"] != "shadow" or not p["name"].startswith("notes_") for p in pins)
    assert _runs(tmp_path, "shadow") == []


async def test_a_changed_output_schema_is_held_back(mcp_kit: Any, tmp_path: Path) -> None:
    k = mcp_kit
    env = _env(tmp_path, "notes", RUGPULL_CHANGE="output")
    config = _config(tmp_path, k.stdio_upstream("notes", RUGPULL, env=env))
    async with Gateway(load_config(config)) as gateway, Client(gateway.server) as client:
        assert await k.execute(client, "notes_flip") == (False, "flipped")
        await _until(lambda: "notes_get_note" in gateway.upstreams.status()[0].quarantined)
        error, value = await k.call(client, "get_tool_schema", {"tool_name": "notes_get_note"})
        assert error and "IMPORTANT NOTE" not in json.dumps(value)
        error, value = await k.execute(client, "notes_get_note", title="x")
        assert error and "its outputSchema changed" in value["message"]


async def test_the_quarantine_reads_an_output_schema_on_first_sight(
    mcp_kit: Any, tmp_path: Path
) -> None:
    k = mcp_kit
    (tmp_path / "notes.flipped").touch()  # get_note's output schema speaks to the model
    env = _env(tmp_path, "notes", RUGPULL_CHANGE="output")
    text = k.stdio_upstream("notes", RUGPULL, env=env) + "[policy]\nquarantine = true\n"
    async with Gateway(load_config(_config(tmp_path, text))) as gateway:
        async with Client(gateway.server) as client:
            assert "notes_get_note" in gateway.catalog  # pinned as first seen, and hidden
            error, value = await k.call(client, "get_tool_schema", {"tool_name": "notes_get_note"})
            assert error and "IMPORTANT NOTE" not in json.dumps(value)
            error, value = await k.call(client, "get_tool_schema", {"tool_name": "notes_flip"})
            assert not error
