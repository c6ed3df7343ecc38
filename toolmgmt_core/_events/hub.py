"""Where events go: :class:`EventHub`, the listeners of one manager.

A listener is any callable taking an :class:`~toolmgmt_core._events.types.Event`. The core
checks ``if hub:`` before it builds an event, so a manager without listeners pays one check per
place an event could be emitted. A listener may also say when it wants events at all, with an
``enabled()`` method: the OpenTelemetry listener a manager installs by default wants them only
once an OpenTelemetry SDK is configured, so until then the check stays the only cost. A listener
that raises is logged and the call goes on (a framework's control-flow signal still passes, see
:mod:`toolmgmt_core._runtime.control`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from toolmgmt_core._events.types import Event
from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._runtime.control import reraise_control_flow

__all__ = ["EventHub", "Listener"]

Listener = Callable[[Event], object]
"""A callable that gets every event (sync; keep it quick, or hand the event to a queue). With an
``enabled()`` method returning False it is skipped, and no event is built for it alone."""

logger = logging.getLogger("toolmgmt")


class EventHub:
    """The listeners of one manager, called in order for each event.

    Usage::

        hub = EventHub([print])
        if hub:                                   # the only cost without listeners
            hub.emit(SearchDone(...))
    """

    __slots__ = ("_always", "_gated", "_targets", "listeners")

    def __init__(self, listeners: Iterable[Listener] = ()) -> None:
        listeners = tuple(listeners)
        for listener in listeners:
            if not callable(listener):
                raise ConfigError(
                    f"A listener must be a callable taking an event, got "
                    f"{type(listener).__name__} (for example toolmgmt_core._events.JsonlListener"
                    "(path) or toolmgmt_core._events.OtelListener())."
                )
        self.listeners: tuple[Listener, ...] = listeners
        # Each listener with its gate (its ``enabled``, or None), looked up once, not per event.
        self._targets: tuple[tuple[Listener, Callable[[], bool] | None], ...] = tuple(
            (listener, gate if callable(gate := getattr(listener, "enabled", None)) else None)
            for listener in listeners
        )
        self._gated: tuple[Callable[[], bool], ...] = tuple(
            gate for _, gate in self._targets if gate is not None
        )
        self._always = len(self._gated) < len(listeners)

    def __bool__(self) -> bool:
        if self._always:
            return True
        for enabled in self._gated:
            if enabled():
                return True
        return False

    def emit(self, event: Event) -> None:
        """Hand ``event`` to every listener that wants it; one that fails is logged and the
        rest go on."""
        for listener, enabled in self._targets:
            try:
                if enabled is not None and not enabled():
                    continue
                listener(event)
            except Exception as exc:
                reraise_control_flow(exc)
                logger.exception(
                    "toolmgmt: listener %r failed on %s", listener, type(event).__name__
                )
