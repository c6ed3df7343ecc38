"""The quick starts in README.md and docs/adapters.md run as written.

Each Python block runs in a fresh namespace, from ``notebooks/servers`` (where the MCP server the
PydanticAI quick start names lives). A line marked ``(the docs test uses a fake)`` gets a fake
model for the block's framework instead of a hosted one: the tests' scripted LangChain chat
model (``support.langchain_models``), a PydanticAI ``FunctionModel``, a LiteLLM custom provider.
Each fake plays one simple agent: on a user's message it calls the newest listed catalog tool
(or ``tool_search`` with the message), and after tool results it answers.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolmgmt_core.session.meta_tools import META_TOOL_NAMES

ROOT = Path(__file__).resolve().parents[2]
FAKE_LINE = re.compile(r"^(\s*)(\w+) = .*\(the docs test uses a fake\)\s*$", re.M)
README_SECTIONS = ("Core", "LangChain", "PydanticAI", "LiteLLM", "Search that learns from use")


def _python_blocks(path: Path) -> list[tuple[str, str]]:
    """``(heading, code)`` of each Python block, under its nearest heading."""
    blocks: list[tuple[str, str]] = []
    heading = ""
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        elif line.strip() == "```python":
            end = lines.index("```", i + 1)
            blocks.append((heading, "\n".join(lines[i + 1 : end])))
            i = end
        i += 1
    return blocks


def _readme_blocks() -> list[tuple[str, str]]:
    return [
        (f"README: {heading}", code)
        for heading, code in _python_blocks(ROOT / "README.md")
        if heading.split(" (")[0] in README_SECTIONS
    ]


def _adapter_blocks() -> list[tuple[str, str]]:
    return [(f"adapters.md: {h}", code) for h, code in _python_blocks(ROOT / "docs/adapters.md")]


BLOCKS = _readme_blocks() + _adapter_blocks()


def test_the_blocks_are_found() -> None:
    names = [name for name, _ in BLOCKS]
    for section in README_SECTIONS:
        assert any(name.startswith(f"README: {section}") for name in names), section
    assert sum(FAKE_LINE.search(code) is not None for _, code in BLOCKS) >= 5


def _arguments(schema: dict[str, Any]) -> dict[str, Any]:
    samples = {"string": "con_0001", "integer": 1, "number": 1.0, "boolean": True}
    properties = schema.get("properties") or {}
    return {
        name: samples.get(properties[name].get("type"), "con_0001")
        for name in schema.get("required") or []
        if name in properties
    }


def _pick(tools: list[tuple[str, dict[str, Any]]], text: str) -> tuple[str, dict[str, Any]] | None:
    """The agent's move on a user's message: the newest catalog tool, else a search."""
    own = [(n, s) for n, s in tools if n not in META_TOOL_NAMES]
    if own:
        name, schema = own[-1]
        return name, _arguments(schema)
    if any(n == "tool_search" for n, _ in tools):
        return "tool_search", {"query": text}
    return None


# -- the fakes ----------------------------------------------------------------------------------


class Seen:
    """What a fake model was offered and did, for the checks after a block ran."""

    def __init__(self) -> None:
        self.tools: list[list[str]] = []
        self.calls: list[str] = []


def _langchain_fake(seen: Seen) -> Any:
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
    from support.langchain_models import ScriptedChatModel

    def agent(messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
        offered = [(t["function"]["name"], t["function"]["parameters"]) for t in tools]
        seen.tools.append([n for n, _ in offered])
        move = _pick(offered, str(messages[-1].content))
        if not isinstance(messages[-1], HumanMessage) or move is None:
            return AIMessage(content="done")
        seen.calls.append(move[0])
        call = {"name": move[0], "args": move[1], "id": f"call_{len(seen.calls)}"}
        return AIMessage(content="", tool_calls=[call])

    return ScriptedChatModel(script=agent)


def _pydantic_ai_fake(seen: Seen) -> Any:
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, UserPromptPart
    from pydantic_ai.models.function import FunctionModel

    def agent(messages: list[Any], info: Any) -> ModelResponse:
        offered = [(t.name, t.parameters_json_schema) for t in info.function_tools]
        seen.tools.append([n for n, _ in offered])
        prompts = [p for p in messages[-1].parts if isinstance(p, UserPromptPart)]
        move = _pick(offered, str(prompts[0].content)) if prompts else None
        if move is None:
            return ModelResponse(parts=[TextPart("done")])
        seen.calls.append(move[0])
        return ModelResponse(parts=[ToolCallPart(move[0], move[1], f"call_{len(seen.calls)}")])

    return FunctionModel(agent)


def _litellm_fake(seen: Seen) -> Any:
    import litellm
    from litellm import CustomLLM

    class FakeProvider(CustomLLM):
        async def acompletion(
            self, model: str, messages: list[Any], *args: Any, **kwargs: Any
        ) -> Any:
            tools = (kwargs.get("optional_params") or {}).get("tools") or []
            offered = [(t["function"]["name"], t["function"]["parameters"]) for t in tools]
            seen.tools.append([n for n, _ in offered])
            last = messages[-1]
            move = _pick(offered, str(last.get("content"))) if last["role"] == "user" else None
            message: dict[str, Any] = {"role": "assistant", "content": "done"}
            if move is not None:
                seen.calls.append(move[0])
                function = {"name": move[0], "arguments": json.dumps(move[1])}
                call = {"id": f"call_{len(seen.calls)}", "type": "function", "function": function}
                message = {"role": "assistant", "content": None, "tool_calls": [call]}
            return litellm.ModelResponse(
                model=model,
                choices=[
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if move else "stop",
                    }
                ],
            )

    litellm.custom_provider_map = [{"provider": "docsfake", "custom_handler": FakeProvider()}]
    litellm.utils.custom_llm_setup()
    return "docsfake/agent"


FAKES = {"langchain": _langchain_fake, "pydantic_ai": _pydantic_ai_fake, "litellm": _litellm_fake}


def _framework(code: str) -> str | None:
    for name in FAKES:
        if re.search(rf"^(from|import) {name}\b", code, re.M):
            return name
    return None


@pytest.fixture
def isolated() -> Iterator[None]:
    """Run from notebooks/servers; leave LiteLLM's global callbacks as they were."""
    cwd = os.getcwd()
    os.chdir(ROOT / "notebooks" / "servers")
    litellm = None
    try:
        import litellm
    except ImportError:
        pass
    saved = (list(litellm.callbacks), list(litellm.custom_provider_map)) if litellm else None
    try:
        yield
    finally:
        os.chdir(cwd)
        if litellm is not None and saved is not None:
            litellm.callbacks[:] = saved[0]
            litellm.custom_provider_map = saved[1]


@pytest.mark.parametrize("name,code", BLOCKS, ids=[name for name, _ in BLOCKS])
def test_block_runs_as_written(name: str, code: str, isolated: None) -> None:
    framework = _framework(code)
    if framework is not None:
        pytest.importorskip(framework)
    seen = Seen()
    namespace: dict[str, Any] = {"__name__": "docs_example"}
    if FAKE_LINE.search(code):
        assert framework is not None, f"{name}: a fake model, but which framework?"
        namespace["FAKE_MODEL"] = FAKES[framework](seen)
        code = FAKE_LINE.sub(r"\1\2 = FAKE_MODEL", code)
    exec(compile(code, name, "exec"), namespace)  # noqa: S102 - the docs' own code
    if framework is None or "FAKE_MODEL" not in namespace:
        return
    # The fake worked through toolmgmt: it was offered the session's tools and called one.
    assert seen.calls, f"{name}: the model never called a tool"
    assert any(set(tools) & set(META_TOOL_NAMES) for tools in seen.tools), seen.tools
    if "message_history=result.all_messages()" in code:  # PydanticAI: the loads carried over
        assert "find_contact" in seen.tools[-2], seen.tools
    if "request = " in code:  # LangChain approval: paused with HITL's request shape
        assert namespace["request"]["type"] == "tool_approval"
        assert namespace["request"]["name"] == "delete_contact"
        assert "deleted con_0001" in str(namespace["state"]["messages"])
    if "requests = paused.output" in code:  # PydanticAI approval: deferred, then ran once
        assert namespace["requests"].approvals[0].tool_name == "delete_contact"
        assert "deleted con_0001" in str(namespace["done"].all_messages())
