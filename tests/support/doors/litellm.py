"""The LiteLLM door: ``litellm.acompletion`` with a mocked model answer (``mock_tool_calls``),
``ToolManagerCallback`` setting each request's tools, and the app's loop running the calls with
``run_meta_tool_calls(all_tools=True, approve=...)``; the model sees ``{"role": "tool"}``
messages."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import litellm
from litellm.integrations.custom_logger import CustomLogger
from toolmgmt_litellm import ToolManagerCallback, run_meta_tool_calls

from support.doors import EDIT_NOTE, Outcomes, answered, cut_reference, ran
from support.doors.shop import CODE_CANCEL, CODE_LOOKUP, CODE_REFUND, ORDER, Shop, shop_manager
from toolmgmt_core import ApprovalEdit, ApprovalRequest, Search
from toolmgmt_core._stores import InMemorySessionStore

__all__ = ["LiteLLMDoor"]

MODEL = "openai/gpt-4o-mini"
SESSION = "conversation-1"


class _Sent(CustomLogger):
    """Records the tool names each request was sent with."""

    def __init__(self) -> None:
        super().__init__()
        self.tools: list[list[str]] = []

    def log_pre_api_call(self, model: Any, messages: Any, kwargs: dict[str, Any]) -> None:
        tools = (kwargs.get("optional_params") or {}).get("tools") or []
        self.tools.append([t["function"]["name"] for t in tools])


def _form(message: dict[str, Any]) -> str:
    assert message["role"] == "tool"
    return answered('`{"role": "tool"}`', message["content"])


class LiteLLMDoor:
    """One conversation in the manager's session store, driven by the app's own loop."""

    label = "LiteLLM callback"

    def __init__(self) -> None:
        self.shop = Shop()
        self.catalog = self.shop.catalog()
        self.store = InMemorySessionStore()
        self.asked: list[ApprovalRequest] = []
        self.verdict: Any = True
        self.sent = _Sent()
        self.outcomes = Outcomes()
        self.saved = list(litellm.callbacks)
        self.mode: Any = "search"

    async def __aenter__(self) -> LiteLLMDoor:
        self.callback = self._callback()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        litellm.callbacks[:] = self.saved

    def _callback(self) -> ToolManagerCallback:
        """A fresh callback over a fresh manager and the conversation's store."""
        callback = ToolManagerCallback(
            shop_manager(
                self.catalog, session_store=self.store, listeners=[self.outcomes], mode=self.mode
            )
        )
        litellm.callbacks[:] = [*self.saved, callback, self.sent]
        return callback

    async def _approve(self, request: ApprovalRequest) -> Any:
        self.asked.append(request)
        assert self.shop.runs[request.tool.name] == 0, "asked after it ran"
        return self.verdict

    async def _step(self, *calls: tuple[str, Any]) -> list[dict[str, Any]]:
        """One model response making ``calls``, and the app running them."""
        mock: dict[str, Any] = {
            "mock_tool_calls": [
                {
                    "id": f"c{n}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)},
                }
                for n, (name, args) in enumerate(calls)
            ]
        }
        response = await litellm.acompletion(
            model=MODEL,
            messages=[{"role": "user", "content": "go"}],
            metadata={"toolmgmt_session": SESSION},
            **(mock if calls else {"mock_response": "done"}),
        )
        session = self.callback.session(SESSION)
        return await run_meta_tool_calls(session, response, all_tools=True, approve=self._approve)

    async def _one(self, name: str, args: Any) -> dict[str, Any]:
        [message] = await self._step((name, args))
        return message

    # -- outcomes ---------------------------------------------------------------------------

    async def success(self) -> str:
        return _form(await self._one("lookup_order", {"order_id": ORDER}))

    async def invalid_arguments(self) -> str:
        answers = [await self._one("lookup_order", {"order_id": 5}) for _ in range(3)]
        forms = {_form(m) for m in answers}
        assert len(forms) == 1, forms
        return f"{forms.pop()} at every repeat (the app's loop sets the limit)"

    async def unknown_tool(self) -> str:
        return _form(await self._one("lookup_ordr", {"order_id": ORDER}))

    async def denied_tool(self) -> str:
        message = await self._one("refund_order", {"order_id": ORDER})
        assert self.shop.runs["refund_order"] == 0
        return _form(message)

    async def failed(self) -> str:
        return _form(await self._one("ship_order", {"order_id": ORDER}))

    async def truncated(self) -> str:
        message = await self._one("order_report", {"order_id": ORDER})
        assert message["content"] == cut_reference()
        return f"{_form(message)}, the core's cut"

    # -- approval ---------------------------------------------------------------------------

    async def _approval(self, verdict: Any) -> str:
        self.verdict = verdict
        message = await self._one("cancel_order", {"order_id": ORDER})
        [request] = self.asked
        assert request.tool.name == "cancel_order" and request.arguments == {"order_id": ORDER}
        self.answer = message
        return f"{_form(message)}, {ran(self.shop.runs['cancel_order'])}"

    async def approval_pause(self) -> str:
        await self._approval(False)
        return "the app's `approve=` is awaited with an `ApprovalRequest` (no run to pause)"

    async def approval_approve(self) -> str:
        return f"`approve=` answers True: {await self._approval(True)}"

    async def approval_deny(self) -> str:
        return f"`approve=` answers False: {await self._approval(False)}"

    async def approval_edit(self) -> str:
        outcome = await self._approval(ApprovalEdit({"order_id": "A-2"}))
        assert self.shop.arguments[-1] == ("cancel_order", {"order_id": "A-2"})
        assert str(self.answer["content"]).startswith(EDIT_NOTE), self.answer
        return f"`approve=` answers `ApprovalEdit(args)`: {outcome} with them, the result says so"

    # -- code mode ----------------------------------------------------------------------------

    def _code(self) -> None:
        self.mode = "code"
        self.callback = self._callback()

    async def code_success(self) -> str:
        self._code()
        message = await self._one("run_code", {"code": CODE_LOOKUP})
        assert message["content"] == f"order {ORDER}: shipped", message
        return f"{_form(message)}: what the program printed"

    async def code_denied(self) -> str:
        self._code()
        message = await self._one("run_code", {"code": CODE_REFUND})
        assert "PermissionError" in message["content"] and self.shop.runs["refund_order"] == 0
        return f"{_form(message)}: `PermissionError` raised inside the program"

    async def code_approval(self) -> str:
        self._code()
        message = await self._one("run_code", {"code": CODE_CANCEL})
        [request] = self.asked
        assert request.tool.name == "cancel_order"
        return (
            f"`approve=` is asked about the program's call, answers True: {_form(message)}, "
            f"{ran(self.shop.runs['cancel_order'])}"
        )

    # -- state and control flow ---------------------------------------------------------------

    async def restore(self) -> str:
        # The growing list (Search(appends=True)) is the one a restore rebuilds: what the
        # conversation loaded is listed again. The cache-stable list never changes.
        self.mode = Search(appends=True)
        self.callback = self._callback()
        await self._step(("tool_search", {"query": "track parcel on its way"}))
        self.callback = self._callback()  # a fresh callback and manager, the same store
        await self._step()
        assert "track_order" not in self.sent.tools[0]
        assert "track_order" in self.sent.tools[-1]
        return "a fresh callback over the same session store lists the tools it loaded"

    async def cancellation(self) -> str:
        task = asyncio.ensure_future(self._one("wait_order", {"order_id": ORDER}))
        while not self.shop.runs["wait_order"]:
            await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            cancelled = True
        else:
            cancelled = False
        assert cancelled and self.shop.runs["wait_order cancelled"] == 1
        return "`CancelledError` reaches the app's loop; the tool is cancelled"
