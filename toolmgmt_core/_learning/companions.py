"""Tools that go together: which tools conversations used with the ones a search found.

A task often needs tools nobody searched for: the calculator after a price lookup,
``geocode_address`` before ``get_route_directions``. What a catalog learned from use already
says which tools each conversation reached (each learned request names its tool, the digest of
its conversation and of its principal); :class:`Companions` counts, for every pair of tools,
the different principals whose conversations used both, and suggests beside a search's hits the
tools most often used with them:

    score(c) = sum over hits h, at rank r (1 = best), with strength(c, h) >= MIN_STRENGTH:
               strength(c, h) / r
    strength(c, h) = principals who used c and h in one conversation
                     / sqrt(principals who used c * principals who used h)

The strength is the Ochiai coefficient rather than P(c | h) alone, which ranks first whatever
tool most conversations use, however little it has to do with ``h``. On LiveMCPBench's shared
half by folds it found no fewer of the tasks' tools than P(c | h) at any floor, and more at a
floor of 1; at floors 2 and 3 it finds all that any choice among the pairs past the floor could
(the bound in docs/performance.md, "Tools that go together").

The same rules as the rest of learning:

- a pair counts only once :attr:`min_principals` different principals used it (all the
  conversations of one principal count once), so that opening conversations is no way to put a
  tool beside another; below that floor the pair suggests nothing (cold start: nothing at all);
- nothing private is kept or shown: tool names, and the digests learning keeps already;
- a tool the caller may not see is never suggested (``where``), nor a destructive one or one
  that sends data out, unless the catalog's :class:`LearningOptions` let those learn;
- requests without a conversation (an import that named none) pair with nothing.

Counts are rebuilt from the learned requests when they change (their ``generation``), so what
another replica learned (absorbed through the shared store) counts here too.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from toolmgmt_core._learning.requests import LearnedRequest, LearnedRequests

__all__ = ["MIN_STRENGTH", "Companion", "Companions"]

MIN_STRENGTH = 0.5
"""How strongly two tools must go together for one to be suggested beside the other."""


@dataclass(frozen=True)
class Companion:
    """A tool suggested beside a search's hits: conversations often used it with them."""

    name: str
    """The suggested tool."""
    used_with: tuple[str, ...]
    """The hits it was used with, the strongest first."""
    principals: int
    """How many different principals used it with :attr:`used_with`'s first tool."""
    share: float
    """Of the principals who used that tool, the share who used this one with it."""
    score: float
    """Its score over all the hits (see the module docstring)."""

    @property
    def reason(self) -> str:
        """Why it was suggested, in one line."""
        return (
            f"used with {self.used_with[0]} by {self.principals} different principals "
            f"({self.share:.0%} of those who used {self.used_with[0]})"
        )


class Companions:
    """Which tools conversations used together, counted in principals (see the module
    docstring). Thread-safe; cheap to ask once built.

    Args:
        requests: what the catalog learned.
        min_principals: the floor: a pair counts once this many principals used it.
        unknown_conversation: the conversation digest of requests that named none (they pair
            with nothing).
    """

    def __init__(
        self,
        requests: LearnedRequests,
        *,
        min_principals: int,
        unknown_conversation: str,
        min_strength: float = MIN_STRENGTH,
    ) -> None:
        self.requests = requests
        self.min_principals = min_principals
        self.min_strength = min_strength
        self.unknown_conversation = unknown_conversation
        self._lock = threading.Lock()
        self._built = -1
        self._users: dict[str, int] = {}
        self._pairs: dict[str, dict[str, int]] = {}

    def _counts(self) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
        """(tool -> principals who used it, tool -> {companion -> principals}), for the
        requests as they are now."""
        generation = self.requests.generation
        if self._built == generation:
            return self._users, self._pairs
        with self._lock:
            if self._built != generation:
                self._users, self._pairs = _count(
                    self.requests.requests(), self.min_principals, self.unknown_conversation
                )
                self._built = generation
            return self._users, self._pairs

    def suggest(
        self,
        hits: Sequence[str],
        limit: int = 1,
        *,
        allowed: Callable[[str], bool] | None = None,
    ) -> list[Companion]:
        """Up to ``limit`` tools often used with ``hits`` (names, best first), best first;
        never one of the hits, nor a tool ``allowed`` refuses."""
        if limit < 1 or not hits:
            return []
        users, pairs = self._counts()
        taken = set(hits)
        scores: dict[str, float] = {}
        best: dict[str, tuple[float, str, int]] = {}
        for rank, hit in enumerate(hits, start=1):
            used = users.get(hit, 0)
            for other, together in pairs.get(hit, {}).items():
                if other in taken:
                    continue
                strength = together / math.sqrt(used * users[other])
                if strength < self.min_strength:
                    continue
                scores[other] = scores.get(other, 0.0) + strength / rank
                if strength / rank > best.get(other, (0.0, "", 0))[0]:
                    best[other] = (strength / rank, hit, together)
        out: list[Companion] = []
        for name in sorted(scores, key=lambda n: (-scores[n], n)):
            if allowed is not None and not allowed(name):
                continue
            _, hit, together = best[name]
            others = tuple(h for h in hits if h != hit and name in pairs.get(h, {}))
            out.append(
                Companion(
                    name,
                    (hit, *others),
                    together,
                    round(together / users[hit], 4),
                    round(scores[name], 4),
                )
            )
            if len(out) == limit:
                break
        return out


def _count(
    requests: Iterable[LearnedRequest], floor: int, unknown: str
) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    conversations: dict[str, tuple[str, set[str]]] = {}
    users: dict[str, set[str]] = {}
    for request in requests:
        tool, conversation, teacher = request.tool, request.conversation, request.teacher
        users.setdefault(tool, set()).add(teacher)
        if conversation and conversation != unknown:
            conversations.setdefault(conversation, (teacher, set()))[1].add(tool)
    together: dict[tuple[str, str], set[str]] = {}
    for teacher, tools in conversations.values():
        for a, b in combinations(sorted(tools), 2):
            together.setdefault((a, b), set()).add(teacher)
    pairs: dict[str, dict[str, int]] = {}
    for (a, b), principals in together.items():
        if len(principals) >= floor:
            pairs.setdefault(a, {})[b] = len(principals)
            pairs.setdefault(b, {})[a] = len(principals)
    return {tool: len(who) for tool, who in users.items()}, pairs
