"""A small helpdesk MCP server for the gateway notebook: support tickets in memory.

Run as ``python tickets_server.py`` (stdio). The gateway in ``05_mcp_gateway.ipynb`` starts it.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("tickets", instructions="A helpdesk: support tickets.")

TICKETS: dict[str, dict[str, str]] = {
    f"T-{n:04d}": {
        "id": f"T-{n:04d}",
        "title": title,
        "status": "open" if n % 3 else "closed",
        "customer": customer,
    }
    for n, (title, customer) in enumerate(
        [
            ("Refund not received", "maya@example.com"),
            ("Cannot log in after password reset", "omar@example.com"),
            ("Invoice shows the wrong VAT number", "lena@example.com"),
            ("App crashes when exporting a report", "maya@example.com"),
        ],
        start=1,
    )
}


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def search_tickets(text: str, status: str = "any") -> list[dict[str, str]]:
    """Search support tickets by words in their title or the customer's email.

    Args:
        text: words to look for.
        status: "open", "closed" or "any".
    """
    words = text.lower().split()
    return [
        t
        for t in TICKETS.values()
        if any(w in f"{t['title']} {t['customer']}".lower() for w in words)
        and status in ("any", t["status"])
    ]


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def get_ticket(ticket_id: str) -> dict[str, str]:
    """Get one support ticket by its id (e.g. 'T-0001')."""
    if ticket_id not in TICKETS:
        raise ToolError(f"no ticket {ticket_id!r}; ids look like 'T-0001'")
    return TICKETS[ticket_id]


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
def create_ticket(title: str, customer: str) -> str:
    """Open a new support ticket for a customer (their email). Returns the new ticket's id."""
    ticket_id = f"T-{len(TICKETS) + 1:04d}"
    TICKETS[ticket_id] = {"id": ticket_id, "title": title, "status": "open", "customer": customer}
    return ticket_id


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
def close_ticket(ticket_id: str) -> str:
    """Close a support ticket once the customer's problem is solved."""
    get_ticket(ticket_id)["status"] = "closed"
    return "closed"


@server.tool(annotations=ToolAnnotations(destructive_hint=True))
def delete_ticket(ticket_id: str) -> str:
    """Delete a support ticket for good."""
    TICKETS.pop(ticket_id, None)
    return "deleted"


if __name__ == "__main__":
    server.run()
