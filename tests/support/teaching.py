"""Hypothesis strategies for the learning property tests: what two principals teach, and the
requests ranked afterwards."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import strategies as st

WORDS = (
    "refund parcel charge invoice weather file read delete calendar meeting email send "
    "report money order broken never arrived deal contact search page fetch".split()
)
"""The words requests are made of: a small vocabulary, so that teachings often overlap."""


def requests(words: Sequence[str] = WORDS) -> st.SearchStrategy[str]:
    """One request: one to six of ``words``."""
    return st.lists(st.sampled_from(list(words)), min_size=1, max_size=6).map(" ".join)


def teachings(
    tools: Sequence[str], words: Sequence[str] = WORDS
) -> st.SearchStrategy[list[tuple[str, str, str, str]]]:
    """Up to 40 (request, tool, conversation, principal) pairs taught by two principals, ``ann``
    and ``bob``, over any number of conversations: one fewer than the default threshold."""
    return st.lists(
        st.tuples(
            requests(words),
            st.sampled_from(list(tools)),
            st.integers(0, 50).map(lambda i: f"conversation-{i}"),
            st.sampled_from(["ann", "bob"]),
        ),
        max_size=40,
    )
