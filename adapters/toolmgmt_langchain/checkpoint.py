"""Where a paused program's state lives in LangGraph: the value of the interrupt that paused its
``run_code`` call, saved in the graph's checkpoint.

LangGraph re-runs a node from its start when the graph resumes, and gives the node back only the
human's answers, never its own interrupt's value; yet that value is in the checkpoint it resumes
from (a pending write of the task). :func:`paused_value` reads it there, so a fresh agent (a new
middleware, a new worker) over the same checkpointer resumes the program where it paused, and no
call settled before the pause runs again.

LangGraph has no public hook for this (langgraph 1.2.24, langgraph-checkpoint 4.3.2): the one
private access is the run's config keys below, read in this module alone;
``tests/adapters/langchain/test_checkpoint_read.py`` fails if they change.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["apaused_value", "paused_value"]

# langgraph._internal._constants (1.2): the run's checkpointer, this task's id, and the
# checkpoint each namespace resumes from.
_CHECKPOINTER = "__pregel_checkpointer"
_TASK_ID = "__pregel_task_id"
_CHECKPOINT_MAP = "checkpoint_map"
_INTERRUPT = "__interrupt__"
_NS_SEP = "|"


def _where(config: Any) -> tuple[Any, str, dict[str, Any]] | None:
    """(checkpointer, task id, the config of the checkpoint the task resumes from), or None
    outside a graph run with a checkpointer."""
    configurable = (config or {}).get("configurable") or {}
    saver = configurable.get(_CHECKPOINTER)
    task = configurable.get(_TASK_ID)
    if saver is None or not isinstance(task, str):
        return None
    parent = str(configurable.get("checkpoint_ns") or "").rpartition(_NS_SEP)[0]
    checkpoint = (configurable.get(_CHECKPOINT_MAP) or {}).get(parent)
    if checkpoint is None:
        return None
    at = {
        "configurable": {
            "thread_id": configurable.get("thread_id"),
            "checkpoint_ns": parent,
            "checkpoint_id": checkpoint,
        }
    }
    return saver, task, at


def _value(saved: Any, task: str, call_id: str) -> Mapping[str, Any] | None:
    """The toolmgmt part of the last interrupt value this task raised for the tool call
    ``call_id``, in a checkpoint tuple."""
    for task_id, channel, interrupts in reversed(getattr(saved, "pending_writes", None) or []):
        if task_id != task or channel != _INTERRUPT:
            continue
        for interrupt in reversed(interrupts or []):
            value = getattr(interrupt, "value", None)
            if not isinstance(value, Mapping) or value.get("tool_call_id") != call_id:
                continue
            kept = value.get("toolmgmt")
            return kept if isinstance(kept, Mapping) else {}  # resumed, yet nothing kept
    return None


def paused_value(config: Any, call_id: str) -> Mapping[str, Any] | None:
    """What the interrupt of the tool call ``call_id`` kept (``{"resume_state": ...}``; empty
    when it kept nothing) when the graph resumes its task, else None (a fresh call, or no
    checkpointer)."""
    where = _where(config)
    if where is None:
        return None
    saver, task, at = where
    return _value(saver.get_tuple(at), task, call_id)


async def apaused_value(config: Any, call_id: str) -> Mapping[str, Any] | None:
    """:func:`paused_value` for an async graph run (the checkpointer's async read)."""
    where = _where(config)
    if where is None:
        return None
    saver, task, at = where
    return _value(await saver.aget_tuple(at), task, call_id)
