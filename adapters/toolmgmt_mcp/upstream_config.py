"""One upstream MCP server: how to reach it and how its tools enter the catalog.

A frozen dataclass; the gateway's ``[upstreams.NAME]`` tables fill its subclass, which adds what
the gateway decides about the upstream's tools (``toolmgmt_gateway.config.UpstreamConfig``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["UpstreamConfig"]


@dataclass(frozen=True)
class UpstreamConfig:
    """One upstream MCP server; its name is the domain of its tools."""

    name: str
    """The domain; gateway tool names are ``<name>_<upstream tool name>``."""
    command: str | None = None
    """Executable of a stdio server (exclusive with ``url``)."""
    args: tuple[str, ...] = ()
    """Arguments of ``command``."""
    env: Mapping[str, str] = field(default_factory=dict)
    """Extra environment variables for the stdio server."""
    cwd: str | None = None
    """Working directory of the stdio server (absolute; defaults to the config file's folder)."""
    url: str | None = None
    """Streamable HTTP endpoint (exclusive with ``command``)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """HTTP headers sent to ``url`` (for example an ``Authorization`` header)."""
    timeout: float = 30.0
    """Seconds one tool call may take before the upstream is treated as hung."""
    connect_timeout: float = 15.0
    """Seconds starting and initialising the upstream may take."""
    reconnect_delay: float = 1.0
    """Seconds to wait after a failed connection before trying again on the next use."""
    groups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Group name -> glob patterns on the upstream's tool names; unmatched tools use prefixes."""
    group_by_prefix: bool = True
    """Group unmatched tools by their name's first word when several share it."""
    profiles: tuple[str, ...] = ()
    """Profiles this upstream's tools belong to."""
    max_result_tokens: int | None = None
    """Budget for one result of this upstream's tools; None uses the gateway default."""
    truncation: Literal["head", "tail", "smart"] | None = None
    """How this upstream's results over budget are cut; None uses the core's default."""
    mode: Literal["auto", "legacy"] = "auto"
    """Protocol negotiation: ``auto`` (newest the server speaks) or ``legacy`` (initialize)."""
    prefix: str | None = None
    """What goes before each tool's name; None gives ``<name>_`` (``notes_delete_note``)."""

    @property
    def tool_prefix(self) -> str:
        """The prefix actually used: ``prefix``, or the domain and an underscore."""
        return f"{self.name}_" if self.prefix is None else self.prefix

    @property
    def transport(self) -> Literal["stdio", "http"]:
        """``stdio`` for a command, ``http`` for a URL."""
        return "stdio" if self.command else "http"
