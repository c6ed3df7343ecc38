"""PydanticAI workers sharing conversations through a real Redis: two ``ManagedToolset``\\ s
over two managers and one ``RedisSessionStore`` serve one conversation, and a run held open on
one worker sees, from its next step, what the other worker loaded meanwhile."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("redis")

from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.toolsets import FunctionToolset  # noqa: E402
from toolmgmt_pydantic_ai import ManagedToolset  # noqa: E402

from toolmgmt_core import (  # noqa: E402
    ResultBudget,
    Search,  # noqa: E402
    ToolCatalog,
    ToolManager,
)
from toolmgmt_core._stores.redis import RedisSessionStore  # noqa: E402


def _toolset() -> FunctionToolset[Any]:
    toolset: FunctionToolset[Any] = FunctionToolset()

    @toolset.tool_plain
    def get_forecast(city: str) -> dict[str, Any]:
        """Get the weather forecast for a city, day by day."""
        return {"city": city, "forecast": ["sun", "rain"]}

    @toolset.tool_plain
    def convert_currency(amount: float, to: str) -> dict[str, Any]:
        """Convert an amount of money into another currency."""
        return {"amount": amount * 2, "currency": to}

    return toolset


@pytest.fixture
def workers(redis_url: str) -> Iterator[list[ManagedToolset]]:
    """Two workers: each a toolset over its own manager and its own Redis client."""
    stores = [RedisSessionStore(redis_url, ttl=60) for _ in range(2)]
    yield [
        ManagedToolset(
            ToolManager(
                ToolCatalog(),
                mode=Search(appends=True),
                results=ResultBudget(session_tokens=5_000),
                session_store=store,
            ),
            toolsets={"tools": _toolset()},
            conversation=lambda ctx: ctx.deps,
        )
        for store in stores
    ]
    for store in stores:
        store.close()


class Script:
    """An async FunctionModel body: answers from a script (a step may be a coroutine function,
    run first), records the tools offered at each step."""

    def __init__(self, steps: list[Any]) -> None:
        self.steps = steps
        self.seen: list[list[str]] = []

    async def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append([t.name for t in info.function_tools])
        step = self.steps[len(self.seen) - 1]
        if callable(step):
            step = await step()
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        name, args = step
        return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"c{len(self.seen)}")])


def _agent(worker: ManagedToolset, script: Script) -> Agent[str, str]:
    return Agent(FunctionModel(script), toolsets=[worker], deps_type=str)


def _run(worker: ManagedToolset, script: Script, conversation: str) -> Any:
    return _agent(worker, script).run_sync("go", deps=conversation)


def _returns(messages: list[ModelMessage]) -> list[str]:
    return [
        part.model_response_str()
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


def test_two_workers_over_one_redis_serve_one_conversation(
    workers: list[ManagedToolset], redis_url: str
) -> None:
    a, b = workers
    first = Script([("tool_search", {"query": "weather forecast"}), "ok"])
    _run(a, first, "conv")
    assert "get_forecast" in first.seen[1]
    # The next turn on the other worker: no message history, the conversation from Redis.
    second = Script([("get_forecast", {"city": "Rome"}), "ok"])
    result = _run(b, second, "conv")
    assert "get_forecast" in second.seen[0]
    assert json.loads(_returns(result.all_messages())[0])["city"] == "Rome"
    spent = b.session_for(result.run_id).result_budget.used
    assert spent > 0
    stored = RedisSessionStore(redis_url).load("conv")
    assert stored is not None and stored.state["loaded"] == ["get_forecast"]
    # Back on the first worker, the spent budget came along.
    third = Script(["ok"])
    result = _run(a, third, "conv")
    assert "get_forecast" in third.seen[0]
    assert a.session_for(result.run_id).result_budget.used == spent
    other = Script(["ok"])  # another conversation starts empty
    _run(b, other, "conv-2")
    assert "get_forecast" not in other.seen[0]


def test_a_run_sees_what_another_worker_loaded_from_its_next_step(
    workers: list[ManagedToolset],
) -> None:
    a, b = workers

    async def other_worker_loads() -> tuple[str, dict[str, Any]]:
        # Meanwhile, another worker serving the same conversation loads a tool.
        other = Script([("tool_search", {"query": "convert currency money"}), "ok"])
        await _agent(b, other).run("go", deps="conv")
        assert "convert_currency" in other.seen[1]
        return ("tool_search", {"query": "weather forecast"})  # searching again: no change

    script = Script(
        [
            ("tool_search", {"query": "weather forecast"}),
            other_worker_loads,
            ("convert_currency", {"amount": 3, "to": "EUR"}),
            "ok",
        ]
    )
    result = _run(a, script, "conv")
    assert "convert_currency" not in script.seen[1]
    # This run's session made no change of its own since: it saw the other worker's load only
    # because it refreshed from the store at the start of the step.
    assert "convert_currency" in script.seen[2]
    assert json.loads(_returns(result.all_messages())[-1])["currency"] == "EUR"
    assert a.session_for(result.run_id).loaded() == ["get_forecast", "convert_currency"]
