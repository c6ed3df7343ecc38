"""Approval through the LiteLLM door, as at every other door (finding 4 of the call pipeline's
issue): ``run_meta_tool_calls_sync(all_tools=True)`` ran the destructive
``crm_delete_contact`` without asking anyone; LangChain and PydanticAI pause."""

from __future__ import annotations

import json
from typing import Any

import pytest

pytest.importorskip("litellm")

import litellm  # noqa: E402
from support.demo import demo_manager  # noqa: E402
from toolmgmt_litellm import run_meta_tool_calls, run_meta_tool_calls_sync  # noqa: E402

from toolmgmt_core import Approval, ApprovalEdit, ApprovalRequest, Discovery  # noqa: E402
from toolmgmt_demo import demo_catalog  # noqa: E402

DELETE = {
    "id": "d1",
    "type": "function",
    "function": {"name": "crm_delete_contact", "arguments": json.dumps({"contact_id": "con_0001"})},
}


def _response() -> Any:
    return litellm.completion(
        model="openai/gpt-4o-mini",
        messages=[{"role": "user", "content": "delete con_0001"}],
        mock_tool_calls=[DELETE],
    )


def _manager(**options: Any) -> Any:
    """A fresh demo catalog (a delete must not leak into other tests), nothing denied; a call
    runs the tool it names (as an app running every call of a response does)."""
    return demo_manager(
        deny=(), catalog=demo_catalog(), discovery=Discovery(call_unloaded="load"), **options
    )


def _error(message: dict[str, Any]) -> str | None:
    try:
        return json.loads(message["content"]).get("error")
    except (ValueError, AttributeError):
        return None


def test_a_destructive_call_is_not_run_without_a_yes() -> None:
    session = _manager().session()
    [answer] = run_meta_tool_calls_sync(session, _response(), all_tools=True)
    assert _error(answer) == "approval_denied"
    assert "nobody here can give it" in answer["content"]


def test_the_apps_own_approver_is_asked_with_the_validated_call() -> None:
    asked: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    session = _manager().session()
    [answer] = run_meta_tool_calls_sync(session, _response(), all_tools=True, approve=approve)
    assert _error(answer) is None and "con_0001" in answer["content"]
    assert [(r.tool.name, dict(r.arguments)) for r in asked] == [
        ("crm_delete_contact", {"contact_id": "con_0001"})
    ]
    # An async approver, an edit (the core re-validates it and says what ran), a no.
    edited = run_meta_tool_calls_sync(
        _manager().session(),
        _response(),
        all_tools=True,
        approve=lambda request: ApprovalEdit({"contact_id": "con_0002"}),
    )
    assert "con_0002" in edited[0]["content"] and "human reviewer changed" in edited[0]["content"]

    async def refuse(request: ApprovalRequest) -> bool:
        return False

    import asyncio

    refused = asyncio.run(
        run_meta_tool_calls(_manager().session(), _response(), all_tools=True, approve=refuse)
    )
    assert _error(refused[0]) == "approval_denied"


def test_the_opt_out_is_explicit() -> None:
    session = _manager(approval=Approval(destructive=False)).session()
    [answer] = run_meta_tool_calls_sync(session, _response(), all_tools=True)
    assert _error(answer) is None and "con_0001" in answer["content"]
