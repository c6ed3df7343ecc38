"""The PydanticAI doors: an ``Agent`` with a ``ManagedToolset`` over a wrapped
``FunctionToolset`` (``wrapped=True``) or over the core catalog's tools, a ``FunctionModel``;
the model sees ``ToolReturnPart``s, the caller ``DeferredToolRequests``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.exceptions import CallDeferred, ModelRetry, UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import (
    DeferredToolRequests,
    DeferredToolResults,
    ToolApproved,
    ToolDenied,
)
from pydantic_ai.toolsets import FunctionToolset
from toolmgmt_pydantic_ai import ManagedToolset

from support.doors import EDIT_NOTE, Outcomes, answered, cut_reference, ran
from support.doors.shop import (
    ALWAYS_ON,
    CODE_CANCEL,
    CODE_LOOKUP,
    CODE_REFUND,
    DESTRUCTIVE,
    ORDER,
    Shop,
    shop_manager,
)
from toolmgmt_core import Search

__all__ = ["PydanticAIDoor"]

OUTPUT = [str, DeferredToolRequests]
DESTRUCTIVE_HINT = {"annotations": {"destructiveHint": True}}
"""How a wrapped tool says it is destructive: MCP's annotation, as ``MCPToolset`` lists it."""


def ask_human(question: str) -> str:
    """Ask the user a question and return the answer."""
    raise CallDeferred(metadata={"question": question})


def check_order(order_id: str) -> str:
    """Check that an order id exists."""
    raise ModelRetry(f"no order {order_id!r}: order ids look like A-1")


class Script:
    """A ``FunctionModel`` body: one step per model request; records what each step saw."""

    def __init__(self, *steps: list[ToolCallPart] | str) -> None:
        self.steps = [*steps, "done"]
        self.seen: list[tuple[list[str], list[ModelMessage]]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append(([t.name for t in info.function_tools], list(messages)))
        step = self.steps[min(len(self.seen), len(self.steps)) - 1]
        return ModelResponse(parts=[TextPart(step)] if isinstance(step, str) else list(step))


def _call(name: str, args: Any, call_id: str = "c1") -> list[ToolCallPart]:
    return [ToolCallPart(name, args, tool_call_id=call_id)]


def _returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [
        part
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


def _form(part: ToolReturnPart) -> str:
    return answered(f'`ToolReturnPart(outcome="{part.outcome}")`', part.content)


class PydanticAIDoor:
    """One conversation: an agent over a fresh ``ManagedToolset`` for each run."""

    def __init__(self, *, wrapped: bool) -> None:
        self.wrapped = wrapped
        self.shop = Shop()
        self.functions: list[Callable[..., Any]] = [*self.shop.functions(), ask_human, check_order]
        self.catalog = None if wrapped else self._catalog()
        self.scripts: list[Script] = []
        self.outcomes = Outcomes()
        self.mode: Any = "search"

    def _catalog(self) -> Any:
        catalog = self.shop.catalog()
        for function in (ask_human, check_order):
            catalog.add_function(function, domain="shop")
        return catalog

    def _toolset(self) -> FunctionToolset[Any]:
        toolset: FunctionToolset[Any] = FunctionToolset(id="shop")
        for function in self.functions:
            marks = DESTRUCTIVE_HINT if function.__name__ in DESTRUCTIVE else None
            toolset.add_function(function, takes_ctx=False, metadata=marks)
        return toolset

    def _agent(self, script: Script) -> Agent[Any, Any]:
        """An agent over a fresh ``ManagedToolset`` (and, wrapped, a fresh catalog)."""
        from toolmgmt_core import Execution, ToolCatalog

        always_on = [*ALWAYS_ON, "ask_human", "check_order"]
        # Each agent is another worker: they share the key sealing a paused program.
        options = {"listeners": [self.outcomes], "mode": self.mode, "always_on": always_on}
        options["execution"] = Execution(run_key="the shop's workers")
        if self.wrapped:
            manager = shop_manager(ToolCatalog(), **options)
            managed = ManagedToolset(manager, toolsets=[self._toolset()])
        else:
            manager = shop_manager(self.catalog, **options)
            managed = ManagedToolset(manager)
        self.scripts.append(script)
        return Agent(FunctionModel(script), toolsets=[managed], output_type=OUTPUT)

    async def _run(self, *steps: list[ToolCallPart] | str, **options: Any) -> Any:
        return await self._agent(Script(*steps)).run("go", **options)

    async def _one(self, name: str, args: Any) -> ToolReturnPart:
        result = await self._run(_call(name, args))
        [part] = _returns(result.all_messages())
        return part

    # -- outcomes ---------------------------------------------------------------------------

    async def success(self) -> str:
        return _form(await self._one("lookup_order", {"order_id": ORDER}))

    async def invalid_arguments(self) -> str:
        script = Script(*[_call("lookup_order", {"order_id": 5}, f"c{n}") for n in range(3)])
        try:
            await self._agent(script).run("go")
        except UnexpectedModelBehavior as exc:
            ended = str(exc)
        else:
            raise AssertionError("the run went on past the tool's retries")
        first = _returns(script.seen[-1][1])[0]
        limit = "exceeded max retries count of 1"
        assert limit in ended, ended
        return f"{_form(first)}; at the 2nd repeat `UnexpectedModelBehavior` ({limit})"

    async def unknown_tool(self) -> str:
        part = await self._one("lookup_ordr", {"order_id": ORDER})
        assert str(part.content).startswith("Unknown tool name: 'lookup_ordr'")
        return f"{_form(part)}: PydanticAI's own `Unknown tool name` (it lists the tools)"

    async def denied_tool(self) -> str:
        part = await self._one("refund_order", {"order_id": ORDER})
        assert str(part.content).startswith("Unknown tool name: 'refund_order'")
        assert self.shop.runs["refund_order"] == 0
        return f"{_form(part)}: PydanticAI's own `Unknown tool name` (never listed)"

    async def failed(self) -> str:
        return _form(await self._one("ship_order", {"order_id": ORDER}))

    async def truncated(self) -> str:
        part = await self._one("order_report", {"order_id": ORDER})
        assert part.content == cut_reference()
        return f"{_form(part)}, the core's cut"

    # -- approval ---------------------------------------------------------------------------

    async def _pause(self) -> tuple[Script, Any]:
        script = Script(_call("cancel_order", {"order_id": ORDER}))
        return script, await self._agent(script).run("go")

    async def _resume(self, verdict: Any) -> str:
        _, paused = await self._pause()
        results = DeferredToolResults(approvals={"c1": verdict})
        done = await self._agent(Script("done")).run(
            message_history=paused.all_messages(), deferred_tool_results=results
        )
        [part] = _returns(done.all_messages())
        self.answer = part
        return f"{_form(part)}, {ran(self.shop.runs['cancel_order'])}"

    async def approval_pause(self) -> str:
        _, paused = await self._pause()
        assert isinstance(paused.output, DeferredToolRequests)
        [call] = paused.output.approvals
        assert call.tool_name == "cancel_order" and self.shop.runs["cancel_order"] == 0
        return "the run ends with `DeferredToolRequests.approvals`"

    async def approval_approve(self) -> str:
        return f"`DeferredToolResults(approvals={{id: True}})`: {await self._resume(True)}"

    async def approval_deny(self) -> str:
        outcome = await self._resume(ToolDenied("not this one"))
        return f"`ToolDenied`: {outcome}"

    async def approval_edit(self) -> str:
        outcome = await self._resume(ToolApproved(override_args={"order_id": "A-2"}))
        assert self.shop.arguments[-1] == ("cancel_order", {"order_id": "A-2"})
        assert str(self.answer.content).startswith(EDIT_NOTE), self.answer.content
        return f"`ToolApproved(override_args=...)`: {outcome} with them, the result says so"

    # -- code mode ----------------------------------------------------------------------------

    async def code_success(self) -> str:
        self.mode = "code"
        part = await self._one("run_code", {"code": CODE_LOOKUP})
        assert part.content == f"order {ORDER}: shipped", part.content
        return f"{_form(part)}: what the program printed"

    async def code_denied(self) -> str:
        self.mode = "code"
        part = await self._one("run_code", {"code": CODE_REFUND})
        assert "PermissionError" in str(part.content) and self.shop.runs["refund_order"] == 0
        return f"{_form(part)}: `PermissionError` raised inside the program"

    async def code_approval(self) -> str:
        self.mode = "code"
        paused = await self._agent(Script(_call("run_code", {"code": CODE_CANCEL}))).run("go")
        assert isinstance(paused.output, DeferredToolRequests)
        [call] = paused.output.approvals
        assert paused.output.metadata[call.tool_call_id]["tool_name"] == "cancel_order"
        assert self.shop.runs["cancel_order"] == 0
        done = await self._agent(Script("done")).run(
            message_history=paused.all_messages(),
            deferred_tool_results=DeferredToolResults(approvals={call.tool_call_id: True}),
        )
        [part] = _returns(done.all_messages())
        return (
            "`DeferredToolRequests.approvals` (metadata names the program's call); approved: "
            f"{_form(part)}, {ran(self.shop.runs['cancel_order'])}"
        )

    # -- state and control flow ---------------------------------------------------------------

    async def restore(self) -> str:
        # The growing list (Search(appends=True)) is the one a restore rebuilds: what the
        # conversation loaded is listed again. The cache-stable list never changes.
        self.mode = Search(appends=True)
        first = await self._run(_call("tool_search", {"query": "track parcel on its way"}))
        await self._run("done", message_history=first.all_messages())  # a fresh toolset
        assert "track_order" not in self.scripts[0].seen[0][0]
        assert "track_order" in self.scripts[-1].seen[0][0]
        return "a fresh `ManagedToolset` given `message_history` lists the tools it loaded"

    async def control_pause(self) -> str:
        result = await self._run(_call("ask_human", {"question": "Which order?"}))
        assert isinstance(result.output, DeferredToolRequests)
        [call] = result.output.calls
        assert result.output.metadata[call.tool_call_id] == {"question": "Which order?"}
        return "the tool's `CallDeferred` ends the run with `DeferredToolRequests.calls`"

    async def control_retry(self) -> str:
        part = await self._one("check_order", {"order_id": "B"})
        assert "order ids look like A-1" in str(part.content)
        return f"the tool's `ModelRetry`: {_form(part)}, its own retry count"

    async def cancellation(self) -> str:
        task = asyncio.ensure_future(self._run(_call("wait_order", {"order_id": ORDER})))
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
        return "`CancelledError` reaches the caller; the tool is cancelled"
