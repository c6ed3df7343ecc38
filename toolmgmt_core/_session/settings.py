"""What a session reads of its manager: :class:`SessionSettings`.

A :class:`~toolmgmt_core.ToolManager` is the configuration its sessions share; the session
side (:mod:`~toolmgmt_core._session.session`, :mod:`~toolmgmt_core._session.conversation`,
:mod:`~toolmgmt_core._session.meta_calls`) depends on this protocol rather than on the manager,
so the manager can make sessions without the two modules importing each other.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from toolmgmt_core._calls.budget import ResultBudget
from toolmgmt_core._calls.pipeline import CallPipeline
from toolmgmt_core._catalog.tool_catalog import ToolCatalog
from toolmgmt_core._events import EventHub
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._policy.view import PolicyView
from toolmgmt_core._session.layout import LayoutPlanner
from toolmgmt_core._session.modes import Mode
from toolmgmt_core._session.options import Discovery, Execution
from toolmgmt_core._stores.base import SessionStore

__all__ = ["SessionSettings"]


class SessionSettings(Protocol):
    """What a session reads of its manager (a :class:`~toolmgmt_core.ToolManager`)."""

    @property
    def catalog(self) -> ToolCatalog: ...
    @property
    def mode(self) -> Mode: ...
    @property
    def policy(self) -> PolicyView: ...
    @property
    def planner(self) -> LayoutPlanner: ...
    @property
    def discovery(self) -> Discovery: ...
    @property
    def execution(self) -> Execution: ...
    @property
    def result_budget(self) -> ResultBudget: ...
    @property
    def session_store(self) -> SessionStore: ...
    @property
    def events(self) -> EventHub: ...
    @property
    def encoding(self) -> str: ...
    @property
    def pipeline(self) -> CallPipeline: ...
    def meta_tools(self) -> list[Tool]: ...
    def definition_tokens(self, tools: Iterable[Tool]) -> int: ...
