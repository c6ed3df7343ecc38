"""A call whose answer was lost is resent once by the core, only when the tool is safe to repeat.

A handler raises :class:`ToolAnswerLostError` when its request or answer was lost on the way
(it may or may not have run); the core, not the handler's adapter, decides whether to run it
again: once, when the tool is annotated read-only, or idempotent and not destructive; never
otherwise. These run plain function tools through a session, as every door does.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from toolmgmt_core import (
    Tool,
    ToolAnnotations,
    ToolAnswerLostError,
    ToolCatalog,
    ToolManager,
    ToolResult,
    ToolUnavailableError,
)

READ_ONLY = ToolAnnotations(read_only=True)
IDEMPOTENT = ToolAnnotations(read_only=False, destructive=False, idempotent=True)
WRITES = ToolAnnotations(read_only=False, destructive=False, idempotent=False)
DESTRUCTIVE_IDEMPOTENT = ToolAnnotations(read_only=False, destructive=True, idempotent=True)


class _Flaky:
    """A handler whose first ``lost`` answers are lost, then answers how often it ran."""

    def __init__(self, lost: int) -> None:
        self.lost = lost
        self.runs = 0

    def __call__(self, key: str) -> str:
        self.runs += 1
        if self.runs <= self.lost:
            raise ToolAnswerLostError(
                f"the answer to run {self.runs} was lost; the call may or may not have run.",
                tool_name="bump",
            )
        return f"{key}: ran {self.runs} times"


class _AsyncFlaky(_Flaky):
    async def __call__(self, key: str) -> str:  # type: ignore[override]
        await asyncio.sleep(0)
        return super().__call__(key)


def _call(handler: Any, annotations: ToolAnnotations, timeout: float | None = 10) -> ToolResult:
    catalog = ToolCatalog()
    catalog.add(
        Tool(
            name="bump",
            description="Bump the counter of a key.",
            parameters={"type": "object", "properties": {"key": {"type": "string"}}},
            annotations=annotations,
            handler=handler,
            timeout=timeout,
        )
    )
    # A destructive tool needs approval: given here, so only the resend rule can refuse it.
    session = ToolManager(catalog, mode="flat", approval=lambda request: True).session()
    return asyncio.run(session.call("bump", {"key": "k"}))


@pytest.mark.parametrize("flaky", [_Flaky, _AsyncFlaky], ids=["sync", "async"])
@pytest.mark.parametrize("annotations", [READ_ONLY, IDEMPOTENT], ids=["read-only", "idempotent"])
def test_a_lost_answer_of_a_tool_safe_to_repeat_is_resent_once(
    flaky: type[_Flaky], annotations: ToolAnnotations, caplog: pytest.LogCaptureFixture
) -> None:
    handler = flaky(lost=1)
    with caplog.at_level(logging.INFO, logger="toolmgmt"):
        result = _call(handler, annotations)
    assert result.outcome == "success" and result.content == "k: ran 2 times"
    assert handler.runs == 2
    resent = [r for r in caplog.records if "resending 'bump'" in r.getMessage()]
    assert len(resent) == 1 and "answer to run 1 was lost" in resent[0].getMessage()

    twice = flaky(lost=2)  # lost again: resent once only, and the model is told
    result = _call(twice, annotations)
    assert twice.runs == 2 and result.outcome == "failed"
    assert isinstance(result.error, ToolAnswerLostError)
    assert isinstance(result.error, ToolUnavailableError)  # its shape for the model is unchanged
    assert result.error.code == "tool_unavailable" and "may or may not have run" in result.content


@pytest.mark.parametrize(
    "annotations",
    [
        ToolAnnotations(),
        WRITES,
        DESTRUCTIVE_IDEMPOTENT,
        ToolAnnotations(idempotent=False),
        ToolAnnotations(idempotent=True),  # destructive unknown: MCP's default says it may be
    ],
    ids=["unannotated", "writes", "destructive-idempotent", "not-idempotent", "idempotent-only"],
)
def test_a_lost_answer_of_any_other_tool_is_never_resent(annotations: ToolAnnotations) -> None:
    handler = _Flaky(lost=1)
    result = _call(handler, annotations)
    assert handler.runs == 1
    assert result.outcome == "failed" and isinstance(result.error, ToolAnswerLostError)


def test_a_resend_is_bounded_by_what_is_left_of_the_timeout() -> None:
    runs: list[float] = []

    async def slow_then_lost(key: str) -> str:
        runs.append(asyncio.get_running_loop().time())
        if len(runs) == 1:
            await asyncio.sleep(0.3)
            raise ToolAnswerLostError("lost after a while", tool_name="bump")
        await asyncio.sleep(30)  # the second run gets only what the first left of the timeout
        return "late"

    result = _call(slow_then_lost, READ_ONLY, timeout=1.5)
    assert len(runs) == 2 and result.error is not None and result.error.code == "timeout"
    assert "1.5s" in result.content  # the error names the tool's whole timeout
