"""What a finding is, and every code one can have."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

__all__ = [
    "CATALOG",
    "CODES",
    "MAX_DESCRIPTION_CHARS",
    "Finding",
    "Severity",
]


Severity = Literal["error", "warning", "info"]

CATALOG = "(catalog)"
"""The ``tool`` of findings about the whole catalog."""

MAX_DESCRIPTION_CHARS = 1024
"""Longer descriptions cost tokens on every request; the limit warns above it."""

CODES: Mapping[str, str] = {
    "name-not-lowercase": "the name has upper-case letters",
    "name-not-verb-led": "the name does not start with a verb",
    "name-not-namespaced": "the name has no namespace and the tool no domain",
    "name-mapped": "a provider rejects the name; it will be renamed when sent",
    "description-missing": "no description",
    "description-vague": "the description is too short or generic",
    "description-no-when": "the description does not say when to use the tool",
    "description-too-long": "the description is very long",
    "description-sibling": "a similar sibling exists and the description does not set them apart",
    "description-addresses-model": "the tool's text gives the model instructions (prompt "
    "injection)",
    "description-resembles-injection": "the tool's text is close in meaning to a known prompt "
    "injection (with an embedder)",
    "name-shadows-tool": "the name or description nearly duplicates another domain's tool",
    "parameter-no-description": "a parameter without a description",
    "parameter-unconstrained": "a parameter with a fixed set of values but no enum or pattern",
    "optional-no-default": "an optional parameter without a default",
    "required-missing": "an object schema without an explicit required list",
    "required-unknown": "a required entry naming a property the object does not have",
    "server-generated-field": "a field the model cannot know (a server-generated id)",
    "example-invalid": "an input example that does not match the tool's own schema",
    "schema-normalized": "older JSON Schema draft forms (draft 4's boolean exclusiveMinimum...) "
    "were rewritten to 2020-12",
    "anthropic-incompatible": "Anthropic cannot take this schema",
    "anthropic-rewritten": "the schema is rewritten for Anthropic",
    "openai-incompatible": "OpenAI cannot take this schema",
    "openai-not-strict": "the schema cannot use OpenAI strict mode",
    "openai-too-many-tools": "more tools than OpenAI accepts in one request",
    "gemini-incompatible": "Gemini cannot take this schema",
    "gemini-rewritten": "the schema loses something in Gemini's schema subset",
    "definition-unreadable": "a definition that could not be read (an invalid schema): skipped",
}
"""Every finding code and what it means."""


@dataclass(frozen=True)
class Finding:
    """One problem found in a tool."""

    tool: str
    """The tool's name."""
    severity: Severity
    """``error`` (a provider refuses it or the model cannot use it), ``warning``, or ``info``."""
    code: str
    """A stable code from :data:`CODES`."""
    message: str
    """What is wrong."""
    hint: str
    """How to fix it."""
    path: str = ""
    """Where in the parameters schema (``/filters/tag``), empty for the tool itself."""

    def to_dict(self) -> dict[str, Any]:
        """The finding as plain JSON."""
        return asdict(self)
