"""Helpers for the MCP gateway tests: upstream servers, configs, and calls through a client."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

# The upstream servers are the MCP adapter tests' (tests/adapters/mcp/servers).
SERVERS = Path(__file__).resolve().parents[1] / "adapters" / "mcp" / "servers"
NOTES = SERVERS / "notes_server.py"
RAW = SERVERS / "raw_server.py"
PYTHON = sys.executable


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def stdio_upstream(name: str, script: Path = NOTES, **keys: Any) -> str:
    """A ``[upstreams.NAME]`` TOML table for a stdio server script."""
    lines = [
        f"[upstreams.{name}]",
        f"command = {json.dumps(PYTHON)}",
        f"args = [{json.dumps(str(script))}]",
    ]
    lines += [f"{key} = {_toml_value(value)}" for key, value in keys.items()]
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value)


async def call(client: Any, name: str, arguments: dict[str, Any]) -> tuple[bool, Any]:
    """Call a gateway meta-tool; (is_error, the JSON or text of its one text block)."""
    result = await client.call_tool(name, arguments)
    text = result.content[0].text
    try:
        return bool(result.is_error), json.loads(text)
    except ValueError:
        return bool(result.is_error), text


async def execute(client: Any, tool: str, **arguments: Any) -> tuple[bool, Any]:
    return await call(client, "execute_tool", {"tool_name": tool, "arguments": arguments})


@pytest.fixture
def mcp_kit() -> Any:
    """The helpers above, for test modules (importlib mode keeps conftest out of sys.path)."""
    from types import SimpleNamespace

    return SimpleNamespace(
        NOTES=NOTES,
        RAW=RAW,
        PYTHON=PYTHON,
        stdio_upstream=stdio_upstream,
        call=call,
        execute=execute,
    )
