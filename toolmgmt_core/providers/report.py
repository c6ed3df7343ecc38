"""What a formatting call did: tools left out, strict fallbacks, lossy rewrites, names."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["FormatReport"]


@dataclass
class FormatReport:
    """The side notes of one :func:`~toolmgmt_core.format_tools` call."""

    provider: str
    """The provider the tools were formatted for."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Original name -> why the tool was left out of the request."""
    strict_fallbacks: dict[str, str] = field(default_factory=dict)
    """Original name -> why the tool was sent non-strict although strict mode was asked for."""
    notes: dict[str, list[str]] = field(default_factory=dict)
    """Original name -> lossy but valid rewrites (a keyword moved into a description, ...)."""
    name_map: dict[str, str] = field(default_factory=dict)
    """Name sent to the provider -> original name, for every tool sent."""
    deferred: list[str] = field(default_factory=list)
    """Original names of the tools sent with deferred loading."""
    cached: bool = False
    """Whether the result came from the formatting cache."""

    def note(self, name: str, text: str) -> None:
        """Record a lossy rewrite of tool ``name``."""
        bucket = self.notes.setdefault(name, [])
        if text not in bucket:
            bucket.append(text)

    def original_name(self, provider_name: str) -> str:
        """The original name of a tool the model called by ``provider_name``."""
        return self.name_map.get(provider_name, provider_name)

    def to_dict(self) -> dict[str, Any]:
        """The report as plain JSON."""
        return {
            "provider": self.provider,
            "skipped": dict(self.skipped),
            "strict_fallbacks": dict(self.strict_fallbacks),
            "notes": {k: list(v) for k, v in self.notes.items()},
            "name_map": dict(self.name_map),
            "deferred": list(self.deferred),
            "cached": self.cached,
        }
