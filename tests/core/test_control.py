"""Control flow through the core: declared signals pass, undeclared ones become tool errors."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from support.embedders import HashingEmbedder

import toolmgmt_core._runtime.control as control
from toolmgmt_core import (
    Access,
    ApprovalEdit,
    ApprovalRequest,
    ApprovalResponse,
    Discovery,
    Policy,
    ResultBudget,
    ToolAnnotations,
    ToolCatalog,
    ToolManager,
)
from toolmgmt_core._calls.context import CallContext
from toolmgmt_core._runtime.control import passthrough


class Pause(Exception):
    """A framework's signal, as LangGraph's GraphInterrupt or PydanticAI's ApprovalRequired."""


def _catalog(raise_in: dict[str, Any]) -> tuple[ToolCatalog, dict[str, int]]:
    runs = {"sync": 0, "async": 0, "wipe": 0}

    def pause_sync(x: int) -> int:
        """Pause the run from a sync handler."""
        runs["sync"] += 1
        raise raise_in["exc"]

    async def pause_async(x: int) -> int:
        """Pause the run from an async handler."""
        runs["async"] += 1
        raise raise_in["exc"]

    def wipe(x: int) -> str:
        """Delete everything."""
        runs["wipe"] += 1
        return f"wiped {x}"

    def report(x: int) -> str:
        """A long report, worth a summary."""
        return "line of the report " * 100

    catalog = ToolCatalog()
    catalog.add_function(report, name="report")
    catalog.add_function(pause_sync, name="pause_sync")
    catalog.add_function(pause_async, name="pause_async")
    catalog.add_function(wipe, name="wipe", annotations=ToolAnnotations(destructive=True))
    return catalog, runs


@pytest.mark.parametrize("name", ["pause_sync", "pause_async"])
def test_declared_signal_passes_and_undeclared_becomes_a_tool_error(name: str) -> None:
    catalog, runs = _catalog({"exc": Pause("wait for a human")})
    session = ToolManager(catalog, mode="search", always_on=[name]).session()

    result = session.call_sync(name, {"x": 1})
    assert result.is_error and "Pause" in result.content

    async def declared() -> Any:
        with passthrough(Pause):
            return await session.call(name, {"x": 1})

    with pytest.raises(Pause, match="wait for a human"):
        asyncio.run(declared())
    assert runs[name.split("_")[1]] == 2
    # Through execute_tool (gateway) too, and the declaration ends with its block.
    gateway = ToolManager(catalog, mode="gateway").session()
    with passthrough(Pause), pytest.raises(Pause):
        gateway.call_sync("execute_tool", {"tool_name": name, "arguments": {"x": 1}})
    assert gateway.call_sync("execute_tool", {"tool_name": name, "arguments": {"x": 1}}).is_error


def test_passthrough_nests_and_checks_its_arguments() -> None:
    class Other(Exception):
        pass

    assert control.control_flow_types() == ()
    with passthrough(Pause):
        with passthrough(Other):
            assert control.control_flow_types() == (Pause, Other)
        assert control.is_control_flow(Pause()) and not control.is_control_flow(Other())
    assert not control.is_control_flow(Pause())
    assert control.is_control_flow(asyncio.CancelledError())
    assert control.is_control_flow(KeyboardInterrupt())
    with pytest.raises(TypeError, match="exception classes"):
        with passthrough("GraphInterrupt"):  # type: ignore[arg-type]
            pass


def test_cancellation_always_propagates() -> None:
    catalog, _ = _catalog({"exc": asyncio.CancelledError()})
    session = ToolManager(catalog, mode="search", always_on=["pause_async"]).session()
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(session.call("pause_async", {"x": 1}))

    async def slow(text: str, *, tool_name: str, goal: str | None = None) -> str:
        raise asyncio.CancelledError

    manager = ToolManager(
        catalog,
        mode="search",
        always_on=["report"],
        results=ResultBudget(summarizer=slow, summarize_threshold=16),
    )
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(manager.session().call("report", {"x": 1}))


def test_summariser_and_approver_signals_pass_when_declared() -> None:
    catalog, runs = _catalog({"exc": Pause()})

    async def pausing(text: str, *, tool_name: str, goal: str | None = None) -> str:
        raise Pause("summary needs a human")

    manager = ToolManager(
        catalog,
        mode="search",
        always_on=["report"],
        results=ResultBudget(summarizer=pausing, summarize_threshold=16),
    )
    fallback = manager.session().call_sync("report", {"x": 1})
    assert not fallback.is_error and fallback.note and "Pause" in fallback.note
    with passthrough(Pause), pytest.raises(Pause, match="summary"):
        manager.session().call_sync("report", {"x": 1})

    def approver(request: ApprovalRequest) -> bool:
        raise Pause("approve?")

    manager = ToolManager(catalog, mode="search", always_on=["wipe"], approval=approver)
    denied = manager.session().call_sync("wipe", {"x": 1})
    assert denied.is_error and json.loads(denied.content)["error"] == "approval_denied"
    with passthrough(Pause), pytest.raises(Pause, match="approve"):
        manager.session().call_sync("wipe", {"x": 1})
    assert runs["wipe"] == 0  # neither the refusal nor the pause ran it


def test_the_frameworks_approver_in_the_call_context_is_asked() -> None:
    catalog, runs = _catalog({"exc": Pause()})
    asked: list[ApprovalRequest] = []
    decisions = iter([False, True])

    def human(request: ApprovalRequest) -> bool:
        asked.append(request)
        return next(decisions)

    manager = ToolManager(catalog, mode="search", always_on=["wipe", "pause_sync"])
    session = manager.session()
    # Without an approver, a destructive tool is refused (nobody can say yes: fail closed) ...
    unasked = session.call_sync("wipe", {"x": 1})
    assert unasked.is_error and unasked.outcome == "denied" and "nobody here" in unasked.content
    assert runs["wipe"] == 0
    # ... and with the framework's approver it needs a yes, asked with validated arguments.
    framework = CallContext(approver=human)
    refused = session.call_sync("wipe", {"x": 2}, context=framework)
    assert refused.is_error and "refused" in refused.content
    assert session.call_sync("wipe", {"x": 3}, context=framework).content == "wiped 3"
    bad = session.call_sync("wipe", {"x": "three"}, context=framework)
    assert bad.is_error and len(asked) == 2  # invalid arguments never reach the human
    assert session.call_sync("pause_sync", {"x": 1}, context=framework).is_error  # no approval
    assert [r.arguments for r in asked] == [{"x": 2}, {"x": 3}]
    assert asked[0].reason == "the tool is annotated destructive"
    assert runs["wipe"] == 1  # the refused calls never ran

    # A step's require_approval without any approver is refused; with the framework's, asked.
    strict = ToolManager(
        catalog,
        mode="search",
        always_on=["pause_sync"],
        access=Access(policies=[Policy("review", require_approval=["pause_*"])]),
    )
    assert "nobody here can give it" in strict.session().call_sync("pause_sync", {"x": 1}).content
    no = CallContext(approver=lambda request: False)
    assert "refused" in strict.session().call_sync("pause_sync", {"x": 1}, context=no).content

    # The manager's own callback wins over the framework's.
    own = ToolManager(catalog, mode="search", always_on=["wipe"], approval=lambda r: True)
    assert not own.session().call_sync("wipe", {"x": 4}, context=no).is_error


def test_an_approver_may_edit_the_call_or_answer_it_instead() -> None:
    """HumanInTheLoopMiddleware's ``edit`` and ``respond``, in the core's terms."""
    catalog, runs = _catalog({"exc": Pause()})
    verdicts: list[Any] = []

    def reviewer(request: ApprovalRequest) -> Any:
        return verdicts.pop(0)

    manager = ToolManager(catalog, mode="search", always_on=["wipe"], approval=reviewer)
    session = manager.session()
    verdicts.append(ApprovalEdit({"x": 7}))
    edited = session.call_sync("wipe", {"x": 1})
    assert not edited.is_error and edited.content.endswith("wiped 7")
    assert "changed this call" in edited.content and '{"x":7}' in edited.content
    assert runs["wipe"] == 1
    # The edit is validated like the model's arguments: a bad one never runs.
    verdicts.append(ApprovalEdit({"x": "seven"}))
    bad = session.call_sync("wipe", {"x": 1})
    assert bad.is_error and json.loads(bad.content)["error"] == "invalid_arguments"
    # An answer in the tool's place is the result; the tool does not run.
    verdicts.append(ApprovalResponse("Done by hand, 12 rows."))
    answered = session.call_sync("wipe", {"x": 1})
    assert not answered.is_error and answered.content == "Done by hand, 12 rows."
    assert runs["wipe"] == 1
    # A malformed verdict refuses the call (fail closed).
    verdicts.append(ApprovalResponse)  # the class, not an answer
    assert session.call_sync("wipe", {"x": 1}).is_error
    assert runs["wipe"] == 1
    with pytest.raises(TypeError, match="must be a str"):
        ApprovalResponse(3)  # type: ignore[arg-type]


class _PausingEmbedder(HashingEmbedder):
    """Embeds tools, then raises ``signal`` on the call numbered ``at`` (1: the tools')."""

    def __init__(self, signal: BaseException, at: int) -> None:
        super().__init__()
        self.signal = signal
        self.at = at

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.calls + 1 == self.at:
            self.calls += 1
            raise self.signal
        return super().embed(texts)


def _searchable(signal: BaseException, at: int) -> ToolCatalog:
    """The test catalog over an embedder that raises ``signal`` on its call ``at``."""
    tools, _ = _catalog({"exc": Pause()})
    catalog = ToolCatalog(list(tools), embedder=_PausingEmbedder(signal, at))
    if at > 1:
        catalog.search("report", limit=1)  # the tools' vectors (call 1) and a query's (call 2)
    return catalog


@pytest.mark.parametrize("at", [1, 3], ids=["tool-vectors", "query-vectors"])
def test_an_embedders_signal_reaches_the_caller_of_a_search(at: int) -> None:
    """The search engine falls back to BM25 when its embedder fails, but not on a signal."""
    undeclared = _searchable(Pause(), at)
    assert undeclared.search("wipe everything", limit=1)  # BM25 alone
    assert undeclared.embedder_error is not None and "Pause" in undeclared.embedder_error
    with passthrough(Pause), pytest.raises(Pause, match="needs a human"):
        _searchable(Pause("needs a human"), at).search("wipe everything", limit=1)
    session = ToolManager(_searchable(Pause("needs a human"), at), mode="search").session()
    with passthrough(Pause), pytest.raises(Pause, match="needs a human"):
        session.call_sync("tool_search", {"query": "wipe everything"})
    # The interpreter's own signals pass with no declaration at all.
    with pytest.raises(KeyboardInterrupt):
        _searchable(KeyboardInterrupt(), at).search("wipe everything", limit=1)


@pytest.mark.parametrize("name", ["pause_sync", "pause_async"])
def test_keyboard_interrupt_in_a_tool_reaches_the_caller(name: str) -> None:
    catalog, runs = _catalog({"exc": KeyboardInterrupt()})
    session = ToolManager(catalog, mode="search", always_on=[name]).session()
    with pytest.raises(KeyboardInterrupt):
        session.call_sync(name, {"x": 1})

    async def in_a_loop() -> Any:
        return await session.call(name, {"x": 1})

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(in_a_loop())
    assert runs[name.split("_")[1]] == 2


def test_sync_bridge_keeps_the_callers_context() -> None:
    """session.call_sync from inside a running loop still sees the caller's declarations."""
    catalog, _ = _catalog({"exc": Pause()})
    session = ToolManager(catalog, mode="search", always_on=["pause_sync"]).session()

    async def inside_a_loop() -> None:
        with passthrough(Pause):
            session.call_sync("pause_sync", {"x": 1})

    with pytest.raises(Pause):
        asyncio.run(inside_a_loop())


def test_public_surface() -> None:
    assert control.__all__ == sorted(control.__all__)
    assert all(hasattr(control, name) for name in control.__all__)


# -- loaded tools rebuilt from a transcript (toolmgmt_core._session.history) -----------------------


def test_loaded_names_read_every_meta_tool_answer() -> None:
    from toolmgmt_core._session.history import loaded_names, restore_loaded
    from toolmgmt_demo import demo_catalog

    manager = ToolManager(demo_catalog(), mode="search", discovery=Discovery(max_results=2))
    live = manager.session()
    transcript: list[tuple[str, Any]] = []
    for name, arguments in [
        ("tool_search", {"query": "search crm contacts"}),
        ("get_tool_schema", {"tool_name": "calendar_create_event"}),
        ("load_tool_schema", {"tool_names": ["files_read_file", "email_send_email"]}),
        ("discover_tools", {}),
        ("crm_search_contacts", {"query": "patel"}),
        ("tool_search", {"query": ""}),  # an error answer loads nothing
    ]:
        transcript.append((name, live.call_sync(name, arguments).content))
    assert loaded_names(transcript)[:2] == live.loaded()[:2]
    rebuilt = manager.session()
    restore_loaded(rebuilt, transcript)
    assert rebuilt.loaded() == live.loaded()
    assert [t.name for t in rebuilt.tools()] == [t.name for t in live.tools()]
    # Parsed values, junk and non-strings are handled; errors never count as loads.
    assert loaded_names(
        [
            ("tool_search", {"added": ["a", 3, None]}),
            ("get_tool_schema", "not json"),
            ("load_tool_schema", {"tools": [{"name": "b"}, "c"]}),
            ("some_tool", '{"error":"timeout","kind":"call","message":"slow"}'),
            ("some_tool", '{"error":"timeout","kind":"gateway","message":"kept from before"}'),
            (None, "x"),  # type: ignore[list-item]
            ("execute_tool", {"ok": True}),
            ("other_tool", "fine"),
        ]
    ) == ["a", "b", "other_tool"]


def test_loaded_names_read_content_lists_within_bounds() -> None:
    """Results passed on as lists of parts (OpenAI chat and Responses, Anthropic blocks)."""
    from toolmgmt_core._session.history import loaded_names

    answer = json.dumps({"found": 2, "added": ["a", "b"]})
    error = json.dumps({"error": "timeout", "kind": "tool", "message": "slow"})
    half = len(answer) // 2
    assert loaded_names(
        [
            ("tool_search", [{"type": "text", "text": answer[:half]}, {"text": answer[half:]}]),
            ("load_tool_schema", [{"type": "input_text", "text": '{"name": "c"}'}]),
            ("get_tool_schema", [{"type": "tool_result", "content": '{"name": "d"}'}]),
            ("other", [{"type": "tool_result", "content": [{"type": "text", "text": "ok"}]}]),
            ("failed", [{"type": "text", "text": error}]),  # an error loads nothing
            ("plain", ["fine"]),
        ]
    ) == ["a", "b", "c", "d", "other", "plain"]
    # Anything but text parts, too many parts or too much text is not read as an answer.
    many = [{"type": "text", "text": " "}] * 64 + [{"type": "text", "text": answer}]
    huge = [{"type": "text", "text": " " * 1_000_000}, {"type": "text", "text": answer}]
    for content in (
        [{"type": "image_url", "image_url": {"url": "x"}}],
        [{"type": "text", "text": answer}, 3],
        many,
        huge,
        [{"type": "tool_result", "content": [{"type": "tool_result", "content": answer}]}],
    ):
        assert loaded_names([("tool_search", content)]) == []
