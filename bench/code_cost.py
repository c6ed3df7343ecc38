"""What code mode costs, input and output in dollars, against flat + truncation, on a task
whose program prints what the answer needs.

The task (:data:`READS`, :data:`WRITES`): eight reads of the demo catalog's tools (six with
large results: a 270K-token log, 4,000 analytics events, 400 CRM contacts...), then booking a
post-mortem and emailing the team a summary. Its program (:data:`PROGRAM`) computes that summary
from the whole results (error counts and the top error kinds of the log, the latest commits, the
CI run's steps, events by type and purchase revenue, the Patel customers, contacts by stage,
failed charges, the status page's sections), sends it, and prints it: the scripted answer is
written from what it printed (:func:`answer_text`), and every design answers with the same text
and emails the same body. Nothing is cut to a fixed length: the summary is as long as it is.

Each design is followed through a real session and billed as in ``bench/conversation.py``
(the same request builders, checked with the SDKs' types, the same caching rules), counting the
tokens the model writes (tool calls, the program, the answer) at the output price:

- ``flat``: every tool sent, results cut to 2,000 tokens, one call per turn (the reference);
- ``flat-batched``: the same, the eight reads made in one turn (parallel tool calls), then the
  two writes in one turn;
- ``code``: ``mode="code"``: one ``tool_search`` with every need its list does not already
  show (the always-on tools are listed, callable from a program too), one ``run_code`` program.

At 151 tools (the demo catalog) and 1,124 (with the shared BFCL pool). OpenAI refuses more than
128 tools in a request: its flat rows are of a request it would refuse (marked so), sent in
chunks here only to be billed.

Dollars at list prices (:data:`conversation.PRICES`, read on :data:`conversation.PRICES_DATE`),
each model's prompt caching included. Goals (issue 40): code mode <= 0.20x flat + truncation at
151 tools and <= 0.06x at 1,124, input plus output, for every model.

Run: ``python bench/code_cost.py [--json bench/results/code_cost.json]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import conversation as conv  # noqa: E402
from _requests import Call, Item, Result, TokenCounter  # noqa: E402
from _results import write_results  # noqa: E402

from toolmgmt_core import ToolCatalog, ToolManager  # noqa: E402
from toolmgmt_core._providers.caching import CacheLedger  # noqa: E402
from toolmgmt_core._session.meta_tools import MAX_QUERIES, RUN_CODE, TOOL_SEARCH  # noqa: E402
from toolmgmt_core._session.modes import MODES  # noqa: E402

TaskCall = conv.TaskCall

READS: tuple[TaskCall, ...] = (
    TaskCall("files_read_file", "read a file", {"path": "/logs/app.log"}),
    TaskCall("code_hosting_list_commits", "list recent commits", {"repository": "acme/api"}),
    TaskCall("code_hosting_get_workflow_logs", "logs of a CI run", {"run_id": "run_0001"}),
    TaskCall("analytics_export_events", "export raw analytics events", {}),
    TaskCall(
        "crm_search_contacts",
        "find a customer contact by name",
        {"query": "patel", "lifecycle_stage": "customer", "limit": 5},
    ),
    TaskCall("crm_export_contacts", "export every CRM contact", {}),
    TaskCall("payments_list_charges", "list recent payment charges", {}),
    TaskCall(
        "web_search_fetch_page",
        "fetch a web page's content",
        {"url": "https://en.wikipedia.org/wiki/solar-power"},
    ),
)
"""The reads, independent of each other (a batching model makes them in one turn)."""

EVENT = {
    "title": "Checkout failures post-mortem",
    "start": "2026-03-04T10:00:00Z",
    "end": "2026-03-04T11:00:00Z",
    "attendees": ["team@acme.example.com"],
}
TEAM = ["team@acme.example.com"]
SUBJECT = "Checkout failures: what we found"

USER = (
    "Checkout failed for some customers yesterday. Read /logs/app.log, look at the latest "
    "commits of acme/api and the logs of CI run run_0001, export the analytics events and the "
    "CRM contacts, find the customers named Patel and the recent charges, read the status page "
    "(the solar-power wiki page), then book a post-mortem and email the team a summary."
)

PROGRAM = """import json

log = await files_read_file(path="/logs/app.log")
levels, kinds, first, last = {}, {}, None, None
for line in log["content"].splitlines():
    parts = line.split(None, 3)
    if len(parts) < 4:
        continue
    levels[parts[1]] = levels.get(parts[1], 0) + 1
    if parts[1] == "ERROR":
        first = first or parts[0]
        last = parts[0]
        words = [w for w in parts[3].split() if "=" not in w and not w[0].isdigit()]
        kinds[" ".join(words)] = kinds.get(" ".join(words), 0) + 1
top = sorted(kinds.items(), key=lambda kv: -kv[1])[:3]

commits = (await code_hosting_list_commits(repository="acme/api"))["commits"]
latest = [
    f"{c['sha'][:8]} {c['message'].splitlines()[0]} ({c['author']['login']})"
    for c in commits[:3]
]
ci = await code_hosting_get_workflow_logs(run_id="run_0001")
steps = [l for l in ci.splitlines() if l.startswith("2026")]
failed = [l for l in steps if " ok " not in l]

events = (await analytics_export_events())["rows"]
by_event = {}
for e in events:
    by_event[e["event"]] = by_event.get(e["event"], 0) + 1
revenue = sum(e["properties"].get("revenue", 0) for e in events if e["event"] == "purchase")

patel = (await crm_search_contacts(query="patel", lifecycle_stage="customer", limit=5))["items"]
stages = {}
for c in (await crm_export_contacts())["contacts"]:
    stages[c["lifecycle_stage"]] = stages.get(c["lifecycle_stage"], 0) + 1
charges = (await payments_list_charges())["items"]
page = await web_search_fetch_page(url="https://en.wikipedia.org/wiki/solar-power")

summary = {
    "log": {"levels": levels, "errors": f"{first} .. {last}", "top_errors": top},
    "commits": {"count": len(commits), "latest": latest},
    "ci_run_0001": {"steps": len(steps), "failed": len(failed)},
    "events": {"by_type": by_event, "purchase_revenue": round(revenue, 2)},
    "patel_customers": [f"{p['first_name']} {p['last_name']} ({p['id']})" for p in patel],
    "contacts_by_stage": stages,
    "charges": {
        "count": len(charges),
        "failed": [f"{c['id']} {c['amount']} {c['currency']}" for c in charges
                   if c["status"] == "failed"],
    },
    "status_page": {
        "title": page["title"],
        "sections": len([l for l in page["content"].splitlines() if l.startswith("## ")]),
    },
}
await calendar_create_event(
    title="Checkout failures post-mortem", start="2026-03-04T10:00:00Z",
    end="2026-03-04T11:00:00Z", attendees=["team@acme.example.com"],
)
await email_send_email(
    to=["team@acme.example.com"], subject="Checkout failures: what we found",
    body="What we found:\\n" + json.dumps(summary),
)
print(json.dumps(summary))
"""
"""What a model writes for the task in code mode: it computes the summary from the whole
results, books the post-mortem, emails the summary and prints it."""


def email_body(summary: dict[str, Any]) -> str:
    """The email's body, as :data:`PROGRAM` builds it (a flat model writes the same)."""
    return "What we found:\n" + json.dumps(summary)


def writes(summary: dict[str, Any]) -> tuple[TaskCall, ...]:
    """The two writes, the email carrying the summary."""
    email = {"to": TEAM, "subject": SUBJECT, "body": email_body(summary)}
    return (
        TaskCall("calendar_create_event", "schedule a meeting and invite attendees", EVENT),
        TaskCall("email_send_email", "send an email", email),
    )


def answer_text(summary: dict[str, Any]) -> str:
    """The model's answer, written from the program's printed summary alone."""
    log, events, charges = summary["log"], summary["events"], summary["charges"]
    top = "; ".join(f"{kind} ({n})" for kind, n in log["top_errors"])
    by_type = ", ".join(f"{n} {kind}" for kind, n in events["by_type"].items())
    stages = ", ".join(f"{n} {stage}" for stage, n in summary["contacts_by_stage"].items())
    ci = summary["ci_run_0001"]
    return (
        f"Summary: /logs/app.log holds {log['levels'].get('ERROR', 0)} errors ({log['errors']}), "
        f"mostly {top}. acme/api's latest commits: {'; '.join(summary['commits']['latest'])}. "
        f"CI run run_0001 ran {ci['steps']} steps, {ci['failed']} failed. The export holds "
        f"{by_type} events, purchases worth {events['purchase_revenue']:,.2f}. Customers named "
        f"Patel: {', '.join(summary['patel_customers'])}. CRM contacts by stage: {stages}. "
        f"Of the {charges['count']} recent charges, failed: {', '.join(charges['failed'])}. "
        f"The status page ({summary['status_page']['title']}) has "
        f"{summary['status_page']['sections']} sections. I booked the post-mortem for "
        f"2026-03-04 10:00 and emailed the team this summary."
    )


def run_program(catalog: ToolCatalog) -> tuple[dict[str, Any], str]:
    """The summary :data:`PROGRAM` prints over ``catalog``, and its output as the model reads
    it."""
    session = ToolManager(catalog, mode="code", approval=conv._YES).session()
    result = session.call_sync(RUN_CODE, {"code": PROGRAM})
    assert not result.is_error, result.content[:600]
    return json.loads(result.content), str(result.content)


# -- the designs -----------------------------------------------------------------------------


class FlatBatched(conv.Flat):
    """Flat + truncation, the reads made in one turn (parallel calls), then the writes."""

    key, label = "flat-batched", "flat + truncation, parallel reads in one turn"

    def phase(self, run: conv.Run, calls: Sequence[TaskCall]) -> Iterator[conv.Turn] | None:
        reads, rest = calls[: len(READS)], calls[len(READS) :]
        return iter([self._batch(run, reads), self._batch(run, rest)])

    def _batch(self, run: conv.Run, calls: Sequence[TaskCall]) -> conv.Turn:
        wrote: list[Item] = []
        then: list[Item] = []
        for call in calls:
            turn = self.direct(run, call)
            wrote += turn.wrote
            then += turn.then
        return conv.Turn(wrote, then)


class CodeProgram(conv.Design):
    """Code mode: one ``tool_search`` with every need the list does not show, then
    :data:`PROGRAM`."""

    key, label, mode = "code", '**code** (`mode="code"`: `tool_search` + one program)', "code"

    def tools(self, run: conv.Run) -> list[Any]:
        return run.format(run.session.tools())

    def phase(self, run: conv.Run, calls: Sequence[TaskCall]) -> Iterator[conv.Turn] | None:
        # The model searches for what its list does not show (the always-on tools are there).
        listed = {t.name for t in run.session.tools()}
        needs = [c.need for c in calls if c.tool not in listed]
        searches: list[Item] = []
        answers: list[Item] = []
        for start in range(0, len(needs), MAX_QUERIES):
            cid = run.new_id()
            arguments = {"queries": needs[start : start + MAX_QUERIES]}
            searches.append(Call(cid, TOOL_SEARCH, arguments))
            answers.append(Result(cid, run.run_tool(TOOL_SEARCH, arguments)))
        found = " ".join(str(a.text) for a in answers if isinstance(a, Result))
        missing = [c.tool for c in calls if c.tool not in listed and f"def {c.tool}(" not in found]
        assert not missing, f"the search did not find {missing}"
        cid = run.new_id()
        program = {"code": PROGRAM}
        text = run.run_tool(RUN_CODE, program)
        assert '"error"' not in text[:20], text[:600]
        return iter(
            [
                conv.Turn(searches, answers),
                conv.Turn([Call(cid, RUN_CODE, program)], [Result(cid, text)]),
            ]
        )


FLOOR = 4096
"""The highest minimum cacheable prefix Anthropic has documented (Opus 4.5-4.7, Haiku 4.5).
Code mode's requests are small, so where a model's minimum is assumed, each Anthropic model is
also billed under this one (``at_floor``): what the figure would be were the assumption low."""


def _ledgers(provider: str) -> dict[str, CacheLedger]:
    """The ledgers a run of ``provider`` keeps (:func:`conversation.default_ledgers`), and for
    each Anthropic model one more under :data:`FLOOR` (``<model>@<FLOOR>``)."""
    out = conv.default_ledgers(provider)
    for price in conv.PRICES:
        if price.provider == provider == "anthropic":
            floored = replace(price, rules=replace(price.rules, min_tokens=FLOOR))
            out[f"{price.model}@{FLOOR}"] = CacheLedger(floored.ledger_rules())
    return out


def _at_floor(row: dict[str, Any]) -> dict[str, float]:
    """A row's dollars per Anthropic model under :data:`FLOOR`, from its ``@FLOOR`` ledgers."""
    out = {}
    for price in conv.PRICES:
        label = f"{price.model}@{FLOOR}"
        if label not in row["billed"]:
            continue
        # billed is in tokens at the input price (writes and reads at their multiples)
        dollars = row["billed"][label] * price.input + row["output_tokens"] * price.output
        out[price.model] = round(dollars / 1e6, 5)
    return out


DESIGNS: tuple[conv.Design, ...] = (conv.Flat(), FlatBatched(), CodeProgram())
SIZES = conv.SIZES
GOALS = {"demo": 0.20, "demo+bfcl": 0.06}
"""Code mode's bound against flat + truncation (input plus output dollars), per size."""


def measure(
    sizes: Sequence[str] = SIZES,
    designs: Sequence[conv.Design] = DESIGNS,
    *,
    check: bool = True,
) -> list[dict[str, Any]]:
    """One row per size, provider and design: tokens in and out, dollars per model, and
    against ``flat`` (when it is measured)."""
    tokens = TokenCounter(conv.ENCODING)
    metas = MODES["code"]().meta_tools(5)
    found = conv.catalogs(sizes)
    rows = []
    for size in sizes:
        catalog = found[size]
        summary, printed = run_program(catalog)
        phase = conv.Phase(USER, (*READS, *writes(summary)), answer_text(summary))
        scenario = conv.Scenario("code-cost", (phase,))
        for provider in conv.PROVIDERS:
            definitions = conv._definitions(catalog, provider, metas)
            for design in designs:
                run = conv.converse(
                    design,
                    catalog,
                    provider,
                    scenario,
                    definitions,
                    tokens,
                    check=check,
                    ledgers=_ledgers(provider),
                )
                row = {**conv.row_of(run, size), "printed_tokens": tokens.text(printed)}
                if provider == "anthropic":
                    row["at_floor"] = _at_floor(row)
                rows.append(row)
    flat = {(r["size"], r["provider"]): r for r in rows if r["design"] == "flat"}
    for row in rows:
        ref = flat.get((row["size"], row["provider"]))
        if ref is None:
            continue
        row["vs_flat"] = {m: round(v / ref["dollars"][m], 4) for m, v in row["dollars"].items()}
        if "at_floor" in row:
            row["vs_flat_at_floor"] = {
                m: round(v / ref["at_floor"][m], 4) for m, v in row["at_floor"].items()
            }
        row["vs_flat"]["tokens"] = round(
            (row["input_tokens"] + row["output_tokens"])
            / (ref["input_tokens"] + ref["output_tokens"]),
            4,
        )
    return rows


def goals(rows: Sequence[dict[str, Any]]) -> dict[str, bool]:
    """Code mode against flat + truncation, per size and model: within its bound?"""
    out = {}
    for row in rows:
        if row["design"] == "code":
            for model, ratio in row["vs_flat"].items():
                if model != "tokens":
                    out[f"{row['size']} / {model} <= {GOALS[row['size']]}x"] = (
                        ratio <= GOALS[row["size"]]
                    )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="+", default=list(SIZES), choices=SIZES)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--no-check", action="store_true", help="skip the SDK type checks")
    args = parser.parse_args(argv)
    rows = measure(args.sizes, check=not args.no_check)
    print(f"Dollars per conversation at list prices ({conv.PRICES_DATE}), caching included:")
    head = f"{'design':<48}{'size':<10}{'provider':<18}{'in':>9}{'out':>7}"
    print(head + "".join(f"{p.model:>26}" for p in conv.PRICES))
    for row in rows:
        cells = []
        for price in conv.PRICES:
            dollars = row["dollars"].get(price.model)
            ratio = row["vs_flat"].get(price.model)
            cells.append("" if dollars is None else f"${dollars:.4f} ({ratio:.2f}x)")
        refused = " (OpenAI refuses: >128 tools)" if row["over_openai_limit"] else ""
        print(
            f"{row['label'][:46] + refused:<48}{row['size']:<10}{row['provider']:<18}"
            f"{row['input_tokens']:>9,}{row['output_tokens']:>7,}"
            + "".join(f"{c:>26}" for c in cells)
        )
    met = goals(rows)
    for text, ok in met.items():
        print(f"goal {'PASS' if ok else 'FAIL'}: code at {text}")
    if args.json:
        prices = [
            {"model": p.model, "provider": p.provider, "input": p.input,
             "cache_write": p.cache_write, "cache_read": p.cache_read, "output": p.output,
             "min_tokens": p.rules.min_tokens, "source": p.source}
            for p in conv.PRICES
        ]  # fmt: skip
        write_results(
            args.json,
            "code_cost",
            {
                "encoding": conv.ENCODING,
                "prices": {"date": conv.PRICES_DATE, "models": prices},
                "floor": FLOOR,
                "rows": rows,
                "goals": met,
            },
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
