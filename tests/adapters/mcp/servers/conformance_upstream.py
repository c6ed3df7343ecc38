"""The tools the MCP conformance suite's server scenarios call, as an upstream of the gateway.

``bench/conformance.sh`` serves them through the gateway with ``prefix = ""`` and
``always_on``, so the suite reaches them by their own names and exercises the gateway's call
path (session validation, upstream call, error mapping) end to end.
"""

from __future__ import annotations

import base64

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

# A 1x1 red PNG and a tiny WAV header, as the suite suggests.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c63f8cfc0f01f0005000201a5d1c3a0000000"
        "0049454e44ae426082"
    )
).decode()
WAV = base64.b64encode(b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00").decode()

server = MCPServer("conformance-upstream")


@server.tool(description="Return a simple text response.")
def test_simple_text() -> str:
    return "This is a simple text response for testing."


@server.tool(description="Always fail, for error reporting tests.")
def test_error_handling() -> str:
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool(description="Return a 1x1 PNG image.", structured_output=False)
def test_image_content() -> list[ImageContent]:
    return [ImageContent(type="image", data=PNG, mime_type="image/png")]


@server.tool(description="Return a tiny WAV sound.", structured_output=False)
def test_audio_content() -> list[AudioContent]:
    return [AudioContent(type="audio", data=WAV, mime_type="audio/wav")]


@server.tool(description="Return an embedded text resource.", structured_output=False)
def test_embedded_resource() -> list[EmbeddedResource]:
    resource = TextResourceContents(
        uri="test://embedded-resource",
        mime_type="text/plain",
        text="This is an embedded resource content.",
    )
    return [EmbeddedResource(type="resource", resource=resource)]


@server.tool(description="Return text, an image and a resource.", structured_output=False)
def test_multiple_content_types() -> list[TextContent | ImageContent | EmbeddedResource]:
    resource = TextResourceContents(
        uri="test://mixed-content-resource",
        mime_type="application/json",
        text='{"test":"data","value":123}',
    )
    return [
        TextContent(type="text", text="Multiple content types test:"),
        ImageContent(type="image", data=PNG, mime_type="image/png"),
        EmbeddedResource(type="resource", resource=resource),
    ]


@server.tool(description="Report progress 0, 50 and 100 of 100, then answer.")
async def test_tool_with_progress(ctx: Context) -> str:
    for step in (0, 50, 100):
        await ctx.report_progress(step, 100)
        await anyio.sleep(0.05)
    return "Progress test completed"


def _json_schema_tool(name: str | None = None, address: dict | None = None) -> str:
    return f"{name} at {address}"


server.add_tool(
    _json_schema_tool,
    name="json_schema_2020_12_tool",
    description="Tool with JSON Schema 2020-12 features",
)
# Keep the exact 2020-12 schema the suite checks for ($schema, $defs, additionalProperties).
server._tool_manager.get_tool("json_schema_2020_12_tool").parameters = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}

if __name__ == "__main__":
    server.run()
