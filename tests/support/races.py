"""Two writers at the same moment: the race the session stores must lose nothing in."""

from __future__ import annotations

import threading
from typing import Any

__all__ = ["load_at_once"]


def load_at_once(sessions: list[Any], queries: list[str]) -> None:
    """Run ``tool_search(query)`` on each session from its own thread, released together."""
    start = threading.Barrier(len(sessions))

    def load(session: Any, query: str) -> None:
        start.wait()
        session.call_sync("tool_search", {"query": query})

    threads = [
        threading.Thread(target=load, args=(session, query))
        for session, query in zip(sessions, queries, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
