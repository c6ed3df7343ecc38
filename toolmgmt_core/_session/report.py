"""What a catalog costs in tokens, flat and in each mode: the figures of ``toolmgmt report``,
``bench/tokens.py`` and the README, computed in one place.

- :func:`report_tables`: the catalog's size, definition tokens per domain, the largest tools,
  each mode's initial tool list against the flat list, and the same per provider;
- :func:`cold_start`: the tokens a fresh session spends to reach one call of a tool (the model's
  calls and the responses it reads, and in search mode the definitions a search loads; the
  tool's own result is left out, since it is the same with a flat list);
- :func:`example_arguments`: the arguments a model would plausibly send to a tool.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolmgmt_core._calls.execution import dumps_compact
from toolmgmt_core._catalog.tool_catalog import ToolCatalog
from toolmgmt_core._model.errors import TokenizerUnavailableError
from toolmgmt_core._model.tokens import (
    DEFAULT_ENCODING,
    ApproxEncoding,
    count_tokens,
    definition_text,
    definition_tokens,
    get_encoding,
)
from toolmgmt_core._model.tool import DISCOVER_TOOLS, TOOL_SEARCH, Tool
from toolmgmt_core._providers import PROVIDERS, format_tools
from toolmgmt_core._session.manager import ToolManager
from toolmgmt_core._session.modes import Mode, mode_of

__all__ = [
    "COLD_START_MODES",
    "ColdStart",
    "ReportTable",
    "cold_start",
    "encoding_label",
    "example_arguments",
    "median_tool",
    "provider_tokens",
    "report_tables",
]

COLD_START_MODES = ("search", "gateway", "lazy")
"""The modes whose cold start is measured (``auto`` is one of them or flat), by name."""

OPENAI_CHUNK = 128
"""OpenAI accepts at most this many tools per request: a flat list is counted in chunks."""

Step = Callable[[int], None]


@dataclass
class ReportTable:
    """One table of ``toolmgmt report``: a title, column names and rows."""

    key: str
    """Machine name, the key in ``--json`` output."""
    title: str
    """Heading printed above the table."""
    columns: list[str]
    """Column names (also the keys of each row in ``--json`` output)."""
    rows: list[list[Any]] = field(default_factory=list)
    """The rows, one value per column."""
    note: str | None = None
    """A line printed under the table (how a figure was measured)."""

    def to_json(self) -> list[dict[str, Any]] | dict[str, Any]:
        """The rows as dicts keyed by column name (a ``measure, value`` table as one dict)."""
        if self.columns == ["measure", "value"]:
            return {row[0]: row[1] for row in self.rows}
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


@dataclass(frozen=True)
class ColdStart:
    """The tokens a fresh session spends to reach one call of a tool."""

    mode: str
    """The mode measured."""
    tool: str
    """The tool called."""
    tokens: int
    """The total: every step's call and response, and the final call."""
    found: bool
    """Whether the query made of the tool's own summary found it."""
    steps: Mapping[str, int]
    """Tokens per step, in order (``loaded definitions`` in search mode, ``call`` last)."""


# -- arguments a model would send -------------------------------------------------------------

_FORMAT_SAMPLES = {
    "email": "maya@example.com",
    "date": "2026-03-04",
    "date-time": "2026-03-04T14:00:00Z",
    "uri": "https://example.com/page",
    "hostname": "example.com",
}
_EXAMPLE = re.compile(r"e\.g\. '([^']+)'")


def _sample(schema: Any, depth: int = 0) -> Any:
    """A small value valid for ``schema``, preferring the example its description gives."""
    if not isinstance(schema, Mapping) or depth > 8:
        return "example"
    if schema.get("default") is not None:
        return schema["default"]
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        branches = [b for b in schema.get(key) or () if isinstance(b, Mapping)]
        if branches:
            real = [b for b in branches if b.get("type") != "null"] or branches
            return _sample(real[0], depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if kind == "object" or "properties" in schema:
        props = schema.get("properties") or {}
        required = [k for k in schema.get("required") or () if k in props]
        return {k: _sample(props[k], depth + 1) for k in required}
    if kind == "array":
        count = max(1, int(schema.get("minItems") or 1))
        return [_sample(schema.get("items") or {}, depth + 1) for _ in range(count)]
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    if schema.get("examples"):
        return schema["examples"][0]
    example = _EXAMPLE.search(str(schema.get("description") or ""))
    if example:
        return example.group(1)
    return _FORMAT_SAMPLES.get(str(schema.get("format", "")), "example")


def example_arguments(tool: Tool) -> dict[str, Any]:
    """Arguments to call ``tool`` with: its first input example, else generated ones.

    Generated arguments fill only the required properties, each with its default, its first
    enum value, the example its description gives ("e.g. 'con_0001'"), or a value of the right
    type and format.
    """
    if tool.input_examples:
        return dict(tool.input_examples[0])
    value = _sample(tool.parameters)
    return dict(value) if isinstance(value, Mapping) else {}


# -- measures ---------------------------------------------------------------------------------


def median_tool(catalog: ToolCatalog) -> Tool:
    """The tool of median definition size (ties by name): the typical tool of a cold start."""
    tools = sorted(catalog, key=lambda t: (len(definition_text(t)), t.name))
    return tools[len(tools) // 2]


def _call_tokens(name: str, arguments: Any, encoding: str) -> int:
    """Tokens of one call the model writes: its name and arguments."""
    return count_tokens(dumps_compact({"name": name, "arguments": arguments}), encoding)


def cold_start(
    catalog: ToolCatalog, mode: str | Mode, tool: Tool, encoding: str = DEFAULT_ENCODING
) -> ColdStart:
    """The tokens a fresh ``mode`` session spends to reach one call of ``tool``.

    Scripted as a model makes it (:meth:`Mode.steps_to_call
    <toolmgmt_core._session.modes.Mode.steps_to_call>`): gateway ``discover_tools(query)`` ->
    ``get_tool_schema`` -> ``execute_tool``; search ``tool_search(query)`` -> the loaded
    definitions -> the call; lazy ``load_tool_schema`` -> the call. The query is the tool's own
    summary.
    """
    chosen = mode_of(mode)
    session = ToolManager(_measured_in(catalog, encoding), mode=chosen).session()
    steps = chosen.steps_to_call(tool, example_arguments(tool), tool.summary)
    detail: dict[str, int] = {}
    found = True
    for name, args in steps[:-1]:
        result = session.call_sync(name, args)
        detail[name] = _call_tokens(name, args, encoding) + count_tokens(result.content, encoding)
        if name in (TOOL_SEARCH, DISCOVER_TOOLS) and isinstance(result.value, dict):
            listed = result.value.get("tools") or result.value.get("found") or {}
            found = tool.name in listed
    loaded = session.layout().appended
    if loaded:
        detail["loaded definitions"] = definition_tokens(loaded, encoding)
    detail["call"] = _call_tokens(*steps[-1], encoding)
    return ColdStart(chosen.name, tool.name, sum(detail.values()), found, detail)


def _measured_in(catalog: ToolCatalog, encoding: str) -> ToolCatalog:
    """``catalog``, or a copy of it counting in ``encoding`` when it counts in another."""
    return catalog if catalog.encoding == encoding else ToolCatalog(catalog, encoding=encoding)


def provider_tokens(tools: Sequence[Tool], provider: str, encoding: str = DEFAULT_ENCODING) -> int:
    """Tokens of ``tools`` formatted for ``provider`` (compact JSON of the request's tools)."""
    chunk = OPENAI_CHUNK if provider.startswith("openai") else max(1, len(tools))
    total = 0
    for start in range(0, len(tools), chunk):
        formatted = format_tools(list(tools[start : start + chunk]), provider)["tools"]
        total += count_tokens(dumps_compact(formatted), encoding)
    return total


def encoding_label(encoding: str) -> str:
    """The encoding's name, marked ``(estimate)`` when no tiktoken file could be loaded.

    Raises:
        TokenizerUnavailableError: an unknown encoding name.
    """
    try:
        enc = get_encoding(encoding, fallback=False)
    except TokenizerUnavailableError as exc:
        if str(exc).startswith("Unknown encoding"):
            raise
        enc = get_encoding(encoding)
    return f"{enc.name} (estimate)" if isinstance(enc, ApproxEncoding) else enc.name


def _no_step(done: int) -> None:
    pass


def report_tables(
    catalog: ToolCatalog, *, encoding: str = DEFAULT_ENCODING, step: Step = _no_step
) -> list[ReportTable]:
    """The tables of ``toolmgmt report`` for ``catalog``.

    Definition tokens are those of each tool's name, description and parameters sent flat
    (compact JSON, :func:`~toolmgmt_core._model.tokens.definition_text`), counted with ``encoding``.
    ``step`` is called as work advances (for a progress bar), with the steps done so far.

    Raises:
        TokenizerUnavailableError: an unknown encoding name.
    """
    label = encoding_label(encoding)
    tools = list(catalog)
    per_tool = {tool.name: definition_tokens([tool], encoding) for tool in tools}
    total = sum(per_tool.values())
    domains: dict[str, list[int]] = {}
    groups: set[tuple[str, str]] = set()
    for tool in tools:
        domains.setdefault(tool.domain, []).append(per_tool[tool.name])
        groups.add((tool.domain, tool.group))
    step(1)
    summary = ReportTable(
        "summary",
        "Catalog",
        ["measure", "value"],
        [
            ["tools", len(tools)],
            ["domains", len(domains)],
            ["groups", len(groups)],
            ["definition tokens (all tools, flat)", total],
            ["median tokens per tool", statistics.median(per_tool.values()) if per_tool else 0],
            ["largest tool (tokens)", max(per_tool.values(), default=0)],
            ["encoding", label],
        ],
    )
    by_domain = ReportTable(
        "domains",
        "Definition tokens per domain",
        ["domain", "tools", "tokens", "share %", "median per tool"],
        [
            [
                name,
                len(counts),
                sum(counts),
                round(100 * sum(counts) / total, 1) if total else 0.0,
                statistics.median(counts),
            ]
            for name, counts in sorted(domains.items(), key=lambda kv: -sum(kv[1]))
        ],
    )
    largest = ReportTable(
        "largest",
        "Largest definitions",
        ["tool", "domain", "tokens"],
        [
            [name, catalog.get(name).domain, count]
            for name, count in sorted(per_tool.items(), key=lambda kv: -kv[1])[:5]
        ],
    )
    return [summary, by_domain, largest, *_mode_tables(catalog, encoding, step)]


REPORT_STEPS = 2 + len(COLD_START_MODES) + 1 + len(PROVIDERS)
"""How many times :func:`report_tables` calls ``step`` on a non-empty catalog."""


def _mode_tables(catalog: ToolCatalog, encoding: str, step: Step) -> list[ReportTable]:
    """Per mode and per provider: the initial tool list against the flat list, and the cost of
    a cold start."""
    if not len(catalog):
        return []
    done = 1
    initial: dict[str, list[Tool]] = {}
    neutral: dict[str, int] = {}
    flat_neutral = 0
    measured = _measured_in(catalog, encoding)
    for mode in (*COLD_START_MODES, "auto"):
        session = ToolManager(measured, mode=mode).session()
        usage = session.usage()
        flat_neutral = usage.flat_tokens
        same = session.effective_mode is session.manager.mode
        key = mode if same else f"{mode} ({session.mode})"
        initial[key] = session.tools()
        neutral[key] = usage.definition_tokens
    done += 1
    step(done)
    tool = median_tool(catalog)
    cold = {}
    for mode in COLD_START_MODES:
        cold[mode] = cold_start(catalog, mode, tool, encoding)
        done += 1
        step(done)
    modes = ReportTable(
        "modes",
        "Initial tool list per mode (neutral definitions) and a cold start",
        ["mode", "tools listed", "tokens", "% of flat", "cold start tokens"],
        [["flat", len(catalog), flat_neutral, 100.0, None]]
        + [
            [
                key,
                len(initial[key]),
                neutral[key],
                round(100 * neutral[key] / flat_neutral, 2) if flat_neutral else 0.0,
                cold[key].tokens if key in cold else None,
            ]
            for key in initial
        ],
        note=f"Cold start: a fresh session's calls and responses up to one call of the median "
        f"tool, {tool.name} (search: tool_search + loaded definitions; gateway: discover_tools"
        f" + get_tool_schema + execute_tool; lazy: load_tool_schema)."
        + (
            ""
            if all(c.found for c in cold.values())
            else " Its summary did not find it in every mode: see 'found'."
        ),
    )
    provider_rows = []
    for provider in PROVIDERS:
        row: list[Any] = [provider, provider_tokens(list(catalog), provider, encoding)]
        for key in initial:
            row.append(provider_tokens(initial[key], provider, encoding))
        provider_rows.append(row)
        done += 1
        step(done)
    providers = ReportTable(
        "providers",
        "Definition tokens per provider: flat against each mode's initial list",
        ["provider", "flat", *initial],
        provider_rows,
        note=f"Flat lists over {OPENAI_CHUNK} tools are counted in chunks for OpenAI, which "
        f"accepts at most {OPENAI_CHUNK} tools per request.",
    )
    return [modes, providers]
