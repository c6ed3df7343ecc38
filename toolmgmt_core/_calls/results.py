"""The result a model gets for one call: shaped to its budget and accounted, or an error.

Every call a session runs ends here:

- :func:`shape_result` cuts (or summarises) what a handler returned to its budget and records it
  in the session's account; a large result is shaped off the event loop, within what is left of
  the call's timeout (and at least :data:`MIN_SHAPE_SECONDS`);
- a result that cannot be shaped (nested too deeply, a value that fails to convert, out of time)
  becomes :func:`unshown_result`: the call succeeded, so the model is told so and not invited to
  run it again;
- :func:`error_result` and :func:`meta_result` put an error or a meta-tool's answer in the same
  compact JSON, an error's message cut to the tool's budget;
- :func:`edited_result` tells the model that a human reviewer changed a call before it ran.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Mapping
from typing import Any

from toolmgmt_core._calls.budget import SessionBudget
from toolmgmt_core._calls.execution import ToolResult, dumps_compact
from toolmgmt_core._calls.sync import is_small, off_loop
from toolmgmt_core._calls.truncation import (
    MIN_RESULT_TOKENS,
    TruncationResult,
    to_jsonable,
    truncate_result,
)
from toolmgmt_core._model.errors import ToolCallError
from toolmgmt_core._model.tokens import count_tokens
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._runtime.control import reraise_control_flow

__all__ = [
    "MIN_SHAPE_SECONDS",
    "edited_result",
    "error_result",
    "meta_result",
    "shape_result",
    "unshown_result",
]

MIN_SHAPE_SECONDS = 2.0
"""Seconds shaping a result may always take, even when the handler used the whole timeout."""

logger = logging.getLogger("toolmgmt")


async def shape_result(
    account: SessionBudget,
    tool: Tool,
    value: Any,
    seconds: float | None,
    *,
    goal: str | None = None,
    call_id: str | None = None,
) -> ToolResult:
    """The model-facing result of a call that ran, cut to its budget and recorded in
    ``account``; never an error (see the module docstring).

    Args:
        account: the session's result account.
        tool: the tool that ran.
        value: what its handler returned.
        seconds: what is left of the call's timeout (None: no limit).
        goal: the user's goal, for a summariser.
        call_id: the provider's id of the call.
    """
    limit = None if seconds is None else max(seconds, MIN_SHAPE_SECONDS)
    small = is_small(value)
    try:
        if account.budget.summarizer is not None:
            jsonable = (
                to_jsonable(value)
                if small
                else await off_loop(lambda: to_jsonable(value), lane=tool.name)
            )
            # Awaited here: the sync shape would block the loop on the summariser.
            shaped = await asyncio.wait_for(
                account.shape(jsonable, tool, goal=goal, call_id=call_id), limit
            )
        elif small:
            shaped = account.shape_sync(to_jsonable(value), tool, goal=goal, call_id=call_id)
        else:

            def shape() -> TruncationResult:
                return account.shape_sync(to_jsonable(value), tool, goal=goal, call_id=call_id)

            # Out of time, the worker may still finish and record its result too: the
            # session's account then counts the call twice, never not at all.
            shaped = await asyncio.wait_for(off_loop(shape, lane=tool.name), limit)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # RecursionError, a failing __str__, a timeout...
        reraise_control_flow(exc)  # a summariser's framework signal passes
        return unshown_result(account, tool, exc, call_id=call_id)
    if shaped.note:
        logger.warning("toolmgmt: %s: %s", tool.name, shaped.note)
    return ToolResult(
        content=shaped.text,
        value=shaped.value,
        tool_name=tool.name,
        truncated=shaped.truncated,
        tokens=shaped.tokens,
        original_tokens=shaped.original_tokens,
        note=shaped.note,
        truncation=shaped.strategy if shaped.truncated else None,
    )


def unshown_result(
    account: SessionBudget, tool: Tool, exc: BaseException, *, call_id: str | None = None
) -> ToolResult:
    """The answer for a call that ran but whose result cannot be shown: done, not failed."""
    if isinstance(exc, asyncio.TimeoutError | TimeoutError):
        reason = "preparing it took too long"
    elif isinstance(exc, RecursionError):
        reason = "it is nested too deeply"
    else:
        reason = f"it could not be converted ({type(exc).__name__})"
    logger.warning("toolmgmt: %s ran but its result could not be shown: %r", tool.name, exc)
    value = {
        "status": "done",
        "note": f"{tool.name} ran and finished, but its result cannot be shown ({reason}). "
        "The call succeeded: do not call it again to see the result.",
    }
    content = dumps_compact(value)
    tokens = count_tokens(content, account.budget.encoding)
    account.record(tokens, tool_name=tool.name, call_id=call_id)
    return ToolResult(
        content=content,
        value=value,
        tool_name=tool.name,
        tokens=tokens,
        original_tokens=tokens,
        note=f"ResultNotShown: {type(exc).__name__}",
    )


def meta_result(name: str, value: Any, encoding: str, *, content: str | None = None) -> ToolResult:
    """A meta-tool's answer: ``content`` when given, else ``value`` as compact JSON."""
    content = dumps_compact(value) if content is None else content
    tokens = count_tokens(content, encoding)
    return ToolResult(
        content=content, value=value, tool_name=name, tokens=tokens, original_tokens=tokens
    )


def error_result(name: str, error: ToolCallError, *, limit: int, encoding: str) -> ToolResult:
    """``error`` as the model gets it, its message cut so the whole fits ``limit`` tokens (a
    handler's message, such as a stack dump or an error page, is a result too)."""
    value = error.to_dict()
    content = dumps_compact(value)
    tokens = count_tokens(content, encoding)
    if tokens > limit:
        wrapper = count_tokens(dumps_compact({**value, "message": ""}), encoding)
        room = max(limit - wrapper, MIN_RESULT_TOKENS)
        value["message"] = truncate_result(error.message, room, "smart", encoding=encoding).value
        content = dumps_compact(value)
        tokens = count_tokens(content, encoding)
    return ToolResult(
        content=content,
        value=value,
        is_error=True,
        error=error,
        tool_name=name,
        tokens=tokens,
        original_tokens=tokens,
    )


def edited_result(result: ToolResult, arguments: Mapping[str, Any], encoding: str) -> ToolResult:
    """``result`` of a call a human reviewer changed before it ran, saying so first (as
    HumanInTheLoopMiddleware does), so the model does not repeat its own call."""
    shown = dumps_compact(arguments)
    if len(shown) > 400:
        shown = shown[:399] + "…"
    content = (
        f"A human reviewer changed this call before it ran; it ran with the arguments {shown}. "
        f"Do not repeat your original call.\n\n{result.content}"
    )
    return dataclasses.replace(result, content=content, tokens=count_tokens(content, encoding))
