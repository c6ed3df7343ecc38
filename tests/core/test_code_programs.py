"""Programs a model writes: the calls a program gathers run at once, a program waiting on its
tools holds no sandbox worker, and what it prints last always arrives."""

from __future__ import annotations

import ast
import asyncio
import builtins
import contextlib
import functools
import json
import keyword
import threading
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pydantic_monty")

from support.bfcl import SPLITS, bfcl_dir, bfcl_missing  # noqa: E402

from toolmgmt_core import ToolCatalog, ToolManager  # noqa: E402
from toolmgmt_core._calls.code import (  # noqa: E402
    CodeLimits,
    CodeNames,
    code_names,
    python_signature,
)
from toolmgmt_core._calls.code.names import SANDBOX_MODULES  # noqa: E402
from toolmgmt_core._calls.code.workers import CLIENT_WORKERS, MAX_WORKERS  # noqa: E402
from toolmgmt_core._model.content import ContentResult  # noqa: E402
from toolmgmt_core._model.errors import CatalogError  # noqa: E402
from toolmgmt_core._model.tool import META_TOOL_NAMES, Tool, one_line  # noqa: E402
from toolmgmt_core._session.modes import Code  # noqa: E402

GATHER_FOUR = (
    "import asyncio\n"
    "got = await asyncio.gather(*[{tool}(n=i) for i in range(4)])\n"
    "print(sorted(got))"
)


class _Meeting:
    """Tools that return only once ``size`` calls are in flight together (or time out)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.inside = 0
        self.most = 0
        self.lock = threading.Lock()
        self.all_in = threading.Event()

    def enter(self) -> None:
        with self.lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
            if self.inside >= self.size:
                self.all_in.set()

    def leave(self) -> None:
        with self.lock:
            self.inside -= 1


def _catalog(meeting: _Meeting) -> ToolCatalog:
    async def meet_async(n: int) -> int:
        """Wait for the others, on the event loop."""
        meeting.enter()
        try:
            for _ in range(200):
                if meeting.all_in.is_set():
                    return n
                await asyncio.sleep(0.01)
            raise TimeoutError("the other calls never came")
        finally:
            meeting.leave()

    def meet_sync(n: int) -> int:
        """Wait for the others, on a thread."""
        meeting.enter()
        try:
            if not meeting.all_in.wait(2.0):
                raise TimeoutError("the other calls never came")
            return n
        finally:
            meeting.leave()

    catalog = ToolCatalog()
    catalog.add_function(meet_async)
    catalog.add_function(meet_sync)
    return catalog


@pytest.mark.parametrize("tool", ["meet_async", "meet_sync"])
def test_gather_runs_the_calls_at_once(tool: str) -> None:
    # Each call returns only once all four are in flight: run one after the other, the
    # first one times out (as it did when a program's calls ran in turn).
    meeting = _Meeting(4)
    session = ToolManager(_catalog(meeting), mode="code").session()
    result = session.call_sync("run_code", {"code": GATHER_FOUR.format(tool=tool)})
    assert result.outcome == "success", result.content
    assert result.content == "[0, 1, 2, 3]"
    assert meeting.most == 4


def test_a_program_runs_at_most_parallel_calls_at_once() -> None:
    meeting = _Meeting(2)
    mode = Code(limits=CodeLimits(parallel_calls=2))
    session = ToolManager(_catalog(meeting), mode=mode).session()
    result = session.call_sync("run_code", {"code": GATHER_FOUR.format(tool="meet_async")})
    assert result.outcome == "success", result.content
    assert meeting.most == 2


def test_programs_waiting_on_a_slow_tool_hold_no_worker() -> None:
    # More programs than workers wait on a slow tool; another caller's trivial program
    # still runs at once (it failed after 30 s when each waiting program kept its worker).
    slow = MAX_WORKERS + 2

    async def scenario() -> str:
        release = asyncio.Event()
        waiting: list[int] = []
        in_flight = asyncio.Event()

        async def slow_read(n: int) -> int:
            """A read from a slow server."""
            waiting.append(n)
            if len(waiting) == slow:
                in_flight.set()
            await release.wait()
            return n

        catalog = ToolCatalog()
        catalog.add_function(slow_read)
        busy = ToolManager(catalog, mode="code")
        programs = [
            asyncio.ensure_future(
                busy.session("busy-caller").call("run_code", {"code": f"await slow_read(n={i})"})
            )
            for i in range(slow)
        ]
        try:
            await asyncio.wait_for(in_flight.wait(), 10)
            other = ToolManager(ToolCatalog(), mode="code").session()
            result = await asyncio.wait_for(other.call("run_code", {"code": "print(6 * 7)"}), 10)
        finally:
            release.set()
            done = await asyncio.gather(*programs)
        assert [r.outcome for r in done] == ["success"] * slow
        return str(result.content)

    assert asyncio.run(scenario()) == "42"


def test_output_over_the_limit_keeps_its_head_and_tail_and_says_what_was_cut() -> None:
    session = ToolManager(ToolCatalog(), mode=Code(limits=CodeLimits(output_chars=2_000))).session()
    code = "for i in range(5000):\n    print('line', i)\nprint('FINAL')\n'LAST'"
    result = session.call_sync("run_code", {"code": code})
    assert result.outcome == "success", result.content
    text = str(result.content)
    assert text.startswith("line 0\nline 1\n")
    assert "\n[... printed output cut here ...]\n" in text
    printed = sum(len(f"line {i}\n") for i in range(5000)) + len("FINAL\n")
    kept = f"the program printed {printed:,}; the first 1,000 and the last 1,000 are kept]"
    assert f"{printed - 2_000:,} characters of printed output were cut" in text
    assert text.endswith(
        f"line 4999\nFINAL\n[{printed - 2_000:,} characters of printed output "
        f"were cut at '[... printed output cut here ...]': {kept}\nLAST"
    )
    assert len(text) < 2_400


def test_when_the_result_budget_cuts_again_the_end_still_says_how_much_was_printed() -> None:
    session = ToolManager(ToolCatalog(), mode="code").session()
    code = "for i in range(100000):\n    print('line', i)\nprint('FINAL')\n'LAST'"
    result = session.call_sync("run_code", {"code": code})
    text = str(result.content)
    assert result.truncated and text.endswith("are kept]\nLAST")
    printed = sum(len(f"line {i}\n") for i in range(100000)) + len("FINAL\n")
    assert "line 99999\nFINAL\n" in text and f"the program printed {printed:,};" in text


@functools.lru_cache(maxsize=1)
def _every_pool() -> tuple[tuple[str, tuple[Any, ...]], ...]:
    """The demo catalog's tools, and every tool of the BFCL pools (as the few fields a
    signature reads: checking 3,000 schemas against the meta-schema would take a minute)."""
    from toolmgmt_demo import demo_catalog

    pools: list[tuple[str, tuple[Any, ...]]] = [("demo", tuple(demo_catalog()))]
    for split in SPLITS:
        if bfcl_missing(split) is None:
            data = json.loads((bfcl_dir(split) / "bfcl_pool.json").read_text(encoding="utf-8"))
            tools = tuple(
                SimpleNamespace(
                    name=t["name"],
                    summary=one_line(t.get("description") or ""),
                    description=t.get("description") or "",
                    parameters=t.get("parameters"),
                    output_schema=None,
                    handler=None,
                )
                for t in data["tools"]
            )
            pools.append((f"bfcl_{split}", tools))
    return tuple(pools)


def _shown_function(signature: str) -> ast.AsyncFunctionDef:
    tree = ast.parse(signature)  # the whole line is Python: a program can copy it
    assert len(tree.body) == 1 and isinstance(tree.body[0], ast.AsyncFunctionDef)
    return tree.body[0]


def test_every_signature_of_the_bfcl_pools_and_the_demo_is_python_and_names_its_tool() -> None:
    checked = 0
    for label, tools in _every_pool():
        names = CodeNames(t.name for t in tools)
        shown: dict[str, str] = {}
        for tool in tools:
            function = _shown_function(python_signature(tool, names.alias(tool.name)))
            assert function.name.isidentifier() and not keyword.iskeyword(function.name)
            assert function.name not in dir(builtins) and function.name not in SANDBOX_MODULES
            assert function.name not in META_TOOL_NAMES
            assert names.original(function.name) == tool.name, label
            assert shown.setdefault(function.name, tool.name) == tool.name, label  # unique
            checked += 1
    assert checked >= 140  # the demo's, and the BFCL pools' when ../shared is there
    if bfcl_missing("live") is None:
        assert checked > 3_000


def test_each_shown_name_calls_its_tool_in_a_program() -> None:
    # Every tool of the demo and every BFCL tool shown by an alias (a name shown as it is
    # names its tool, as the test above checks), with its name and no parameters, called by
    # the name tool_search shows, in programs of 150 calls. A catalog refuses a name that
    # folds to another's (calculate_BMI beside calculate_bmi): those are not in it.
    for label, every in _every_pool():
        aliased = CodeNames(t.name for t in every)
        pool = [t for t in every if label == "demo" or aliased.alias(t.name) != t.name]
        catalog = ToolCatalog()
        for tool in pool:
            with contextlib.suppress(CatalogError):
                catalog.add(Tool(name=tool.name, description="A tool.", handler=_named(tool.name)))
        session = ToolManager(catalog, mode=Code(limits=CodeLimits(max_calls=150))).session()
        names = code_names(catalog)
        tools = [n for n in catalog.names() if n not in META_TOOL_NAMES]
        for start in range(0, len(tools), 150):
            batch = tools[start : start + 150]
            lines = [f"got.append(await {names.alias(n)}())" for n in batch]
            code = "got = []\n" + "\n".join(lines) + "\ngot"
            result = session.call_sync("run_code", {"code": code})
            assert result.outcome == "success", (label, result.content[:500])
            assert json.loads(result.content) == batch, label


def _named(name: str) -> Any:
    def handler() -> str:
        return name

    return handler


def test_a_tool_named_unlike_python_is_called_by_its_alias_and_by_call_tool() -> None:
    catalog = ToolCatalog()
    for name in ("get-weather", "math.factorial", "print", "json", "print_tool"):
        catalog.add(
            Tool(
                name=name,
                description=f"The tool {name}.",
                parameters={
                    "type": "object",
                    "properties": {"from": {"type": "string"}, "max-n": {"type": "integer"}},
                    "required": ["from"],
                },
                handler=lambda **kw: kw,
            )
        )
    session = ToolManager(catalog, mode="code").session()
    found = session.call_sync("tool_search", {"query": "tool"}).content
    defs = {f.name for f in (_shown_function(s) for s in _signatures(found))}
    assert {"get_weather", "math_factorial", "print_tool", "json_tool"} <= defs
    assert "print_tool_" in " ".join(defs)  # print's, beside the real print_tool
    print_alias = code_names(catalog).alias("print")
    code = (
        "import json\n"
        "a = await math_factorial(from_='x', max_n=3)\n"
        f"b = await {print_alias}('y')\n"
        "c = await call_tool('get-weather', {'from': 'z'})\n"
        "[a, b, c, json.dumps(1)]"
    )
    result = session.call_sync("run_code", {"code": code})
    assert result.outcome == "success", result.content
    assert json.loads(result.content) == [
        {"from": "x", "max-n": 3},
        {"from": "y"},
        {"from": "z"},
        "1",
    ]


def _signatures(found: str) -> list[str]:
    lines = found.splitlines()
    return ["\n".join(lines[i : i + 2]) for i in range(0, len(lines), 2)]


def test_signatures_show_what_a_tool_returns() -> None:
    def forecast(city: str) -> dict[str, float]:
        """A city's forecast."""
        return {"temp": 21.5}

    shaped = Tool(
        name="crm_search",
        description="Search contacts.",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}},
        output_schema={
            "type": "object",
            "properties": {
                "contacts": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"id": {"type": "integer"}}},
                },
                "total": {"type": "integer"},
            },
        },
    )
    assert python_signature(Tool.from_function(forecast)).endswith(
        "async def forecast(city: str) -> dict[str, float]: ..."
    )
    assert python_signature(shaped).endswith(
        '-> {"contacts": list[{"id": int}], "total": int}: ...'
    )


def test_a_result_whose_text_is_json_reaches_the_program_parsed() -> None:
    # As an MCP server without an outputSchema answers: its JSON as text.
    def orders(customer: str) -> ContentResult:
        """A customer's orders."""
        text = json.dumps([{"id": 1, "amount": 12.5}, {"id": 2, "amount": 7.5}])
        return ContentResult(content=[{"type": "text", "text": text}])

    catalog = ToolCatalog()
    catalog.add_function(orders)
    session = ToolManager(catalog, mode="code").session()
    code = "got = await orders(customer='ada')\nsum(o['amount'] for o in got)"
    result = session.call_sync("run_code", {"code": code})
    assert result.outcome == "success", result.content
    assert result.content == "20.0"


def test_one_callers_long_programs_leave_a_worker_to_another() -> None:
    # One conversation runs as many programs as there are workers, each computing for a
    # while; another's trivial program still finds a worker before any of them ends (it
    # waited for one of them to end when a caller could hold every worker).
    spin = (
        "import time\n"
        "await started()\n"
        "t = time.monotonic()\n"
        "while time.monotonic() - t < 1.0:\n"
        "    pass\n"
        "'spun'"
    )

    async def scenario() -> None:
        arrived = asyncio.Event()
        every = asyncio.Event()
        count = 0

        def started() -> str:
            """A program has started."""
            nonlocal count
            count += 1
            if count >= CLIENT_WORKERS:
                arrived.set()
            if count >= MAX_WORKERS:
                every.set()  # only when one caller may hold every worker
            return "ok"

        catalog = ToolCatalog()
        catalog.add_function(started)
        limits = CodeLimits(seconds=10.0)
        busy = ToolManager(catalog, mode=Code(limits=limits)).session("one-caller")
        spinning = [
            asyncio.ensure_future(busy.call("run_code", {"code": spin})) for _ in range(MAX_WORKERS)
        ]
        await asyncio.wait_for(arrived.wait(), 10)
        with contextlib.suppress(asyncio.TimeoutError):  # a last one taking the last worker
            await asyncio.wait_for(every.wait(), 0.3)
        other = ToolManager(ToolCatalog(), mode="code").session()
        result = await other.call("run_code", {"code": "print(6 * 7)"})
        assert result.content == "42"
        assert not any(task.done() for task in spinning)
        done = await asyncio.gather(*spinning)
        assert [r.content for r in done] == ["spun"] * MAX_WORKERS

    asyncio.run(scenario())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=30), max_size=12, unique=True))
def test_aliases_are_callable_unique_and_lead_back_to_their_tool(names: list[str]) -> None:
    names_of = CodeNames(names)
    aliases = [names_of.alias(n) for n in names]
    assert len(set(aliases)) == len(aliases)
    for name, alias in zip(names, aliases, strict=True):
        assert alias.isascii() and alias.isidentifier() and not keyword.iskeyword(alias)
        assert alias not in dir(builtins) and alias not in SANDBOX_MODULES
        assert names_of.original(alias) == name
        assert CodeNames(reversed(names)).alias(name) == alias  # stable: order does not matter


def test_signatures_follow_the_local_refs_a_servers_schemas_use() -> None:
    # What pydantic (and so MCP servers built on it) generates: nested models under $defs.
    from pydantic import BaseModel, TypeAdapter

    class Contact(BaseModel):
        id: int
        name: str

    class Found(BaseModel):
        contacts: list[Contact]
        total: int

    class Where(BaseModel):
        city: str

    parameters = {
        "type": "object",
        "properties": {"where": {"$ref": "#/$defs/Where"}, "best": {"$ref": "#/$defs/Contact"}},
        "required": ["where"],
        "$defs": {
            "Where": TypeAdapter(Where).json_schema(),
            "Contact": TypeAdapter(Contact).json_schema(),
        },
    }
    found = Tool(
        name="crm_search",
        description="Search contacts.",
        parameters=parameters,
        output_schema=TypeAdapter(Found).json_schema(),
    )
    assert python_signature(found).endswith(
        'crm_search(where: dict, *, best: dict=None) -> {"contacts": list[{"id": int, '
        '"name": str}], "total": int}: ...'
    ), python_signature(found)
