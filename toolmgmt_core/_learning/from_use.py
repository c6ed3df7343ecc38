"""Search that learns from the calls it sees: :class:`UseLearner`, a listener of the manager.

A manager over a catalog that learns from use (``ToolCatalog(learning=LearningOptions())``,
``from_use`` left on) installs one :class:`UseLearner` among its listeners. It follows each
conversation's events: a search (``tool_search``, ``discover_tools`` with a query) and the names
it returned, then the calls; a successful call of a tool an earlier search of the same
conversation returned teaches the catalog the pair ``(query, tool, conversation, principal)``
(:class:`~toolmgmt_core._learning.feedback.SearchFeedback` decides which). Only unambiguous evidence
teaches: a search of several needs at once does not say which need found which tool, so it
teaches nothing.

The principal is who the conversation belongs to: the one given to
``manager.session(id, principal=...)`` (:meth:`UseLearner.bind`), else the learner's
:attr:`UseLearner.principal` (a gateway client's name), else the one anonymous principal. A term
moves a tool only once several principals taught it, so that opening conversations is no way
to teach.

What the catalog does with a pair (the checks, redaction, the principals' rule, the store)
is :meth:`ToolCatalog.learn <toolmgmt_core.ToolCatalog.learn>`'s; it runs on a thread of its own,
off the call's path (a store write never slows a call), from a bounded queue: when the queue is
full a pair is dropped and counted (:attr:`UseLearner.dropped`), never waited for.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import OrderedDict
from typing import Any

from toolmgmt_core._events import CallFinished, Event, SearchDone
from toolmgmt_core._learning.feedback import SearchFeedback
from toolmgmt_core._runtime.control import reraise_control_flow
from toolmgmt_core._runtime.threads import start_thread

__all__ = ["MAX_CONVERSATIONS", "UseLearner"]

MAX_CONVERSATIONS = 10_000
"""Conversations whose recent searches a learner remembers (the least recently active go)."""

_QUEUE = 10_000

logger = logging.getLogger("toolmgmt")


class UseLearner:
    """Teaches ``catalog`` from the conversations whose events it gets (a listener).

    Usage::

        catalog = ToolCatalog(tools, learning=LearningOptions(store="learned.sqlite"))
        manager = ToolManager(catalog)          # installs a UseLearner: nothing else to do
        manager.learner.flush()                 # wait until what was taught is learned (tests)
    """

    def __init__(
        self,
        catalog: Any,
        *,
        max_conversations: int = MAX_CONVERSATIONS,
        principal: str | None = None,
    ) -> None:
        self.catalog = catalog
        self.max_conversations = max_conversations
        self.principal = principal
        """Who conversations not bound to a principal belong to (None: the anonymous one)."""
        self._principals: OrderedDict[str, str] = OrderedDict()
        self.dropped = 0
        """Pairs left out because the queue was full."""
        self.failures = 0
        """Pairs the catalog could not learn (its store failed; logged)."""
        self._feedback: OrderedDict[str, SearchFeedback] = OrderedDict()
        self._lock = threading.Lock()
        self._queue: queue.Queue[tuple[str, str, str, str | None] | None] = queue.Queue(_QUEUE)
        self._worker: threading.Thread | None = None

    def __call__(self, event: Event) -> None:
        conversation = event.conversation
        if conversation is None:
            return
        if isinstance(event, SearchDone):
            if len(event.queries) == 1 and event.method == "keyword":
                with self._lock:
                    self._conversation(conversation).searched(event.queries[0], event.hits)
        elif isinstance(event, CallFinished) and event.outcome == "success":
            with self._lock:
                feedback = self._feedback.get(conversation)
                pair = feedback.called(event.tool, ok=True) if feedback is not None else None
                principal = self._principals.get(conversation, self.principal)
            if pair is not None:
                self._put((*pair, principal))

    def bind(self, conversation: str, principal: str | None) -> None:
        """Say that ``conversation`` belongs to ``principal`` (the last
        :attr:`max_conversations` conversations bound are remembered)."""
        if principal is None:
            return
        if not isinstance(principal, str) or not principal:
            raise ValueError(f"A principal is a non-empty string, got {principal!r}.")
        with self._lock:
            self._principals[conversation] = principal
            self._principals.move_to_end(conversation)
            while len(self._principals) > self.max_conversations:
                self._principals.popitem(last=False)

    def _conversation(self, conversation: str) -> SearchFeedback:
        feedback = self._feedback.get(conversation)
        if feedback is None:
            feedback = self._feedback[conversation] = SearchFeedback(conversation)
            while len(self._feedback) > self.max_conversations:
                self._feedback.popitem(last=False)
        else:
            self._feedback.move_to_end(conversation)
        return feedback

    def _put(self, pair: tuple[str, str, str, str | None]) -> None:
        try:
            self._queue.put_nowait(pair)
        except queue.Full:
            self.dropped += 1
            return
        if self._worker is None:
            with self._lock:
                if self._worker is None:
                    self._worker = start_thread("learner", self._run)

    def _run(self) -> None:
        while True:
            pair = self._queue.get()
            if pair is None:  # close
                self._queue.task_done()
                return
            try:
                self.catalog.learn([pair], source="use")
            except Exception as exc:  # a store that failed: the next pairs may still land
                reraise_control_flow(exc)
                self.failures += 1
                logger.warning("toolmgmt: could not learn from a call (%s)", exc)
            finally:
                self._queue.task_done()

    def flush(self) -> None:
        """Wait until every pair taught so far has been learned (or failed)."""
        self._queue.join()

    def close(self, timeout: float = 5.0) -> None:
        """Learn the pairs queued, then stop the thread, waiting at most ``timeout`` seconds
        (``ToolManager.close``); a pair taught later starts it again."""
        with self._lock:
            worker, self._worker = self._worker, None
        if worker is None:
            return
        deadline = time.monotonic() + timeout
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:  # its store is stuck: the daemon thread is left to end
            return
        worker.join(max(0.0, deadline - time.monotonic()))
