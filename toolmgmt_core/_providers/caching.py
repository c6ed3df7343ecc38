"""What a conversation's requests cost once the provider's prompt cache is counted.

A request is seen as the provider renders it: a sequence of blocks (:class:`Segment`), each with
the tokens it costs and an identity, in the provider's order (Anthropic: tools, then system,
then messages; OpenAI: tools, then instructions, then input items). A :class:`CacheLedger`
replays a conversation's requests in order under one provider's :class:`CacheRules` and splits
each request's input tokens into three classes (:class:`RequestBill`):

- **read**: the longest cached prefix the request may use, billed at ``rules.read`` times the
  base input price;
- **written**: tokens stored in the cache by this request, billed at ``rules.write``;
- **uncached**: the rest, at the base price.

Two kinds of rules:

- ``breakpoints`` (Anthropic; OpenAI from the GPT-5.6 family): a prefix is cached only where a
  request puts a breakpoint (``cache_control`` / ``prompt_cache_breakpoint``, or the one the
  provider adds itself on the last block). A later request reads the longest cached prefix that
  ends at a block boundary it shares; Anthropic looks for one only within ``lookback`` blocks
  before each of the request's breakpoints. A request writes the tokens from the end of what it
  read up to its last breakpoint (when that prefix is at least ``min_tokens``); what follows its
  last breakpoint is uncached. Since the prefix is hashed block by block, a change anywhere
  (a tool added to the list) invalidates every cached prefix that runs past it.
- ``prefix`` (OpenAI before the GPT-5.6 family): every request is cached as it is, for free; a
  later request reads its longest common prefix with an earlier one, in ``increment``-token
  steps once it reaches ``min_tokens``.

Entries live ``ttl`` seconds after they were last written or read. Blocks are the unit of
matching, so a prefix that diverges inside a block counts up to the block before it.

Usage::

    ledger = CacheLedger(ANTHROPIC)
    first = ledger.bill([Segment("tools", 3000), Segment("user-1", 40, breakpoint=True)], at=0)
    first.written, first.read            # (3040, 0)
    second = ledger.bill(
        [Segment("tools", 3000), Segment("user-1", 40), Segment("reply-1", 900, breakpoint=True)],
        at=10,
    )
    second.read, second.written          # (3040, 900)
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

__all__ = [
    "ANTHROPIC",
    "OPENAI_BREAKPOINTS",
    "OPENAI_PREFIX",
    "CacheLedger",
    "CacheRules",
    "RequestBill",
    "Segment",
]


@dataclass(frozen=True)
class Segment:
    """One block of a request as the provider renders it (a tool, the system prompt, a
    message's content block), in request order."""

    key: str
    """The block's identity: equal keys mean equal content (a hash of its JSON serves)."""
    tokens: int
    """What the block costs in input tokens (0 for a block the provider does not render)."""
    breakpoint: bool = False
    """A cache breakpoint right after this block (``cache_control`` on it)."""


@dataclass(frozen=True)
class CacheRules:
    """How one provider caches prompt prefixes, and what a cached token costs.

    Prices are multiples of the model's base input price: Anthropic's 5-minute writes cost
    1.25x and reads 0.1x (a model may differ: give it its own with :meth:`priced`).
    """

    name: str
    """A label (``anthropic``...)."""
    kind: Literal["breakpoints", "prefix"]
    """``breakpoints``: prefixes cached only at breakpoints; ``prefix``: every request's prefix
    cached, matched by longest common prefix."""
    write: float = 1.25
    """Price of a token written to the cache, over the base input price."""
    read: float = 0.1
    """Price of a token read from the cache, over the base input price."""
    min_tokens: int = 1024
    """Shortest prefix that is cached."""
    ttl: float = 300.0
    """Seconds an entry lives after it was last written or read."""
    max_breakpoints: int = 4
    """Most breakpoints one request may write."""
    strict_breakpoints: bool = True
    """More than ``max_breakpoints`` marked is an error (Anthropic); otherwise only the latest
    are written (OpenAI)."""
    lookback: int | None = 20
    """Blocks before each of the request's breakpoints where a cached prefix is looked for
    (Anthropic: 20); None: any cached prefix of the request counts."""
    implicit: bool = False
    """The provider adds a breakpoint of its own on the request's last block (OpenAI's implicit
    mode); it takes one of the ``max_breakpoints``."""
    increment: int = 0
    """``prefix`` rules: a hit counts in steps of this many tokens past ``min_tokens``."""

    def __post_init__(self) -> None:
        if self.kind not in ("breakpoints", "prefix"):
            raise ValueError(f"kind must be 'breakpoints' or 'prefix', got {self.kind!r}.")
        if self.min_tokens < 0 or self.ttl <= 0 or self.max_breakpoints < 1:
            raise ValueError(
                "min_tokens must be >= 0, ttl > 0 and max_breakpoints >= 1; got "
                f"{self.min_tokens}, {self.ttl}, {self.max_breakpoints}."
            )
        if self.increment < 0 or (self.lookback is not None and self.lookback < 0):
            raise ValueError("increment and lookback must be >= 0.")

    def priced(self, *, write: float, read: float, min_tokens: int | None = None) -> CacheRules:
        """These rules with a model's own write and read prices (and minimum, when given)."""
        return replace(
            self,
            write=write,
            read=read,
            min_tokens=self.min_tokens if min_tokens is None else min_tokens,
        )


ANTHROPIC = CacheRules("anthropic", "breakpoints", write=1.25, read=0.1, min_tokens=1024)
"""Anthropic's prompt caching with 5-minute entries: explicit ``cache_control`` breakpoints (at
most 4; the top-level ``cache_control`` of automatic caching puts one on the last block), a hit
looked for within 20 blocks before each breakpoint, writes at 1.25x and reads at 0.1x (the
minimum prefix and the prices vary by model: see :meth:`CacheRules.priced`)."""

OPENAI_BREAKPOINTS = CacheRules(
    "openai",
    "breakpoints",
    write=1.25,
    read=0.1,
    min_tokens=1024,
    ttl=1800.0,
    strict_breakpoints=False,
    lookback=None,
    implicit=True,
)
"""OpenAI's prompt caching from the GPT-5.6 family: an implicit breakpoint on the latest
message plus up to three explicit ``prompt_cache_breakpoint``\\ s, matched exactly at earlier
breakpoints without a lookback limit, writes at 1.25x, entries kept 30 minutes by default."""

OPENAI_PREFIX = CacheRules(
    "openai-prefix",
    "prefix",
    write=0.0,
    read=0.1,
    min_tokens=1024,
    ttl=300.0,
    lookback=None,
    increment=128,
)
"""OpenAI's automatic prompt caching before the GPT-5.6 family: the longest common prefix with
an earlier request, from 1,024 tokens in 128-token steps, no charge for writing, in-memory
entries kept about 5 minutes after their last use."""


@dataclass(frozen=True)
class RequestBill:
    """One request's input tokens by cache class."""

    tokens: int
    """Every input token of the request."""
    read: int
    """Tokens read from the cache."""
    written: int
    """Tokens written to the cache."""
    write_price: float = 1.25
    """Price of a written token, over the base input price."""
    read_price: float = 0.1
    """Price of a read token, over the base input price."""

    @property
    def uncached(self) -> int:
        """Tokens billed at the base input price."""
        return self.tokens - self.read - self.written

    @property
    def billed(self) -> float:
        """What the request's input costs, in base-price tokens."""
        return self.uncached + self.written * self.write_price + self.read * self.read_price

    def cost(self, input_price: float) -> float:
        """What the request's input costs at ``input_price`` per token."""
        return self.billed * input_price


def _chain(segments: Sequence[Segment]) -> tuple[list[str], list[int]]:
    """The hash of each prefix (through block i) and its tokens."""
    hashes: list[str] = []
    totals: list[int] = []
    digest = hashlib.blake2b(digest_size=16)
    total = 0
    for segment in segments:
        if segment.tokens < 0:
            raise ValueError(f"a segment has negative tokens: {segment!r}")
        digest.update(segment.key.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
        total += segment.tokens
        hashes.append(digest.copy().hexdigest())
        totals.append(total)
    return hashes, totals


@dataclass
class CacheLedger:
    """A provider's prompt cache over a sequence of requests (one conversation, or several
    sharing a cache), billing each request as it comes.

    Usage::

        ledger = CacheLedger(ANTHROPIC)
        for at, segments in requests:
            bill = ledger.bill(segments, at=at)
    """

    rules: CacheRules
    """The provider's caching rules."""
    _entries: dict[str, float] = field(default_factory=dict, repr=False)
    """Prefix hash -> when it expires."""
    _last: float = field(default=float("-inf"), repr=False)

    def bill(self, segments: Sequence[Segment], *, at: float) -> RequestBill:
        """Bill one request sent at time ``at`` (seconds; requests come in time order).

        Raises:
            ValueError: requests out of time order, a negative token count, or more breakpoints
                than the rules allow (Anthropic refuses the request).
        """
        if at < self._last:
            raise ValueError(f"requests must come in time order: {at} after {self._last}.")
        self._last = at
        self._entries = {h: expiry for h, expiry in self._entries.items() if expiry >= at}
        hashes, totals = _chain(segments)
        if not segments:
            return RequestBill(0, 0, 0, self.rules.write, self.rules.read)
        if self.rules.kind == "prefix":
            read, written = self._bill_prefix(hashes, totals, at)
        else:
            read, written = self._bill_breakpoints(segments, hashes, totals, at)
        return RequestBill(totals[-1], read, written, self.rules.write, self.rules.read)

    def _bill_prefix(self, hashes: list[str], totals: list[int], at: float) -> tuple[int, int]:
        rules = self.rules
        common = 0
        for h, total in zip(hashes, totals, strict=True):
            if h in self._entries:
                common = total
        read = 0
        if common >= rules.min_tokens:
            step = rules.increment or 1
            read = rules.min_tokens + (common - rules.min_tokens) // step * step
        if totals[-1] >= rules.min_tokens:
            for h in hashes:
                self._entries[h] = at + rules.ttl
        return read, 0

    def _breakpoints(self, segments: Sequence[Segment]) -> list[int]:
        rules = self.rules
        marked = [i for i, s in enumerate(segments) if s.breakpoint]
        room = rules.max_breakpoints - (1 if rules.implicit else 0)
        if len(marked) > room:
            if rules.strict_breakpoints:
                raise ValueError(
                    f"{len(marked)} cache breakpoints in one request; {rules.name} accepts at "
                    f"most {room}."
                )
            marked = marked[-room:] if room else []
        if rules.implicit and (not marked or marked[-1] != len(segments) - 1):
            marked.append(len(segments) - 1)
        return marked

    def _bill_breakpoints(
        self, segments: Sequence[Segment], hashes: list[str], totals: list[int], at: float
    ) -> tuple[int, int]:
        rules = self.rules
        points = self._breakpoints(segments)
        if not points:
            return 0, 0
        hit = -1
        for i, h in enumerate(hashes):
            if h not in self._entries:
                continue
            if rules.lookback is None or any(p - rules.lookback <= i <= p for p in points):
                hit = i
        read = totals[hit] if hit >= 0 else 0
        if hit >= 0:
            self._entries[hashes[hit]] = at + rules.ttl
        end = read
        for p in points:
            if totals[p] < rules.min_tokens:
                continue
            self._entries[hashes[p]] = at + rules.ttl
            end = max(end, totals[p])
        return read, end - read
