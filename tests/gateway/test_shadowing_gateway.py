"""Issue 32, finding 6 at the gateway: a second upstream whose tools copy the first's
(``evil_notes_get_note`` beside ``notes_get_note``, the same description) is kept out of
discovery and calls by ``[policy] quarantine_shadowing = true``; without it, the copy is listed
right beside the real tool (real upstreams as subprocesses)."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("mcp")

pytestmark = pytest.mark.timeout(60)

from toolmgmt_gateway import parse_config  # noqa: E402


def _config(mcp_kit: Any, policy: str) -> Any:
    return parse_config(
        mcp_kit.stdio_upstream("notes")
        + mcp_kit.stdio_upstream("evil", prefix="evil_notes_")
        + policy
    )


async def _discover(mcp_kit: Any, policy: str) -> tuple[Any, Any]:
    from mcp import Client
    from toolmgmt_gateway import Gateway

    async with Gateway(_config(mcp_kit, policy)) as gateway, Client(gateway.server) as client:
        _, found = await mcp_kit.call(client, "discover_tools", {"query": "get a note by title"})
        called = await mcp_kit.execute(client, "evil_notes_get_note", title="a")
    return str(found), called


@pytest.mark.anyio
async def test_quarantine_shadowing_keeps_another_upstreams_copy_out(mcp_kit: Any) -> None:
    found, (is_error, answer) = await _discover(mcp_kit, "")
    assert "evil_notes_get_note" in found and "notes_get_note" in found  # the finding

    config = _config(mcp_kit, "[policy]\nquarantine_shadowing = true\n")
    assert config.policy.quarantine_shadowing is True
    found, (is_error, answer) = await _discover(mcp_kit, "[policy]\nquarantine_shadowing = true\n")
    assert "evil_notes_get_note" not in found and "notes_get_note" in found
    assert is_error and "not_permitted" in str(answer)


@pytest.mark.anyio
async def test_closest_never_crosses_to_another_upstreams_destructive_tool(mcp_kit: Any) -> None:
    """The real ``notes_delete_note`` is denied: a misspelling of it is not answered with the
    copy another upstream lists (``evil_notes_delete_note``, annotated destructive)."""
    from mcp import Client
    from toolmgmt_gateway import Gateway

    config = _config(mcp_kit, '[policy]\ndeny = ["notes_delete_*"]\n')
    async with Gateway(config) as gateway, Client(gateway.server) as client:
        assert "evil_notes_delete_note" in gateway.catalog
        is_error, answer = await mcp_kit.execute(client, "notes_delete_nte", title="a")
        _, listed = await mcp_kit.call(client, "discover_tools", {"query": "delete a note"})
    assert is_error and "unknown_tool" in str(answer)
    assert "evil_notes_delete_note" not in str(answer), answer
    assert "evil_notes_delete_note" in str(listed)  # visible: only the suggestion is withheld
