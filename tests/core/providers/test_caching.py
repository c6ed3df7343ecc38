"""The prompt-cache ledger against hand-computed bills (Anthropic and OpenAI rules)."""

from __future__ import annotations

import pytest

from toolmgmt_core._providers.caching import (
    ANTHROPIC,
    OPENAI_BREAKPOINTS,
    OPENAI_PREFIX,
    CacheLedger,
    CacheRules,
    RequestBill,
    Segment,
)


def seg(key: str, tokens: int, bp: bool = False) -> Segment:
    return Segment(key, tokens, breakpoint=bp)


TOOLS = seg("tools", 2000)
SYSTEM = seg("system", 100)
USER = seg("user", 50)


def test_a_first_request_writes_up_to_its_breakpoint_and_no_further() -> None:
    ledger = CacheLedger(ANTHROPIC)
    bill = ledger.bill([seg("tools", 2000, bp=True), SYSTEM, USER], at=0)
    assert (bill.tokens, bill.read, bill.written, bill.uncached) == (2150, 0, 2000, 150)
    assert bill.billed == pytest.approx(150 + 2000 * 1.25)  # 2650


def test_the_next_request_reads_the_cached_prefix_and_writes_what_is_new() -> None:
    ledger = CacheLedger(ANTHROPIC)
    ledger.bill([seg("tools", 2000, bp=True), SYSTEM, USER], at=0)
    bill = ledger.bill([TOOLS, SYSTEM, USER, seg("call", 300), seg("result", 500, bp=True)], at=5)
    # read the 2,000 tool tokens, write 100 + 50 + 300 + 500 = 950
    assert (bill.read, bill.written, bill.uncached) == (2000, 950, 0)
    assert bill.billed == pytest.approx(950 * 1.25 + 2000 * 0.1)  # 1387.5


def test_automatic_caching_reads_the_whole_previous_request() -> None:
    ledger = CacheLedger(ANTHROPIC)
    ledger.bill([TOOLS, SYSTEM, seg("user", 50, bp=True)], at=0)  # writes 2,150
    bill = ledger.bill([TOOLS, SYSTEM, USER, seg("call", 300), seg("result", 500, bp=True)], at=5)
    assert (bill.read, bill.written) == (2150, 800)


def test_a_changed_tool_list_invalidates_everything_after_it() -> None:
    ledger = CacheLedger(ANTHROPIC)
    ledger.bill([TOOLS, SYSTEM, seg("user", 50, bp=True)], at=0)
    grown = seg("tools+1", 2150)  # one tool appended to the list
    bill = ledger.bill([grown, SYSTEM, USER, seg("call", 300, bp=True)], at=5)
    assert (bill.read, bill.written) == (0, 2600)
    assert bill.billed == pytest.approx(2600 * 1.25)


def test_a_hit_is_looked_for_only_20_blocks_before_a_breakpoint() -> None:
    small = [seg(f"b{i}", 10) for i in range(24)]
    ledger = CacheLedger(ANTHROPIC)
    ledger.bill([seg("doc", 2000, bp=True)], at=0)
    far = ledger.bill([seg("doc", 2000), *small, seg("last", 10, bp=True)], at=1)
    assert (far.read, far.written) == (0, 2250)  # the entry is 25 blocks back
    ledger = CacheLedger(ANTHROPIC)
    ledger.bill([seg("doc", 2000, bp=True)], at=0)
    marked = ledger.bill([seg("doc", 2000, bp=True), *small, seg("last", 10, bp=True)], at=1)
    assert (marked.read, marked.written) == (2000, 250)


def test_a_prefix_under_the_minimum_is_not_cached() -> None:
    ledger = CacheLedger(ANTHROPIC.priced(write=1.25, read=0.1, min_tokens=4096))
    first = ledger.bill([seg("tools", 3000), seg("user", 50, bp=True)], at=0)
    assert (first.read, first.written, first.uncached) == (0, 0, 3050)
    second = ledger.bill([seg("tools", 3000), USER, seg("result", 2000, bp=True)], at=1)
    assert (second.read, second.written) == (0, 5050)


def test_an_entry_lives_five_minutes_after_its_last_use() -> None:
    ledger = CacheLedger(ANTHROPIC)
    request = [TOOLS, seg("user", 50, bp=True)]
    assert ledger.bill(request, at=0).written == 2050
    assert ledger.bill(request, at=299).read == 2050  # read, and refreshed until 599
    assert ledger.bill(request, at=598).read == 2050
    late = ledger.bill(request, at=598 + 301)
    assert (late.read, late.written) == (0, 2050)


def test_anthropic_refuses_a_fifth_breakpoint() -> None:
    ledger = CacheLedger(ANTHROPIC)
    with pytest.raises(ValueError, match="at most 4"):
        ledger.bill([seg(str(i), 500, bp=True) for i in range(5)], at=0)


def test_openai_writes_only_its_latest_breakpoints_plus_the_implicit_one() -> None:
    ledger = CacheLedger(OPENAI_BREAKPOINTS)
    marked = [seg(str(i), 500, bp=True) for i in range(5)] + [seg("user", 100)]
    bill = ledger.bill(marked, at=0)
    assert bill.written == 2600  # everything up to the implicit breakpoint on the last block
    # the first two explicit breakpoints were dropped: a request stopping after block 1 misses
    assert ledger.bill([seg("0", 500), seg("1", 500), seg("x", 100)], at=1).read == 0
    # block 2 kept its entry (one of the latest three explicit ones)
    assert ledger.bill([seg("0", 500), seg("1", 500), seg("2", 500), seg("x", 100)], at=2).read == (
        1500
    )


def test_openai_breakpoints_match_any_earlier_breakpoint_without_lookback() -> None:
    ledger = CacheLedger(OPENAI_BREAKPOINTS.priced(write=1.25, read=0.05))
    first = ledger.bill([seg("tools", 1500), seg("instructions", 100), USER], at=0)
    assert (first.read, first.written) == (0, 1650)  # implicit breakpoint on the last block
    many = [seg(f"b{i}", 10) for i in range(40)]
    second = ledger.bill([seg("tools", 1500), seg("instructions", 100), USER, *many], at=60)
    assert (second.read, second.written) == (1650, 400)
    assert second.billed == pytest.approx(400 * 1.25 + 1650 * 0.05)
    # 30-minute entries: still there 29 minutes after the last use, gone after 31
    assert ledger.bill([seg("tools", 1500), seg("instructions", 100), USER], at=60 + 29 * 60).read
    gone = CacheLedger(OPENAI_BREAKPOINTS)
    gone.bill([seg("tools", 1500), USER], at=0)
    assert gone.bill([seg("tools", 1500), USER], at=31 * 60).read == 0


def test_openai_prefix_caching_reads_the_common_prefix_in_128_token_steps() -> None:
    ledger = CacheLedger(OPENAI_PREFIX)
    first = ledger.bill([seg("a", 1000), seg("b", 1000), seg("c", 1000)], at=0)
    assert (first.read, first.written, first.uncached) == (0, 0, 3000)
    assert first.billed == 3000  # no charge for writing
    second = ledger.bill([seg("a", 1000), seg("b", 1000), seg("d", 700)], at=10)
    # common prefix 2,000 tokens: 1,024 + 7 x 128 = 1,920 read
    assert (second.read, second.uncached) == (1920, 780)
    assert second.billed == pytest.approx(780 + 1920 * 0.1)


def test_openai_prefix_caching_needs_1024_common_tokens() -> None:
    ledger = CacheLedger(OPENAI_PREFIX)
    ledger.bill([seg("a", 1000), seg("b", 2000)], at=0)
    assert ledger.bill([seg("a", 1000), seg("c", 2000)], at=1).read == 0  # 1,000 in common
    short = CacheLedger(OPENAI_PREFIX)
    short.bill([seg("a", 600)], at=0)  # a prompt under 1,024 tokens is not cached at all
    assert short.bill([seg("a", 600), seg("b", 900)], at=1).read == 0


def test_a_second_conversation_reads_tools_and_system_only_behind_a_breakpoint() -> None:
    """A fleet of agents shares a cache: a breakpoint after the system prompt lets the next
    conversation start from the cached tools and system prompt."""
    for system_breakpoint, expected in ((False, 0), (True, 2100)):
        ledger = CacheLedger(ANTHROPIC)
        system = seg("system", 100, bp=system_breakpoint)
        ledger.bill([TOOLS, system, seg("user-a", 50, bp=True)], at=0)
        other = ledger.bill([TOOLS, system, seg("user-b", 60, bp=True)], at=30)
        assert other.read == expected


def test_requests_come_in_time_order_and_token_counts_are_not_negative() -> None:
    ledger = CacheLedger(ANTHROPIC)
    ledger.bill([seg("a", 10)], at=5)
    with pytest.raises(ValueError, match="time order"):
        ledger.bill([seg("a", 10)], at=4)
    with pytest.raises(ValueError, match="negative"):
        ledger.bill([seg("a", -1)], at=6)


def test_rules_are_checked_and_priced_per_model() -> None:
    with pytest.raises(ValueError, match="kind"):
        CacheRules("x", "lru")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ttl"):
        CacheRules("x", "prefix", ttl=0)
    opus = ANTHROPIC.priced(write=1.25, read=0.05, min_tokens=4096)
    assert (opus.write, opus.read, opus.min_tokens, opus.lookback) == (1.25, 0.05, 4096, 20)
    bill = RequestBill(1000, read=600, written=300, write_price=1.25, read_price=0.05)
    assert bill.uncached == 100
    assert bill.cost(2e-6) == pytest.approx((100 + 375 + 30) * 2e-6)
    assert CacheLedger(ANTHROPIC).bill([], at=0).tokens == 0
