"""A small weather MCP server: made-up, deterministic data (needs ``toolmgmt[mcp]``).

Run as ``python -m toolmgmt_demo.weather_server`` (stdio), or with ``--http PORT`` for streamable
HTTP on 127.0.0.1 (``http://127.0.0.1:PORT/mcp``; ``--host`` to bind elsewhere). The README's
PydanticAI example, the gateway notebook and docs/deploy.md start it. ``get_history`` returns a
large result on purpose (a year of hourly readings), to show a budget cutting it.
"""

from __future__ import annotations

import argparse

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

__all__ = ["READ_ONLY", "get_alerts", "get_forecast", "get_history", "main", "server"]

server = MCPServer("weather", instructions="Weather forecasts and history (made-up data).")

READ_ONLY = ToolAnnotations(read_only_hint=True)


def _temperature(city: str, hour: int) -> float:
    return round(12 + (sum(map(ord, city)) % 9) + 6 * ((hour % 24) - 12) / 12, 1)


@server.tool(annotations=READ_ONLY)
def get_forecast(city: str, days: int = 3) -> dict[str, object]:
    """Get the weather forecast for a city, day by day (highs and lows in Celsius)."""
    return {
        "city": city,
        "days": [
            {"day": d + 1, "high": _temperature(city, 15 + d), "low": _temperature(city, 4 + d)}
            for d in range(days)
        ],
    }


@server.tool(annotations=READ_ONLY)
def get_alerts(region: str) -> list[str]:
    """List active severe weather alerts (storms, floods, heat) for a region."""
    return [f"Storm warning for {region} until 18:00"] if region.lower() == "west" else []


@server.tool(annotations=READ_ONLY)
def get_history(city: str) -> list[dict[str, object]]:
    """Get a year of hourly temperature readings for a city (a large result)."""
    return [
        {"hour": h, "city": city, "celsius": _temperature(city, h), "station": f"{city[:3]}-01"}
        for h in range(24 * 365)
    ]


def main(argv: list[str] | None = None) -> None:
    """Serve on stdio, or on streamable HTTP with ``--http PORT``."""
    parser = argparse.ArgumentParser(
        prog="python -m toolmgmt_demo.weather_server",
        description="A small weather MCP server (made-up data).",
    )
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on PORT")
    parser.add_argument("--host", default="127.0.0.1", help="the address to bind with --http")
    args = parser.parse_args(argv)
    if args.http is None:
        server.run()
    else:
        server.run("streamable-http", host=args.host, port=args.http)


if __name__ == "__main__":
    main()
