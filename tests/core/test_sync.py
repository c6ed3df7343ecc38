"""The one bridge from sync code to async code: ``run_sync``, with or without a running loop."""

from __future__ import annotations

import asyncio
import contextvars

import pytest

from toolmgmt_core._calls.sync import run_sync

WHO = contextvars.ContextVar("who", default="nobody")


class MarkedLoop(asyncio.SelectorEventLoop):
    """A loop a test can recognise (what ``uvloop.new_event_loop`` is to the gateway)."""


async def _loop_and_caller() -> tuple[type, str]:
    return type(asyncio.get_running_loop()), WHO.get()


def test_run_sync_runs_on_the_loop_its_factory_makes() -> None:
    assert run_sync(_loop_and_caller(), loop_factory=MarkedLoop)[0] is MarkedLoop
    assert run_sync(_loop_and_caller())[0] is not MarkedLoop


def test_inside_a_running_loop_the_factory_and_the_callers_context_go_along() -> None:
    async def caller() -> tuple[type, str]:
        WHO.set("the framework's run")
        return run_sync(_loop_and_caller(), loop_factory=MarkedLoop)

    assert asyncio.run(caller()) == (MarkedLoop, "the framework's run")


def test_the_factorys_loop_is_closed_and_errors_come_through() -> None:
    made: list[asyncio.AbstractEventLoop] = []

    def factory() -> asyncio.AbstractEventLoop:
        made.append(MarkedLoop())
        return made[-1]

    async def fails() -> None:
        raise LookupError("from the coroutine")

    with pytest.raises(LookupError, match="from the coroutine"):
        run_sync(fails(), loop_factory=factory)
    assert made and made[0].is_closed()
