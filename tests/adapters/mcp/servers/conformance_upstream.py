"""The tools the MCP conformance suite's server scenarios call, as an upstream of the gateway.

``bench/conformance.sh`` serves them through the gateway with ``prefix = ""`` and
``always_on``, so the suite reaches them by their own names and exercises the gateway's call
path (session validation, upstream call, error mapping, the relay of questions) end to end.

The tools that ask their user something (elicitation, sampling, roots) ask the way the
connection's protocol does: on 2026, an input-required result whose answers come with the
retry (the gateway's connection; the SDK seals this server's request state under its own key);
on 2025, a request to the client in the middle of the call. The keys, schemas and texts are
the suite's reference server's (its ``everything-server.ts``).
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any

import anyio
import mcp.types as t
from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.message import ServerMessageMetadata
from mcp.types import (
    AudioContent,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)
from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

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


def _json_schema_tool(
    name: str | None = None,
    address: dict | None = None,
    contactMethod: str | None = None,  # noqa: N803 - the suite's property names
    phone: str | None = None,
    email: str | None = None,
) -> str:
    return f"{name} at {address}"


server.add_tool(
    _json_schema_tool,
    name="json_schema_2020_12_tool",
    description="Tool with JSON Schema 2020-12 features",
)
# Keep the exact 2020-12 schema the suite checks for (SEP-1613 and SEP-2106: $schema, $defs,
# $anchor, additionalProperties, allOf/anyOf, if/then/else).
server._tool_manager.get_tool("json_schema_2020_12_tool").parameters = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "$anchor": "addressDef",
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {
        "name": {"type": "string"},
        "address": {"$ref": "#/$defs/address"},
        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
        "phone": {"type": "string"},
        "email": {"type": "string"},
    },
    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then": {"required": ["phone"]},
    "else": {"required": ["email"]},
    "additionalProperties": False,
}


@server.tool(
    description="Echo a region, which the caller also sends as the Mcp-Param-Region header."
)
def test_custom_header(region: str) -> str:
    return f"region: {region}"


# SEP-2243: the region argument is mirrored in an Mcp-Param-Region header.
server._tool_manager.get_tool("test_custom_header").parameters = {
    "type": "object",
    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
    "required": ["region"],
}


# -- questions to the user (2026: input-required results; 2025: requests mid-call) --------------


def _elicit(message: str, properties: dict[str, Any], required: list[str]) -> t.ElicitRequest:
    schema = {"type": "object", "properties": properties, "required": required}
    return t.ElicitRequest(
        params=t.ElicitRequestFormParams(message=message, requested_schema=schema)
    )


def _sample(text: str, max_tokens: int = 100) -> t.CreateMessageRequest:
    message = t.SamplingMessage(role="user", content=t.TextContent(type="text", text=text))
    return t.CreateMessageRequest(
        params=t.CreateMessageRequestParams(messages=[message], max_tokens=max_tokens)
    )


_ANSWER_TYPES = {
    "elicitation/create": t.ElicitResult,
    "sampling/createMessage": t.CreateMessageResult,
    "roots/list": t.ListRootsResult,
}


async def _ask(
    ctx: Context, questions: dict[str, Any], state: Any = None
) -> dict[str, Any] | t.InputRequiredResult:
    """The answers to ``questions``, as plain JSON: on 2026 the retry's (else an input-required
    result asking those not answered, with ``state``); on 2025 asked now, one by one."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        answers = {
            key: answer.model_dump(mode="json", by_alias=True, exclude_none=True)
            for key, answer in (ctx.input_responses or {}).items()
        }
        missing = {key: q for key, q in questions.items() if key not in answers}
        if missing:
            return t.InputRequiredResult(
                input_requests=missing,
                request_state=None if state is None else json.dumps(state),
            )
        return answers
    session = ctx.request_context.session
    metadata = ServerMessageMetadata(related_request_id=ctx.request_context.request_id)
    asked = {}
    for key, question in questions.items():
        answer = await session.send_request(
            question, _ANSWER_TYPES[question.method], metadata=metadata
        )
        asked[key] = answer.model_dump(mode="json", by_alias=True, exclude_none=True)
    return asked


def _state(ctx: Context) -> dict[str, Any]:
    """This server's own request state, as the retry brought it back (the SDK opened it)."""
    try:
        state = json.loads(ctx.request_state or "{}")
    except ValueError:
        return {}
    return state if isinstance(state, dict) else {}


def _sampled(answer: dict[str, Any]) -> str:
    content = answer.get("content")
    return content.get("text", "") if isinstance(content, dict) else ""


def _text(text: str) -> t.CallToolResult:
    return t.CallToolResult(content=[t.TextContent(type="text", text=text)])


NAME = _elicit("What is your name?", {"name": {"type": "string"}}, ["name"])
CONFIRM = _elicit("Please confirm", {"ok": {"type": "boolean"}}, ["ok"])
ROOTS = t.ListRootsRequest()


@server.tool(description="Needs the client's sampling capability (-32021 without it).")
async def test_missing_capability(ctx: Context) -> str:
    capabilities = ctx.client_capabilities
    if capabilities is None or capabilities.sampling is None:
        raise MCPError(
            MISSING_REQUIRED_CLIENT_CAPABILITY,
            "Client did not declare the sampling capability this tool needs",
            {"requiredCapabilities": {"sampling": {}}},
        )
    return "Success"


@server.tool(description="Ask the user's name.", structured_output=False)
async def test_input_required_result_elicitation(ctx: Context) -> Any:
    answers = await _ask(ctx, {"user_name": NAME})
    if isinstance(answers, t.InputRequiredResult):
        return answers
    return _text(f"Hello, {answers['user_name'].get('content', {}).get('name')}!")


@server.tool(description="Ask the client's model a question.", structured_output=False)
async def test_input_required_result_sampling(ctx: Context) -> Any:
    answers = await _ask(ctx, {"capital_question": _sample("What is the capital of France?")})
    if isinstance(answers, t.InputRequiredResult):
        return answers
    return _text(f"Sampling result: {_sampled(answers['capital_question'])}")


@server.tool(description="Ask the client's roots.", structured_output=False)
async def test_input_required_result_list_roots(ctx: Context) -> Any:
    answers = await _ask(ctx, {"client_roots": ROOTS})
    if isinstance(answers, t.InputRequiredResult):
        return answers
    return _text(f"Found {len(answers['client_roots'].get('roots', []))} root(s)")


@server.tool(description="Ask a confirmation, keeping request state.", structured_output=False)
async def test_input_required_result_request_state(ctx: Context) -> Any:
    answers = await _ask(ctx, {"confirm": CONFIRM}, {"kind": "request-state"})
    if isinstance(answers, t.InputRequiredResult):
        return answers
    confirmed = answers["confirm"].get("content", {}).get("ok") is True
    if _state(ctx).get("kind") == "request-state" and confirmed:
        return _text("state-ok: requestState validated")
    return _text("state-missing")


@server.tool(description="Ask three questions at once.", structured_output=False)
async def test_input_required_result_multiple_inputs(ctx: Context) -> Any:
    questions = {
        "user_name": NAME,
        "greeting": _sample("Generate a greeting", 50),
        "client_roots": ROOTS,
    }
    answers = await _ask(ctx, questions, {"kind": "multiple-inputs"})
    if isinstance(answers, t.InputRequiredResult):
        return answers
    name = answers["user_name"].get("content", {}).get("name")
    roots = len(answers["client_roots"].get("roots", []))
    return _text(f"Name: {name}; Greeting: {_sampled(answers['greeting'])}; Roots: {roots}")


@server.tool(description="Ask two questions, one after the other.", structured_output=False)
async def test_input_required_result_multi_round(ctx: Context) -> Any:
    state = _state(ctx)
    if state.get("round") == 2 and "step2" in (ctx.input_responses or {}):
        answers = await _ask(ctx, {"step2": _color()})
        assert not isinstance(answers, t.InputRequiredResult)
        color = answers["step2"].get("content", {}).get("color")
        return _text(f"Multi-round complete for {state.get('name')} who likes {color}")
    if state.get("round") == 1 and "step1" in (ctx.input_responses or {}):
        answers = await _ask(ctx, {"step1": _step1()})
        assert not isinstance(answers, t.InputRequiredResult)
        name = answers["step1"].get("content", {}).get("name")
        return t.InputRequiredResult(
            input_requests={"step2": _color()},
            request_state=json.dumps({"round": 2, "name": name}),
        )
    asked = await _ask(ctx, {"step1": _step1()}, {"round": 1})
    if isinstance(asked, t.InputRequiredResult):
        return asked
    # 2025: asked mid-call, both rounds at once
    more = await _ask(ctx, {"step2": _color()})
    assert not isinstance(more, t.InputRequiredResult)
    name = asked["step1"].get("content", {}).get("name")
    return _text(
        f"Multi-round complete for {name} who likes {more['step2'].get('content', {}).get('color')}"
    )


def _step1() -> t.ElicitRequest:
    return _elicit("Step 1: What is your name?", {"name": {"type": "string"}}, ["name"])


def _color() -> t.ElicitRequest:
    return _elicit("Step 2: What is your favorite color?", {"color": {"type": "string"}}, ["color"])


@server.tool(
    description="Ask a confirmation under integrity-protected state.", structured_output=False
)
async def test_input_required_result_tampered_state(ctx: Context) -> Any:
    answers = await _ask(ctx, {"confirm": CONFIRM}, {"kind": "tamper-test"})
    if isinstance(answers, t.InputRequiredResult):
        return answers
    if _state(ctx).get("kind") != "tamper-test":
        raise MCPError(-32602, "requestState integrity check failed")
    return _text("integrity-ok: state verified")


@server.tool(
    description="Ask only what the client declared it can answer.", structured_output=False
)
async def test_input_required_result_capabilities(ctx: Context) -> Any:
    capabilities = ctx.client_capabilities
    questions: dict[str, Any] = {}
    if capabilities is not None and capabilities.elicitation is not None:
        questions["elicit_input"] = _elicit(
            "Elicitation input", {"value": {"type": "string"}}, ["value"]
        )
    if capabilities is not None and capabilities.sampling is not None:
        questions["sample_input"] = _sample("Sample request", 50)
    if ctx.input_responses:
        return _text(f"capabilities-ok: received {','.join(sorted(ctx.input_responses))}")
    if not questions:
        return _text("No supported capabilities declared")
    answers = await _ask(ctx, questions, {"kind": "capabilities-test"})
    if isinstance(answers, t.InputRequiredResult):
        return answers
    return _text(f"capabilities-ok: received {','.join(sorted(answers))}")


@server.tool(description="Report progress, then ask for input.", structured_output=False)
async def test_streaming_elicitation(ctx: Context) -> Any:
    await ctx.report_progress(50, 100)
    answers = await _ask(ctx, {"confirm": CONFIRM})
    if isinstance(answers, t.InputRequiredResult):
        return answers
    return _text("Streaming complete")


@server.tool(description="Log a message (delivered only to a client that asked for logs).")
async def test_logging_tool(ctx: Context) -> str:
    await ctx.info("Diagnostic trace logging activated")
    return "Logging evaluated"


# -- the 2025 scenarios' questions ---------------------------------------------------------------


@server.tool(description="Ask the client's model to answer a prompt.", structured_output=False)
async def test_sampling(prompt: str, ctx: Context) -> Any:
    answers = await _ask(ctx, {"sample": _sample(prompt)})
    if isinstance(answers, t.InputRequiredResult):
        return answers
    return _text(f"LLM response: {_sampled(answers['sample'])}")


def _elicited(answer: dict[str, Any]) -> str:
    content = json.dumps(answer.get("content") or {})
    return f"action={answer.get('action')}, content={content}"


@server.tool(description="Ask the user for their name and email.", structured_output=False)
async def test_elicitation(message: str, ctx: Context) -> Any:
    properties = {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    }
    answers = await _ask(ctx, {"user": _elicit(message, properties, ["username", "email"])})
    if isinstance(answers, t.InputRequiredResult):
        return answers
    return _text(f"User response: {_elicited(answers['user'])}")


@server.tool(
    description="Ask with a default for each primitive type (SEP-1034).", structured_output=False
)
async def test_elicitation_sep1034_defaults(ctx: Context) -> Any:
    properties = {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {
            "type": "string",
            "description": "User status",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "description": "Verification status", "default": True},
    }
    message = "Please review and update the form fields with defaults"
    answers = await _ask(ctx, {"form": _elicit(message, properties, [])})
    if isinstance(answers, t.InputRequiredResult):
        return answers
    return _text(f"Elicitation completed: {_elicited(answers['form'])}")


@server.tool(description="Ask with each enum variant (SEP-1330).", structured_output=False)
async def test_elicitation_sep1330_enums(ctx: Context) -> Any:
    def titled(prefix: str, word: str) -> list[dict[str, str]]:
        return [
            {"const": f"value{n}", "title": f"{ordinal} {word}"}
            for n, ordinal in ((1, "First"), (2, "Second"), (3, "Third"))
        ]

    options = ["option1", "option2", "option3"]
    properties = {
        "untitledSingle": {"type": "string", "description": "Select one option", "enum": options},
        "titledSingle": {
            "type": "string",
            "description": "Select one option with titles",
            "oneOf": titled("value", "Option"),
        },
        "legacyEnum": {
            "type": "string",
            "description": "Select one option (legacy)",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "description": "Select multiple options",
            "minItems": 1,
            "maxItems": 3,
            "items": {"type": "string", "enum": options},
        },
        "titledMulti": {
            "type": "array",
            "description": "Select multiple options with titles",
            "minItems": 1,
            "maxItems": 3,
            "items": {"anyOf": titled("value", "Choice")},
        },
    }
    message = "Please select options from the enum fields"
    answers = await _ask(ctx, {"form": _elicit(message, properties, [])})
    if isinstance(answers, t.InputRequiredResult):
        return answers
    return _text(f"Elicitation completed: {_elicited(answers['form'])}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":  # one upstream for several gateways
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
