"""The PydanticAI adapter driven by a real ``Agent`` and a scripted ``FunctionModel``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

import toolmgmt_pydantic_ai  # noqa: E402
from pydantic_ai import Agent, RunContext  # noqa: E402
from pydantic_ai.capabilities import ToolSearch  # noqa: E402
from pydantic_ai.messages import (  # noqa: E402
    ModelMessage,
    ModelResponse,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel  # noqa: E402
from pydantic_ai.tools import ToolDefinition  # noqa: E402
from pydantic_ai.toolsets import AbstractToolset, FunctionToolset  # noqa: E402
from pydantic_ai.toolsets.abstract import ToolsetTool  # noqa: E402
from pydantic_core import SchemaValidator, core_schema  # noqa: E402
from support.demo import demo_manager  # noqa: E402
from support.pydantic_ai_messages import tool_returns  # noqa: E402
from toolmgmt_pydantic_ai import ManagedToolset  # noqa: E402

from toolmgmt_core import (  # noqa: E402
    ConfigError,
    Discovery,
    ResultBudget,
    Search,  # noqa: E402
    ToolCatalog,
    ToolManager,
    count_tokens,
)
from toolmgmt_core._stores import InMemorySessionStore  # noqa: E402

MAX_RESULT_TOKENS = 300

# The policy names a wrapped toolset's tool, which joins the catalog on the first run step, after
# the manager (and its policy lint) is built.
pytestmark = pytest.mark.filterwarnings("ignore:Pattern 'weather_alerts' in step:UserWarning")


class Script:
    """A FunctionModel body: answers from a script, records the tools offered at each step."""

    def __init__(self, steps: list[list[ToolCallPart] | str]) -> None:
        self.steps = steps
        self.seen: list[list[str]] = []
        self.deferred: list[list[str]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.seen.append([t.name for t in info.function_tools])
        self.deferred.append([t.name for t in info.function_tools if t.defer_loading])
        step = self.steps[len(self.seen) - 1]
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        return ModelResponse(parts=list(step))


def _call(name: str, args: dict[str, Any], n: int) -> list[ToolCallPart]:
    return [ToolCallPart(name, args, tool_call_id=f"call_{n}")]


def weather_toolset() -> FunctionToolset[Any]:
    toolset: FunctionToolset[Any] = FunctionToolset(id="weather")

    @toolset.tool
    def get_forecast(ctx: RunContext[Any], city: str, days: int = 3) -> dict[str, Any]:
        """Get the weather forecast for a city, day by day."""
        return {"city": city, "days": days, "unit": ctx.deps or "C", "forecast": ["sun"] * days}

    @toolset.tool_plain
    def weather_alerts(region: str) -> list[str]:
        """List active severe weather alerts for a region."""
        return [f"storm warning in {region}"]

    return toolset


def _manager(mode: Any = None, **extra: Any) -> ToolManager:
    # found tools join the list: what these tests follow (the stable list has its own tests)
    return demo_manager(
        Search(appends=True) if mode is None else mode,
        deny=("crm_delete_*", "weather_alerts"),
        results=ResultBudget(max_result_tokens=MAX_RESULT_TOKENS),
        **extra,
    )


SCRIPT: list[list[ToolCallPart] | str] = [
    _call("tool_search", {"query": "search crm contacts by name"}, 1),
    _call("crm_search_contacts", {"query": "patel", "limit": 2}, 2),
    _call("tool_search", {"queries": ["export all contacts csv backup", "weather forecast"]}, 3),
    _call("crm_export_contacts", {"format": "csv"}, 4)
    + _call("get_forecast", {"city": "Oslo", "days": 2}, 5),
    _call("crm_delete_contact", {"contact_id": "con_0001"}, 6)
    + _call("weather_alerts", {"region": "west"}, 7),
    "Done.",
]


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_full_agent_loop(use_async: bool) -> None:
    manager = _manager()
    managed = ManagedToolset(manager, toolsets=[weather_toolset()])
    script = Script(SCRIPT)
    agent = Agent(FunctionModel(script), toolsets=[managed], deps_type=str)
    if use_async:
        result = asyncio.run(agent.run("go", deps="F"))
    else:
        result = agent.run_sync("go", deps="F")
    assert result.output == "Done."

    # The wrapped toolset's tools joined the catalog under its id as domain.
    assert manager.catalog.get("get_forecast").domain == "weather"
    # Replaying the searches on a plain session gives the list the model must see each step
    # (only searches change it; the other calls run inside the agent run).
    reference = manager.session()
    expected = []
    for step in SCRIPT:
        expected.append([t.name for t in reference.tools()])
        for part in step if not isinstance(step, str) else []:
            if part.tool_name == "tool_search":
                reference.call_sync(part.tool_name, part.args)
    assert script.seen == expected
    assert script.seen[0][0] == "tool_search"
    assert not any(n.startswith(("crm_", "get_forecast")) for n in script.seen[0])
    assert "crm_search_contacts" in script.seen[1]
    assert {"crm_export_contacts", "get_forecast"} <= set(script.seen[3])
    assert all(a == b[: len(a)] for a, b in zip(script.seen, script.seen[1:], strict=False))
    assert not any("crm_delete_contact" in s or "weather_alerts" in s for s in script.seen)
    assert not any(script.deferred)
    assert "search_tools" not in {n for s in script.seen for n in s}

    returns = tool_returns(result.all_messages())
    assert "patel" in returns["call_2"].model_response_str().lower()
    forecast = json.loads(returns["call_5"].model_response_str())
    # The wrapped tool ran through its own toolset; deps reached it through RunContext.
    assert forecast == {"city": "Oslo", "days": 2, "unit": "F", "forecast": ["sun", "sun"]}
    # A name that is not listed never reaches the session: PydanticAI refuses it, naming the
    # tools listed now (a denied tool is never among them).
    for call_id, name in (("call_6", "crm_delete_contact"), ("call_7", "weather_alerts")):
        refused = json.loads(returns[call_id].model_response_str())["error"]
        assert refused.startswith(f"Unknown tool name: {name!r}. Available tools:")
        assert "crm_search_contacts" in refused and "delete" not in refused.split("tools:")[1]
    # Called directly, the session refuses them the same way as a name that does not exist.
    for name in ("crm_delete_contact", "weather_alerts"):
        direct = reference.call_sync(name, {})
        assert direct.is_error and direct.error is not None and direct.error.kind == "call"
    session = managed.session_for(result.run_id)
    assert session.loaded()[: len(reference.loaded())] == reference.loaded()
    exporter = manager.catalog.get("crm_export_contacts")
    budget = exporter.max_result_tokens or MAX_RESULT_TOKENS
    export = returns["call_4"].model_response_str()
    assert count_tokens(export) <= budget < count_tokens(exporter.handler(format="csv")) / 2


def test_each_run_has_its_own_session_and_state_resumes_one() -> None:
    manager = _manager()
    saved: dict[str, Any] = {}
    managed = ManagedToolset(
        manager, toolsets={"meteo": weather_toolset()}, state=lambda ctx: saved.get("state")
    )
    first = Script([_call("tool_search", {"query": "weather forecast"}, 1), "ok"])
    run1 = Agent(FunctionModel(first), toolsets=[managed]).run_sync("a")
    assert manager.catalog.get("get_forecast").domain == "meteo"
    assert "get_forecast" in first.seen[1]
    second = Script(["ok"])
    run2 = Agent(FunctionModel(second), toolsets=[managed]).run_sync("b")
    assert "get_forecast" not in second.seen[0]
    assert managed.session_for(run1.run_id) is not managed.session_for(run2.run_id)

    saved["state"] = managed.session_for(run1.run_id).to_json()
    third = Script([_call("get_forecast", {"city": "Rome"}, 1), "ok"])
    run3 = Agent(FunctionModel(third), toolsets=[managed]).run_sync("c")
    assert "get_forecast" in third.seen[0]
    assert (
        json.loads(tool_returns(run3.all_messages())["call_1"].model_response_str())["city"]
        == "Rome"
    )
    with pytest.raises(KeyError, match="recent"):
        managed.session_for("nope")


def test_a_conversation_id_keys_the_session_in_the_managers_store() -> None:
    store = InMemorySessionStore()
    # Two workers: two toolsets over two managers sharing one session store.
    workers = [
        ManagedToolset(
            _manager(session_store=store),
            toolsets={"meteo": weather_toolset()},
            conversation=lambda ctx: ctx.deps,
        )
        for _ in range(2)
    ]
    first = Script([_call("tool_search", {"query": "weather forecast"}, 1), "ok"])
    Agent(FunctionModel(first), toolsets=[workers[0]], deps_type=str).run_sync("a", deps="c-1")
    stored = store.load("c-1")
    assert stored is not None and "get_forecast" in stored.state["loaded"]
    # The next turn of the conversation, on the other worker, without any message history.
    second = Script([_call("get_forecast", {"city": "Rome"}, 1), "ok"])
    run = Agent(FunctionModel(second), toolsets=[workers[1]], deps_type=str)
    result = run.run_sync("b", deps="c-1")
    assert "get_forecast" in second.seen[0]
    assert (
        json.loads(tool_returns(result.all_messages())["call_1"].model_response_str())["city"]
        == "Rome"
    )
    assert workers[1].session_for(result.run_id).session_id == "c-1"
    other = Script(["ok"])  # another conversation starts empty
    Agent(FunctionModel(other), toolsets=[workers[1]], deps_type=str).run_sync("c", deps="c-2")
    assert "get_forecast" not in other.seen[0]


def test_toolmgmt_search_keeps_pydantic_ai_search_silent() -> None:
    manager = _manager()
    deferred = weather_toolset().defer_loading()
    managed = ManagedToolset(manager, toolsets=[deferred])
    script = Script([_call("tool_search", {"query": "forecast"}, 1), "ok"])
    # Even with PydanticAI's search asked for explicitly, only toolmgmt's is offered.
    agent = Agent(
        FunctionModel(script), toolsets=[managed], capabilities=[ToolSearch(strategy="keywords")]
    )
    agent.run_sync("go")
    names = {n for s in script.seen for n in s}
    assert "search_tools" not in names and "tool_search" in names
    assert "get_forecast" in script.seen[1] and not any(script.deferred)
    assert manager.catalog.get("get_forecast").defer_loading is True


def test_pydantic_ai_search_replaces_toolmgmt_search() -> None:
    manager = _manager(discovery=Discovery(call_unloaded="load"))
    managed = ManagedToolset(manager, toolsets=[weather_toolset()], search="pydantic_ai")
    script = Script(
        [
            [ToolCallPart("search_tools", {"queries": ["forecast"]}, tool_call_id="s1")],
            _call("get_forecast", {"city": "Oslo", "days": 1}, 2),
            "ok",
        ]
    )
    # PydanticAI picks the provider's native search where it can; FunctionModel claims it, so
    # ask for the local ``search_tools`` explicitly, as a user would on such a model.
    agent = Agent(
        FunctionModel(script), toolsets=[managed], capabilities=[ToolSearch(strategy="keywords")]
    )
    result = agent.run_sync("go")
    first = set(script.seen[0])
    assert "search_tools" in first
    assert not first & {"tool_search", "get_forecast", "crm_search_contacts"}
    assert "weather_alerts" not in {n for s in script.seen for n in s}  # denied by policy
    assert "get_forecast" in script.seen[1] and "get_forecast" in script.deferred[1]
    returned = json.loads(tool_returns(result.all_messages())["call_2"].model_response_str())
    assert returned["forecast"] == ["sun"]
    assert "get_forecast" in managed.session_for(result.run_id).loaded()


def test_gateway_mode_executes_wrapped_tools_through_execute_tool() -> None:
    manager = _manager(mode="gateway")
    managed = ManagedToolset(manager, toolsets=[weather_toolset()])
    script = Script(
        [
            _call("discover_tools", {"query": "weather forecast for a city"}, 1),
            _call("get_tool_schema", {"tool_name": "get_forecast"}, 2),
            _call(
                "execute_tool", {"tool_name": "get_forecast", "arguments": {"city": "Bergen"}}, 3
            ),
            _call("execute_tool", {"tool_name": "get_forecast", "arguments": {"days": 2}}, 4),
            "ok",
        ]
    )
    result = Agent(FunctionModel(script), toolsets=[managed], deps_type=str).run_sync(
        "go", deps="K"
    )
    # The list never changes in gateway mode: three meta-tools, then the always-on tools.
    assert script.seen[0][:3] == ["discover_tools", "get_tool_schema", "execute_tool"]
    assert "get_forecast" not in script.seen[0]
    assert all(s == script.seen[0] for s in script.seen)
    returns = tool_returns(result.all_messages())
    assert "get_forecast" in returns["call_1"].model_response_str()
    schema = json.loads(returns["call_2"].model_response_str())
    assert schema["name"] == "get_forecast" and "city" in schema["parameters"]["properties"]
    ran = json.loads(returns["call_3"].model_response_str())
    assert ran == {"city": "Bergen", "days": 3, "unit": "K", "forecast": ["sun"] * 3}
    # Arguments the model can fix come back as PydanticAI's own retry, so its retry count
    # applies (ModelRetry); the message is the core's.
    assert returns["call_4"].outcome == "retried"
    invalid = json.loads(returns["call_4"].content)
    assert invalid["error"] == "invalid_arguments" and "city" in invalid["message"]


class ConnectedToolset(AbstractToolset[Any]):
    """Behaves like an MCP server toolset: must be entered, copies itself per run."""

    def __init__(self, log: list[str], run: int = 0) -> None:
        self.log = log
        self.run = run
        self.entered = False

    @property
    def id(self) -> str:
        return "notes"

    async def for_run(self, ctx: RunContext[Any]) -> ConnectedToolset:
        self.log.append("for_run")
        return ConnectedToolset(self.log, run=self.run + 1)

    async def __aenter__(self) -> ConnectedToolset:
        self.entered = True
        self.log.append(f"enter {self.run}")
        return self

    async def __aexit__(self, *args: Any) -> None:
        self.entered = False
        self.log.append(f"exit {self.run}")

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        assert self.entered, "listed before the connection was opened"
        definition = ToolDefinition(
            name="read_note",
            description="Read a note by its title.",
            parameters_json_schema={
                "type": "object",
                "properties": {"title": {"type": "string"}},
                "required": ["title"],
            },
            metadata={"annotations": {"readOnlyHint": True}},
        )
        validator = SchemaValidator(core_schema.dict_schema())
        return {
            "read_note": ToolsetTool(
                toolset=self, tool_def=definition, max_retries=1, args_validator=validator
            )
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: Any
    ) -> Any:
        assert self.entered and self.run == 1, "called outside the run's own connection"
        return {"title": tool_args["title"], "body": "x" * 4000}


def test_wrapped_toolset_lifecycle_is_forwarded() -> None:
    log: list[str] = []
    manager = _manager()
    managed = ManagedToolset(manager, toolsets=[ConnectedToolset(log)])
    script = Script(
        [
            _call("tool_search", {"query": "read a note"}, 1),
            _call("read_note", {"title": "plan"}, 2),
            "ok",
        ]
    )
    result = Agent(FunctionModel(script), toolsets=[managed]).run_sync("go")
    assert log == ["for_run", "enter 1", "exit 1"]
    note = manager.catalog.get("read_note")
    assert note.domain == "notes" and note.annotations.read_only is True
    assert "read_note" in script.seen[1]
    body = tool_returns(result.all_messages())["call_2"].model_response_str()
    assert count_tokens(body) <= MAX_RESULT_TOKENS  # the session's budget applied


def test_configuration_errors() -> None:
    with pytest.raises(ConfigError, match="call_unloaded='load'"):
        ManagedToolset(_manager(), search="pydantic_ai")
    with pytest.raises(ConfigError, match="'toolmgmt' or 'pydantic_ai'"):
        ManagedToolset(_manager(), search="both")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="FunctionToolset"):
        ManagedToolset(_manager(), toolsets=[lambda: 1])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="ToolManager"):
        ManagedToolset(ToolCatalog())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="not both"):
        ManagedToolset(_manager(), state=lambda ctx: None, conversation=lambda ctx: "c")


def test_public_surface() -> None:
    assert toolmgmt_pydantic_ai.__all__ == sorted(toolmgmt_pydantic_ai.__all__)
    for name in toolmgmt_pydantic_ai.__all__:
        assert hasattr(toolmgmt_pydantic_ai, name)
    assert "Usage::" in (toolmgmt_pydantic_ai.__doc__ or "")
