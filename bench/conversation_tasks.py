"""Which task a conversation's bill is of: the same ten calls, with and without the tools the
catalog lists up front.

``bench/conversation.py``'s task calls two of the demo catalog's always-listed tools
(``files_read_file`` and ``email_send_email``, ``defer_loading=False``), which the model calls
without searching: the search mode's headline figure is of that task. A task that calls none
of them searches once for every call. This script bills both, at the demo size (151 tools),
for flat + truncation and the search mode (native and ``native=False``):

- ``listed``: the demo catalog as it ships (two of the ten calls listed up front);
- ``unlisted``: the same calls and results, with those two tools deferred like the rest and
  two tools of the same domains the task never calls (``files_list_directory``,
  ``email_list_inbox``) listed in their place, so the list is as long as before.

Run: ``python bench/conversation_tasks.py [--json bench/results/conversation_tasks.json]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import conversation  # noqa: E402
from _results import write_results  # noqa: E402

from toolmgmt_core import ToolCatalog  # noqa: E402

SWAPPED = {"files_read_file": "files_list_directory", "email_send_email": "email_list_inbox"}
"""The always-listed tools the task calls, and the uncalled tools listed in their place."""
DESIGNS = ("flat", "search", "search-listed")
"""Designs billed (``flat``: the reference)."""


def unlisted_catalog() -> ToolCatalog:
    """The demo catalog with :data:`SWAPPED`'s tools deferred and their stand-ins listed."""
    import toolmgmt_demo

    tools = []
    for tool in toolmgmt_demo.demo_tools():
        if tool.name in SWAPPED:
            tool = dataclasses.replace(tool, defer_loading=True)
        elif tool.name in SWAPPED.values():
            tool = dataclasses.replace(tool, defer_loading=False)
        tools.append(tool)
    return ToolCatalog(tools)


def _listed_calls(catalog: ToolCatalog) -> list[str]:
    """The task's calls of tools ``catalog`` lists up front."""
    return [c.tool for c in conversation.TASK if catalog.get(c.tool).defer_loading is False]


def measure(check: bool = True) -> list[dict[str, Any]]:
    """One row per task, design and provider, with its figures against flat."""
    designs = [d for d in conversation.DESIGNS if d.key in DESIGNS]
    rows = []
    for task, catalog in (
        ("listed", conversation.catalogs(["demo"])["demo"]),
        ("unlisted", unlisted_catalog()),
    ):
        found = conversation.measure(
            ["demo"], "task", designs, check=check, catalogs_by_size={"demo": catalog}
        )
        conversation.relative(found)
        for row in found:
            rows.append({**row, "task": task, "listed_calls": _listed_calls(catalog)})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--no-check", action="store_true", help="skip the SDK type checks of every request"
    )
    args = parser.parse_args(argv)
    rows = measure(check=not args.no_check)
    print("Billed input against flat + truncation, demo catalog (151 tools):")
    print(f"{'task':<10}{'design':<16}{'provider':<18}{'no caching':>12}{'cached':>10}")
    flat = {(r["task"], r["provider"]): r for r in rows if r["design"] == "flat"}
    for row in rows:
        rules = "anthropic" if row["provider"] == "anthropic" else "openai-prefix"
        plain = row["input_tokens"] / flat[(row["task"], row["provider"])]["input_tokens"]
        print(
            f"{row['task']:<10}{row['design']:<16}{row['provider']:<18}"
            f"{plain:>11.2f}x{row['vs_flat'][rules]:>9.2f}x"
        )
    if args.json:
        write_results(args.json, "conversation_tasks", {"rows": rows, "swapped": SWAPPED})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
