"""The BM25 engine agrees with rank-bm25 (the reference scorer) and bm25s on the same terms."""

from __future__ import annotations

import random
import tracemalloc

import bm25s
import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from toolmgmt_core import Tool
from toolmgmt_core._search import BM25Index, tokenize, tool_terms
from toolmgmt_core._search.bm25 import BM25Matrix
from toolmgmt_core._search.index import FIELD_BITS, _schema_texts

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


def _catalog(n_tools: int, seed: int) -> list[Tool]:
    """Tools in every naming convention, with keywords, groups, nested and enum parameters."""
    rng = random.Random(seed)
    tools = []
    for i in range(n_tools):
        verb, noun, other = rng.sample(WORDS, 3)
        name = (f"{verb}_{noun}_{i}", f"{verb}{noun.title()}V{i}", f"app{i}.{verb}-{noun}")[i % 3]
        param = {"type": "string", "description": f"The {other} of the {noun}.", "enum": [noun]}
        tools.append(
            Tool(
                name=name,
                description=" ".join(rng.choices(WORDS, k=rng.randint(4, 20))) + " Ünïcode",
                parameters={
                    "type": "object",
                    "properties": {
                        f"{other}_id": param,
                        "filter": {"type": "object", "properties": {rng.choice(WORDS): param}},
                    },
                },
                keywords=tuple(rng.sample(WORDS, rng.randint(0, 2))),
                domain=rng.choice(["crm", "files", "travel"]),
                group=rng.choice(WORDS),
            )
        )
    return tools


def _postings(matrix: BM25Matrix) -> dict[str, tuple[list[int], list[float], list[int] | None]]:
    out = {}
    for term, row in matrix.vocab.items():
        span = slice(matrix.indptr[row], matrix.indptr[row + 1])
        fields = None if matrix.fields is None else matrix.fields[span].tolist()
        out[term] = (matrix.indices[span].tolist(), matrix.data[span].tolist(), fields)
    return out


def test_the_index_holds_the_scores_of_its_weighted_field_terms_exactly() -> None:
    """The field-by-field build (rows from the start, one sort) gives, term by term, the very
    scores of indexing each tool's weighted bag of terms by repetition, and each posting the
    union of the fields its term occurs in: rankings cannot differ."""
    tools = _catalog(300, seed=4)
    got = _postings(BM25Index.build(tools)._matrix)
    reference = _postings(BM25Matrix.build([tool_terms(t) for t in tools]))
    assert got.keys() == reference.keys()
    for term, (docs, scores, fields) in got.items():
        assert (docs, scores) == reference[term][:2], term
        assert fields is not None
        for doc, bits in zip(docs, fields, strict=True):
            tool = tools[doc]
            params: list[str] = []
            _schema_texts(tool.parameters, params)
            texts = {
                "name": tool.name,
                "keywords": " ".join(tool.keywords),
                "domain": f"{tool.domain} {tool.group}",
                "description": tool.description,
                "parameters": " ".join(params),
            }
            expected = sum(FIELD_BITS[f] for f, text in texts.items() if term in tokenize(text))
            assert bits == expected, (term, tool.name)


def test_indexing_keeps_a_few_bytes_a_posting() -> None:
    """Building holds term rows as 4-byte ints and sorts one key array in place: about 70
    bytes of peak memory a posting (it was 190, with a string reference, an int64 key, its sort
    index and an inverse a term occurrence), so 100,000 tools index within 1.5x bm25s's
    memory (``bench/search_speed.py``)."""
    tools = _catalog(3000, seed=5)
    BM25Index.build(tools)  # the words are analysed and cached once a process: not measured
    tracemalloc.start()
    try:
        postings = len(BM25Index.build(tools)._matrix.indices)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak / postings < 120, f"{peak / postings:.0f} bytes a posting"
