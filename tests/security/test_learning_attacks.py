"""Learning from use, attacked (issue 35): poisoning with free conversations, secrets kept in
clear, a membership oracle, erasure by flooding. Each test is a finding, and fails on the code
that counted conversations."""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import teaching

from toolmgmt_core import Tool, ToolCatalog
from toolmgmt_core._learning.teaching import LearningOptions
from toolmgmt_demo import demo_tools

TOOLS = demo_tools()
NAMES = [t.name for t in TOOLS]


def _catalog(**options: object) -> ToolCatalog:
    return ToolCatalog(TOOLS, learning=LearningOptions(**options))  # type: ignore[arg-type]


def _names(catalog: ToolCatalog, query: str, limit: int = 5) -> list[str]:
    return [h.name for h in catalog.search(query, limit)]


def test_finding_1_two_conversations_do_not_poison_a_ranking() -> None:
    catalog = _catalog()
    victim = "read the file report.txt"
    before = catalog.search(victim, 10)
    for conversation in ("c1", "c2"):
        feedback = [
            (
                "read the file report.txt web search fetch page",
                "web_search_fetch_page",
                conversation,
            )
        ]
        catalog.learn(feedback, source="use")
    assert catalog.search(victim, 10) == before
    assert all(not e.learned_terms for e in catalog.explain_search(victim, 10))


def test_finding_1_an_import_cannot_push_an_unrelated_destructive_tool_to_the_top() -> None:
    catalog = _catalog()
    victim = "I need to get my money back for a broken order"
    before = catalog.search(victim, 10)
    pairs = [(victim, "files_delete_file", f"c{i}") for i in range(5)]
    report = catalog.learn(pairs)
    assert not report.learned and "destructive" in report.ignored[0][2]
    assert catalog.search(victim, 10) == before
    # opted in, it learns, yet a tool the request does not reach is never lifted into the top
    opted = _catalog(destructive=True)
    opted.learn(pairs)
    assert opted.learned_terms("files_delete_file")
    assert "files_delete_file" not in _names(opted, victim)


def test_finding_1_evidence_only_reorders_tools_the_request_reaches() -> None:
    catalog = _catalog()
    victim = "my parcel never arrived"
    assert "crm_list_deals" not in _names(catalog, victim, 30)
    catalog.learn([(victim, "crm_list_deals", f"user-{i}") for i in range(10)])
    assert catalog.learned_terms("crm_list_deals")  # learned, by ten principals
    assert "crm_list_deals" not in _names(catalog, victim)


SECRETS = [
    "john smith at 221b baker street london",
    "sk-live-4f9a8b7c6d5e4f3a2b1c",
    "ghp_abcdEFGH12345678ijkl",
    "my password is swordfish",
    "cvv 737",
    "Jane Doe GB29 NWBK 6016 1331 9268 19",
]
PRIVATE = ["john", "smith", "221b", "baker", "4f9a8b7c6d5e4f3a2b1c", "abcdefgh12345678ijkl"]
PRIVATE += ["swordfish", "737", "jane", "doe", "gb29", "nwbk", "6016"]


def test_finding_2_no_secret_or_personal_data_is_kept_in_clear() -> None:
    catalog = _catalog()
    pairs = [(f"refund for {s}", "payments_get_charge", f"c{i}") for i, s in enumerate(SECRETS)]
    catalog.learn(pairs)
    held = catalog._learning.requests.requests()  # type: ignore[union-attr]
    # a digest (``#`` and hex of a random key) may spell "737" by chance: only clear words count
    kept = " ".join(w for r in held for w in r.text.split() if not w.startswith("#")).lower()
    assert held and not [word for word in PRIVATE if word in kept]
    assert not [w for w in PRIVATE if w in " ".join(r.text for r in catalog.learned()).lower()]


def test_finding_3_teaching_a_term_once_reveals_nothing_a_victim_typed() -> None:
    catalog = _catalog()
    catalog.learn([("refund smith baker", "payments_get_charge", "victim")])
    before = catalog.explain_search("smith", 10)
    catalog.learn([("refund smith", "payments_get_charge", "attacker")])
    after = catalog.explain_search("smith", 10)
    assert after == before and all(not e.learned_terms for e in after)
    assert catalog.learned_terms("payments_get_charge") == {}
    assert all(r.text == "" for r in catalog.learned("payments_get_charge"))


def test_finding_4_one_principal_flooding_cannot_erase_what_users_taught() -> None:
    catalog = _catalog()
    tool, request = "payments_list_refunds", "my parcel never arrived, sort out the charge"
    users = [
        (f"the parcel never arrived {w}", tool, f"user-{w}") for w in string.ascii_lowercase[:10]
    ]
    catalog.learn(users)
    assert _names(catalog, request)[0] == tool
    flood = [
        (f"charge {w} {v}", tool, f"attacker-{w}{v}", "mallory")
        for w in string.ascii_lowercase[:16]
        for v in ("alpha", "bravo")
    ]
    catalog.learn(flood, source="use")
    held = catalog._learning.requests.requests(tool)  # type: ignore[union-attr]
    assert sum(r.teacher != held[-1].teacher for r in held) >= 10
    assert _names(catalog, request)[0] == tool


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=teaching.teachings(NAMES), requests=st.lists(teaching.requests(), max_size=4))
def test_fewer_principals_than_the_threshold_change_no_ranking(
    pairs: list[tuple[str, str, str, str]], requests: list[str]
) -> None:
    plain = ToolCatalog(TOOLS)
    learning = _catalog(destructive=True)  # min_principals 3: two principals, any conversations
    learning.learn(pairs, source="use")
    for request in requests:
        assert learning.search(request, 10) == plain.search(request, 10)


# Issue 41: evidence per tool, and no lift for tools that send data out.

BILLING = [
    Tool(
        name=name,
        description="Get an invoice with its lines, total and due date from the billing system.",
        parameters={"type": "object", "properties": {"invoice_id": {"type": "string"}}},
    )
    for name in ("billing_get_invoice", "billing_get_invoice2", "billing_list_payments")
]


def test_issue_41_a_look_alike_name_borrows_no_other_tools_evidence() -> None:
    catalog = ToolCatalog(BILLING, learning=LearningOptions())
    victim = "pull up the statement for my last bill"
    before = _names(catalog, victim)
    honest = [(victim, "billing_get_invoice", f"c-{p}", p) for p in ("alice", "bob")]
    catalog.learn(honest, source="use")
    catalog.learn([(victim, "billing_get_invoice2", "c-mallory", "mallory")], source="use")
    assert catalog.learned_terms("billing_get_invoice2") == {}
    assert catalog.learned_terms("billing_get_invoice") == {}  # two principals: not yet
    assert _names(catalog, victim) == before


OUTBOUND = ["files_create_share_link", "email_create_filter", "files_share_file"]
OUTBOUND += ["calendar_share_calendar"]


@pytest.mark.parametrize("tool", OUTBOUND)
def test_issue_41_a_tool_that_sends_data_out_gains_nothing_from_learning(tool: str) -> None:
    catalog = _catalog()
    victim = "read the file report.txt"
    before = catalog.search(victim, 10)
    pairs = [(victim, tool, f"c-{p}", p) for p in ("p1", "p2", "p3")]
    report = catalog.learn(pairs, source="use")
    assert not report.learned and "sends data out" in report.ignored[0][2]
    assert catalog.search(victim, 10) == before
    opted = _catalog(outbound=True)  # opted in, it learns as any other tool
    opted.learn(pairs, source="use")
    assert opted.learned_terms(tool)
