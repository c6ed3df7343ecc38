"""The tools a code-mode program's approval tests run (issue 40): each counts its runs, so a
test checks what ran, not only what the model was told."""

from __future__ import annotations

from collections import Counter
from typing import Any

from toolmgmt_core import Access, Execution, Policy, ToolCatalog, ToolManager

__all__ = ["PROGRAM", "RUN_KEY", "counting_catalog", "program_manager"]

PROGRAM = "await send_sms(to='+100')\nprint(await delete_record(key='k1'))"
"""Texts +100 (a side effect before the pause), then deletes k1 (which needs approval)."""
RUN_KEY = "the workers' key"
"""The key every worker of a test seals paused programs with (``Execution.run_key``)."""


def counting_catalog(runs: Counter[str]) -> ToolCatalog:
    """``send_sms``, ``delete_record`` and ``export_all``, each counting its runs in ``runs``."""

    def send_sms(to: str) -> str:
        """Send a text message."""
        runs["send_sms"] += 1
        return f"sent to {to}"

    def delete_record(key: str) -> str:
        """Delete one record."""
        runs["delete_record"] += 1
        return f"deleted {key}"

    def export_all(target: str) -> str:
        """Export every record to a target."""
        runs["export_all"] += 1
        return f"exported to {target}"

    catalog = ToolCatalog()
    for function in (send_sms, delete_record, export_all):
        catalog.add_function(function)
    return catalog


def program_manager(runs: Counter[str], *, policy: bool = True, **options: Any) -> ToolManager:
    """A code-mode manager over :func:`counting_catalog` (``delete_*`` needs approval unless
    ``policy`` is False) sealing paused programs with :data:`RUN_KEY`, as another worker's."""
    options.setdefault("mode", "code")
    steps = [Policy("global", require_approval=["delete_*"])] if policy else []
    return ToolManager(
        counting_catalog(runs),
        access=Access(policies=steps),
        execution=Execution(run_key=RUN_KEY),
        **options,
    )
