"""Two writers at the same moment: the race the session stores must lose nothing in.

The race is real only when both writers hold the *same* version of a conversation that exists:
:func:`race_replicas` creates the conversation, opens it on both replicas, then releases their
changes together, so the second save always meets a newer version and must merge (a
:class:`ConflictCounter` on the store counts those compare-and-set retries).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from toolmgmt_core._model.errors import SessionConflictError

__all__ = ["ConflictCounter", "at_once", "load_at_once", "race_problems", "race_replicas"]


def at_once(sessions: Sequence[Any], calls: Sequence[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Run ``session.call_sync(name, arguments)`` on each session from its own thread, released
    together; the results, in the sessions' order."""
    start = threading.Barrier(len(sessions))
    results: list[Any] = [None] * len(sessions)

    def run(index: int, session: Any, call: tuple[str, dict[str, Any]]) -> None:
        start.wait()
        results[index] = session.call_sync(*call)

    threads = [
        threading.Thread(target=run, args=(index, session, call))
        for index, (session, call) in enumerate(zip(sessions, calls, strict=True))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def load_at_once(sessions: list[Any], queries: list[str]) -> None:
    """Run ``tool_search(query)`` on each session from its own thread, released together."""
    at_once(sessions, [("tool_search", {"query": query}) for query in queries])


class ConflictCounter:
    """Counts the saves a store refused because another writer saved first (each one a
    compare-and-set retry of :func:`~toolmgmt_core._stores.update_session`).

    Usage::

        counter = ConflictCounter(store)     # wraps this store object's ``save``
        ...
        assert counter.count >= 1
    """

    def __init__(self, store: Any) -> None:
        self.count = 0
        self._lock = threading.Lock()
        save = store.save

        def counted(*args: Any, **kwargs: Any) -> int:
            try:
                return int(save(*args, **kwargs))
            except SessionConflictError:
                with self._lock:
                    self.count += 1
                raise

        store.save = counted


def race_replicas(a: Any, b: Any, conversation: str) -> list[Any]:
    """Two replicas (managers over one store) change one conversation at the same moment,
    twice: each loads a tool, then each calls ``read_file`` (spending result budget).

    The conversation exists first (``read_file`` loaded), and both sessions are opened from its
    same version, so each race has a loser whose save conflicts and must merge.

    Returns:
        The two ``read_file`` results.
    """
    a.session(conversation).call_sync("tool_search", {"query": "read a file"})
    sessions = [a.session(conversation), b.session(conversation)]
    load_at_once(sessions, ["send an email", "create a calendar event"])
    return at_once(sessions, [("read_file", {}), ("read_file", {})])


def race_problems(store: Any, conversation: str, spent: Sequence[Any]) -> list[str]:
    """What :func:`race_replicas` lost in ``store`` (empty when nothing): both loads, both
    records, and the spent budget adding up to what both replicas spent."""
    stored = store.load(conversation)
    if stored is None:
        return ["the conversation is gone"]
    problems = []
    missing = {"read_file", "send_email", "create_event"} - set(stored.state["loaded"])
    if missing:
        problems.append(f"loads lost: {sorted(missing)}")
    records = stored.state.get("results", {}).get("records", [])
    if len({r.get("id") for r in records}) != 2 or len(records) != 2:
        problems.append(f"{len(records)} budget records, not 2 of their own: {records}")
    used = sum(r["tokens"] for r in records)
    if used != sum(result.tokens for result in spent):
        problems.append(f"spent {used} tokens, not {[result.tokens for result in spent]}")
    return problems
