"""How large a tool may be to enter a catalog: :class:`ToolLimits`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from toolmgmt_core._model.errors import CatalogError, InvalidToolError
from toolmgmt_core._model.tool import Tool

__all__ = ["ToolLimits"]


@dataclass(frozen=True)
class ToolLimits:
    """How large a tool may be to enter a catalog: its text reaches the model whole (through
    ``get_tool_schema``, a loaded tool's definition), so a tool from a third party is refused
    when adding it would put more than this in front of the model (``add_schemas(on_error=
    "skip")`` and the gateway skip it and say why). Refused, not cut: a cut description could
    keep a misleading head and lose what qualifies it, and a cut schema is another schema.

    The defaults are far above any real tool's (the BFCL pools' largest description is 545
    characters, their largest schema 4,298) and far below what would swamp a context window.
    """

    description_chars: int = 16_384
    """Longest description, and longest ``usage_notes``, in characters."""
    schema_chars: int = 131_072
    """Longest ``parameters`` (and ``output_schema``), as JSON, in characters."""

    def __post_init__(self) -> None:
        for name in ("description_chars", "schema_chars"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise CatalogError(
                    f"ToolLimits.{name} must be a positive whole number, got {value!r}."
                )

    def check(self, tool: Tool) -> None:
        """Refuse ``tool`` when it is larger than these limits.

        Raises:
            InvalidToolError: naming the field, its size and the limit.
        """
        for field_name, text in (
            ("description", tool.description),
            ("usage_notes", tool.usage_notes),
        ):
            if text and len(text) > self.description_chars:
                self._refuse(
                    tool, field_name, len(text), self.description_chars, "description_chars"
                )
        measured = getattr(tool, "_parameters_chars", None)  # measured when the tool was made
        for field_name, schema in (
            ("parameters", tool.parameters),
            ("output_schema", tool.output_schema),
        ):
            if schema is None:
                continue
            size = measured if field_name == "parameters" and measured else _json_chars(schema)
            if size > self.schema_chars:
                self._refuse(tool, field_name, size, self.schema_chars, "schema_chars")

    @staticmethod
    def _refuse(tool: Tool, field_name: str, size: int, limit: int, option: str) -> None:
        raise InvalidToolError(
            f"Tool {tool.name!r}: its {field_name} is {size:,} characters, over the catalog's "
            f"limit of {limit:,} (it would reach the model whole); shorten it, or raise the "
            f"limit with ToolCatalog(limits=ToolLimits({option}=...))."
        )


def _json_chars(value: Any) -> int:
    return len(json.dumps(value, sort_keys=True, default=repr))
