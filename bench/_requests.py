"""A conversation's requests in the providers' own shapes, and what each block of them costs.

A conversation is kept as neutral items (:data:`Item`: the user's text, the model's calls, the
results, searches and tool additions). :class:`AnthropicRequests` and :class:`ResponsesRequests`
turn the items and the tool list of one step into the request a client would send (Anthropic
Messages, OpenAI Responses), checked with the providers' own SDK types, and into the blocks the
provider renders (:class:`~toolmgmt_core._providers.caching.Segment`), each with its tokens
(o200k over the block's compact JSON) and its cache breakpoint.

What a provider renders is not always what is sent:

- Anthropic leaves deferred tools (``defer_loading: true``) out of the prompt; a
  ``tool_reference`` (in a search result or a ``tool_addition``) is expanded there into the
  referenced tool's definition, so it costs that definition's tokens where it appears;
- OpenAI renders a deferred function's name and description (its parameters load when a
  search finds it); a ``tool_search_output`` or ``additional_tools`` item carries definitions
  in full.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolmgmt_core import count_tokens
from toolmgmt_core._calls.execution import dumps_compact
from toolmgmt_core._providers.caching import Segment

__all__ = [
    "ANTHROPIC_SEARCH",
    "AnthropicRequests",
    "Additions",
    "Answer",
    "Call",
    "Item",
    "References",
    "ResponsesRequests",
    "Result",
    "ServerSearch",
    "TokenCounter",
    "UserText",
    "digest",
]

ANTHROPIC_SEARCH = "tool_search_tool_bm25"
"""The name of Anthropic's server-side search tool (BM25 variant)."""


@dataclass(frozen=True)
class UserText:
    """The user's message."""

    text: str


@dataclass(frozen=True)
class Call:
    """A call the model writes (original tool name; the request uses the provider's name)."""

    id: str
    name: str
    arguments: Mapping[str, Any]
    search: bool = False
    """OpenAI: the model's call of a client-executed ``tool_search`` (a ``tool_search_call``
    item); Anthropic: an ordinary ``tool_use`` of the custom search tool."""


@dataclass(frozen=True)
class Result:
    """A tool's result as text, answering the call ``id``."""

    id: str
    text: str


@dataclass(frozen=True)
class References:
    """A client-side search's answer to the call ``id``: the tools it loads (Anthropic: a
    ``tool_result`` of ``tool_reference`` blocks; OpenAI: a ``tool_search_output`` carrying
    their definitions)."""

    id: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class ServerSearch:
    """The provider's own tool search, run on its side within one response (Anthropic
    ``server_tool_use`` + ``tool_search_tool_result``; OpenAI ``tool_search_call`` +
    ``tool_search_output`` with ``execution: server``)."""

    id: str
    query: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class Additions:
    """Tools made callable from this point of the conversation (Anthropic ``tool_addition``
    blocks in a system message, beta; OpenAI an ``additional_tools`` item)."""

    names: tuple[str, ...]


@dataclass(frozen=True)
class Answer:
    """The model's final text."""

    text: str


Item = UserText | Call | Result | References | ServerSearch | Additions | Answer
"""One entry of a neutral conversation."""


@dataclass
class TokenCounter:
    """o200k tokens of a JSON value's compact form, each distinct text counted once."""

    encoding: str = "o200k_base"
    _seen: dict[str, int] = field(default_factory=dict)

    def text(self, text: str) -> int:
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        if key not in self._seen:
            self._seen[key] = count_tokens(text, self.encoding)
        return self._seen[key]

    def json(self, value: Any) -> int:
        return self.text(dumps_compact(value))


def digest(value: Any) -> str:
    """A short identity of a JSON value (equal values, equal digests)."""
    text = dumps_compact(value)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _key(*parts: Any) -> str:
    return digest(parts)


@dataclass
class _Block:
    """One rendered block: the JSON sent, its identity and its cost."""

    role: str
    data: dict[str, Any]
    tokens: int
    key: str
    output: bool = False
    """Written by the model (output tokens of the step that produced it)."""


_EPHEMERAL = {"type": "ephemeral"}


@functools.cache
def _validator(kind: Any) -> Callable[[Any], None]:
    """A strict check of a value against an SDK type (built once per type: building is slow)."""
    from pydantic import TypeAdapter

    adapter = TypeAdapter(kind)

    def check(value: Any) -> None:
        adapter.validate_python(value, strict=True)

    return check


class _Requests:
    """What both providers' requests share: the definitions, the token counter, rendered
    blocks kept per conversation position, and SDK checks run once per distinct part."""

    provider = ""
    places: frozenset[str] = frozenset()
    """The breakpoint places this provider's requests accept."""

    def __init__(
        self,
        definitions: Mapping[str, dict[str, Any]],
        tokens: TokenCounter,
        *,
        breakpoints: Iterable[str],
        check: bool,
    ) -> None:
        self.definitions = definitions
        self.tokens = tokens
        self.breakpoints = frozenset(breakpoints)
        unknown = self.breakpoints - self.places
        if unknown:
            raise ValueError(
                f"unknown breakpoint places {sorted(unknown)}; valid: {sorted(self.places)}"
            )
        self._blocks: dict[int, list[_Block]] = {}
        self._check = check
        self._checked: set[str] = set()

    def name(self, original: str) -> str:
        return str(self.definitions[original]["name"])

    def _render(self, index: int, item: Item) -> list[_Block]:
        raise NotImplementedError

    def output_tokens(self, index: int, item: Item) -> int:
        """Tokens the model wrote for ``item`` (0 for what it did not write)."""
        return sum(b.tokens for b in self._render(index, item) if b.output)

    def _validate_parts(
        self, request: Mapping[str, Any], kind: Any, parts: Mapping[str, Callable[[Any], None]]
    ) -> None:
        """Top-level keys known to ``kind``; each list ``parts[key]`` checked, once a value."""
        top = set(request) - set(kind.__annotations__)
        assert not top, f"keys unknown to {kind.__name__}: {top}"
        for key, check in parts.items():
            for value in request[key]:
                seen = digest(value)
                if seen not in self._checked:
                    check(value)
                    self._checked.add(seen)


class AnthropicRequests(_Requests):
    """Anthropic Messages requests for a conversation.

    Args:
        definitions: original tool name -> its formatted Anthropic tool (from ``format_tools``),
            for every tool a call, reference or addition names.
        tokens: the token counter.
        breakpoints: where ``cache_control`` goes: ``"tools"`` (the last tool loaded up front),
            ``"system"`` (the system prompt), ``"last"`` (automatic caching: the top-level
            ``cache_control``, on the last block).
        check: validate every request with the SDK's beta ``MessageCreateParams`` types.
    """

    provider = "anthropic"
    places = frozenset({"tools", "system", "last"})

    def __init__(
        self,
        definitions: Mapping[str, dict[str, Any]],
        tokens: TokenCounter,
        *,
        breakpoints: Iterable[str] = ("system", "last"),
        check: bool = True,
    ) -> None:
        super().__init__(definitions, tokens, breakpoints=breakpoints, check=check)

    def _definition_tokens(self, original: str) -> int:
        definition = {k: v for k, v in self.definitions[original].items() if k != "defer_loading"}
        return self.tokens.json(definition)

    def _render(self, index: int, item: Item) -> list[_Block]:
        cached = self._blocks.get(index)
        if cached is not None:
            return cached
        blocks: list[_Block] = []
        if isinstance(item, UserText):
            data: dict[str, Any] = {"type": "text", "text": item.text}
            blocks.append(_Block("user", data, self.tokens.json(data), _key("user", data)))
        elif isinstance(item, Call):
            data = {
                "type": "tool_use",
                "id": item.id,
                "name": self.name(item.name),
                "input": dict(item.arguments),
            }
            blocks.append(_Block("assistant", data, self.tokens.json(data), _key(data), True))
        elif isinstance(item, Result):
            data = {"type": "tool_result", "tool_use_id": item.id, "content": item.text}
            blocks.append(_Block("user", data, self.tokens.json(data), _key("user", data)))
        elif isinstance(item, References):
            refs = [{"type": "tool_reference", "tool_name": self.name(n)} for n in item.names]
            data = {"type": "tool_result", "tool_use_id": item.id, "content": refs}
            shell = self.tokens.json({**data, "content": []})
            cost = shell + sum(self._definition_tokens(n) for n in item.names)
            blocks.append(_Block("user", data, cost, _key("user", data)))
        elif isinstance(item, ServerSearch):
            use = {
                "type": "server_tool_use",
                "id": item.id,
                "name": ANTHROPIC_SEARCH,
                "input": {"query": item.query},
            }
            refs = [{"type": "tool_reference", "tool_name": self.name(n)} for n in item.names]
            found = {
                "type": "tool_search_tool_result",
                "tool_use_id": item.id,
                "content": {"type": "tool_search_tool_search_result", "tool_references": refs},
            }
            shell = self.tokens.json(
                {
                    **found,
                    "content": {"type": "tool_search_tool_search_result", "tool_references": []},
                }
            )
            cost = shell + sum(self._definition_tokens(n) for n in item.names)
            blocks.append(_Block("assistant", use, self.tokens.json(use), _key(use), True))
            blocks.append(_Block("assistant", found, cost, _key(found)))
        elif isinstance(item, Additions):
            for n in item.names:
                data = {
                    "type": "tool_addition",
                    "tool": {"type": "tool_reference", "name": self.name(n)},
                }
                cost = self.tokens.json({"type": "tool_addition"}) + self._definition_tokens(n)
                blocks.append(_Block("system", data, cost, _key("system", data)))
        elif isinstance(item, Answer):
            data = {"type": "text", "text": item.text}
            blocks.append(_Block("assistant", data, self.tokens.json(data), _key(data), True))
        else:  # pragma: no cover - the Item union is closed
            raise TypeError(f"not a conversation item: {item!r}")
        self._blocks[index] = blocks
        return blocks

    def _tools(self, tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        sent = [dict(t) for t in tools]
        if "tools" in self.breakpoints:
            for tool in reversed(sent):
                if not tool.get("defer_loading"):
                    tool["cache_control"] = dict(_EPHEMERAL)
                    break
        return sent

    def build(
        self, tools: Sequence[dict[str, Any]], items: Sequence[Item], *, system: str, model: str
    ) -> tuple[dict[str, Any], list[Segment]]:
        """The request of one step and the blocks Anthropic renders from it."""
        sent_tools = self._tools(tools)
        system_block: dict[str, Any] = {"type": "text", "text": system}
        if "system" in self.breakpoints:
            system_block["cache_control"] = dict(_EPHEMERAL)
        segments: list[Segment] = []
        for tool in sent_tools:
            if tool.get("defer_loading"):
                continue  # not in the prompt until a tool_reference loads it
            bare = {k: v for k, v in tool.items() if k != "cache_control"}
            segments.append(
                Segment(_key("tool", bare), self.tokens.json(bare), "cache_control" in tool)
            )
        segments.append(
            Segment(_key("system", system), self.tokens.text(system), "system" in self.breakpoints)
        )
        messages: list[dict[str, Any]] = []
        for index, item in enumerate(items):
            for block in self._render(index, item):
                if messages and messages[-1]["role"] == block.role:
                    messages[-1]["content"].append(block.data)
                else:
                    messages.append({"role": block.role, "content": [block.data]})
                segments.append(Segment(block.key, block.tokens))
        request: dict[str, Any] = {
            "model": model,
            "max_tokens": 4096,
            "system": [system_block],
            "tools": sent_tools,
            "messages": messages,
        }
        if "last" in self.breakpoints and segments:
            request["cache_control"] = dict(_EPHEMERAL)
            last = segments[-1]
            segments[-1] = Segment(last.key, last.tokens, True)
        if self._check:
            self._validate(request)
        return request, segments

    def _validate(self, request: Mapping[str, Any]) -> None:
        from anthropic.types.beta import BetaMessageParam, BetaToolUnionParam
        from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming

        self._validate_parts(
            request,
            MessageCreateParamsNonStreaming,
            {"tools": _validator(BetaToolUnionParam), "messages": _validator(BetaMessageParam)},
        )
        marks = sum("cache_control" in t for t in request["tools"])
        marks += sum("cache_control" in b for b in request["system"])
        marks += "cache_control" in request
        assert marks <= 4, f"{marks} cache breakpoints; Anthropic accepts at most 4"


class ResponsesRequests(_Requests):
    """OpenAI Responses requests for a conversation.

    Args:
        definitions: original tool name -> its formatted Responses function tool.
        tokens: the token counter.
        breakpoints: ``"system"`` sends the instructions as a developer message carrying a
            ``prompt_cache_breakpoint`` (GPT-5.6 and later); the implicit breakpoint on the
            latest item is the provider's own.
        check: validate every request with the SDK's ``ResponseCreateParams`` types.
    """

    provider = "openai-responses"
    places = frozenset({"system"})

    def __init__(
        self,
        definitions: Mapping[str, dict[str, Any]],
        tokens: TokenCounter,
        *,
        breakpoints: Iterable[str] = ("system",),
        check: bool = True,
    ) -> None:
        super().__init__(definitions, tokens, breakpoints=breakpoints, check=check)

    def _loaded(self, names: Iterable[str]) -> list[dict[str, Any]]:
        return [dict(self.definitions[n]) for n in names]

    def _render(self, index: int, item: Item) -> list[_Block]:
        cached = self._blocks.get(index)
        if cached is not None:
            return cached
        datas: list[tuple[dict[str, Any], bool]] = []
        if isinstance(item, UserText):
            datas.append(
                ({"role": "user", "content": [{"type": "input_text", "text": item.text}]}, False)
            )
        elif isinstance(item, Call) and item.search:
            datas.append(
                (
                    {
                        "type": "tool_search_call",
                        "call_id": item.id,
                        "execution": "client",
                        "status": "completed",
                        "arguments": dict(item.arguments),
                    },
                    True,
                )
            )
        elif isinstance(item, Call):
            datas.append(
                (
                    {
                        "type": "function_call",
                        "call_id": item.id,
                        "name": self.name(item.name),
                        "arguments": dumps_compact(dict(item.arguments)),
                    },
                    True,
                )
            )
        elif isinstance(item, Result):
            datas.append(
                ({"type": "function_call_output", "call_id": item.id, "output": item.text}, False)
            )
        elif isinstance(item, References):
            datas.append(
                (
                    {
                        "type": "tool_search_output",
                        "call_id": item.id,
                        "execution": "client",
                        "status": "completed",
                        "tools": self._loaded(item.names),
                    },
                    False,
                )
            )
        elif isinstance(item, ServerSearch):
            datas.append(
                (
                    {
                        "type": "tool_search_call",
                        "call_id": item.id,
                        "execution": "server",
                        "status": "completed",
                        "arguments": {"query": item.query},
                    },
                    True,
                )
            )
            datas.append(
                (
                    {
                        "type": "tool_search_output",
                        "call_id": item.id,
                        "execution": "server",
                        "status": "completed",
                        "tools": self._loaded(item.names),
                    },
                    False,
                )
            )
        elif isinstance(item, Additions):
            datas.append(
                (
                    {
                        "type": "additional_tools",
                        "role": "developer",
                        "tools": [
                            {k: v for k, v in d.items() if k != "defer_loading"}
                            for d in self._loaded(item.names)
                        ],
                    },
                    False,
                )
            )
        elif isinstance(item, Answer):
            datas.append(({"role": "assistant", "content": item.text}, True))
        else:  # pragma: no cover - the Item union is closed
            raise TypeError(f"not a conversation item: {item!r}")
        blocks = [_Block("input", d, self.tokens.json(d), _key(d), out) for d, out in datas]
        self._blocks[index] = blocks
        return blocks

    def _tool_segment(self, tool: Mapping[str, Any]) -> Segment:
        if tool.get("type") == "namespace":
            seen = {"name": tool["name"], "description": tool.get("description", "")}
            loaded = [t for t in tool.get("tools", ()) if not t.get("defer_loading")]
            return Segment(_key("ns", seen, loaded), self.tokens.json([seen, *loaded]))
        if tool.get("defer_loading"):
            seen = {"name": tool["name"], "description": tool.get("description", "")}
            return Segment(_key("deferred", seen), self.tokens.json(seen))
        return Segment(_key("tool", tool), self.tokens.json(tool))

    def build(
        self, tools: Sequence[dict[str, Any]], items: Sequence[Item], *, system: str, model: str
    ) -> tuple[dict[str, Any], list[Segment]]:
        """The request of one step and the blocks OpenAI renders from it."""
        segments = [self._tool_segment(t) for t in tools]
        request: dict[str, Any] = {"model": model, "tools": [dict(t) for t in tools]}
        inputs: list[dict[str, Any]] = []
        if "system" in self.breakpoints:
            developer = {
                "role": "developer",
                "content": [
                    {
                        "type": "input_text",
                        "text": system,
                        "prompt_cache_breakpoint": {"mode": "explicit"},
                    }
                ],
            }
            inputs.append(developer)
            segments.append(Segment(_key(developer), self.tokens.json(developer), True))
        else:
            request["instructions"] = system
            segments.append(Segment(_key("instructions", system), self.tokens.text(system)))
        for index, item in enumerate(items):
            for block in self._render(index, item):
                inputs.append(block.data)
                segments.append(Segment(block.key, block.tokens))
        request["input"] = inputs
        if self._check:
            self._validate(request)
        return request, segments

    def _validate(self, request: Mapping[str, Any]) -> None:
        from openai.types.responses import ResponseInputItemParam, ToolParam
        from openai.types.responses.response_create_params import (
            ResponseCreateParamsNonStreaming,
        )

        self._validate_parts(
            request,
            ResponseCreateParamsNonStreaming,
            {"tools": _validator(ToolParam), "input": _validator(ResponseInputItemParam)},
        )
