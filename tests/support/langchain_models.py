"""A LangChain chat model that answers from a script: the model edge of the LangChain tests, the
docs examples' test and ``bench/adapters.py``.

Import it after ``pytest.importorskip("langchain")``: it imports langchain-core.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

__all__ = ["Answer", "ScriptedChatModel"]

Answer = Callable[[list[BaseMessage], list[dict[str, Any]]], AIMessage]
"""The next answer from the messages and the tools offered (OpenAI form: ``{"type":
"function", "function": {"name", "description", "parameters"}}``)."""


class ScriptedChatModel(BaseChatModel):
    """Answers from ``script`` (accepts ``bind_tools``) and records each call's bound tool
    names and messages in ``calls``.

    ``script`` is the answers in order (a step past them fails the test) or an :data:`Answer`
    that plays the model (an agent that picks its move from what it is offered)."""

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
