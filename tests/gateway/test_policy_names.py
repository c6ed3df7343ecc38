"""Gateway policies on tool names as exposed: prefixes, scopes, and deny patterns that can match
nothing (the attacks end to end are in tests/security)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

pytestmark = pytest.mark.timeout(60)

from toolmgmt_gateway import parse_config  # noqa: E402
from toolmgmt_gateway.server import _policy_steps  # noqa: E402

from toolmgmt_core import Tool, ToolCatalog  # noqa: E402
from toolmgmt_core._model.errors import ConfigError  # noqa: E402
from toolmgmt_core._policy.view import PolicyView  # noqa: E402

UPSTREAMS = """\
[upstreams.notes]
command = "python"
prefix = "n_"
policy = { deny = ["delete_*"] }

[upstreams.files]
command = "python"
prefix = ""
policy = { allow = ["read_*"] }
"""


def test_upstream_policies_match_exposed_names_in_their_own_domain() -> None:
    steps = _policy_steps(parse_config(UPSTREAMS))
    assert [(s.label, s.domain) for s in steps] == [
        ("upstream:notes", "notes"),
        ("upstream:files", "files"),
    ]
    catalog = ToolCatalog(
        [
            Tool("n_delete_note", domain="notes"),
            Tool("n_get_note", domain="notes"),
            Tool("read_file", domain="files"),
            Tool("delete_file", domain="files"),  # matches notes' glob, but is not a note
        ]
    )
    view = PolicyView(catalog, None, steps)
    assert [t.name for t in catalog if view.allows(t)] == ["n_get_note", "read_file"]


@pytest.mark.parametrize(
    "deny",
    ['"notes_delete_*"', '"domain:nope"', '"x_*"'],
)
def test_a_gateway_deny_that_can_match_no_exposed_name_is_an_error(deny: str) -> None:
    with pytest.raises(ConfigError, match=r"can match no tool.*n_<tool> \(notes\)"):
        parse_config(
            UPSTREAMS.replace('prefix = ""\n', 'prefix = "f_"\n') + f"[policy]\ndeny = [{deny}]\n"
        )


@pytest.mark.parametrize(
    "deny",
    [
        '"n_delete_*"',
        '"domain:notes"',
        '"*_delete_*"',
        '"destructive"',
        '"group:notes/write"',
        '"anything"',
    ],
)
def test_deny_patterns_that_can_match_are_accepted(deny: str) -> None:
    # "anything" can match: files has an empty prefix, so any name may be exposed
    parse_config(UPSTREAMS + f"[policy]\ndeny = [{deny}]\n")


def test_a_bad_pattern_in_the_gateway_policy_names_the_forms() -> None:
    with pytest.raises(ConfigError, match="Unknown pattern prefix 'tool'"):
        parse_config(UPSTREAMS + '[policy]\ndeny = ["tool:x"]\n')


HOSTILE = Path(__file__).resolve().parents[1] / "security" / "servers" / "hostile_server.py"


def _hostile(name: str, env: dict[str, str], **keys: object) -> str:
    inner = ", ".join(f"{k} = {json.dumps(v)}" for k, v in env.items())
    lines = [
        f"[upstreams.{name}]",
        f"command = {json.dumps(sys.executable)}",
        f"args = [{json.dumps(str(HOSTILE))}]",
        f"env = {{ {inner} }}",
        *(f"{k} = {json.dumps(v)}" for k, v in keys.items()),
    ]
    return "\n".join(lines) + "\n"


@pytest.mark.anyio
async def test_a_look_alike_upstream_tool_is_skipped_and_reported() -> None:
    from mcp import Client
    from toolmgmt_gateway import Gateway

    config = parse_config(_hostile("notes", {"HOSTILE_LOOKALIKE": "1"}))
    async with Gateway(config) as gateway, Client(gateway.server):
        status = gateway.upstreams.status()[0]
    assert status.tools == ["notes_get_note", "notes_delete_note"]
    assert "same name as 'notes_get_note'" in dict(status.skipped)["notes_Get-Note"]


@pytest.mark.anyio
async def test_only_a_name_the_policy_may_show_restarts_a_down_upstream(tmp_path: Path) -> None:
    from mcp import Client
    from toolmgmt_gateway import Gateway

    starts = tmp_path / "starts"
    env = {"HOSTILE_STARTS": str(starts), "HOSTILE_EXIT": "1"}
    text = _hostile("notes", env, reconnect_delay=0, connect_timeout=5)
    config = parse_config(text + '[policy]\ndeny = ["notes_delete_*"]\n')

    def count() -> int:
        return len(starts.read_text().split()) if starts.exists() else 0

    async with Gateway(config) as gateway, Client(gateway.server) as client:
        assert count() == 1  # started once at startup (some of its tools may be shown)
        for name in ("notes_delete_note", "NOTES-delete-note"):
            await client.call_tool("execute_tool", {"tool_name": name, "arguments": {}})
        assert count() == 1
        await client.call_tool("execute_tool", {"tool_name": "notes_get_note", "arguments": {}})
        assert count() == 2
