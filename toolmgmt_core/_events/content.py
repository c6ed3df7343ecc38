"""Whether argument, result and query text may leave the process, and how much of it.

Private by default: a listener that sends events out (spans, a usage log, a shared store) leaves
what the model sent, what a tool returned and what was searched for out, unless its user opted
in with an option or with OpenTelemetry's GenAI variable::

    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true

Even then each text is cut to :attr:`ContentCapture.max_chars` characters, so one large result
never makes a span or a log line unbounded.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from toolmgmt_core._model.errors import ConfigError

__all__ = ["CAPTURE_ENV", "DEFAULT_MAX_CHARS", "ContentCapture", "bounded_text"]

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""OpenTelemetry's GenAI variable: ``true`` records argument, result and query text."""

DEFAULT_MAX_CHARS = 4096
"""Characters of one captured text at most."""

_ON = frozenset({"true", "1", "yes", "on", "span_only", "span_and_event", "event_only"})
_OFF = frozenset({"", "false", "0", "no", "off", "no_content"})


@dataclass(frozen=True)
class ContentCapture:
    """Whether content is recorded, and its bound.

    Usage::

        ContentCapture.of(None)          # what the environment says (off when unset)
        ContentCapture.of(True)          # on, each text cut to 4,096 characters
        ContentCapture(True, max_chars=512)
    """

    enabled: bool = False
    """Record argument, result and query text."""
    max_chars: int = DEFAULT_MAX_CHARS
    """Characters of one text at most (a cut text ends with ``…``)."""

    def __post_init__(self) -> None:
        if isinstance(self.max_chars, bool) or not isinstance(self.max_chars, int):
            raise ConfigError(f"max_chars must be a whole number, got {self.max_chars!r}.")
        if self.max_chars < 16:
            raise ConfigError(f"max_chars must be at least 16, got {self.max_chars}.")

    @classmethod
    def of(
        cls, value: bool | ContentCapture | None, max_chars: int | None = None
    ) -> ContentCapture:
        """``value`` as a :class:`ContentCapture`: None reads :data:`CAPTURE_ENV`.

        Raises:
            ConfigError: the variable holds something that is neither on nor off.
        """
        if isinstance(value, ContentCapture):
            return value
        limit = DEFAULT_MAX_CHARS if max_chars is None else max_chars
        if value is None:
            value = _from_environment()
        return cls(bool(value), limit)

    def text(self, value: Any) -> str | None:
        """``value`` as bounded text when capture is on (JSON for structured values), else
        None."""
        if not self.enabled:
            return None
        return bounded_text(value, self.max_chars)


def _from_environment() -> bool:
    raw = os.environ.get(CAPTURE_ENV, "").strip().lower()
    if raw in _ON:
        return True
    if raw in _OFF:
        return False
    raise ConfigError(
        f"{CAPTURE_ENV}={raw[:40]!r} is not understood; use true to record argument, result "
        "and query text, or false (the default)."
    )


def bounded_text(value: Any, max_chars: int) -> str:
    """``value`` as text of at most ``max_chars`` characters (JSON for anything but a string;
    a value JSON cannot write is named by its type). Never reads more of a string than it
    keeps."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=_type_name, separators=(",", ":"))
        except (TypeError, ValueError, RecursionError):
            text = f"<{type(value).__name__}>"
    if len(text) <= max_chars:
        return text
    return text[: max_chars - 1] + "…"


def _type_name(value: Any) -> str:
    return f"<{type(value).__name__}>"
