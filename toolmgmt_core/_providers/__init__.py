"""Provider formatting: tools in the shape Anthropic, OpenAI and Gemini accept.

:func:`format_tools` takes a list of :class:`~toolmgmt_core.Tool` (or a session) and returns
the request parts for one provider::

    request = format_tools(session, "anthropic", native=True)
    message = client.messages.create(model=..., tools=request["tools"], messages=...)
    for block in message.content:               # tool_use blocks carry the provider-form name
        if block.type == "tool_use":
            result = session.call_sync(block.name, block.input)   # routed back by the session
            original = request["report"].original_name(block.name)

The formatter never decides visibility: it sends what it is given. With a session it sends
``session.tools()``; in native mode it also sends the rest of ``session.visible_tools()`` marked
deferred, with the provider's own tool search tool. One tool that cannot be made valid is left out
and reported (``report.skipped``), never failing the request. Results are cached on the identity
and content of the tools and the options, so formatting an unchanged step costs almost nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, runtime_checkable

from toolmgmt_core._model.errors import ProviderError
from toolmgmt_core._model.provider_names import (
    NameMap,
    build_name_map,
    provider_name,
    resolve_provider_name,
)
from toolmgmt_core._model.tool import TOOL_SEARCH, Tool, is_meta_tool
from toolmgmt_core._policy.callers import CallerChoice
from toolmgmt_core._providers.anthropic import assemble_anthropic, caller_choices
from toolmgmt_core._providers.cache import REQUESTS, clear_format_cache, convert
from toolmgmt_core._providers.deferral import (
    client_search_entry,
    native_deferral_tools,
    search_output_item,
    search_result_content,
    uses_native_deferral,
)
from toolmgmt_core._providers.gemini import allowed_functions_config
from toolmgmt_core._providers.openai import (
    MAX_TOOLS,
    allowed_tools_choice,
    strip_strict_nulls,
)
from toolmgmt_core._providers.report import FormatReport

__all__ = [
    "PROVIDERS",
    "FormatReport",
    "NameMap",
    "Provider",
    "SessionLike",
    "build_name_map",
    "clear_format_cache",
    "format_for_anthropic",
    "format_for_gemini",
    "format_for_openai",
    "format_tools",
    "resolve_provider_name",
    "search_output_item",
    "search_result_content",
    "strip_strict_nulls",
]

Provider = Literal["anthropic", "openai", "openai-responses", "gemini"]
PROVIDERS: tuple[str, ...] = ("anthropic", "gemini", "openai", "openai-responses")
"""Provider keys :func:`format_tools` accepts."""

_NATIVE = frozenset({"anthropic", "openai-responses"})


@runtime_checkable
class SessionLike(Protocol):
    """What the formatter needs of a session (a ``ToolSession`` fits)."""

    def tools(self) -> list[Tool]:
        """The tools to send now."""
        ...

    def visible_tools(self) -> list[Tool]:
        """Every tool the session may see (deferred ones included)."""
        ...


_NATIVE_SEARCH = frozenset({"anthropic", "openai-responses"})
"""Providers with their own tool search over deferred tools."""


def _gather(source: Any, native: bool, provider: str = "") -> tuple[list[Tool], set[str]]:
    if isinstance(source, Tool):
        source = [source]
    if callable(getattr(source, "visible_tools", None)) and callable(
        getattr(source, "tools", None)
    ):
        loaded = list(source.tools())
        if not native:
            return loaded, set()
        if provider in _NATIVE_SEARCH:
            # The provider's own tool search finds the deferred tools: toolmgmt's meta-tools
            # would be a second search tool beside it (never two at once).
            loaded = [t for t in loaded if not is_meta_tool(t)]
        names = {t.name for t in loaded}
        rest = [t for t in source.visible_tools() if t.name not in names]
        return loaded + rest, {t.name for t in rest}
    if isinstance(source, str | bytes) or not isinstance(source, Iterable):
        raise TypeError(
            "format_tools takes a list of Tool objects or a session (an object with tools() "
            f"and visible_tools()), got {type(source).__name__}."
        )
    tools = list(source)
    for tool in tools:
        if not isinstance(tool, Tool):
            raise TypeError(
                f"format_tools takes Tool objects, got {type(tool).__name__}; build tools with "
                "Tool(...), Tool.from_function(...) or a ToolCatalog."
            )
    deferred = {t.name for t in tools if t.defer_loading is True} if native else set()
    return tools, deferred


def _too_many(count: int) -> ProviderError:
    return ProviderError(
        f"{count} tools in one request; OpenAI accepts at most {MAX_TOOLS}. Send fewer: use a "
        "ToolManager session in search or gateway mode, or "
        "format_tools(..., provider='openai-responses', native=True) to defer the rest."
    )


def format_tools(
    tools_or_session: Any,
    provider: str,
    *,
    native: bool | None = None,
    strict: bool = False,
    allowed: Sequence[str] | None = None,
    allowed_mode: Literal["auto", "required"] = "auto",
    tool_search: Literal["bm25", "regex"] = "bm25",
    cache_control: bool = False,
    gemini_json_schema: bool = False,
    namespaces: bool | None = None,
    examples: bool = False,
    code_execution: str | None = None,
) -> dict[str, Any]:
    """The request parts that send ``tools_or_session``'s tools to ``provider``.

    Args:
        tools_or_session: Tools (a list, a catalog) or a session with ``tools()`` and
            ``visible_tools()``.
        provider: ``anthropic``, ``openai`` (Chat Completions), ``openai-responses`` or
            ``gemini``.
        native: None (default): a session in the cache-stable search mode goes out with the
            provider's deferred loading where it has one (Anthropic Messages, OpenAI
            Responses), searched by toolmgmt (:mod:`toolmgmt_core._providers.deferral`: answer
            its ``tool_search`` calls with :func:`search_result_content` or
            :func:`search_output_item`); anything else as given. False: exactly as given (the
            stable list with ``call_tool``). True: the provider's own tool search over deferred
            tools (a session's visible but unloaded tools, or listed tools with
            ``defer_loading=True``). Providers without deferred loading leave deferred tools out
            (reported).
        strict: OpenAI strict mode; a tool that cannot be strict is sent non-strict and its
            reason is in ``report.strict_fallbacks``.
        allowed: Restrict this step to these tool names without changing the tool list (OpenAI
            ``allowed_tools`` tool choice, Gemini ``allowed_function_names``).
        allowed_mode: ``auto`` (may answer in text) or ``required`` (must call one).
        tool_search: Anthropic's search kind in native mode: ``bm25`` or ``regex``.
        cache_control: Anthropic: a cache breakpoint on the last tool loaded up front.
        gemini_json_schema: Gemini: send ``parametersJsonSchema`` instead of ``parameters``.
        namespaces: Responses, native: group deferred tools by domain into ``namespace``
            tools (what OpenAI's models search best, and billed by the namespace's
            description alone until searched, where a deferred function outside one is billed
            by its name and description on every request); calls come back with the function's
            own name (and a ``namespace`` field), so routing is unchanged. None (default):
            grouped; False: each deferred function on its own.
        examples: Anthropic: send each tool's ``input_examples`` (those matching its input
            schema; one that does not is left out and noted). OpenAI and Gemini have no such
            field, so it changes nothing for them.
        code_execution: Anthropic: the code execution tool Claude's programs run in
            (``code_execution_20260120``...), sent first; each tool's ``allowed_callers``
            follows the session's choice (``Code(callers=...)``; a tool's annotation,
            ``metadata={"callers": ...}``; else direct). Run a program's calls (a
            ``tool_use`` whose ``caller`` is that tool) with ``CallContext(from_program=True)``.

    Returns:
        ``{"tools": [...], "report": FormatReport}``, plus ``tool_choice`` (OpenAI) or
        ``tool_config`` (Gemini) when ``allowed`` is given: plain JSON (the report is a dict).
        Treat it as read-only: it is shared with the cache.

    Raises:
        ProviderError: an unknown provider, more tools than OpenAI accepts, an ``allowed`` name
            that is not sent, or ``allowed`` for Anthropic (which has no such choice).
    """
    if provider not in PROVIDERS:
        raise ProviderError(f"Unknown provider {provider!r}; valid: {', '.join(PROVIDERS)}.")
    if code_execution is not None and provider != "anthropic":
        raise ProviderError(
            f"code_execution is Anthropic's code execution tool; {provider} has none here: "
            "use toolmgmt's code mode (mode='code') instead."
        )
    namespaces = namespaces is not False  # grouped unless told not to
    client = uses_native_deferral(tools_or_session, provider, native)
    if client:
        tools, deferred = native_deferral_tools(tools_or_session, provider)
    else:
        tools, deferred = _gather(tools_or_session, native is True, provider)
    callers = caller_choices(tools_or_session, tools) if code_execution is not None else None
    allowed_key = tuple(allowed) if allowed is not None else None
    key = (
        provider,
        native is True,
        client,
        strict,
        allowed_key,
        allowed_mode,
        tool_search,
        cache_control,
        gemini_json_schema,
        namespaces,
        examples,
        tuple((t.name, id(t), t.name in deferred) for t in tools),
        code_execution,
        callers,
    )
    hit = REQUESTS.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], tools, strict=True)):
        result = hit[1]
        if native is True:
            _note_native(tools_or_session, result["report"])
        return {
            **result,
            "tools": list(result["tools"]),
            "report": result["report"].replace(cached=True),
        }
    result = _format(
        tools,
        deferred,
        provider,
        native=native is True or client,
        client=client,
        strict=strict,
        allowed=allowed_key,
        allowed_mode=allowed_mode,
        tool_search=tool_search,
        cache_control=cache_control,
        gemini_json_schema=gemini_json_schema,
        namespaces=namespaces,
        examples=examples,
        code_execution=code_execution,
        callers=dict(callers) if callers is not None else None,
    )
    REQUESTS.put(key, (tuple(tools), result))
    if native is True:
        _note_native(tools_or_session, result["report"])
    return {**result, "tools": list(result["tools"])}


def _note_native(source: Any, report: FormatReport) -> None:
    """Tell a session which tools went out deferred: the provider's own tool search loads
    them, and the model then calls them directly."""
    note = getattr(source, "note_native_deferred", None)
    if report.deferred and callable(note):
        note(report.deferred)


def _format(
    tools: list[Tool],
    deferred: set[str],
    provider: str,
    *,
    native: bool,
    strict: bool,
    allowed: tuple[str, ...] | None,
    client: bool = False,
    allowed_mode: str,
    tool_search: Literal["bm25", "regex"],
    cache_control: bool,
    gemini_json_schema: bool,
    namespaces: bool = False,
    examples: bool = False,
    code_execution: str | None = None,
    callers: Mapping[str, CallerChoice] | None = None,
) -> dict[str, Any]:
    report = FormatReport(provider=provider)
    if allowed is not None and provider == "anthropic":
        raise ProviderError(
            "Anthropic has no allowed-tools choice; send the subset as tools, or use "
            "tool_choice={'type': 'tool', 'name': ...} to force one tool."
        )
    unique: list[Tool] = []
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            report.skipped[tool.name] = "duplicate name: an earlier tool of the request has it"
            continue
        if tool.name in deferred and provider not in _NATIVE:
            report.skipped[tool.name] = (
                f"deferred, and {provider} has no native deferred loading; load it first"
            )
            continue
        seen.add(tool.name)
        unique.append(tool)
    names = build_name_map([t.name for t in unique], provider)
    options = (strict, gemini_json_schema, examples and provider == "anthropic")
    entries: list[tuple[str, dict[str, Any], bool]] = []
    for tool in unique:
        pname = names.provider_name(tool.name)
        converted = convert(tool, provider, pname, options)
        if converted.data is None:
            report.skipped[tool.name] = converted.error or "could not be formatted"
            continue
        for note in converted.notes:
            report.note(tool.name, note)
        if converted.fallback:
            report.strict_fallbacks[tool.name] = converted.fallback
        report.name_map[pname] = tool.name
        entries.append((tool.name, converted.data, tool.name in deferred))
    result: dict[str, Any] = {"report": report}
    if provider == "anthropic":
        sent, report.deferred = assemble_anthropic(
            entries,
            native=native,
            tool_search=tool_search,
            cache_control=cache_control,
            server_search=not client,
            code_execution=code_execution,
            callers=callers,
        )
        result["tools"] = sent
    elif provider == "gemini":
        declarations = [data for _, data, _ in entries]
        result["tools"] = [{"function_declarations": declarations}] if declarations else []
    else:
        groups = {t.name: (t.domain, t.group) for t in unique} if namespaces else None
        native_openai = native and not client
        result["tools"] = _assemble_openai(entries, provider, native_openai, report, groups)
        if client and provider == "openai-responses":
            result["tools"] = [
                client_search_entry(data) if original == TOOL_SEARCH else data
                for (original, _, _), data in zip(entries, result["tools"], strict=True)
            ]
    if allowed is not None:
        missing = [n for n in allowed if n not in set(report.name_map.values())]
        if missing:
            raise ProviderError(
                f"allowed names not in this request: {', '.join(missing)}; "
                f"valid: {', '.join(sorted(report.name_map.values())[:20])}."
            )
        sent_names = [names.provider_name(n) for n in allowed]
        if provider == "gemini":
            result["tool_config"] = allowed_functions_config(sent_names, mode=allowed_mode)
        else:
            api: Literal["chat", "responses"] = "chat" if provider == "openai" else "responses"
            result["tool_choice"] = allowed_tools_choice(sent_names, api=api, mode=allowed_mode)
    return result


def _assemble_openai(
    entries: list[tuple[str, dict[str, Any], bool]],
    provider: str,
    native: bool,
    report: FormatReport,
    groups: dict[str, tuple[str, str]] | None = None,
) -> list[dict[str, Any]]:
    if provider == "openai" or not native:
        if len(entries) > MAX_TOOLS:
            raise _too_many(len(entries))
        return [data for _, data, _ in entries]
    # Responses, native: defer what the session deferred, and whatever exceeds the limit
    # (the first tools are meta-tools and always-on ones, so they stay loaded).
    room = MAX_TOOLS - 1  # the tool_search tool takes one place
    sent: list[dict[str, Any]] = []
    loaded = 0
    for original, data, is_deferred in entries:
        if not is_deferred and loaded < room:
            loaded += 1
            sent.append(data)
            continue
        if not is_deferred:
            report.note(original, f"deferred: more than {room} tools loaded up front")
        sent.append({**data, "defer_loading": True})
        report.deferred.append(original)
    if groups is not None:
        sent = _namespaced(sent, entries, groups)
    if report.deferred:
        sent.insert(0, {"type": "tool_search"})
    return sent


def _namespaced(
    sent: list[dict[str, Any]],
    entries: list[tuple[str, dict[str, Any], bool]],
    groups: dict[str, tuple[str, str]],
) -> list[dict[str, Any]]:
    """Deferred functions grouped into one ``namespace`` tool per domain."""
    flat: list[dict[str, Any]] = []
    spaces: dict[str, dict[str, Any]] = {}
    subgroups: dict[str, list[str]] = {}
    for (original, _, _), item in zip(entries, sent, strict=True):
        if not item.get("defer_loading"):
            flat.append(item)
            continue
        domain, group = groups[original]
        space = spaces.setdefault(
            domain,
            {"type": "namespace", "name": provider_name(domain, "openai"), "tools": []},
        )
        space["tools"].append(item)
        names = subgroups.setdefault(domain, [])
        if group not in names:
            names.append(group)
    for domain, space in spaces.items():
        shown = ", ".join(subgroups[domain][:8])
        space["description"] = f"Tools of {domain} ({shown}); search them to load one."
    return [*flat, *spaces.values()]


def format_for_anthropic(tools_or_session: Any, **options: Any) -> dict[str, Any]:
    """:func:`format_tools` for ``anthropic``."""
    return format_tools(tools_or_session, "anthropic", **options)


def format_for_openai(
    tools_or_session: Any, *, responses: bool = False, **options: Any
) -> dict[str, Any]:
    """:func:`format_tools` for ``openai`` (or ``openai-responses`` with ``responses``)."""
    return format_tools(tools_or_session, "openai-responses" if responses else "openai", **options)


def format_for_gemini(tools_or_session: Any, **options: Any) -> dict[str, Any]:
    """:func:`format_tools` for ``gemini``."""
    return format_tools(tools_or_session, "gemini", **options)
