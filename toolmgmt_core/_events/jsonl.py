"""A usage log in a JSONL file: :class:`JsonlListener` writes one record per event, and
``toolmgmt usage FILE`` reads it back (:mod:`toolmgmt_core._events.records`).

Private by default: no argument, result or query text is written unless the listener is told
to (``capture_content=True``, or OpenTelemetry's GenAI variable); even then each text is
bounded.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from toolmgmt_core._events.content import ContentCapture
from toolmgmt_core._events.records import event_record, parse_records, read_lines, record_line
from toolmgmt_core._events.types import Event
from toolmgmt_core._model.errors import ConfigError

__all__ = ["JsonlListener", "read_jsonl"]


class JsonlListener:
    """Appends each event to a JSONL file, one line each, flushed as written.

    Usage::

        log = JsonlListener("usage.jsonl")
        manager = ToolManager(catalog, listeners=[log])
        ...                                      # then: toolmgmt usage usage.jsonl

    Safe from several threads; the file is opened on the first event and kept open (call
    :meth:`close` at the end, or use the listener as a context manager).

    Args:
        path: the file (appended to; its folder must exist).
        capture_content: write argument, result and query text (bounded); None reads
            ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (off when unset).
        max_content_chars: characters of one text at most.

    Raises:
        ConfigError: the folder does not exist.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        capture_content: bool | ContentCapture | None = None,
        max_content_chars: int | None = None,
    ) -> None:
        self.path = Path(path)
        if not self.path.parent.is_dir():
            raise ConfigError(f"JsonlListener: the folder of {str(self.path)!r} does not exist.")
        self.content = ContentCapture.of(capture_content, max_content_chars)
        """What of the content is written."""
        self._file: TextIO | None = None
        self._lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        record = event_record(event, self.content)
        if record is None:
            return
        line = record_line(record) + "\n"
        with self._lock:
            if self._file is None:
                self._file = self.path.open("a", encoding="utf-8")
            self._file.write(line)
            self._file.flush()

    def close(self) -> None:
        """Close the file (the next event opens it again)."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> JsonlListener:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """The records of a usage log file, in order (lines that are not records are skipped).

    Raises:
        ConfigError: the file cannot be read.
    """
    try:
        handle = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise ConfigError(f"Cannot read the usage log {str(path)!r}: {exc.strerror}.") from exc
    with handle:
        yield from parse_records(read_lines(handle))
