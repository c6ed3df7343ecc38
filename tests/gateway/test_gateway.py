"""The gateway end to end with real MCP servers: upstreams as stdio subprocesses, the gateway
in process, and an ``mcp.Client`` doing discover -> schema -> execute; faults, policy, refresh."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio  # noqa: E402
from mcp import Client, MCPError  # noqa: E402
from toolmgmt_gateway import Gateway, parse_config  # noqa: E402

from toolmgmt_core import count_tokens  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def gateway(text: str) -> Gateway:
    return Gateway(parse_config(text))


async def test_discover_schema_execute_through_the_gateway(mcp_kit: Any) -> None:
    k = mcp_kit
    text = (
        k.stdio_upstream("notes", groups={"write": ["create_*", "delete_*"]})
        + k.stdio_upstream("raw", k.RAW)
        + '[policy]\ndeny = ["notes_delete_*"]\n'
    )
    async with gateway(text) as gw:
        for client_mode in ("auto", "legacy"):  # the 2026 protocol, then the 2025 handshake
            async with Client(gw.server, mode=client_mode) as client:
                await _discover_schema_execute(k, client, client_mode)
    status = {s.name: s for s in gw.upstreams.status()}
    assert status["raw"].tools == ["raw_ping"]
    skipped = dict(status["raw"].skipped)
    assert "not a valid JSON Schema" in skipped["broken"]
    assert "must describe an object" in skipped["weird"]


async def _discover_schema_execute(k: Any, client: Client, client_mode: str) -> None:
    """One client's whole workflow; ``client_mode`` only labels failures."""
    tools = (await client.list_tools()).tools
    assert [t.name for t in tools] == ["discover_tools", "get_tool_schema", "execute_tool"]
    hints = {t.name: t.annotations for t in tools}
    assert hints["discover_tools"].read_only_hint is True
    assert hints["get_tool_schema"].read_only_hint is True
    assert hints["execute_tool"].read_only_hint is False
    assert "discover_tools" in client.instructions and "notes, raw" in client.instructions

    error, toc = await k.call(client, "discover_tools", {})
    assert not error
    assert set(toc["domains"]) == {"notes", "raw"}
    assert toc["domains"]["raw"]["tools"] == 1  # broken and weird were skipped

    error, listing = await k.call(client, "discover_tools", {"domain": "notes"})
    names = {n for group in listing["groups"].values() for n in group}
    assert "notes_create_note" in listing["groups"]["write"]
    assert "notes_get_note" in names and "notes_delete_note" not in names  # denied: hidden

    error, found = await k.call(client, "discover_tools", {"query": "read a note by title"})
    assert "notes_get_note" in found["tools"]

    error, schema = await k.call(client, "get_tool_schema", {"tool_name": "notes_get_note"})
    assert not error
    assert schema["parameters"]["required"] == ["title"]
    assert schema["annotations"]["readOnlyHint"] is True
    assert "output_schema" in schema

    error, value = await k.execute(client, "notes_create_note", title="t1", body="hello")
    assert (error, value) == (False, "t1")
    error, value = await k.execute(client, "notes_get_note", title="t1")
    assert (error, value) == (False, {"title": "t1", "body": "hello"})
    assert await k.execute(client, "raw_ping") == (False, "pong")

    # An upstream isError is a tool error, distinct from the gateway's own errors.
    error, value = await k.execute(client, "notes_get_note", title="missing")
    assert error and value["kind"] == "tool" and "no note titled 'missing'" in value["message"]
    error, value = await k.execute(client, "notes_get_note", titel="t1")
    assert error and value["kind"] == "call" and value["error"] == "invalid_arguments"

    # A denied tool the model names is refused as not permitted (it stops looking for it), in
    # every door; an unknown name stays unknown.
    error, denied = await k.execute(client, "notes_delete_note", title="t1")
    error2, unknown = await k.execute(client, "notes_nonexistent_tool", title="t1")
    assert error and denied["error"] == "not_permitted"
    assert error2 and unknown["error"] == "unknown_tool"
    assert "notes_delete_note" not in str(
        await k.call(client, "discover_tools", {"query": "delete"})
    )
    error, value = await k.call(client, "get_tool_schema", {"tool_name": "notes_delete_note"})
    assert error
    error, value = await k.execute(client, "notes_get_note", title="t1")
    assert value["body"] == "hello"  # the note was not deleted

    with pytest.raises(MCPError, match="Unknown tool"):
        await client.call_tool("notes_get_note", {"title": "t1"})
    # Only a listed name, exactly as listed: the core forgives a folded meta-tool name
    # elsewhere; MCP's tools/call gets the protocol's error, naming the list.
    for name in ("Discover-Tools", "notes_delete_note"):
        with pytest.raises(MCPError) as refused:
            await client.call_tool(name, {})
        assert refused.value.error.code == -32602
        assert refused.value.error.message == (
            f"Unknown tool: {name}. Valid: discover_tools, execute_tool, get_tool_schema."
        )


async def test_faults_take_down_only_their_own_domain(mcp_kit: Any, tmp_path: Path) -> None:
    k = mcp_kit
    marker = tmp_path / "refuse-to-start"
    marker.write_text("x")
    text = (
        k.stdio_upstream("notes", timeout=1.5, reconnect_delay=0)
        + k.stdio_upstream("flaky", reconnect_delay=0, env={"NOTES_FAIL_IF_EXISTS": str(marker)})
        + k.stdio_upstream("raw", k.RAW)
        # Starts, then never answers the handshake.
        + "[upstreams.mute]\n"
        + f'command = "{k.PYTHON}"\nargs = ["-c", "import time; time.sleep(60)"]\n'
        + "connect_timeout = 1\nreconnect_delay = 0\n"
    )
    async with gateway(text) as gw, Client(gw.server) as client:
        status = {s.name: s for s in gw.upstreams.status()}
        assert not status["flaky"].connected and "failed to start" in status["flaky"].error
        assert status["mute"].error == "did not start within 1s"
        assert status["notes"].connected and status["raw"].connected
        error, value = await k.execute(client, "mute_anything")
        assert error and value["error"] == "tool_unavailable" and "'mute'" in value["message"]

        # Fails to start: its tools report the upstream by name; the rest work.
        error, value = await k.execute(client, "flaky_echo", token="a")
        assert error and value["error"] == "tool_unavailable" and "'flaky'" in value["message"]
        assert await k.execute(client, "notes_echo", token="b") == (False, "b")
        marker.unlink()
        assert await k.execute(client, "flaky_echo", token="c") == (False, "c")

        # Crashes mid-call: unavailable, named; others fine; the next use restarts it.
        error, value = await k.execute(client, "notes_crash")
        assert error and value["error"] == "tool_unavailable" and "'notes'" in value["message"]
        assert await k.execute(client, "raw_ping") == (False, "pong")
        assert await k.execute(client, "flaky_echo", token="d") == (False, "d")
        assert await k.execute(client, "notes_echo", token="e") == (False, "e")

        # Hangs past its timeout: a timeout naming it, within the timeout; then restarted.
        started = time.monotonic()
        error, value = await k.execute(client, "notes_hang", seconds=60)
        assert time.monotonic() - started < 30  # well before the 60 s the tool would take
        assert error and value["error"] == "timeout" and "'notes'" in value["message"]
        assert await k.execute(client, "raw_ping") == (False, "pong")
        assert await k.execute(client, "notes_echo", token="f") == (False, "f")


async def test_catalog_follows_upstream_tool_list_changes(mcp_kit: Any) -> None:
    k = mcp_kit
    # notes speaks the 2026 protocol (subscriptions/listen), old the 2025 one (notifications).
    text = k.stdio_upstream("notes") + k.stdio_upstream("old", mode="legacy")
    async with gateway(text) as gw, Client(gw.server) as client:
        for domain in ("notes", "old"):
            assert f"{domain}_shout" not in gw.catalog
            error, value = await k.execute(client, f"{domain}_add_tool", name="shout")
            assert not error
            with anyio.fail_after(10):
                while f"{domain}_shout" not in gw.catalog:
                    await anyio.sleep(0.05)
            error, listing = await k.call(client, "discover_tools", {"domain": domain})
            assert any(f"{domain}_shout" in group for group in listing["groups"].values())
            assert await k.execute(client, f"{domain}_shout", text="hi") == (False, "HI")


async def test_large_upstream_result_is_truncated(mcp_kit: Any) -> None:
    k = mcp_kit
    async with gateway(k.stdio_upstream("notes", max_result_tokens=300)) as gw:
        async with Client(gw.server) as client:
            result = await client.call_tool(
                "execute_tool", {"tool_name": "notes_big_result", "arguments": {"items": 2000}}
            )
            text = result.content[0].text
            assert not result.is_error
            assert count_tokens(text) <= 300
            assert "entry number 0" in text  # the head survives
            small = await client.call_tool(
                "execute_tool", {"tool_name": "notes_big_result", "arguments": {"items": 2}}
            )
            assert "entry number 1" in small.content[0].text  # nothing cut when it fits


async def test_always_on_tools_without_prefix_and_media_passed_on(mcp_kit: Any) -> None:
    k = mcp_kit
    text = '[gateway]\nalways_on = ["test_*"]\nmedia = "pass"\n' + k.stdio_upstream(
        "conf", k.NOTES.parent / "conformance_upstream.py", prefix=""
    )
    async with gateway(text) as gw, Client(gw.server) as client:
        names = [t.name for t in (await client.list_tools()).tools]
        assert names[:3] == ["discover_tools", "get_tool_schema", "execute_tool"]
        assert "test_simple_text" in names and "json_schema_2020_12_tool" not in names
        direct = await client.call_tool("test_simple_text", {})
        assert direct.content[0].text == "This is a simple text response for testing."
        failed = await client.call_tool("test_error_handling", {})
        assert failed.is_error and "intentionally returns an error" in failed.content[0].text
        image = await client.call_tool("test_image_content", {})
        assert "image/png" in image.content[0].text  # described for the model's text
        # passed on, then the line naming its upstream
        assert [block.type for block in image.content] == ["text", "image", "text"]
        # Its 2020-12 schema (allOf, if/then/else, $anchor) is checked as it is: an email or a
        # phone is required.
        arguments = {"name": "x", "email": "x@example.org"}
        via_gateway = await client.call_tool(
            "execute_tool", {"tool_name": "json_schema_2020_12_tool", "arguments": arguments}
        )
        assert via_gateway.content[0].text == "x at None"
        refused = await client.call_tool(
            "execute_tool", {"tool_name": "json_schema_2020_12_tool", "arguments": {"name": "x"}}
        )
        assert refused.is_error and "email" in refused.content[0].text
        assert gw.catalog.get("test_simple_text").output_schema == {"type": "string"}

        seen: list[tuple[float, float | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append((progress, total))

        done = await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        assert done.content[0].text == "Progress test completed"
        assert seen == [(0, 100), (50, 100), (100, 100)]  # relayed from the upstream
