"""The LangChain door: ``create_agent`` with ``ToolManagerMiddleware``, a scripted chat model
and an ``InMemorySaver``; the model sees ``ToolMessage``s, the caller ``__interrupt__``."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command, interrupt
from toolmgmt_langchain import ToolManagerMiddleware

from support.doors import EDIT_NOTE, Outcomes, answered, cut_reference, ran
from support.doors.shop import (
    ALWAYS_ON,
    CODE_CANCEL,
    CODE_LOOKUP,
    CODE_REFUND,
    ORDER,
    Shop,
    shop_manager,
)
from toolmgmt_core import Search
from toolmgmt_demo.models.langchain import ScriptedChatModel

__all__ = ["LangChainDoor"]

CONFIG = {"configurable": {"thread_id": "doors"}}


def ask_human(question: str) -> str:
    """Ask the user a question and return the answer."""
    return f"the user says: {interrupt({'question': question})}"


def _call(name: str, args: Any, call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def _form(message: ToolMessage) -> str:
    return answered(f'`ToolMessage(status="{message.status}")`', message.content)


class LangChainDoor:
    """One agent's thread over the shop's tools (and ``ask_human``, which calls ``interrupt()``)."""

    label = "LangChain `create_agent`"

    def __init__(self) -> None:
        self.shop = Shop()
        self.catalog = self.shop.catalog()
        self.catalog.add_function(ask_human, domain="shop")
        self.saver = InMemorySaver()
        self.outcomes = Outcomes()
        self.models: list[ScriptedChatModel] = []
        self.mode: Any = "search"

    def _agent(self, *steps: AIMessage) -> Any:
        manager = shop_manager(
            self.catalog,
            always_on=[*ALWAYS_ON, "ask_human"],
            listeners=[self.outcomes],
            mode=self.mode,
        )
        model = ScriptedChatModel(script=[*steps, AIMessage(content="done")])
        self.models.append(model)
        middleware = [ToolManagerMiddleware(manager)]
        return create_agent(model, middleware=middleware, checkpointer=self.saver)

    async def _run(self, *steps: AIMessage) -> dict[str, Any]:
        request = {"messages": [HumanMessage(content="go")]}
        return await self._agent(*steps).ainvoke(request, CONFIG)

    async def _answers(self, *steps: AIMessage) -> list[ToolMessage]:
        state = await self._run(*steps)
        return [m for m in state["messages"] if isinstance(m, ToolMessage)]

    async def _one(self, name: str, args: Any) -> ToolMessage:
        [message] = await self._answers(_call(name, args, "c1"))
        return message

    # -- outcomes ---------------------------------------------------------------------------

    async def success(self) -> str:
        return _form(await self._one("lookup_order", {"order_id": ORDER}))

    async def invalid_arguments(self) -> str:
        calls = [_call("lookup_order", {"order_id": 5}, f"c{n}") for n in range(3)]
        answers = await self._answers(*calls)
        forms = {_form(m) for m in answers}
        assert len(answers) == 3 and len(forms) == 1, forms
        return f"{forms.pop()} at every repeat (LangGraph's `recursion_limit` ends a loop)"

    async def unknown_tool(self) -> str:
        return _form(await self._one("lookup_ordr", {"order_id": ORDER}))

    async def denied_tool(self) -> str:
        message = await self._one("refund_order", {"order_id": ORDER})
        assert self.shop.runs["refund_order"] == 0
        return _form(message)

    async def failed(self) -> str:
        return _form(await self._one("ship_order", {"order_id": ORDER}))

    async def truncated(self) -> str:
        message = await self._one("order_report", {"order_id": ORDER})
        assert message.content == cut_reference()
        return f"{_form(message)}, the core's cut"

    # -- approval ---------------------------------------------------------------------------

    async def _pause(self) -> tuple[Any, dict[str, Any]]:
        agent = self._agent(_call("cancel_order", {"order_id": ORDER}, "c1"))
        state = await agent.ainvoke({"messages": [HumanMessage(content="go")]}, CONFIG)
        return agent, state

    async def _resume(self, answer: Any) -> str:
        agent, _ = await self._pause()
        state = await agent.ainvoke(Command(resume=answer), CONFIG)
        [message] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
        self.answer = message
        return f"{_form(message)}, {ran(self.shop.runs['cancel_order'])}"

    async def approval_pause(self) -> str:
        _, state = await self._pause()
        [paused] = state["__interrupt__"]
        assert paused.value["name"] == "cancel_order" and self.shop.runs["cancel_order"] == 0
        return f'`__interrupt__` `{{"type": "{paused.value["type"]}"}}` (HITL\'s per-call shape)'

    async def approval_approve(self) -> str:
        return f'`Command(resume={{"type": "approve"}})`: {await self._resume({"type": "approve"})}'

    async def approval_deny(self) -> str:
        answer = {"type": "reject", "message": "not this one"}
        return f'`Command(resume={{"type": "reject"}})`: {await self._resume(answer)}'

    async def approval_edit(self) -> str:
        edit = {
            "type": "edit",
            "edited_action": {"name": "cancel_order", "args": {"order_id": "A-2"}},
        }
        outcome = await self._resume(edit)
        assert self.shop.arguments[-1] == ("cancel_order", {"order_id": "A-2"})
        assert str(self.answer.content).startswith(EDIT_NOTE), self.answer.content
        return f'`Command(resume={{"type": "edit"}})`: {outcome} with them, the result says so'

    # -- code mode ----------------------------------------------------------------------------

    async def code_success(self) -> str:
        self.mode = "code"
        message = await self._one("run_code", {"code": CODE_LOOKUP})
        assert message.content == f"order {ORDER}: shipped", message.content
        return f"{_form(message)}: what the program printed"

    async def code_denied(self) -> str:
        self.mode = "code"
        message = await self._one("run_code", {"code": CODE_REFUND})
        assert "PermissionError" in message.content and self.shop.runs["refund_order"] == 0
        return f"{_form(message)}: `PermissionError` raised inside the program"

    async def code_approval(self) -> str:
        self.mode = "code"
        agent = self._agent(_call("run_code", {"code": CODE_CANCEL}, "c1"))
        state = await agent.ainvoke({"messages": [HumanMessage(content="go")]}, CONFIG)
        [paused] = state["__interrupt__"]
        assert paused.value["name"] == "cancel_order" and self.shop.runs["cancel_order"] == 0
        state = await agent.ainvoke(Command(resume={"type": "approve"}), CONFIG)
        [message] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
        return (
            f"`__interrupt__` names the program's call; `Command(resume=...)`: {_form(message)}, "
            f"{ran(self.shop.runs['cancel_order'])}"
        )

    # -- state and control flow ---------------------------------------------------------------

    async def restore(self) -> str:
        # The growing list (Search(appends=True)) is the one a restore rebuilds: what the
        # conversation loaded is listed again. The cache-stable list never changes.
        self.mode = Search(appends=True)
        await self._run(_call("tool_search", {"query": "track parcel on its way"}, "c1"))
        await self._run()  # a fresh agent (middleware, manager) over the same checkpointer
        assert "track_order" not in self.models[0].calls[0]["tools"]
        assert "track_order" in self.models[-1].calls[0]["tools"]
        return "a fresh agent over the same checkpointer lists the tools the thread loaded"

    async def control_pause(self) -> str:
        agent = self._agent(_call("ask_human", {"question": "Which order?"}, "c1"))
        state = await agent.ainvoke({"messages": [HumanMessage(content="go")]}, CONFIG)
        [paused] = state["__interrupt__"]
        assert paused.value == {"question": "Which order?"}
        state = await agent.ainvoke(Command(resume="A-1"), CONFIG)
        [message] = [m for m in state["messages"] if isinstance(m, ToolMessage)]
        assert message.content == "the user says: A-1"
        return "the tool's `interrupt()` pauses the graph; `Command(resume=...)` runs it again"

    async def cancellation(self) -> str:
        task = asyncio.ensure_future(self._run(_call("wait_order", {"order_id": ORDER}, "c1")))
        while not self.shop.runs["wait_order"]:
            await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            cancelled = True
        else:
            cancelled = False
        assert cancelled and self.shop.runs["wait_order cancelled"] == 1
        state = await self._agent().aget_state(CONFIG)
        answered_calls = [m for m in state.values["messages"] if isinstance(m, ToolMessage)]
        assert answered_calls == [], answered_calls
        return "`CancelledError` reaches the caller; the tool is cancelled, no `ToolMessage`"
