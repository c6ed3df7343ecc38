"""A LangChain chat model that answers from a script: the model edge of the LangChain tests.

Import it after ``pytest.importorskip("langchain")``: it imports langchain-core.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

__all__ = ["ScriptedChatModel"]


class ScriptedChatModel(BaseChatModel):
    """Answers from ``script`` (accepts ``bind_tools``) and records each call's bound tool
    names and messages in ``calls``; a step past the script fails the test."""

    script: list[AIMessage]
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
        if step >= len(self.script):
            raise AssertionError(f"the agent asked the model a step too many ({step + 1})")
        return ChatResult(generations=[ChatGeneration(message=self.script[step])])
