"""What a whole conversation costs in each mode, prompt caching included.

A scripted model works through one task (:data:`TASK`: ten calls, six of them with large
results, on the demo catalog's tools) in every mode, at two catalog sizes: the demo catalog
(151 tools) and the demo plus the BFCL dev pool (1,124 tools). It follows each mode's flow
through a real session (``ToolManager(mode=...)``, ``session.call``) and sends, at every step,
the request a client would send: the session's tools formatted with ``format_tools`` (or a
prototype's own list) and the conversation so far, as Anthropic Messages and OpenAI Responses
requests checked with the SDKs' types (``_requests.py``). Each request is billed under the
providers' prompt caching (``toolmgmt_core._providers.caching``):

- ``anthropic``: explicit breakpoints (automatic caching: the top-level ``cache_control``),
  writes 1.25x, reads 0.1x, 5-minute entries;
- ``openai-prefix``: OpenAI's automatic prefix caching before the GPT-5.6 family (longest
  common prefix, 128-token steps past 1,024, no write fee, reads 0.1x);
- ``openai``: OpenAI from the GPT-5.6 family (an implicit breakpoint on the latest item,
  writes 1.25x, reads 0.1x, 30-minute entries);

and in dollars at list prices for two models of each provider (:data:`PRICES`).

The designs (:data:`DESIGNS`):

- ``flat-raw`` and ``flat``: every tool sent, results raw or cut to 2,000 tokens (the
  reference every figure is divided by);
- ``search``: the search mode as it ships (``mode="search"``: the list never changes), sent
  with ``format_tools``'s default, the provider's deferral searched by toolmgmt: on Anthropic
  a ``tool_search`` client tool whose ``tool_result`` holds ``tool_reference`` blocks; on
  OpenAI a client-executed ``tool_search`` whose ``tool_search_output`` carries the
  definitions; found tools called natively;
- ``search-listed``: the same session with ``format_tools(..., native=False)``: the list as
  the session gives it (``tool_search`` and ``call_tool`` beside the always-on tools), a
  search's answer carrying the found tools' definitions, ``call_tool`` running them: what
  every provider without deferral, and every framework, gets;
- ``search-3``: ``search`` with three results a search;
- ``search-append``: ``Search(appends=True)``, found tools join the list (the default
  before issue 27);
- ``gateway``, ``lazy``: the modes as they are;
- ``native``: the provider's own tool search over deferred tools (``format_tools(...,
  native=True)``), run on the provider's side;
- ``stable-promote`` (b): as ``search-listed``, and the tools found so far join the list
  when the cache has gone cold anyway (a pause longer than the provider's cache lifetime);
- ``additions`` (d): the growing search's ``tool_search`` with the found tools added
  mid-conversation (Anthropic ``tool_addition`` blocks, beta; OpenAI ``additional_tools``).

Code mode is billed by ``bench/code_cost.py``, input and output, on a task whose program
prints what the answer needs.

Goals (issue 27), billed under Anthropic's caching against ``flat`` at the same size: search at
the demo size <= 0.75x and no more than gateway; at 1,124 tools <= 0.25x; the native path
<= 0.55x at the demo size; OpenAI within the same bounds.

Run: ``python bench/conversation.py [--json bench/results/conversation.json]``.
"""

from __future__ import annotations

import argparse
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _requests import (  # noqa: E402
    Additions,
    Answer,
    AnthropicRequests,
    Call,
    Item,
    References,
    ResponsesRequests,
    Result,
    ServerSearch,
    TokenCounter,
    UserText,
    digest,
)
from _results import write_results  # noqa: E402

from toolmgmt_core import (  # noqa: E402
    Discovery,
    ProviderError,
    ResultBudget,
    Tool,
    ToolCatalog,
    ToolManager,
    format_tools,
)
from toolmgmt_core._providers.caching import (  # noqa: E402
    ANTHROPIC,
    OPENAI_BREAKPOINTS,
    OPENAI_PREFIX,
    CacheLedger,
    CacheRules,
)
from toolmgmt_core._session.meta_tools import (  # noqa: E402
    TOOL_SEARCH,
    call_tool_tool,
    run_code_tool,
)
from toolmgmt_core._session.modes import MODES, Mode  # noqa: E402
from toolmgmt_core._session.report import example_arguments  # noqa: E402
from toolmgmt_demo import LARGE_RESULT_CALLS  # noqa: E402

ENCODING = "o200k_base"
TRUNCATED_TOKENS = 2_000
"""Result budget of every mode but ``flat-raw``."""
RAW_TOKENS = 100_000_000
STEP_SECONDS = 8.0
"""Seconds between a request and the next (the model's answer and the tool's run)."""
SEARCH_SECONDS = 2.0
"""Seconds between the two samplings of a response whose search runs on the provider's side."""

SYSTEM = (
    "You are the operations assistant of Acme's platform team. You investigate incidents with "
    "the tools you have, quote evidence from tool results, keep customers' personal data out "
    "of your answers, and finish with a short summary of what you found and what you did. "
    "Ask before anything irreversible."
)


@dataclass(frozen=True)
class TaskCall:
    """One call the task needs."""

    tool: str
    need: str
    """The words the model searches with."""
    arguments: Mapping[str, Any] | None = None
    """None: the tool's own example arguments."""


@dataclass(frozen=True)
class Phase:
    """A user message, the calls it needs and the model's answer."""

    user: str
    calls: tuple[TaskCall, ...]
    answer: str
    pause_before: float = 0.0
    """Seconds the user took to write it (the cache may expire meanwhile)."""


@dataclass(frozen=True)
class Scenario:
    name: str
    phases: tuple[Phase, ...]


TASK: tuple[TaskCall, ...] = (
    TaskCall("files_read_file", "read a file", {"path": "/logs/app.log"}),
    TaskCall(
        "code_hosting_list_commits",
        "list recent commits of a repository",
        {"repository": "acme/api"},
    ),
    TaskCall(
        "code_hosting_get_workflow_logs",
        "get the logs of a CI workflow run",
        {"run_id": "run_0001"},
    ),
    TaskCall("analytics_export_events", "export raw analytics events", {}),
    TaskCall("crm_search_contacts", "find a customer contact by name"),
    TaskCall("crm_export_contacts", "export every CRM contact", {}),
    TaskCall("payments_list_charges", "list recent payments charges of a customer"),
    TaskCall(
        "web_search_fetch_page",
        "fetch a web page's content",
        {"url": "https://en.wikipedia.org/wiki/solar-power"},
    ),
    TaskCall("calendar_create_event", "schedule a meeting and invite attendees"),
    TaskCall("email_send_email", "send an email"),
)
"""Ten calls, six with large results (``toolmgmt_demo.LARGE_RESULT_CALLS``)."""
_LARGE = {name for name, _ in LARGE_RESULT_CALLS}

USER = (
    "Checkout failed for some customers yesterday. Read /logs/app.log, look at the latest "
    "commits of acme/api and the logs of CI run run_0001, export the analytics events and the "
    "CRM contacts, find the customer Patel and her recent charges, read the solar-power page our "
    "status note links to, then book a post-mortem and email the team a summary."
)
ANSWER = (
    "Summary: the checkout failures started after the webhook-retry change in acme/api; the CI "
    "run run_0001 shows the flaky checkout test failing on the same commit. About 40 purchase "
    "events failed between 14:00 and 15:10; Ms Patel was charged twice and is among the affected "
    "customers. I booked the post-mortem for tomorrow 10:00 and emailed the team the timeline, "
    "the suspect commit and the list of customers to refund."
)

SCENARIOS: dict[str, Scenario] = {
    "task": Scenario("task", (Phase(USER, TASK, ANSWER),)),
    "pause": Scenario(
        "pause",
        (
            Phase(USER.split(", export")[0] + ".", TASK[:5], ANSWER.split(";")[0] + "."),
            Phase(
                "Thanks. Now export the CRM contacts, check Patel's charges, read the page, book "
                "the post-mortem and email the team.",
                TASK[5:],
                ANSWER,
                pause_before=600.0,
            ),
        ),
    ),
    "tiny": Scenario(
        "tiny", (Phase("Find Patel, then email her.", (TASK[4], TASK[9]), "Done: emailed."),)
    ),
}
"""``task``: the issue's conversation; ``pause``: the same calls over two user messages ten
minutes apart (the cache goes cold); ``tiny``: two calls, for the tests."""


# -- prices ------------------------------------------------------------------------------------

PRICES_DATE = "2026-11-26"
"""When the list prices below were read."""


@dataclass(frozen=True)
class ModelPrice:
    """A model's list prices in USD per million tokens, and its cache rules."""

    model: str
    provider: str
    input: float
    cache_write: float
    cache_read: float
    output: float
    rules: CacheRules
    source: str

    def ledger_rules(self) -> CacheRules:
        write = self.cache_write / self.input if self.rules.kind == "breakpoints" else 0.0
        return self.rules.priced(
            write=write, read=self.cache_read / self.input, min_tokens=self.rules.min_tokens
        )


PRICES: tuple[ModelPrice, ...] = (
    ModelPrice(
        "claude-sonnet-5-5",
        "anthropic",
        2.00,
        2.50,
        0.10,
        10.00,
        ANTHROPIC.priced(write=1.25, read=0.05, min_tokens=2048),
        "platform.claude.com/docs/en/models/sonnet-5-5/overview ($2 in, $2.50 5m write, $10 "
        "out); cache reads cut from $0.20 to $0.10 on 2026-10-07 (pricing page as quoted by "
        "the claudit v1.9.2 and PromptFuel v1.0.23 changelogs); minimum cacheable prefix "
        "assumed 2,048 (Sonnet 4.6's documented figure; none found for 5.5)",
    ),
    ModelPrice(
        "claude-opus-5-5",
        "anthropic",
        4.00,
        5.00,
        0.20,
        20.00,
        ANTHROPIC.priced(write=1.25, read=0.05, min_tokens=1024),
        "platform.claude.com/docs/en/models/opus-5-5/overview ($4 in, $5 5m write, $0.20 read, "
        "$20 out); minimum cacheable prefix assumed 1,024 (Opus 4.8's documented figure, down "
        "from Opus 4.5-4.7's 4,096 in May 2026, as quoted from the prompt-caching docs by "
        "clawdemy.org and clauder-navi.com; none found for 5.5)",
    ),
    ModelPrice(
        "gpt-6.1-sol",
        "openai-responses",
        2.00,
        2.50,
        0.10,
        10.00,
        OPENAI_BREAKPOINTS,
        "developers.openai.com/api/docs/models/gpt-6.1-sol ($2 in, $0.10 cached, $10 out, up "
        "to 272K input); cache writes 1.25x from the GPT-5.6 family "
        "(developers.openai.com/api/docs/guides/prompt-caching)",
    ),
    ModelPrice(
        "gpt-5.4",
        "openai-responses",
        2.50,
        2.50,
        0.25,
        15.00,
        OPENAI_PREFIX,
        "developers.openai.com/api/docs/pricing ($2.50 in, $0.25 cached, $15 out); before the "
        "GPT-5.6 family: automatic prefix caching, no write fee",
    ),
)

RULES: dict[str, dict[str, CacheRules]] = {
    "anthropic": {"anthropic": ANTHROPIC},
    "openai-responses": {"openai-prefix": OPENAI_PREFIX, "openai": OPENAI_BREAKPOINTS},
}
"""The standard rules each provider's requests are billed under (besides each model's own)."""

PROVIDERS = ("anthropic", "openai-responses")
COLD_AFTER = {"anthropic": ANTHROPIC.ttl, "openai-responses": OPENAI_PREFIX.ttl}
"""Idle seconds after which ``stable-promote`` takes the provider's cache as cold."""


# -- the meta-tools ------------------------------------------------------------------------------

FlatMode = MODES["flat"]
SearchMode = MODES["search"]
APPENDS = SearchMode(appends=True)
"""The search mode whose found tools join the list (the default before issue 27)."""
CALL_TOOL = call_tool_tool()


def _YES(request: Any) -> bool:
    """The user approves every call the task makes (approval is not what this measures)."""
    return True


# -- one conversation --------------------------------------------------------------------------


@dataclass
class Turn:
    """One response of the model: what it writes, then what the client appends."""

    wrote: list[Item]
    then: list[Item] = field(default_factory=list)


def format_list(tools: Sequence[Tool], provider: str, **options: Any) -> tuple[list[Any], bool]:
    """``tools`` formatted for ``provider``; past OpenAI's 128-tool limit, in chunks (a request
    OpenAI would refuse: the second value says so)."""
    try:
        return list(format_tools(list(tools), provider, **options)["tools"]), False
    except ProviderError as exc:
        if "at most" not in str(exc):
            raise
    out: list[Any] = []
    for start in range(0, len(tools), 128):
        out += format_tools(list(tools[start : start + 128]), provider, **options)["tools"]
    return out, True


def _definitions(catalog: ToolCatalog, provider: str, extra: Sequence[Tool]) -> dict[str, Any]:
    """Original name -> formatted definition, for every catalog tool and ``extra`` meta-tool
    (``format_tools`` keeps the order of the tools it is given; none of these is skipped)."""
    tools = [*extra, *catalog]
    formatted, _ = format_list(tools, provider)
    return {t.name: data for t, data in zip(tools, formatted, strict=True)}


def default_ledgers(provider: str) -> dict[str, CacheLedger]:
    """The ledgers a run of ``provider`` bills under: the provider's standard rules
    (:data:`RULES`) and each of its models' own (:data:`PRICES`)."""
    out = {label: CacheLedger(rules) for label, rules in RULES[provider].items()}
    for price in PRICES:
        if price.provider == provider:
            out[price.model] = CacheLedger(price.ledger_rules())
    return out


class Run:
    """One design's conversation with one provider: the session, the transcript, the bills."""

    def __init__(
        self,
        design: Design,
        catalog: ToolCatalog,
        provider: str,
        definitions: Mapping[str, Any],
        tokens: TokenCounter,
        *,
        breakpoints: Sequence[str] | None = None,
        check: bool = True,
        ledgers: Mapping[str, CacheLedger] | None = None,
    ) -> None:
        self.design = design
        self.catalog = catalog
        self.provider = provider
        self.manager = design.manager(catalog)
        self.session = self.manager.session()
        self.scratch = ToolManager(
            catalog,
            mode="search",
            discovery=Discovery(max_results=design.max_results),
            approval=_YES,
        ).session()
        if provider == "anthropic":
            places = breakpoints if breakpoints is not None else ("last",)
            self.requests: AnthropicRequests | ResponsesRequests = AnthropicRequests(
                definitions, tokens, breakpoints=places, check=check
            )
        else:
            places = breakpoints if breakpoints is not None else ()
            self.requests = ResponsesRequests(definitions, tokens, breakpoints=places, check=check)
        self.ledgers: dict[str, CacheLedger] = dict(ledgers or default_ledgers(provider))
        self.items: list[Item] = []
        self.at = 0.0
        self.last_sent: float | None = None
        self.records: list[dict[str, Any]] = []
        self.over_limit = False
        self._ids = 0
        self._last_list: str | None = None

    def new_id(self) -> str:
        self._ids += 1
        return f"toolu_{self._ids:02d}" if self.provider == "anthropic" else f"call_{self._ids:02d}"

    def run_tool(self, name: str, arguments: Mapping[str, Any]) -> str:
        result = self.session.call_sync(name, dict(arguments))
        return result.to_message()

    def search(self, arguments: Mapping[str, Any]) -> list[str]:
        """The tools toolmgmt's search finds for ``arguments`` (``query`` or ``queries``), in
        a scratch session (nothing loads there)."""
        value = self.scratch.call_sync(TOOL_SEARCH, dict(arguments)).value
        return list(value.get("found") or {}) if isinstance(value, dict) else []

    def arguments(self, call: TaskCall) -> dict[str, Any]:
        if call.arguments is not None:
            return dict(call.arguments)
        return example_arguments(self.catalog.get(call.tool))

    def format(self, tools: Sequence[Tool], **options: Any) -> list[Any]:
        formatted, over = format_list(tools, self.provider, **options)
        self.over_limit |= over
        return formatted

    def idle(self) -> float:
        return self.at - self.last_sent if self.last_sent is not None else 0.0

    def respond(self, tools: list[Any], turn: Turn) -> None:
        """Send the request(s) of one response and add its items to the conversation."""
        cuts = [0] + [i + 1 for i, item in enumerate(turn.wrote) if isinstance(item, ServerSearch)]
        for n, cut in enumerate(cuts):
            if n:
                self.at += SEARCH_SECONDS
            self._send(tools, [*self.items, *turn.wrote[:cut]], turn.wrote[cut:], iteration=n)
        self.items += [*turn.wrote, *turn.then]
        self.at += STEP_SECONDS

    def _send(
        self, tools: list[Any], items: list[Item], output: Sequence[Item], *, iteration: int
    ) -> None:
        request, segments = self.requests.build(tools, items, system=SYSTEM, model="model")
        listing = digest(request["tools"])
        written = 0
        for index, item in enumerate(output):
            if isinstance(item, ServerSearch) and index:
                break
            written += self.requests.output_tokens(len(items) + index, item)
            if isinstance(item, ServerSearch):
                break
        bills = {label: ledger.bill(segments, at=self.at) for label, ledger in self.ledgers.items()}
        self.records.append(
            {
                "at": self.at,
                "iteration": iteration,
                "tokens": sum(s.tokens for s in segments),
                "output": written,
                "list_changed": self._last_list is not None and listing != self._last_list,
                "bills": {k: [b.read, b.written, round(b.billed, 1)] for k, b in bills.items()},
            }
        )
        self._last_list = listing
        self.last_sent = self.at


class Design(ABC):
    """How a mode (or a prototype) lists tools and how the model reaches one."""

    key: str = ""
    label: str = ""
    mode: str | Mode = "search"
    result_tokens: int = TRUNCATED_TOKENS
    max_results: int = 5
    """Tools a search finds per need (toolmgmt's default)."""
    providers: tuple[str, ...] = PROVIDERS

    def manager(self, catalog: ToolCatalog) -> ToolManager:
        return ToolManager(
            catalog,
            mode=self.mode,
            discovery=Discovery(max_results=self.max_results),
            approval=_YES,
            results=ResultBudget(max_result_tokens=self.result_tokens),
        )

    def setup(self, run: Run) -> None:  # noqa: B027 - a hook; most designs need nothing
        """Prepare the conversation (a list frozen at the start...)."""

    @abstractmethod
    def tools(self, run: Run) -> list[Any]:
        """The provider tool list of the next request."""

    def ready(self, run: Run, tool: str) -> bool:
        """Whether the model can call ``tool`` without finding it first."""
        return tool in run.manager.planner.pinned_names()

    def find(self, run: Run, arguments: dict[str, Any]) -> Turn | None:
        """The model's search for ``arguments`` (``query`` or ``queries``), or None when the
        design has no search that takes several needs."""
        return None

    def phase(self, run: Run, calls: Sequence[TaskCall]) -> Iterator[Turn] | None:
        """The responses of a whole user message, for a design that does not go call by call
        (None: call by call, :meth:`prepare` and :meth:`turns`)."""
        return None

    def prepare(self, run: Run, calls: Sequence[TaskCall]) -> Iterator[Turn]:
        """A model that searches every need of a user message at once (``--batched``)."""
        needs = [c.need for c in calls if not self.ready(run, c.tool)]
        if needs:
            turn = self.find(run, {"queries": needs} if len(needs) > 1 else {"query": needs[0]})
            if turn is not None:
                yield turn

    def turns(self, run: Run, call: TaskCall) -> Iterator[Turn]:
        """The model's responses that make ``call``, running what they call."""
        if not self.ready(run, call.tool):
            turn = self.find(run, {"query": call.need})
            assert turn is not None
            yield turn
        yield self.direct(run, call)

    def direct(self, run: Run, call: TaskCall) -> Turn:
        cid = run.new_id()
        arguments = run.arguments(call)
        text = run.run_tool(call.tool, arguments)
        return Turn([Call(cid, call.tool, arguments)], [Result(cid, text)])


class Flat(Design):
    key, label, mode = "flat", "flat + truncation", "auto"

    def manager(self, catalog: ToolCatalog) -> ToolManager:
        return ToolManager(
            catalog,
            mode=FlatMode(),
            approval=_YES,
            results=ResultBudget(max_result_tokens=self.result_tokens),
        )

    def tools(self, run: Run) -> list[Any]:
        assert run.session.mode == "flat"
        return run.format(run.session.tools())

    def ready(self, run: Run, tool: str) -> bool:
        return True


class FlatRaw(Flat):
    key, label, result_tokens = "flat-raw", "flat, raw results", RAW_TOKENS


class Floor(Flat):
    """No definitions at all, as if the model knew every tool: what the calls and results
    alone cost (no design can go below it)."""

    key, label = "floor", "floor: the calls and results alone"

    def tools(self, run: Run) -> list[Any]:
        return []


class Search(Design):
    """``Search(appends=True)``: found tools join the list (the default before issue 27)."""

    key, label, mode = "search-append", "search, growing list (`Search(appends=True)`)", APPENDS

    def tools(self, run: Run) -> list[Any]:
        return run.format(run.session.tools())

    def ready(self, run: Run, tool: str) -> bool:
        return tool in {t.name for t in run.session.tools()}

    def find(self, run: Run, arguments: dict[str, Any]) -> Turn | None:
        cid = run.new_id()
        text = run.run_tool(TOOL_SEARCH, arguments)
        return Turn([Call(cid, TOOL_SEARCH, arguments)], [Result(cid, text)])


class Gateway(Search):
    key, label, mode = "gateway", "gateway", "gateway"

    def find(self, run: Run, arguments: dict[str, Any]) -> Turn | None:
        return None  # discover_tools takes one need

    def turns(self, run: Run, call: TaskCall) -> Iterator[Turn]:
        if self.ready(run, call.tool):
            yield self.direct(run, call)
            return
        for name, arguments in (
            ("discover_tools", {"query": call.need}),
            ("get_tool_schema", {"tool_name": call.tool}),
        ):
            cid = run.new_id()
            yield Turn([Call(cid, name, arguments)], [Result(cid, run.run_tool(name, arguments))])
        cid = run.new_id()
        wrapped = {"tool_name": call.tool, "arguments": run.arguments(call)}
        text = run.run_tool("execute_tool", wrapped)
        yield Turn([Call(cid, "execute_tool", wrapped)], [Result(cid, text)])


class Lazy(Search):
    key, label, mode = "lazy", "lazy", "lazy"

    def setup(self, run: Run) -> None:
        self.schemas: set[str] = set(run.manager.planner.pinned_names())

    def ready(self, run: Run, tool: str) -> bool:
        return tool in self.schemas

    def prepare(self, run: Run, calls: Sequence[TaskCall]) -> Iterator[Turn]:
        names = [c.tool for c in calls if not self.ready(run, c.tool)]
        if names:
            yield self._load(run, names)

    def _load(self, run: Run, names: list[str]) -> Turn:
        cid = run.new_id()
        arguments = {"tool_names": names}
        text = run.run_tool("load_tool_schema", arguments)
        self.schemas.update(names)
        return Turn([Call(cid, "load_tool_schema", arguments)], [Result(cid, text)])

    def turns(self, run: Run, call: TaskCall) -> Iterator[Turn]:
        if not self.ready(run, call.tool):
            yield self._load(run, [call.tool])
        yield self.direct(run, call)


class Native(Design):
    """The provider's own tool search (``format_tools(..., native=True)``), on its side; its
    hits are stood in for by toolmgmt's (the provider's ranking is not reproduced here)."""

    key, label = "native", "native: the provider's search"
    namespaces = False

    def setup(self, run: Run) -> None:
        self.loaded: set[str] = set()

    def ready(self, run: Run, tool: str) -> bool:
        return super().ready(run, tool) or tool in self.loaded

    def tools(self, run: Run) -> list[Any]:
        # Explicit both ways: format_tools groups deferred functions in namespaces by default.
        options: dict[str, Any] = {"native": True, "namespaces": self.namespaces}
        return list(format_tools(run.session, run.provider, **options)["tools"])

    def turns(self, run: Run, call: TaskCall) -> Iterator[Turn]:
        if self.ready(run, call.tool):
            yield self.direct(run, call)
            return
        cid = run.new_id()
        search = ServerSearch(f"srv{cid}", call.need, tuple(run.search({"query": call.need})))
        self.loaded.update(search.names)
        turn = self.direct(run, call)
        yield Turn([search, *turn.wrote], turn.then)


class NativeNamespaces(Native):
    key, label, namespaces = "native-ns", "native, namespaced", True
    providers = ("openai-responses",)


class StableSearch(Design):
    """The search mode as it ships (``mode="search"``), formatted with ``format_tools``'s
    default: the provider's deferral searched by toolmgmt (Anthropic ``tool_reference``
    results, OpenAI's client ``tool_search``); found tools are called natively."""

    key, label = "search", '**search** (`mode="search"`, native deferral)'
    native: bool | None = None

    def tools(self, run: Run) -> list[Any]:
        return list(format_tools(run.session, run.provider, native=self.native)["tools"])

    def ready(self, run: Run, tool: str) -> bool:
        return super().ready(run, tool) or tool in run.session.loaded()

    def found(self, run: Run, arguments: dict[str, Any]) -> tuple[str, tuple[str, ...]]:
        """The session's own answer to ``tool_search`` and the names it found."""
        result = run.session.call_sync(TOOL_SEARCH, dict(arguments))
        found = result.value.get("found") if isinstance(result.value, dict) else None
        return result.to_message(), tuple(found or ())

    def find(self, run: Run, arguments: dict[str, Any]) -> Turn | None:
        cid = run.new_id()
        _, names = self.found(run, arguments)
        return Turn([Call(cid, TOOL_SEARCH, arguments, search=True)], [References(cid, names)])


class StableListed(StableSearch):
    """The same session with ``format_tools(..., native=False)``: the list as the session
    gives it (``tool_search`` and ``call_tool``), what every other provider and framework
    gets; a search's answer carries the found tools' definitions, ``call_tool`` runs them."""

    key, label = "search-listed", "search, `native=False` (stable list, `call_tool`)"
    native = False

    def find(self, run: Run, arguments: dict[str, Any]) -> Turn | None:
        cid = run.new_id()
        text, _ = self.found(run, arguments)
        return Turn([Call(cid, TOOL_SEARCH, arguments)], [Result(cid, text)])

    def direct(self, run: Run, call: TaskCall) -> Turn:
        if call.tool in run.manager.planner.pinned_names():
            return super().direct(run, call)
        cid = run.new_id()
        wrapped = {"tool_name": call.tool, "arguments": run.arguments(call)}
        text = run.run_tool(CALL_TOOL.name, wrapped)
        return Turn([Call(cid, CALL_TOOL.name, wrapped)], [Result(cid, text)])


class StablePromote(StableListed):
    """(b) As ``search-listed``; when the cache has gone cold anyway, the tools found so far
    join the list and are called directly from then on."""

    key, label = "stable-promote", "(b) stable, grows when the cache is cold"

    def setup(self, run: Run) -> None:
        self.extra: list[Any] = []
        self.promoted: set[str] = set()

    def tools(self, run: Run) -> list[Any]:
        if run.idle() > COLD_AFTER[run.provider]:
            new = [n for n in run.session.loaded() if n not in self.promoted]
            if new:
                self.promoted.update(new)
                self.extra += run.format([run.catalog.get(n) for n in new])
        return [*super().tools(run), *self.extra]

    def direct(self, run: Run, call: TaskCall) -> Turn:
        if call.tool in self.promoted:
            return Design.direct(self, run, call)
        return super().direct(run, call)


class StableThree(StableSearch):
    key, label, max_results = "search-3", "search, 3 results a search", 3


class ToolAdditions(Design):
    """(d) The growing search's ``tool_search`` as it is, the found tools added
    mid-conversation (Anthropic ``tool_addition`` blocks, beta; OpenAI ``additional_tools``)
    instead of to the list."""

    key, label, mode = "additions", "(d) mid-conversation tool additions", APPENDS

    def setup(self, run: Run) -> None:
        pinned = [run.catalog.get(n) for n in run.manager.planner.pinned_names()]
        search = run.manager.meta_tools()
        if run.provider == "anthropic":
            self.base = run.format(search) + _deferred(run)
        else:
            self.base = run.format([*search, *pinned])

    def tools(self, run: Run) -> list[Any]:
        return self.base

    def ready(self, run: Run, tool: str) -> bool:
        return super().ready(run, tool) or tool in run.session.loaded()

    def find(self, run: Run, arguments: dict[str, Any]) -> Turn | None:
        cid = run.new_id()
        text = run.run_tool(TOOL_SEARCH, arguments)
        names = tuple(run.search(arguments))
        return Turn([Call(cid, TOOL_SEARCH, arguments)], [Result(cid, text), Additions(names)])


def _deferred(run: Run) -> list[Any]:
    """Anthropic: the always-on tools, then every other visible tool deferred (without the
    provider's own search tool: the client's search loads them)."""
    tools = format_tools(run.session, "anthropic", native=True)["tools"]
    return [t for t in tools if not str(t.get("type", "")).startswith("tool_search_tool")]


DESIGNS: tuple[Design, ...] = (
    FlatRaw(),
    Flat(),
    Floor(),
    StableSearch(),
    StableListed(),
    StableThree(),
    Search(),
    Gateway(),
    Lazy(),
    Native(),
    NativeNamespaces(),
    StablePromote(),
    ToolAdditions(),
)
REFERENCE = "flat"


def _play(run: Run, design: Design, turns: Iterator[Turn]) -> None:
    """Send each response's requests; the list of a request is the one before the response
    (a turn runs its calls when it is made)."""
    while True:
        tools = design.tools(run)
        turn = next(turns, None)
        if turn is None:
            return
        run.respond(tools, turn)


def converse(
    design: Design,
    catalog: ToolCatalog,
    provider: str,
    scenario: Scenario,
    definitions: Mapping[str, Any],
    tokens: TokenCounter,
    *,
    batched: bool = False,
    start: float = 0.0,
    **options: Any,
) -> Run:
    """Run ``scenario`` in ``design`` with ``provider``'s requests; the run holds the bills.

    ``batched``: the model searches every need of a user message at once, before its calls.
    ``start``: the time of the first request (conversations sharing ledgers follow each other).
    """
    design = type(design)()  # a design keeps per-conversation state
    run = Run(design, catalog, provider, definitions, tokens, **options)
    run.at = start
    design.setup(run)
    for phase in scenario.phases:
        run.at += phase.pause_before
        run.items.append(UserText(phase.user))
        whole = design.phase(run, phase.calls)
        if whole is not None:
            _play(run, design, whole)
        else:
            if batched:
                _play(run, design, design.prepare(run, phase.calls))
            for call in phase.calls:
                _play(run, design, design.turns(run, call))
        run.respond(design.tools(run), Turn([Answer(phase.answer)]))
    return run


def summary(run: Run) -> dict[str, Any]:
    """A run's totals: requests, the last request's context, tokens and bills per rules."""
    records = run.records
    out: dict[str, Any] = {
        "requests": len(records),
        "last_context": records[-1]["tokens"],
        "input_tokens": sum(r["tokens"] for r in records),
        "output_tokens": sum(r["output"] for r in records),
        "list_changes": sum(r["list_changed"] for r in records),
        "over_openai_limit": run.over_limit,
        "billed": {},
        "read": {},
        "written": {},
        "dollars": {},
    }
    for label in run.ledgers:
        out["billed"][label] = round(sum(r["bills"][label][2] for r in records), 1)
        out["read"][label] = sum(r["bills"][label][0] for r in records)
        out["written"][label] = sum(r["bills"][label][1] for r in records)
    for price in PRICES:
        if price.model not in run.ledgers:
            continue
        total = 0.0
        for r in records:
            read, written, _ = r["bills"][price.model]
            uncached = r["tokens"] - read - written
            total += uncached * price.input + written * price.cache_write
            total += read * price.cache_read + r["output"] * price.output
        out["dollars"][price.model] = round(total / 1e6, 5)
    return out


def row_of(run: Run, size: str) -> dict[str, Any]:
    """A run's row: its design, catalog size and provider, and :func:`summary`."""
    design = run.design
    head = {"design": design.key, "label": design.label, "size": size, "tools": len(run.catalog)}
    return {**head, "provider": run.provider, **summary(run)}


def catalogs(labels: Sequence[str]) -> dict[str, ToolCatalog]:
    import toolmgmt_demo

    out: dict[str, ToolCatalog] = {}
    for label in labels:
        catalog = toolmgmt_demo.demo_catalog()
        if label == "demo+bfcl":
            from _data import load_bfcl

            catalog.add_schemas(load_bfcl()[0], on_error="skip")
        out[label] = catalog
    return out


SIZES = ("demo", "demo+bfcl")


def measure(
    sizes: Sequence[str] = SIZES,
    scenario: str = "task",
    designs: Sequence[Design] = DESIGNS,
    *,
    batched: bool = False,
    check: bool = True,
    catalogs_by_size: Mapping[str, ToolCatalog] | None = None,
) -> list[dict[str, Any]]:
    """Every design's conversation at every size with every provider: one row each."""
    rows = []
    tokens = TokenCounter(ENCODING)
    metas = [
        *(t for mode in ("search", "gateway", "lazy") for t in MODES[mode]().meta_tools(5)),
        run_code_tool(),
    ]
    found = catalogs_by_size or catalogs(sizes)
    for size in sizes:
        catalog = found[size]
        for provider in PROVIDERS:
            definitions = _definitions(catalog, provider, metas)
            for design in designs:
                if provider not in design.providers:
                    continue
                run = converse(
                    design,
                    catalog,
                    provider,
                    SCENARIOS[scenario],
                    definitions,
                    tokens,
                    batched=batched,
                    check=check,
                )
                rows.append(row_of(run, size))
    return rows


BREAKPOINT_PLACES: dict[str, tuple[tuple[str, ...], ...]] = {
    "anthropic": (("last",), ("system", "last"), ("tools", "last"), ("tools", "system", "last")),
    "openai-responses": ((), ("system",)),
}
"""Where the bench puts breakpoints (Anthropic ``cache_control``; OpenAI an explicit
``prompt_cache_breakpoint`` on the instructions beside the implicit one)."""
BREAKPOINT_DESIGNS = ("flat", "search-append", "search-listed", "search")
FLEET_GAP = 30.0
"""Seconds between one conversation's end and the next one's start (a fleet of agents)."""


def measure_breakpoints(
    catalog: ToolCatalog, size: str, *, check: bool = True
) -> list[dict[str, Any]]:
    """Per breakpoint placement: a conversation's bill, and the bill of the next conversation
    with the same tools and system prompt (another user's task) sharing the cache."""
    rows = []
    tokens = TokenCounter(ENCODING)
    metas = [
        *(t for mode in ("search", "gateway", "lazy") for t in MODES[mode]().meta_tools(5)),
        run_code_tool(),
    ]
    by_key = {d.key: d for d in DESIGNS}
    other = Scenario(
        "task-2",
        (Phase("Another customer reports the same. " + USER, TASK, ANSWER),),
    )
    for provider in PROVIDERS:
        definitions = _definitions(catalog, provider, metas)
        for key in BREAKPOINT_DESIGNS:
            for places in BREAKPOINT_PLACES[provider]:
                first = converse(
                    by_key[key],
                    catalog,
                    provider,
                    SCENARIOS["task"],
                    definitions,
                    tokens,
                    breakpoints=places,
                    check=check,
                )
                second = converse(
                    by_key[key],
                    catalog,
                    provider,
                    other,
                    definitions,
                    tokens,
                    breakpoints=places,
                    check=check,
                    ledgers=first.ledgers,
                    start=first.at + FLEET_GAP,
                )
                rows.append(
                    {
                        "design": key,
                        "size": size,
                        "provider": provider,
                        "breakpoints": list(places),
                        "first": summary(first)["billed"],
                        "next": summary(second)["billed"],
                    }
                )
    return rows


# -- report ------------------------------------------------------------------------------------

HEADLINE = {"anthropic": "anthropic", "openai-responses": "openai-prefix"}
"""The rules each provider's headline figure is billed under (the issue's)."""

ISSUE_ESTIMATE: dict[str, dict[str, tuple[float | None, ...]]] = {
    "demo": {
        "flat-raw": (19.13, 19.17, 19.08),
        "search-append": (0.72, 3.01, 2.39),
        "gateway": (0.64, 0.92, 0.99),
        "lazy": (0.71, 0.89, 0.92),
        "native": (0.57, 0.51, None),
    },
    "demo+bfcl": {
        "search-append": (None, 0.84, 0.66),
        "gateway": (None, 0.26, 0.27),
        "lazy": (None, 0.63, 0.66),
        "native": (None, 0.14, None),
    },
}
"""Issue 27's "today" figures (the previous session's estimate, of the search mode whose list
grows: ``search-append`` now) against flat + truncation:
last request's context, billed under Anthropic's caching, billed under OpenAI's."""

GOALS = (
    ("search-like design at the demo size <= 0.75x flat + truncation", "demo", 0.75),
    ("at 1,124 tools <= 0.25x flat + truncation", "demo+bfcl", 0.25),
)
NATIVE_GOAL = 0.55
SEARCH_LIKE = (
    "search",
    "search-listed",
    "search-3",
    "search-append",
    "stable-promote",
    "additions",
)
NATIVE_LIKE = ("native", "native-ns", "search", "search-3", "additions")


def relative(rows: Sequence[dict[str, Any]]) -> None:
    """Add each row's figures against ``flat`` (same size and provider), in place."""
    reference = {(r["size"], r["provider"]): r for r in rows if r["design"] == REFERENCE}
    for row in rows:
        ref = reference[(row["size"], row["provider"])]
        row["vs_flat"] = {
            "last_context": round(row["last_context"] / ref["last_context"], 4),
            **{k: round(v / ref["billed"][k], 4) for k, v in row["billed"].items()},
            **{k: round(v / ref["dollars"][k], 4) for k, v in row["dollars"].items()},
        }


def goals(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Which designs meet issue 27's goals, under every provider's rules."""
    by = {(r["design"], r["size"], r["provider"]): r for r in rows}
    out: dict[str, Any] = {}
    for design in SEARCH_LIKE:
        for provider in PROVIDERS:
            for rules in RULES[provider]:
                key = f"{design} / {rules}"
                checks = {}
                for text, size, bound in GOALS:
                    row = by.get((design, size, provider))
                    if row is not None:
                        checks[text] = row["vs_flat"][rules] <= bound
                demo = by.get((design, "demo", provider))
                gateway = by.get(("gateway", "demo", provider))
                if demo and gateway:
                    checks["no more than gateway at the demo size"] = (
                        demo["billed"][rules] <= gateway["billed"][rules]
                    )
                if design in NATIVE_LIKE and demo:
                    checks[f"native path <= {NATIVE_GOAL}x at the demo size"] = (
                        demo["vs_flat"][rules] <= NATIVE_GOAL
                    )
                out[key] = checks
    return out


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def print_rows(title: str, rows: Sequence[dict[str, Any]]) -> None:
    print(title)
    sizes = list(dict.fromkeys(r["size"] for r in rows))
    rules = [(p, r) for p in PROVIDERS for r in RULES[p]]
    head = f"{'design':<44}{'size':<10}{'reqs':>5}{'context':>9}"
    head += "".join(f"{r:>15}" for _, r in rules)
    print(head)
    print("-" * len(head))
    designs = list(dict.fromkeys(r["design"] for r in rows))
    by = {(r["design"], r["size"], r["provider"]): r for r in rows}
    for size in sizes:
        for design in designs:
            anthropic = by.get((design, size, "anthropic"))
            any_row = anthropic or by.get((design, size, "openai-responses"))
            if any_row is None:
                continue
            line = f"{any_row['label']:<44}{size:<10}{any_row['requests']:>5}"
            line += f"{_x(any_row['vs_flat']['last_context']):>9}"
            for provider, label in rules:
                row = by.get((design, size, provider))
                if row is None:
                    line += f"{'':>15}"
                    continue
                cell = (
                    f"{row['billed'][label] / 1000:,.1f}K"
                    if design == REFERENCE
                    else _x(row["vs_flat"][label])
                )
                line += f"{cell:>15}"
            print(line)
    print()


def print_dollars(rows: Sequence[dict[str, Any]]) -> None:
    print(f"Dollars per conversation at list prices ({PRICES_DATE}):")
    models = [p.model for p in PRICES]
    print(f"{'design':<44}{'size':<10}" + "".join(f"{m:>19}" for m in models))
    by = {(r["design"], r["size"], r["provider"]): r for r in rows}
    for size in dict.fromkeys(r["size"] for r in rows):
        for design in dict.fromkeys(r["design"] for r in rows):
            cells = []
            label = ""
            for price in PRICES:
                row = by.get((design, size, price.provider))
                label = row["label"] if row else label
                cells.append(f"${row['dollars'][price.model]:.4f}" if row else "")
            if label:
                print(f"{label:<44}{size:<10}" + "".join(f"{c:>19}" for c in cells))
    print()


def print_issue(rows: Sequence[dict[str, Any]]) -> None:
    print("Issue 27's estimate ('today') against this bench, relative to flat + truncation:")
    by = {(r["design"], r["size"], r["provider"]): r for r in rows}
    heads = ("context est/now", "Anthropic est/now", "OpenAI est/now")
    print(f"{'mode':<12}{'size':<11}" + "".join(f"{h:>20}" for h in heads))
    for size, estimates in ISSUE_ESTIMATE.items():
        for design, (context, anthropic, openai) in estimates.items():
            a = by.get((design, size, "anthropic"))
            o = by.get((design, size, "openai-responses"))
            if a is None or o is None:
                continue
            cells = (
                f"{_x(context)} / {_x(a['vs_flat']['last_context'])}",
                f"{_x(anthropic)} / {_x(a['vs_flat']['anthropic'])}",
                f"{_x(openai)} / {_x(o['vs_flat']['openai-prefix'])}",
            )
            print(f"{design:<12}{size:<11}" + "".join(f"{c:>20}" for c in cells))
    print()


def print_breakpoints(rows: Sequence[dict[str, Any]]) -> None:
    print("Breakpoints (demo): a conversation's bill -> the next one's, sharing tools and system")
    for row in rows:
        places = "+".join(row["breakpoints"]) or "implicit"
        bills = "  ".join(
            f"{k} {row['first'][k]:,.0f} -> {row['next'][k]:,.0f}" for k in row["first"]
        )
        print(f"  {row['design']:<14}{row['provider']:<18}{places:<20}{bills}")
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=SIZES)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--no-check", action="store_true", help="skip the SDK type checks of every request"
    )
    args = parser.parse_args(argv)
    check = not args.no_check
    found = catalogs(args.sizes)
    rows = measure(args.sizes, "task", check=check, catalogs_by_size=found)
    relative(rows)
    batched = measure(args.sizes, "task", batched=True, check=check, catalogs_by_size=found)
    relative(batched)
    paused = measure(["demo"], "pause", check=check, catalogs_by_size=found)
    relative(paused)
    places = measure_breakpoints(found["demo"], "demo", check=check)
    print(
        f"One task, {len(TASK)} calls ({sum(1 for c in TASK if c.tool in _LARGE)} with large "
        f"results), tokens {ENCODING} over each request's JSON blocks; billed input against "
        f"flat + truncation (its own figure in K base-price tokens)."
    )
    print_rows("A search per need (the issue's scripted model):", rows)
    print_rows("Every need of the user's message searched at once:", batched)
    print_rows("Two user messages ten minutes apart (the cache goes cold between them):", paused)
    print_dollars(rows)
    print_issue(rows)
    print_breakpoints(places)
    met = {"per_need": goals(rows), "batched": goals(batched)}
    for behaviour, table in met.items():
        for design, checks in table.items():
            state = ", ".join(f"{'PASS' if ok else 'FAIL'} {text}" for text, ok in checks.items())
            print(f"goals ({behaviour}) {design}: {state}")
    if args.json:
        write_results(
            args.json,
            "conversation",
            {
                "encoding": ENCODING,
                "task": [c.tool for c in TASK],
                "prices": {
                    "date": PRICES_DATE,
                    "models": [
                        {
                            "model": p.model,
                            "provider": p.provider,
                            "input": p.input,
                            "cache_write": p.cache_write,
                            "cache_read": p.cache_read,
                            "output": p.output,
                            "rules": p.rules.name,
                            "min_tokens": p.rules.min_tokens,
                            "source": p.source,
                        }
                        for p in PRICES
                    ],
                },
                "rows": rows,
                "batched": batched,
                "pause": paused,
                "breakpoints": places,
                "goals": met,
            },
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
