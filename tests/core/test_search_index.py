"""The BM25 engine agrees with rank-bm25 (the reference scorer) and bm25s on the same terms."""

from __future__ import annotations

import random

import bm25s
import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from toolmgmt_core import Tool
from toolmgmt_core.search import BM25Index, tokenize, tool_terms
from toolmgmt_core.search.bm25 import BM25Matrix

WORDS = (
    "send email invoice customer ticket flight hotel weather forecast stock price calendar "
    "event meeting file folder upload download report chart metric alert refund payment order "
    "product shipment route map song playlist recipe note comment label branch commit issue"
).split()


def _corpus(n_docs: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    # Zipf-like: a few words in most documents, most words rare, lengths 3..40
    weights = [1 / (rank + 1) for rank in range(len(WORDS))]
    return [rng.choices(WORDS, weights, k=rng.randint(3, 40)) for _ in range(n_docs)]


def _queries(seed: int, count: int = 60) -> list[list[str]]:
    rng = random.Random(seed)
    return [rng.sample(WORDS, rng.randint(1, 5)) for _ in range(count)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scores_equal_rank_bm25_okapi(seed: int) -> None:
    corpus = _corpus(300, seed)
    reference = BM25Okapi(corpus, k1=1.5, b=0.75, epsilon=0.25)
    ours = BM25Matrix.build(corpus, k1=1.5, b=0.75, idf="robertson", epsilon=0.25)
    for query in _queries(seed):
        expected = reference.get_scores(query)
        got = ours.scores(ours.term_ids(query))
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        # the rankings agree too (ties broken the same way: catalog order)
        assert list(np.argsort(-got, kind="stable")[:10]) == list(
            np.argsort(-np.round(expected, 5), kind="stable")[:10]
        )


@pytest.mark.parametrize("seed", [4, 5])
def test_scores_equal_bm25s_lucene(seed: int) -> None:
    corpus = _corpus(300, seed)
    reference = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    reference.index(corpus, show_progress=False)
    ours = BM25Matrix.build(corpus, k1=1.2, b=0.75, idf="lucene")
    for query in _queries(seed):
        expected = reference.get_scores(query) * (1.2 + 1)  # bm25s leaves out (k1 + 1)
        np.testing.assert_allclose(ours.scores(ours.term_ids(query)), expected, rtol=1e-4)


def test_index_rankings_agree_with_rank_bm25_on_tool_documents() -> None:
    """The whole path (fields, weights, tokenizer) scored by rank-bm25 gives our top hits."""
    rng = random.Random(9)
    tools = [
        Tool(
            name=f"{rng.choice(WORDS)}_{rng.choice(WORDS)}_{i}",
            description=" ".join(rng.choices(WORDS, k=rng.randint(4, 15))),
            parameters={
                "type": "object",
                "properties": {
                    rng.choice(WORDS): {"type": "string", "description": rng.choice(WORDS)}
                },
            },
        )
        for i in range(200)
    ]
    index = BM25Index.build(tools, k1=1.5, idf="robertson")
    reference = BM25Okapi([tool_terms(t) for t in tools], k1=1.5, b=0.75)
    for query in _queries(9, 40):
        text = " ".join(query)
        got = index.scores(text)
        expected = reference.get_scores(tokenize(text))  # the same terms: stemmed
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        top = [i for i, _ in index.top(got.copy(), 5)]
        assert top == [int(i) for i in np.argsort(-np.round(expected, 5), kind="stable")[:5]]


def test_top_masks_ties_and_limits() -> None:
    scores = np.array([0.0, 2.0, 5.0, 2.0, 1.0, 5.0])
    assert BM25Index.top(scores.copy(), 3) == [(2, 5.0), (5, 5.0), (1, 2.0)]
    mask = np.array([True, True, False, True, True, True])
    assert BM25Index.top(scores.copy(), 10, mask) == [(5, 5.0), (1, 2.0), (3, 2.0), (4, 1.0)]
    assert BM25Index.top(np.zeros(4), 3) == []


def test_empty_and_degenerate_corpora() -> None:
    empty = BM25Matrix.build([])
    assert empty.scores(empty.term_ids(["x"])).shape == (0,)
    blank = BM25Matrix.build([[], []])
    assert blank.scores(blank.term_ids(["x"])).tolist() == [0.0, 0.0]
    single = BM25Matrix.build([["a", "a", "b"]])
    assert single.scores(single.term_ids(["a", "b"]))[0] > 0
    with pytest.raises(ValueError, match="lucene' or 'robertson"):
        BM25Matrix.build([["a"]], idf="okapi")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="0 <= b <= 1"):
        BM25Matrix.build([["a"]], b=2)
