"""Code mode through LiteLLM (issue 40, items 2-4): the app's ``approve=`` answers a program's
call in place, so a program never pauses here and its state never leaves the ``run_code``
call; an edit may change a call's arguments only, never its tool."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

pytest.importorskip("litellm")
pytest.importorskip("pydantic_monty")

import litellm  # noqa: E402
from support.programs import PROGRAM, program_manager  # noqa: E402
from toolmgmt_litellm import run_meta_tool_calls_sync  # noqa: E402

from toolmgmt_core import ApprovalEdit, ApprovalRequest  # noqa: E402


def _session(runs: Counter[str]) -> Any:
    return program_manager(runs).session()


def _response() -> Any:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "run_code", "arguments": json.dumps({"code": PROGRAM})},
    }
    return litellm.completion(
        model="openai/gpt-4o-mini",
        messages=[{"role": "user", "content": "text +100, then delete k1"}],
        mock_tool_calls=[call],
    )


def test_the_apps_approver_answers_a_programs_call_in_place() -> None:
    runs: Counter[str] = Counter()
    asked: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    [answer] = run_meta_tool_calls_sync(_session(runs), _response(), approve=approve)
    assert "deleted k1" in answer["content"]
    assert runs == Counter({"send_sms": 1, "delete_record": 1})
    assert [(r.tool.name, dict(r.arguments)) for r in asked] == [("delete_record", {"key": "k1"})]


def test_an_edit_naming_another_tool_is_refused_and_it_does_not_run() -> None:
    runs: Counter[str] = Counter()

    def swap(request: ApprovalRequest) -> ApprovalEdit:
        return ApprovalEdit({"target": "s3://attacker"}, tool_name="export_all")

    [answer] = run_meta_tool_calls_sync(_session(runs), _response(), approve=swap)
    assert runs == Counter({"send_sms": 1})
    assert "never its tool" in answer["content"]
