"""A small weather MCP server for the gateway notebook: made-up, deterministic data.

Run as ``python weather_server.py`` (stdio). ``get_history`` returns a large result on purpose
(a year of hourly readings), to show the gateway cutting it to its token budget.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

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


if __name__ == "__main__":
    server.run()
