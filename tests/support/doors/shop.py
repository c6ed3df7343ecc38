"""The tools every door of the cross-door suite serves, framework-free, with how often each ran.

The same functions join a ``ToolCatalog`` (LangChain, PydanticAI catalog tools, LiteLLM), a
PydanticAI ``FunctionToolset`` (wrapped tools) and an upstream MCP server behind the gateway
(``tests/adapters/mcp/servers/shop_server.py``, which imports this module), so every door
answers the same call with the same result, cut to the same budget.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from toolmgmt_core import (
    Access,
    Discovery,
    Policy,
    ResultBudget,
    ToolAnnotations,
    ToolCatalog,
    ToolManager,
    ToolResult,
)

__all__ = [
    "ALWAYS_ON",
    "CODE_CANCEL",
    "CODE_LOOKUP",
    "CODE_REFUND",
    "DENIED",
    "DESTRUCTIVE",
    "MAX_RESULT_TOKENS",
    "LEAK",
    "ORDER",
    "SECRETS",
    "Shop",
    "error_code",
    "report_text",
    "shop_manager",
]

ORDER = "A-1"
"""The order every scenario asks about."""
LEAK = (
    "could not connect to postgresql://admin:S3cr3t@db/orders with key "
    "sk-live-4f9a8b7c6d5e4f3a2b1c (Authorization: Bearer tok3n-9f8e7d6c5b4a)"
)
"""What ``bill_order``'s failure says: a password, an API key and a bearer token (issue 41)."""
SECRETS = ("S3cr3t", "sk-live-4f9a", "tok3n-9f8e")
"""The parts of :data:`LEAK` that must never reach the model."""
MAX_RESULT_TOKENS = 80
"""The result budget at every door: ``order_report`` is far over it."""
DENIED = ("refund_*",)
"""What the policy refuses at every door."""
DESTRUCTIVE = ("cancel_order",)
"""Tools annotated destructive: a call needs approval."""
CODE_LOOKUP = f"r = await lookup_order(order_id={ORDER!r})\nprint(r)"
"""Code mode: a program calling a tool and printing its result."""
CODE_REFUND = f"await refund_order(order_id={ORDER!r})"
"""Code mode: a program calling the tool the policy refuses."""
CODE_CANCEL = f"await cancel_order(order_id={ORDER!r})"
"""Code mode: a program calling the tool that needs approval."""
ALWAYS_ON = ("lookup_order", "cancel_order", "order_report", "ship_order", "wait_order")
"""Listed from the start; ``track_order`` is found with ``tool_search`` (the restore scenario),
``refund_order`` is refused by the policy."""


def report_text(order_id: str) -> str:
    """The long result of ``order_report``: the same text at every door."""
    return "\n".join(
        f"{order_id} line {i:03d}: parcel {i} left warehouse {i % 7} on day {i % 28 + 1}"
        for i in range(240)
    )


class Shop:
    """The tools, each counting its runs in :attr:`runs` and recording its arguments."""

    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()
        self.arguments: list[tuple[str, dict[str, Any]]] = []

    def _ran(self, name: str, **arguments: Any) -> None:
        self.runs[name] += 1
        self.arguments.append((name, arguments))

    def functions(self) -> list[Callable[..., Any]]:
        """The tool functions (sync, except ``wait_order``), named as the tools."""

        def lookup_order(order_id: str) -> str:
            """Look up an order's status by its id."""
            self._ran("lookup_order", order_id=order_id)
            return f"order {order_id}: shipped"

        def cancel_order(order_id: str) -> str:
            """Cancel an order for good."""
            self._ran("cancel_order", order_id=order_id)
            return f"cancelled {order_id}"

        def order_report(order_id: str) -> str:
            """The full shipping report of an order, line by line."""
            self._ran("order_report", order_id=order_id)
            return report_text(order_id)

        def refund_order(order_id: str) -> str:
            """Refund an order's payment."""
            self._ran("refund_order", order_id=order_id)
            return f"refunded {order_id}"

        def ship_order(order_id: str) -> str:
            """Ship an order from the warehouse."""
            self._ran("ship_order", order_id=order_id)
            raise RuntimeError("the warehouse is offline")

        def bill_order(order_id: str) -> str:
            """Charge an order's card through the billing database."""
            self._ran("bill_order", order_id=order_id)
            raise RuntimeError(LEAK)

        def track_order(order_id: str) -> str:
            """Track an order's parcel on its way."""
            self._ran("track_order", order_id=order_id)
            return f"parcel of {order_id}: out for delivery"

        async def wait_order(order_id: str) -> str:
            """Wait until an order is ready (takes a while)."""
            self._ran("wait_order", order_id=order_id)
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                self.runs["wait_order cancelled"] += 1
                raise
            return f"order {order_id}: ready"

        return [
            lookup_order,
            cancel_order,
            order_report,
            refund_order,
            ship_order,
            bill_order,
            track_order,
            wait_order,
        ]

    def catalog(self) -> ToolCatalog:
        """The tools in a catalog (domain ``shop``), ``cancel_order`` annotated destructive."""
        catalog = ToolCatalog()
        for function in self.functions():
            destructive = function.__name__ in DESTRUCTIVE
            catalog.add_function(
                function,
                domain="shop",
                annotations=ToolAnnotations(destructive=True if destructive else None),
            )
        return catalog


def shop_manager(catalog: ToolCatalog, **options: Any) -> ToolManager:
    """The manager every door runs with: search mode (cache-stable, unless ``mode`` says
    otherwise), :data:`ALWAYS_ON` listed, :data:`DENIED` refused, results cut to
    :data:`MAX_RESULT_TOKENS`."""
    options.setdefault("always_on", ALWAYS_ON)
    options.setdefault("mode", "search")
    return ToolManager(
        catalog,
        discovery=Discovery(max_results=1),
        access=Access(policies=[Policy("shop", deny=list(DENIED))]),
        results=ResultBudget(max_result_tokens=MAX_RESULT_TOKENS),
        **options,
    )


def error_code(text: Any) -> str | None:
    """The ``error`` code of a result's text (the core's error shape), or None."""
    if isinstance(text, ToolResult):
        text = text.content
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None
    return value.get("error") if isinstance(value, dict) else None
