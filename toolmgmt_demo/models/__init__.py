"""Offline stand-ins for a model, so that every example runs with no API key and no network.

Each plays one simple agent (:func:`next_move`): given the user's latest request, the calls it
made since, and the tools it is offered now, it calls the offered tool whose name and
description share the most words with the request (arguments taken from the request: an id
such as ``ch_0001``, a capitalised name such as ``Oslo``, a number), else searches with
``tool_search``, and after a catalog tool's result it answers with that result. A tool that a
search gave with its definition, and that is not listed, runs through ``call_tool``. It knows no
meaning; it is a stand-in, so the examples show toolmgmt at work, never a model's skill.

One per framework, each built on that framework's own offline model:

- LangChain: :class:`toolmgmt_demo.models.langchain.DemoChatModel` (a chat model that binds
  tools; needs ``toolmgmt[langchain]``);
- PydanticAI: :func:`toolmgmt_demo.models.pydantic_ai.demo_model` (a ``FunctionModel``; needs
  ``toolmgmt[pydantic-ai]``);
- LiteLLM: :func:`openai_reply` (this module, no framework), the agent's answer as an OpenAI
  chat completion for LiteLLM's ``mock_response``.

Usage::

    from toolmgmt_demo.models.langchain import DemoChatModel

    model = DemoChatModel()  # offline; a real one: model = "openai:gpt-4.1"
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolmgmt_core import Tool, format_tools
from toolmgmt_core.integration import CALL_TOOL, META_TOOL_NAMES, TOOL_SEARCH, example_arguments

__all__ = ["Offered", "ToolCall", "called_name", "next_move", "openai_reply", "openai_tools"]

_STOPWORDS = frozenset(
    "a an and any are by can do does for from get give how i in is it me my of on or please "
    "show tell that the their them then this to what when where which who with would you your "
    "all".split()
)
_ID = re.compile(r"\b([a-z]+)_[A-Za-z0-9_]*\d[A-Za-z0-9_]*\b")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
_PROPER = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+(?:\s[A-Z][a-z]+)*\b")
"""Capitalised words that do not start a sentence: a name, a city, a title."""
_ANSWER_LIMIT = 400


@dataclass(frozen=True)
class Offered:
    """A tool the model is offered now."""

    name: str
    """Its name, as the model sees it."""
    description: str = ""
    """Its description."""
    parameters: Mapping[str, Any] = field(default_factory=dict)
    """Its JSON Schema for the arguments."""


@dataclass(frozen=True)
class ToolCall:
    """The agent's move: call a tool."""

    name: str
    """The tool to call."""
    arguments: dict[str, Any]
    """Its arguments."""


def _words(text: str) -> set[str]:
    words = re.findall(r"[a-z]+", text.lower())
    return {w[:-1] if len(w) > 4 and w.endswith("s") else w for w in words if len(w) > 2} - set(
        _STOPWORDS
    )


def _value(name: str, schema: Mapping[str, Any], example: Any, request: str) -> Any:
    """A value for one argument, from the request when it holds one, else ``example``."""
    if "enum" in schema or "const" in schema:
        return example
    kind = schema.get("type")
    if kind in ("integer", "number"):
        found = _NUMBER.findall(_ID.sub(" ", request))
        if not found:
            return example
        return int(float(found[0])) if kind == "integer" else float(found[0])
    if kind != "string":
        return example
    ids = [m.group(0) for m in _ID.finditer(request)]
    prefix = _ID.match(example) if isinstance(example, str) else None
    same_kind = [i for i in ids if prefix is not None and i.startswith(prefix.group(1) + "_")]
    if same_kind:
        return same_kind[0]
    if ids and (name == "id" or name.endswith("_id")):
        return ids[0]
    names = _PROPER.findall(request.strip())
    if names and not (name == "id" or name.endswith("_id")):
        return names[0]
    return example


def _arguments(tool: Offered, request: str) -> dict[str, Any]:
    properties = tool.parameters.get("properties") or {}
    try:
        sample = example_arguments(Tool(name="demo", parameters=tool.parameters))
    except Exception:  # a schema the sampler cannot read: fill what the request gives
        sample = {}
    arguments = {}
    for name in tool.parameters.get("required") or list(properties)[:1]:
        schema = properties.get(name)
        if isinstance(schema, Mapping):
            value = _value(name, schema, sample.get(name), request)
            if value is not None:
                arguments[name] = value
    return {**sample, **arguments}


def next_move(
    request: str, done: Sequence[tuple[str, str]], offered: Sequence[Offered]
) -> ToolCall | str:
    """The demo agent's next move.

    Args:
        request: the user's latest message.
        done: the calls made since that message, in order: ``(tool name, result text)``.
        offered: the tools offered now.

    Returns:
        The tool to call next, or the final answer (a string).
    """
    if done and done[-1][0] not in META_TOOL_NAMES:
        name, result = done[-1]
        text = result if len(result) <= _ANSWER_LIMIT else result[:_ANSWER_LIMIT] + " ..."
        return f"{name} answered: {text}"
    called = {name for name, _ in done}
    wanted = _words(request)
    listed = {t.name for t in offered}
    found = [t for t in _found(done) if t.name not in listed]
    candidates = [
        t for t in [*offered, *found] if t.name not in META_TOOL_NAMES and t.name not in called
    ]

    def score(tool: Offered) -> tuple[int, int]:
        name_words = _words(tool.name.replace("_", " "))
        return len(wanted & (name_words | _words(tool.description))), len(wanted & name_words)

    best = max(candidates, key=score, default=None)  # the first of equals: the listed order
    if best is not None and score(best)[0] > 0:
        arguments = _arguments(best, request)
        if best.name not in listed and CALL_TOOL in listed:  # found, kept out of the list
            return ToolCall(CALL_TOOL, {"tool_name": best.name, "arguments": arguments})
        return ToolCall(best.name, arguments)
    if TOOL_SEARCH not in called and any(t.name == TOOL_SEARCH for t in offered):
        return ToolCall(TOOL_SEARCH, {"query": request})
    return "I found no tool for that among the tools I am offered."


def _found(done: Sequence[tuple[str, str]]) -> list[Offered]:
    """The tools a cache-stable ``tool_search`` gave with their definitions
    (``{"found": {name: {"description", "parameters", ...}}}``)."""
    tools: list[Offered] = []
    for name, result in done:
        if name != TOOL_SEARCH:
            continue
        try:
            value = json.loads(result)
        except ValueError:
            continue
        entries = value.get("found") if isinstance(value, Mapping) else None
        for found, entry in (entries or {}).items():
            if isinstance(entry, Mapping):
                tools.append(
                    Offered(found, str(entry.get("description", "")), entry.get("parameters") or {})
                )
    return tools


def called_name(name: str, arguments: Any) -> str:
    """The tool a call ran: ``call_tool``'s ``tool_name``, else ``name`` itself."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            return name
    if name == CALL_TOOL and isinstance(arguments, Mapping):
        inner = arguments.get("tool_name")
        return inner if isinstance(inner, str) else name
    return name


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return " ".join(
            _text(p.get("text", "")) if isinstance(p, Mapping) else str(p) for p in content
        )
    return json.dumps(content, default=str)


def openai_tools(tools: Sequence[Mapping[str, Any]]) -> list[Offered]:
    """:class:`Offered` tools from OpenAI function tools (``{"type": "function", "function":
    {...}}``; other tools are left out)."""
    offered = []
    for tool in tools:
        function = tool.get("function") if tool.get("type") == "function" else None
        if isinstance(function, Mapping):
            offered.append(
                Offered(
                    str(function.get("name", "")),
                    str(function.get("description") or ""),
                    function.get("parameters") or {},
                )
            )
    return offered


def openai_reply(messages: Sequence[Mapping[str, Any]], session: Any) -> dict[str, Any]:
    """The demo agent's answer to an OpenAI-style conversation, as an OpenAI chat completion,
    for LiteLLM's ``mock_response``.

    Args:
        messages: the conversation so far (``{"role", "content", ...}`` dicts).
        session: the :class:`~toolmgmt_core.ToolSession` whose tools the model is offered (what
            ``format_tools(session, "openai")`` lists).
    """
    start = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    request = _text(messages[start]["content"]) if start >= 0 else ""
    names = {
        call["id"]: called_name(call["function"]["name"], call["function"].get("arguments"))
        for message in messages[start + 1 :]
        for call in message.get("tool_calls") or ()
    }
    done = [
        (names.get(m.get("tool_call_id"), str(m.get("name", ""))), _text(m.get("content")))
        for m in messages[start + 1 :]
        if m.get("role") == "tool"
    ]
    move = next_move(request, done, openai_tools(format_tools(session, "openai")["tools"]))
    message: dict[str, Any] = {"role": "assistant", "content": move}
    if isinstance(move, ToolCall):
        call = {
            "id": f"call_{len(done) + 1}",
            "type": "function",
            "function": {"name": move.name, "arguments": json.dumps(move.arguments)},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    finish = "tool_calls" if isinstance(move, ToolCall) else "stop"
    return {"choices": [{"index": 0, "message": message, "finish_reason": finish}]}
