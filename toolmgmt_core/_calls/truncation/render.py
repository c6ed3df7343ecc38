"""How a result is measured and sent: compact JSON (``ensure_ascii=False``) for values, the
text itself for strings; what a cut result is (:class:`TruncationResult`); the shared limits.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import enum
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "MIN_RESULT_TOKENS",
    "STRATEGIES",
    "Strategy",
    "TruncationResult",
    "render_result",
    "to_jsonable",
]


Strategy = Literal["head", "tail", "smart"]

STRATEGIES: tuple[str, ...] = ("head", "tail", "smart")
"""The truncation strategies, by name."""

MIN_RESULT_TOKENS = 16
"""The smallest budget accepted: enough for the smallest marker of any value in any tokenizer."""

DEFAULT_MAX_DEPTH = 12
"""Containers nested deeper than this collapse to a marker when a value has to be cut."""

_SEPARATORS = (",", ":")
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')
_ELLIPSIS = "…"
_FAIR_SHARE_ITEMS = 6
"""At most 1/_FAIR_SHARE_ITEMS of a container's room goes to one item before others are seen."""
_MIN_SHRUNK = 24
"""A cut item gets at least this many characters, or is left out."""
_MAX_ROUNDS = 12
_CLOSE_ENOUGH = 0.97


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=_SEPARATORS, allow_nan=False)


def render_result(value: Any) -> str:
    """The text a model receives for ``value``: a string as is, anything else as compact JSON.

    Values that are not JSON-compatible are first converted with :func:`to_jsonable`.
    """
    if isinstance(value, str):
        return value
    try:
        return _dumps(value)
    except (TypeError, ValueError):
        return _dumps(to_jsonable(value))


def to_jsonable(value: Any) -> Any:
    """``value`` made JSON-compatible: containers become dicts and lists, keys strings.

    Pydantic models are dumped, dataclasses become dicts, dates ISO strings, enums their value,
    bytes a short description, NaN and infinities strings, integers too long to print a
    marker, circular references a marker, and anything else its ``str()``.
    """
    return _jsonable(value, set())


def _jsonable(value: Any, path: set[int]) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, enum.Enum):
        return _jsonable(value.value, path)
    if isinstance(value, int):
        try:
            str(value)
        except ValueError:
            return (
                f"{_ELLIPSIS} {value.bit_length() * 30103 // 100000 + 1}-digit number {_ELLIPSIS}"
            )
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(bytes(value)):,} bytes>"
    if isinstance(value, _dt.datetime | _dt.date | _dt.time):
        return value.isoformat()
    key = id(value)
    if key in path:
        return "<circular reference>"
    path.add(key)
    try:
        if hasattr(value, "model_dump") and callable(value.model_dump):
            return _jsonable(value.model_dump(mode="json"), path)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return _jsonable(dataclasses.asdict(value), path)
        if isinstance(value, Mapping):
            return {_key_text(k): _jsonable(v, path) for k, v in value.items()}
        if isinstance(value, list | tuple | set | frozenset):
            return [_jsonable(v, path) for v in value]
        return str(value)
    finally:
        path.discard(key)


def _key_text(key: Any) -> str:
    """A dict key as JSON writes it."""
    if isinstance(key, str):
        return key
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int | float):
        return _dumps(key) if not isinstance(key, float) or math.isfinite(key) else str(key)
    return str(key)


@dataclass(frozen=True)
class TruncationResult:
    """A result cut (or not) to a token budget."""

    value: Any
    """The result within budget: a string for a string, a JSON-compatible value otherwise."""
    text: str
    """The text sent to the model: ``render_result(value)``."""
    truncated: bool
    """Whether anything was cut, summarised or replaced."""
    tokens: int
    """Tokens of ``text``."""
    original_tokens: int
    """Tokens of the untouched result, rendered the same way."""
    strategy: str = "smart"
    """The strategy used (``head``, ``tail``, ``smart``, or ``summary``)."""
    note: str | None = None
    """What happened besides cutting, for logs: ``SummaryFailed: ...`` when a summary failed."""

    @property
    def summarized(self) -> bool:
        """Whether the value is a summary written by a summariser."""
        return self.strategy == "summary"
