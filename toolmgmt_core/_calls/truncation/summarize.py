"""Summarising a large result with a pluggable summariser, falling back to truncation (and
saying why) when it fails or times out.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from toolmgmt_core._calls.sync import run_sync
from toolmgmt_core._calls.truncation.fit import _check_budget, _truncate
from toolmgmt_core._calls.truncation.render import (
    DEFAULT_MAX_DEPTH,
    MIN_RESULT_TOKENS,
    Strategy,
    TruncationResult,
    render_result,
)
from toolmgmt_core._model.tokens import DEFAULT_ENCODING, Encoding, counter, get_encoding
from toolmgmt_core._runtime.control import reraise_control_flow
from toolmgmt_core._runtime.threads import Pool

__all__ = [
    "Summarizer",
    "summarize_result",
    "summarize_result_sync",
]


class Summarizer(Protocol):
    """Writes a summary of a large result; sync or async.

    Called as ``summarizer(text, tool_name=..., goal=...)`` where ``goal`` is the user's goal
    when known (else None). Returns the summary text (or an awaitable of it).
    """

    def __call__(self, text: str, *, tool_name: str, goal: str | None) -> str | Awaitable[str]: ...


_SUMMARIZERS = Pool("summarizer", 8)
"""Where sync summarisers run: one that timed out and still runs is counted as hung under
``"<tool> summariser"`` until it returns (the registry's ``hung_threads``)."""


async def _call_summarizer(
    summarizer: Callable[..., Any], text: str, tool_name: str, goal: str | None
) -> Any:
    call = getattr(summarizer, "__call__", None)  # noqa: B004 - async __call__ on an object
    if inspect.iscoroutinefunction(summarizer) or inspect.iscoroutinefunction(call):
        result = await summarizer(text, tool_name=tool_name, goal=goal)
    else:
        run = functools.partial(
            contextvars.copy_context().run, summarizer, text, tool_name=tool_name, goal=goal
        )
        future = _SUMMARIZERS.submit(run)
        try:
            result = await asyncio.wrap_future(future)
        except asyncio.CancelledError:  # timed out (or the call was): it may run on, counted
            _SUMMARIZERS.abandon(future, f"{tool_name} summariser")
            raise
    if inspect.isawaitable(result):
        result = await result
    return result


async def summarize_result(
    value: Any,
    summarizer: Callable[..., Any],
    max_tokens: int,
    *,
    tool_name: str,
    goal: str | None = None,
    threshold: int | None = None,
    timeout: float | None = 30.0,
    input_tokens: int | None = None,
    strategy: Strategy | str = "smart",
    encoding: str | Encoding = DEFAULT_ENCODING,
) -> TruncationResult:
    """A summary of ``value`` when it is over ``threshold`` tokens, else ``truncate_result``.

    The summary is itself capped at ``max_tokens``. When the summariser raises, times out or
    returns something other than a string, the truncated result is returned instead, with a
    ``note`` starting ``SummaryFailed:`` that says why.

    Args:
        value: the tool result (a string or a JSON-compatible value).
        summarizer: a sync or async callable ``(text, *, tool_name, goal) -> str``; a sync one
            runs in a worker thread (which is left to finish on its own after a timeout).
        max_tokens: the budget of what is returned.
        tool_name: the tool that produced the result, passed to the summariser.
        goal: the user's goal when known, passed to the summariser.
        threshold: summarise only results over this many tokens; None uses ``max_tokens``.
        timeout: seconds the summariser may take; None waits for ever.
        input_tokens: cut what the summariser reads to this many tokens first (None: all).
        strategy: the truncation strategy, for the fallback and the summary's cap.
        encoding: the tokenizer.
    """
    _check_budget(max_tokens, strategy)
    enc = get_encoding(encoding) if isinstance(encoding, str) else encoding
    count = counter(enc)
    fallback = _truncate(value, max_tokens, str(strategy), count, DEFAULT_MAX_DEPTH)
    limit = max_tokens if threshold is None else threshold
    if fallback.original_tokens <= limit:
        return fallback
    if input_tokens is not None:
        source = _truncate(
            value,
            max(input_tokens, MIN_RESULT_TOKENS),
            str(strategy),
            count,
            DEFAULT_MAX_DEPTH,
            fallback.original_tokens,
        )
        text = source.text
    else:
        text = render_result(value)
    # asyncio.wait rather than wait_for: a TimeoutError the summariser raises itself is a
    # failure like any other, not our timeout.
    task = asyncio.ensure_future(_call_summarizer(summarizer, text, tool_name, goal))
    done, _ = await asyncio.wait({task}, timeout=timeout)
    if not done:
        task.cancel()
        return dataclasses.replace(fallback, note=f"SummaryFailed: timed out after {timeout:g} s")
    try:
        summary = task.result()
    except Exception as exc:  # a summariser is user code: any failure falls back
        reraise_control_flow(exc)
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return dataclasses.replace(fallback, note=f"SummaryFailed: {reason}")
    if not isinstance(summary, str) or not summary.strip():
        got = "an empty string" if isinstance(summary, str) else type(summary).__name__
        return dataclasses.replace(
            fallback, note=f"SummaryFailed: the summariser returned {got}, expected text"
        )
    capped = _truncate(summary, max_tokens, str(strategy), count, DEFAULT_MAX_DEPTH)
    return TruncationResult(
        capped.value,
        capped.text,
        True,
        capped.tokens,
        fallback.original_tokens,
        "summary",
        "summary cut to the budget" if capped.truncated else None,
    )


def summarize_result_sync(
    value: Any, summarizer: Callable[..., Any], max_tokens: int, **options: Any
) -> TruncationResult:
    """:func:`summarize_result` for synchronous code (safe inside a running event loop too)."""
    return run_sync(summarize_result(value, summarizer, max_tokens, **options))
