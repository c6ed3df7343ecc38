"""The embedded demo catalog: about 150 realistic tools across 8 domains.

Usage::

    from toolmgmt_demo import demo_catalog, demo_schemas

    catalog = demo_catalog()          # a fresh catalog, with its own in-memory backends
    catalog.search("refund a customer's payment")
    demo_schemas()                    # the same definitions as plain dicts, without handlers

The domains are ``crm``, ``files``, ``calendar``, ``email``, ``code_hosting``, ``payments``,
``analytics`` and ``web_search``, each with two to four groups. Tool names are
``<domain>_<verb>_<object>`` (``crm_search_contacts``, ``payments_refund_charge``). Handlers are
real functions (some async) over a fake backend per domain, deterministic for the same
arguments; state is kept per catalog, so ``crm_create_contact`` then ``crm_get_contact`` works
within one catalog and never leaks into another. Some results are large on purpose
(``files_read_file`` on ``/logs/app.log``, ``analytics_export_events``,
``code_hosting_list_commits``, ``code_hosting_get_workflow_logs``, ``web_search_fetch_page``,
``crm_export_contacts``) to exercise truncation.

``python -m toolmgmt_demo > demo.json`` writes the schemas as a JSON file.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from toolmgmt_core import Tool, ToolCatalog
from toolmgmt_core.integration import example_arguments
from toolmgmt_demo import (
    analytics,
    calendar,
    code_hosting,
    crm,
    email,
    files,
    payments,
    web_search,
)

__all__ = [
    "DEMO_DOMAINS",
    "LARGE_RESULT_CALLS",
    "demo_catalog",
    "demo_schemas",
    "demo_tools",
    "example_arguments",
]

_MODULES = (crm, files, calendar, email, code_hosting, payments, analytics, web_search)

DEMO_DOMAINS: tuple[str, ...] = tuple(module.DOMAIN for module in _MODULES)
"""The demo's domains, in catalog order."""

LARGE_RESULT_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("files_read_file", {"path": "/logs/app.log"}),
    ("analytics_export_events", {}),
    ("crm_export_contacts", {}),
    ("code_hosting_list_commits", {"repository": "acme/api"}),
    ("code_hosting_get_workflow_logs", {"run_id": "run_0001"}),
    ("web_search_fetch_page", {"url": "https://en.wikipedia.org/wiki/solar-power"}),
)
"""Calls (tool name, arguments) whose results are large: tens of KB to about 1 MB."""


def demo_tools() -> list[Tool]:
    """Every demo tool, with handlers bound to fresh backends."""
    return [tool for module in _MODULES for tool in module.build_tools()]


def demo_catalog(**catalog_options: Any) -> ToolCatalog:
    """A fresh demo catalog (new backends each call, so state never leaks between catalogs).

    Args:
        catalog_options: passed to :class:`~toolmgmt_core.ToolCatalog` (``encoding``,
            ``embedder``...).
    """
    return ToolCatalog(demo_tools(), **catalog_options)


def demo_schemas() -> list[dict[str, Any]]:
    """The demo definitions as plain JSON-compatible dicts, without handlers.

    Each dict holds ``name``, ``description``, ``parameters`` and, when set, ``usage_notes``,
    ``input_examples``, ``output_schema``, ``annotations`` (MCP names), plus ``domain``,
    ``group``, ``keywords``, ``defer_loading``, ``max_result_tokens`` and ``truncation``;
    :meth:`ToolCatalog.add_schemas` reads them back.
    """
    schemas = []
    for tool in demo_tools():
        data = tool.to_dict(full=True)
        data.update(domain=tool.domain, group=tool.group, keywords=list(tool.keywords))
        for key in ("defer_loading", "max_result_tokens", "truncation"):
            value = getattr(tool, key)
            if value is not None:
                data[key] = value
        schemas.append(json.loads(json.dumps(data)))
    return schemas


def _main() -> None:
    json.dump(demo_schemas(), sys.stdout, indent=1)
    sys.stdout.write("\n")
