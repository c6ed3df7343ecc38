"""LangChain chat models that answer offline: :class:`DemoChatModel` plays the demo agent
(:func:`toolmgmt_demo.models.next_move`), :class:`ScriptedChatModel` answers from a script.

Both accept ``bind_tools`` (tools reach the model as OpenAI function dicts, as toolmgmt's
middleware sends them) and record what each step was offered in ``calls``. They are
``BaseChatModel``s like langchain-core's fake chat models, which bind no tools. Needs
``toolmgmt[langchain]``.

Usage::

    from langchain.agents import create_agent
    from toolmgmt_demo.models.langchain import DemoChatModel

    agent = create_agent(DemoChatModel(), tools=[...])  # offline; a real one: "openai:gpt-4.1"
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

try:
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.utils.function_calling import convert_to_openai_tool
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        'The LangChain demo models need LangChain: pip install "toolmgmt[langchain]"'
    ) from exc
from pydantic import Field

from toolmgmt_demo.models import ToolCall, called_name, next_move, openai_tools

__all__ = ["Answer", "DemoChatModel", "ScriptedChatModel", "demo_answer"]

Answer = Callable[[list[BaseMessage], list[dict[str, Any]]], AIMessage]
"""The next answer from the messages and the tools offered (OpenAI form: ``{"type":
"function", "function": {"name", "description", "parameters"}}``)."""


class ScriptedChatModel(BaseChatModel):
    """Answers from ``script`` (accepts ``bind_tools``) and records each call's bound tool
    names and messages in ``calls``.

    ``script`` is the answers in order (a step past them raises ``AssertionError``) or an
    :data:`Answer` that plays the model (an agent that picks its move from what it is
    offered)."""

    script: list[AIMessage] | Answer
    calls: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: Any = None,
        run_manager: Any = None,
        tools: Any = (),
        **kwargs: Any,
    ) -> ChatResult:
        step = len(self.calls)
        self.calls.append(
            {"tools": [t["function"]["name"] for t in tools], "messages": list(messages)}
        )
        if callable(self.script):
            message = self.script(list(messages), list(tools))
        elif step < len(self.script):
            message = self.script[step]
        else:
            raise AssertionError(f"the agent asked the model a step too many ({step + 1})")
        return ChatResult(generations=[ChatGeneration(message=message)])


def demo_answer(messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
    """The demo agent's answer (:func:`toolmgmt_demo.models.next_move`) as an ``AIMessage``."""
    start = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    request = str(messages[start].content) if start >= 0 else ""
    names = {
        call["id"]: called_name(call["name"], call["args"])
        for m in messages[start + 1 :]
        if isinstance(m, AIMessage)
        for call in m.tool_calls
    }
    done = [
        (names.get(m.tool_call_id, m.name or ""), str(m.content))
        for m in messages[start + 1 :]
        if isinstance(m, ToolMessage)
    ]
    move = next_move(request, done, openai_tools(tools))
    if isinstance(move, ToolCall):
        call = {"name": move.name, "args": move.arguments, "id": f"call_{len(messages)}"}
        return AIMessage(content="", tool_calls=[call])
    return AIMessage(content=move)


class DemoChatModel(ScriptedChatModel):
    """A chat model that plays the demo agent offline (:func:`demo_answer`)."""

    script: list[AIMessage] | Answer = demo_answer

    @property
    def _llm_type(self) -> str:
        return "toolmgmt-demo"
