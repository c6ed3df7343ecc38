"""The meta-tools' answers: ``tool_search``, ``discover_tools``, ``get_tool_schema``,
``load_tool_schema`` and ``execute_tool``, run for one session.

The session decides what may be seen and run (its policy view), what a name means and what its
list holds; these handlers turn a meta-tool call into those questions and a short JSON answer
(:mod:`toolmgmt_core._session.meta_tools` holds the meta-tools' definitions and response shapes).
The slips models make with meta-tool arguments are forgiven first (:func:`forgive_meta_arguments`).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import toolmgmt_core._session.meta_tools as meta
from toolmgmt_core._calls.execution import ToolResult
from toolmgmt_core._calls.pipeline import CallPipeline
from toolmgmt_core._calls.request import CallRequest
from toolmgmt_core._calls.resolution import cap_message
from toolmgmt_core._calls.results import meta_result
from toolmgmt_core._calls.validation import MAX_REPORTED_ERRORS, check_arguments, clip
from toolmgmt_core._catalog.equivalents import one_per_tool
from toolmgmt_core._catalog.tool_catalog import SearchHit, ToolEntry
from toolmgmt_core._events import SearchDone
from toolmgmt_core._model.errors import (
    InvalidArgumentsError,
    SearchError,
    ToolCallError,
    ToolNotFoundError,
    ToolNotPermittedError,
)
from toolmgmt_core._model.names import fold_name, names_hint
from toolmgmt_core._model.tool import META_TOOL_NAMES, Tool
from toolmgmt_core._policy.callers import check_caller
from toolmgmt_core._session.code_calls import CodeCalls
from toolmgmt_core._session.meta_arguments import RUNNERS as _RUNNERS
from toolmgmt_core._session.meta_arguments import forgive_meta_arguments, well_formed_run
from toolmgmt_core._session.modes import Mode
from toolmgmt_core._session.settings import SessionSettings

__all__ = ["MetaSession", "MetaToolCalls", "forgive_meta_arguments"]


_META = frozenset(META_TOOL_NAMES)


class MetaSession(Protocol):
    """What the meta-tools ask of their session (a ``ToolSession``): its settings, what it may
    see and how it shows a tool, name resolution and loading."""

    @property
    def manager(self) -> SessionSettings: ...
    @property
    def conversation(self) -> str: ...
    @property
    def effective_mode(self) -> Mode: ...
    def can_see(self, tool: Tool) -> bool: ...
    def present(self, tool: Tool) -> Tool: ...
    def resolve(self, name: str) -> Tool: ...
    def meta_tool(self, name: Any) -> Tool | None: ...
    def schema_hint(self, tool: Tool) -> str: ...
    def record_loads(self, names: Sequence[str]) -> tuple[list[str], list[str]]: ...


class MetaToolCalls:
    """The meta-tool handlers of one session (the session's collaborator: it asks the
    session's policy, resolution and loading, and never decides those itself)."""

    def __init__(self, session: MetaSession) -> None:
        self.session = session

    @functools.cached_property
    def _code(self) -> CodeCalls:
        """Code mode's meta-tools (made on a session's first ``run_code`` or code search)."""
        return CodeCalls(self.session, self)

    async def answer(
        self, request: CallRequest, pipeline: CallPipeline
    ) -> ToolResult | CallRequest:
        """The answer of the request's meta-tool, or (``execute_tool``, ``call_tool``) the
        request of the tool it runs, which ``pipeline`` runs in the same call."""
        tool = request.tool
        assert tool is not None, "a meta-tool's request names it"
        try:
            arguments = forgive_meta_arguments(tool.name, request.arguments)
            runs = tool.name in _RUNNERS
            fine = runs and well_formed_run(arguments)
            args = dict(arguments) if fine else await check_arguments(tool, arguments)
            if runs:
                return await self.execute_tool(tool.name, args, request, pipeline)
            if tool.name == meta.RUN_CODE:
                return await self._code.run_code(args, request, pipeline)
            if tool.name == meta.TOOL_SEARCH and self.session.effective_mode.runs_code:
                return self._code.search(args)
            handlers: dict[str, Callable[[dict[str, Any]], Any]] = {
                meta.TOOL_SEARCH: self.tool_search,
                meta.DISCOVER_TOOLS: self.discover_tools,
                meta.GET_TOOL_SCHEMA: self.get_tool_schema,
                meta.LOAD_TOOL_SCHEMA: self.load_tool_schema,
            }
            return meta_result(tool.name, handlers[tool.name](args), self.session.manager.encoding)
        except ToolCallError as exc:
            # Named after the tool it asked for, when it names one (a refused or unknown
            # name given to execute_tool): the operator's spans and denials say which; the
            # model's text is the error's message alone.
            return pipeline.error_result(exc.tool_name or tool.name, exc, request.view)

    def _cap_message(self, refused: Sequence[str]) -> str:
        return cap_message(self.session.manager.discovery.max_active, refused)

    def _definition(self, name: str) -> dict[str, Any]:
        """What the model needs to call a found tool (its name is the answer's key): the
        description, parameters, usage notes and input examples. Its output schema and
        annotations are not needed to call it and stay out: the answer stays in the
        conversation, paid for at every later step."""
        entry = meta.schema_entry(self.session.present(self.session.manager.catalog.get(name)))
        for key in ("name", "output_schema", "annotations"):
            entry.pop(key, None)
        return entry

    def _summary(self, name: str) -> str:
        return self.session.present(self.session.manager.catalog.get(name)).summary

    def _search(
        self,
        queries: list[str],
        method: str,
        *,
        domain: str | None = None,
        group: str | None = None,
        caller: str,
    ) -> list[SearchHit]:
        catalog = self.session.manager.catalog
        limit = self.session.manager.discovery.max_results * len(queries)
        started = time.perf_counter()
        try:
            if method == "regex":
                hits: dict[str, SearchHit] = {}
                for pattern in queries:
                    for hit in catalog.search_regex(
                        pattern,
                        self.session.manager.discovery.max_results,
                        domain=domain,
                        group=group,
                        where=self.session.can_see,
                    ):
                        hits.setdefault(hit.name, hit)
                found = list(hits.values())
            else:
                found = catalog.search(
                    queries, 2 * limit, domain=domain, group=group, where=self.session.can_see
                )
                # the same tool from several servers fills one slot, not several
                found = one_per_tool(found, catalog.find)[:limit]
        except SearchError as exc:
            raise InvalidArgumentsError(str(exc), tool_name=caller) from exc
        kept = [h for h in found if h.score >= self.session.manager.discovery.min_score]
        events = self.session.manager.events
        if events:
            engine = "regex" if method == "regex" else "hybrid" if catalog.embedder else "bm25"
            events.emit(
                SearchDone(
                    self.session.conversation,
                    tuple(queries),
                    method,
                    engine,
                    tuple(h.name for h in kept),
                    time.perf_counter() - started,
                )
            )
        return kept

    def _domains_note(self) -> str:
        catalog = self.session.manager.catalog
        domains = [d.name for d in catalog.domains(where=self.session.can_see)]
        return f" Domains: {names_hint(domains)}." if domains else ""

    def find(self, args: dict[str, Any]) -> list[SearchHit] | dict[str, Any]:
        """``tool_search``'s hits for ``args``, or the answer when nothing matched."""
        queries = [q for q in [args.get("query"), *(args.get("queries") or [])] if q]
        queries = [q for q in queries if isinstance(q, str) and q.strip()]
        if not queries:
            raise InvalidArgumentsError(
                'tool_search needs "query": a few words describing the tool you need (or '
                '"queries": a list of them).',
                tool_name=meta.TOOL_SEARCH,
            )
        if len(queries) > meta.MAX_QUERIES:
            raise InvalidArgumentsError(
                f"tool_search takes at most {meta.MAX_QUERIES} queries at once, got "
                f"{len(queries)}: search the needs of this step first.",
                tool_name=meta.TOOL_SEARCH,
            )
        hits = self._search(queries, args.get("method") or "keyword", caller=meta.TOOL_SEARCH)
        if not hits:
            return {
                "found": {},
                "note": f"No tool matched {_quoted(' / '.join(queries))}. Try other words or "
                f'method "regex".{self._domains_note()}',
            }
        return hits

    def tool_search(self, args: dict[str, Any]) -> dict[str, Any]:
        hits = self.find(args)
        if isinstance(hits, dict):
            return hits
        apart = self.apart(hits)
        added, refused = self.session.record_loads(
            [h.name for h in hits] + list(apart.get("often_used_with", ()))
        )
        if self.session.effective_mode.stable_search:
            # The list stays as it is: the answer carries what the model needs to call them.
            return {
                "found": {h.name: self._definition(h.name) for h in hits},
                **apart,
                "note": "Run one with call_tool(tool_name, arguments).",
            }
        response: dict[str, Any] = {
            "found": {h.name: self._summary(h.name) for h in hits},
            **apart,
        }
        if added:
            response["added"] = added
        if refused:
            response["not_added"] = refused
            response["note"] = self._cap_message(refused)
        else:
            response["note"] = "These tools are in your tool list now; call them directly."
        return response

    def apart(self, hits: Sequence[SearchHit]) -> dict[str, Any]:
        """What a search answer says beside its hits: the tools often used with them
        (``often_used_with``) and the other servers' names of a found tool (``also_as``)."""
        apart: dict[str, Any] = {}
        companions = self.companions(hits)
        if companions:
            apart["often_used_with"] = companions
        also = {h.name: list(h.also) for h in hits if h.also}
        if also:
            apart["also_as"] = also
        return apart

    def companions(self, hits: Sequence[SearchHit]) -> dict[str, str]:
        """The tools often used with ``hits`` that the answer suggests apart from them (name:
        one line; ``Discovery.companions`` at most), from what the catalog learned from use."""
        limit = self.session.manager.discovery.companions
        if not limit or not hits:
            return {}
        names, catalog = [h.name for h in hits], self.session.manager.catalog
        found = catalog.companions(names, limit, where=self.session.can_see)
        return {c.name: self._summary(c.name) for c in found}

    def _scope(self, domain: str | None, group: str | None) -> tuple[str | None, str | None]:
        """``domain``/``group`` checked against what this session sees (forgiving case)."""
        summaries = self.session.manager.catalog.domains(where=self.session.can_see)
        if domain is not None:
            by_fold = {fold_name(d.name): d.name for d in summaries}
            real = domain if domain in by_fold.values() else by_fold.get(fold_name(domain))
            if real is None:
                valid = names_hint([d.name for d in summaries], 30) or "(none)"
                raise InvalidArgumentsError(
                    f"Unknown domain {_quoted(domain)}. Valid domains: {valid}.",
                    tool_name=meta.DISCOVER_TOOLS,
                )
            domain = real
        if group is not None:
            groups = sorted(
                {g for d in summaries if domain is None or d.name == domain for g in d.groups}
            )
            by_fold = {fold_name(g): g for g in groups}
            real = group if group in groups else by_fold.get(fold_name(group))
            if real is None:
                where = f" in domain {domain!r}" if domain else ""
                raise InvalidArgumentsError(
                    f"Unknown group {_quoted(group)}{where}. Valid groups: "
                    f"{names_hint(groups, 30) or '(none)'}.",
                    tool_name=meta.DISCOVER_TOOLS,
                )
            group = real
        return domain, group

    def discover_tools(self, args: dict[str, Any]) -> dict[str, Any]:
        catalog = self.session.manager.catalog
        domain = args.get("domain") or None
        group = args.get("group") or None
        query = args.get("query") or None
        domain, group = self._scope(domain, group)
        if query:
            hits = self._search(
                [query], "keyword", domain=domain, group=group, caller=meta.DISCOVER_TOOLS
            )
            response: dict[str, Any] = {
                "tools": {h.name: self._summary(h.name) for h in hits},
                **self.apart(hits),
            }
            if not hits:
                response["note"] = (
                    "Nothing matched; try other words, or discover_tools() to browse domains."
                )
            return response
        if domain is None and group is None:
            return {
                "domains": {
                    d.name: {"tools": d.tool_count, "groups": list(d.groups)}
                    for d in catalog.domains(where=self.session.can_see)
                }
            }
        listing = catalog.browse(domain, group, where=self.session.can_see)
        entries = [e for e in listing if isinstance(e, ToolEntry)]
        limit = self.session.manager.discovery.browse_limit
        head: dict[str, Any] = {}
        if domain is not None:
            head["domain"] = domain
        if group is not None:
            head["group"] = group
        if group is None and len(entries) > limit:
            counts: dict[str, int] = {}
            for entry in entries:
                counts[entry.group] = counts.get(entry.group, 0) + 1
            return {
                **head,
                "groups": counts,
                "note": f"{len(entries)} tools: pass a group, or a query, to list them.",
            }
        if group is None:
            grouped: dict[str, dict[str, str]] = {}
            for entry in entries:
                grouped.setdefault(entry.group, {})[entry.name] = self._summary(entry.name)
            return {**head, "groups": grouped}
        response = {**head, "tools": {e.name: self._summary(e.name) for e in entries[:limit]}}
        if len(entries) > limit:
            response["note"] = f"First {limit} of {len(entries)}; pass a query to narrow."
        return response

    def _schemas(self, names: Sequence[str], caller: str) -> dict[str, Any]:
        entries: list[dict[str, Any]] = []
        errors: dict[str, str] = {}
        found: list[str] = []
        suggestions: list[str] = []
        unknown = 0
        all_hidden = True
        for name in dict.fromkeys(names):
            try:
                tool = self.session.resolve(name)
            except ToolNotFoundError as exc:
                all_hidden = all_hidden and isinstance(exc, ToolNotPermittedError)
                unknown += 1
                if unknown <= MAX_REPORTED_ERRORS:  # each one echoes what the model sent
                    errors[clip(str(name))] = exc.message
                    suggestions.extend(exc.suggestions)
                continue
            if tool.name not in found:
                found.append(tool.name)
                entries.append(meta.schema_entry(self.session.present(tool)))
        if unknown > MAX_REPORTED_ERRORS:
            errors["…"] = f"{unknown - MAX_REPORTED_ERRORS} more unknown names left out."
        if not entries:
            refusal = ToolNotPermittedError if all_hidden else ToolNotFoundError
            raise refusal(" ".join(errors.values()), suggestions=suggestions)
        _, refused = self.session.record_loads(found)
        response: dict[str, Any] = {"tools": entries}
        if errors:
            response["errors"] = errors
        if refused:
            response["note"] = self._cap_message(refused)
        return response

    def get_tool_schema(self, args: dict[str, Any]) -> dict[str, Any]:
        names = [n for n in [args.get("tool_name"), *(args.get("tool_names") or [])] if n]
        if not names:
            raise InvalidArgumentsError(
                'get_tool_schema needs "tool_name" (or "tool_names", a list); find names with '
                "discover_tools.",
                tool_name=meta.GET_TOOL_SCHEMA,
            )
        response = self._schemas(names, meta.GET_TOOL_SCHEMA)
        if len(response["tools"]) == 1 and len(response) == 1:
            return dict(response["tools"][0])
        return response

    def load_tool_schema(self, args: dict[str, Any]) -> dict[str, Any]:
        return self._schemas(args["tool_names"], meta.LOAD_TOOL_SCHEMA)

    async def execute_tool(
        self, runner: str, args: dict[str, Any], request: CallRequest, pipeline: CallPipeline
    ) -> ToolResult | CallRequest:
        """``execute_tool`` (gateway) or ``call_tool`` (search): the named tool's request, for
        the pipeline to run (a meta-tool it names answers here).

        Raises:
            InvalidArgumentsError: it names a meta-tool that runs tools.
            ToolCallError: the name resolves to no tool this session may call.
        """
        name = args["tool_name"]
        arguments = args.get("arguments")
        if arguments is None:
            # A common slip: the tool's arguments beside tool_name instead of inside arguments.
            arguments = {k: v for k, v in args.items() if k != "tool_name"}
        session = self.session
        # Most names are no meta-tool's (the folding is kept per name): asked only when one may be.
        maybe = isinstance(name, str) and (name in _META or fold_name(name) in _META)
        inner = session.meta_tool(name) if maybe else None
        if inner is not None:
            if inner.name in _RUNNERS:
                finder = "discover_tools" if runner == meta.EXECUTE_TOOL else "tool_search"
                raise InvalidArgumentsError(
                    f"{runner} runs a tool found with {finder}; give that tool's name.",
                    tool_name=runner,
                )
            named = dataclasses.replace(request, tool=inner, arguments=arguments)
            return await self.answer(named, pipeline)
        tool = session.resolve(name)
        from_program = request.context.from_program
        check_caller(tool, session.manager.planner.caller_choice(tool), from_program)
        return request.inner(tool, arguments, functools.partial(session.schema_hint, tool))


def _quoted(value: Any) -> str:
    """``repr(value)`` for an error message, clipped: a model's input is echoed, not resent."""
    return clip(repr(value))
