"""A stdio upstream's stderr at the gateway: each line after the upstream's name, or nowhere.

An operator reading the gateway's stderr can tell whose a line is (``upstream notes: ...``): a
log record of the ``toolmgmt_gateway.upstream`` logger at INFO, with its ``upstream`` field, once
the gateway's logging is configured (``toolmgmt serve``: :mod:`toolmgmt_gateway.logs`), else the
line itself on stderr; with its secrets replaced as in a tool's error text (a connection string's
password, keys, bearer tokens, card numbers; a credential wrapped onto the line after its keyword
too: the core's ``redact_line``). ``stderr = "drop"`` in the upstream's table discards its stderr
instead, as it may echo a call's arguments. The MCP adapter's own default passes the lines on as
they are.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
from typing import TextIO

from toolmgmt_mcp.transport import stderr_stream

from toolmgmt_core.integration import redact_line, start_thread

__all__ = ["upstream_errlog"]

_LINE = 4096
"""Characters of one upstream stderr line passed on at most (the rest of the line is cut)."""
_PIPES: dict[str, TextIO] = {}
"""Each upstream's stderr pipe, by name: one pipe and one relay thread per upstream for the
process's life, shared by its restarts."""
_LOCK = threading.Lock()
_LOG = logging.getLogger("toolmgmt_gateway.upstream")


def upstream_errlog(name: str, stderr: str) -> TextIO:
    """Where the stdio upstream ``name``'s stderr goes: a pipe whose lines reach ours after its
    name (``stderr = "log"``), or nowhere (``"drop"``)."""
    if stderr == "drop":
        return open(os.devnull, "w")  # noqa: SIM115 - the subprocess's stderr; closed with the GC
    with _LOCK:
        pipe = _PIPES.get(name)
        if pipe is None:
            read_end, write_end = os.pipe()
            pipe = _PIPES[name] = os.fdopen(write_end, "w")
            start_thread(f"stderr-{name}", functools.partial(_relay, read_end, name))
    return pipe


def _relay(read_end: int, name: str) -> None:
    """Pass the upstream ``name``'s stderr on, line by line after its name, each bounded and
    with its secrets replaced."""
    prefix, previous = f"upstream {name}: ", ""
    with os.fdopen(read_end, encoding="utf-8", errors="replace") as lines:
        while True:
            line = lines.readline(_LINE)
            if not line:
                return
            if not line.endswith("\n"):  # a line cut at the bound: drop the rest of it
                line += "…\n"
                while (rest := lines.readline(_LINE)) and not rest.endswith("\n"):
                    pass
            line = previous = redact_line(line, previous)
            if _LOG.isEnabledFor(logging.INFO) and _LOG.hasHandlers():
                _LOG.info("%s%s", prefix, line.rstrip("\n"), extra={"upstream": name})
                continue
            try:
                target = stderr_stream()
                target.write(prefix + line)
                target.flush()
            except (OSError, ValueError):
                continue  # our own stderr closed: the upstream's lines have nowhere to go
