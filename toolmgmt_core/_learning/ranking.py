"""The learned field as search reads it: :class:`LearnedIndex` (each tool's learned terms,
scored like a BM25 field), :class:`LearnedWeights` (what it weighs) and :class:`LearnedSearch`
(what a :class:`~toolmgmt_core._search.engine.SearchEngine` adds to its keyword and hybrid
scores, with the field and the learned vectors kept between searches: the engine's
:class:`~toolmgmt_core._search.boost.LearnedBoost`).

What is learned, and within which bounds, is :mod:`~toolmgmt_core._learning.requests`'s. A tool's
learned score depends on its own learned terms; other tools' learned terms reach it only
through the IDF (a word many tools learned says less), which can only lower it. Scores are
added only within the search's mask, so learned text never surfaces a tool the search leaves
out, and only to tools the request already reaches by their own text (:class:`BaseRelevance`: a
keyword score of at least :attr:`LearnedWeights.floor` times the best one, or with an embedder
a cosine above the fusion floor by at least :attr:`LearnedWeights.dense_floor` of the best
one's margin): learning reorders what is relevant, it cannot lift a tool from nothing into the
top results.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from toolmgmt_core._embeddings import VectorCache, embed_with_cache, normalize_rows
from toolmgmt_core._learning.requests import LearnedRequests
from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._search.hybrid import VectorIndex, matvec
from toolmgmt_core._search.index import BM25Index
from toolmgmt_core._search.request import read_request, request_terms

__all__ = [
    "MAX_LEARNED_SHARE",
    "MIN_COMMON",
    "BaseRelevance",
    "LearnedIndex",
    "LearnedSearch",
    "LearnedWeights",
    "learned_text",
]

MAX_LEARNED_SHARE = 0.15
"""A learned term that more than this share of the tools hold or learned (and more than
:data:`MIN_COMMON` of them) moves no tool: a word one tool in seven has says little about any
of them, and touching that many tools on every search that says it would cost time for
nothing."""

MIN_COMMON = 20
"""However small the catalog, a term held or learned by this many tools or fewer is never too
common to learn."""


def learned_text(terms: Mapping[str, int], surface: Mapping[str, str]) -> str:
    """A tool's learned terms as text for an embedder: each term's first spelling as users
    wrote it, the terms most conversations taught first."""
    ordered = sorted(terms, key=lambda t: (-terms[t], t))
    return " ".join(surface.get(t, t) for t in ordered)


@dataclass
class LearnedIndex:
    """The learned field over an index's tools: per term, the tools it moves and what it adds.

    A request's learned score for a tool is, over the request's terms the tool learned,
    ``idf(term) * weight_in_request * c * (k1 + 1) / (c + k1 * (1 - b + b * dl / avgdl))`` with
    ``c`` the number of conversations that taught the term to the tool and ``dl`` the sum of
    them over the tool's learned terms: BM25 on the learned field. The IDF counts the tools
    that hold the term in their own text or learned it (BM25F's), so a word most tools mention
    or many learned says little. That is the one way another tool's learned terms reach a
    tool's score, and it can only lower it.
    """

    postings: dict[str, tuple[np.ndarray, np.ndarray]]
    """Term -> (tool positions, what the term adds to each, before the request's weight)."""
    idf: Callable[[str], float]
    """A term's IDF over the tools, their own text and learned terms alike."""
    n_tools: int
    """How many tools the index ranks."""
    texts: dict[int, str] = field(default_factory=dict)
    """Tool position -> its learned terms as text (for an embedder)."""

    @classmethod
    def build(
        cls,
        taught: Mapping[str, Mapping[str, int]],
        positions: Mapping[str, int],
        n_tools: int,
        doc_freq: Callable[[str], int],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        surface: Callable[[str], str] = str,
    ) -> LearnedIndex:
        """The field for ``taught`` (tool -> term -> conversations) over the tools at
        ``positions`` (tools not there are left out: removed, or out of this index);
        ``doc_freq(term)`` is how many tools hold the term in their own text."""
        present = {positions[t]: terms for t, terms in taught.items() if t in positions}
        learned_df: dict[str, int] = {}
        for terms in present.values():
            for term in terms:
                learned_df[term] = learned_df.get(term, 0) + 1

        known: dict[str, float] = {}
        common = max(MIN_COMMON, MAX_LEARNED_SHARE * n_tools)

        def idf(term: str) -> float:
            # BM25F's IDF: a term counts once per tool that holds it in any field (its own
            # text or what it learned), so a word many tools learned says little
            value = known.get(term)
            if value is None:
                df = min(doc_freq(term) + learned_df.get(term, 0), n_tools)
                value = float(np.log1p((n_tools - df + 0.5) / (df + 0.5)))
                if len(known) < 100_000:
                    known[term] = value
            return value

        lengths = {p: float(sum(terms.values())) for p, terms in present.items()}
        avgdl = (sum(lengths.values()) / len(lengths)) if lengths else 1.0
        rows: dict[str, tuple[list[int], list[float]]] = {}
        for position, terms in present.items():
            norm = k1 * (1.0 - b + b * lengths[position] / avgdl)
            for term, count in terms.items():
                if doc_freq(term) + learned_df[term] > common:
                    continue
                tools, values = rows.setdefault(term, ([], []))
                tools.append(position)
                values.append(idf(term) * count * (k1 + 1.0) / (count + norm))
        postings = {
            term: (np.asarray(tools, dtype=np.int64), np.asarray(values, dtype=np.float64))
            for term, (tools, values) in rows.items()
        }
        texts = {
            p: learned_text(terms, {t: surface(t) for t in terms}) for p, terms in present.items()
        }
        return cls(postings, idf, n_tools, texts)

    def __bool__(self) -> bool:
        return bool(self.postings)

    def scores(self, text: str) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The tools the request ``text`` (read as the keyword search reads it) reaches through
        their learned terms: (positions, learned score, share of the request's IDF mass they
        learned), or None when no term of it was learned. Sparse: a search at 10,000 tools
        touches only the tools that learned one of its words."""
        seen: dict[str, float] = {}
        for term, weight in request_terms(text):
            if weight > seen.get(term, 0.0):
                seen[term] = weight
        total = 0.0
        hits: list[tuple[np.ndarray, np.ndarray, float, float]] = []
        for term, weight in seen.items():
            mass = self.idf(term) * min(weight, 1.0)
            total += mass
            hit = self.postings.get(term)
            if hit is not None:
                hits.append((hit[0], hit[1], weight, mass))
        if not hits:
            return None
        if len(hits) == 1:
            one = hits[0]
            return one[0], one[1] * one[2], np.full(len(one[0]), one[3] / max(total, 1e-12))
        where = np.concatenate([h[0] for h in hits])
        learned = np.concatenate([h[1] * h[2] for h in hits])
        share = np.repeat([h[3] / max(total, 1e-12) for h in hits], [len(h[0]) for h in hits])
        positions = np.flatnonzero(np.bincount(where, minlength=self.n_tools))
        return (
            positions,
            np.bincount(where, weights=learned, minlength=self.n_tools)[positions],
            np.bincount(where, weights=share, minlength=self.n_tools)[positions],
        )

    def matched(self, text: str, position: int) -> list[str]:
        """The request's terms that tool ``position`` learned (for explaining a hit)."""
        return [
            term
            for term in dict.fromkeys(t for t, _ in request_terms(text))
            if (hit := self.postings.get(term)) is not None and position in set(hit[0].tolist())
        ]


@dataclass(frozen=True)
class LearnedWeights:
    """How much the learned field weighs against a tool's own text.

    Chosen on halves of the shared BFCL live requests (learn from one, rank the other;
    ``bench/retrieval.py --history``): ``keyword`` 0.5-2 and ``dense`` 0.5-2 give within a point
    of the best strict R@5, 4 is too much (a tool that learned a word then outranks the tool the
    request describes). ``dense`` 0.5 rather than 1: the same on live (-0.5 strict R@5), and on
    the dev split learning from one half and ranking the other, R@1 76 instead of 71.
    """

    keyword: float = 1.0
    """Times its BM25 score (same units as the keyword score of the tool's own text)."""
    coverage: float = 0.5
    """Times the share of the request's IDF mass the tool learned, times the best keyword
    score of the request (a tool that learned most of what the request says, not one word)."""
    dense: float = 0.5
    """With an embedder: times the similarity of the request to the tool's learned terms (same
    units as :attr:`FusionWeights.dense <toolmgmt_core._search.hybrid.FusionWeights.dense>`)."""
    floor: float = 0.2
    """Learned evidence counts for a tool only when the request already reaches it by its own
    text: its keyword score at least this share of the best tool's (or, with an embedder, its
    cosine, see :attr:`dense_floor`). The tool is already relevant; learning only reorders."""
    dense_floor: float = 0.3
    """With an embedder, a tool also has base relevance when its cosine to the request is above
    the fusion floor (:attr:`FusionWeights.floor <toolmgmt_core._search.hybrid.FusionWeights.
    floor>`) by at least this share of the best tool's margin over it. On the live halves
    (``bench/retrieval.py --history``, 10 halvings) 0.2 and 0.3 gain the same (name-R@5 +2.67,
    R@5 +6.6; +2.53 and +6.2 on keyword scores alone), 0.4-0.5 less; 0.3
    because it admits half as many tools (about 50 of 2,100 a request, the keyword side 50)."""

    def __post_init__(self) -> None:
        # a floor out of range would let learned evidence reach any tool: refuse it
        for name in ("keyword", "coverage", "dense", "floor", "dense_floor"):
            value = getattr(self, name)
            top = 1.0 if name.endswith("floor") else float("inf")
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value:
                raise ConfigError(f"LearnedWeights.{name} must be a number >= 0, got {value!r}.")
            if value > top:
                raise ConfigError(f"LearnedWeights.{name} must be between 0 and 1, got {value!r}.")

    def relevance(
        self, keyword: np.ndarray, cosine: np.ndarray | None, cosine_floor: float
    ) -> BaseRelevance:
        """Which tools a request reaches by their own text, from its keyword scores and (with
        an embedder) its cosines, before anything learned is added; ``cosine_floor`` is the
        cosine fusion counts as none."""
        top = float(keyword.max()) if len(keyword) else 0.0
        if cosine is None or not len(cosine):
            return BaseRelevance(keyword.copy(), self.floor * top)
        margin = max(float(cosine.max()) - cosine_floor, 0.0)
        cosine_min = cosine_floor + self.dense_floor * margin
        return BaseRelevance(keyword.copy(), self.floor * top, cosine, cosine_floor, cosine_min)


@dataclass(frozen=True)
class BaseRelevance:
    """Which tools one request reaches by their own text (:meth:`LearnedWeights.relevance`):
    those with a keyword score above zero and at least :attr:`keyword_min`, or with a cosine
    above :attr:`cosine_floor` and at least :attr:`cosine_min`. Only those gain from learned
    evidence, in the keyword part and the dense part alike."""

    keyword: np.ndarray
    """The request's keyword scores before anything learned is added."""
    keyword_min: float
    """The least keyword score that counts (a share of the best)."""
    cosine: np.ndarray | None = None
    """The request's cosine to each tool (None: keyword search)."""
    cosine_floor: float = 0.0
    """The cosine that counts as none."""
    cosine_min: float = 0.0
    """The least cosine that counts."""

    def at(self, positions: np.ndarray) -> np.ndarray:
        """1.0 where the tools at ``positions`` have base relevance, else 0.0."""
        own = self.keyword[positions]
        reached = (own > 0) & (own >= self.keyword_min)
        if self.cosine is not None:
            cosine = self.cosine[positions]
            reached |= (cosine > self.cosine_floor) & (cosine >= self.cosine_min)
        return reached.astype(np.float64)


class LearnedSearch:
    """What a catalog learned, as its search engine adds it to its keyword and hybrid scores
    (the :class:`~toolmgmt_core._search.boost.LearnedBoost` a learning catalog hands its
    engine), with the learned field and its vectors kept until the tools or what is learned
    change."""

    def __init__(self, requests: LearnedRequests, weights: LearnedWeights) -> None:
        self.requests = requests
        """What is learned (and held) now."""
        self.weights = weights
        """How much the learned field weighs."""
        self._field: tuple[tuple[BM25Index, LearnedRequests, int], LearnedIndex] | None = None
        self._vectors: tuple[LearnedIndex, tuple[np.ndarray, np.ndarray]] | None = None

    def field(self, index: BM25Index) -> LearnedIndex | None:
        """The learned field over ``index``'s tools (rebuilt when either changes), or None when
        nothing moves a tool yet."""
        learned = self.requests
        if not learned:
            return None
        cached = self._field
        if (
            cached is not None
            and cached[0][0] is index
            and cached[0][1] is learned
            and cached[0][2] == learned.generation
        ):
            return cached[1]
        generation, taught = learned.snapshot()
        built = LearnedIndex.build(
            taught, index.positions(), len(index), index.doc_freq, surface=learned.surface
        )
        self._field = ((index, learned, generation), built)
        return built

    def relevance(
        self, keyword: Sequence[np.ndarray], cosines: np.ndarray | None, floor: float
    ) -> list[BaseRelevance]:
        """:meth:`LearnedWeights.relevance` of each text (``cosines``: one row per text)."""
        rows = cosines if cosines is not None else [None] * len(keyword)
        return [self.weights.relevance(k, c, floor) for k, c in zip(keyword, rows, strict=True)]

    def add_keyword(
        self,
        field: LearnedIndex,
        keyword: Sequence[np.ndarray],
        texts: Sequence[str],
        mask: np.ndarray | None,
        base: Sequence[BaseRelevance],
    ) -> None:
        """Add each text's learned scores to its keyword scores (in place), for the tools its
        ``base`` relevance reaches."""
        weights = self.weights
        for scores, text, reached in zip(keyword, texts, base, strict=True):
            found = field.scores(text)
            if found is None:
                continue
            positions, learned_score, share = found
            top = float(scores.max()) if len(scores) else 0.0
            extra = weights.keyword * learned_score + weights.coverage * top * share
            extra *= reached.at(positions)
            if mask is not None:
                extra *= mask[positions]
            scores[positions] += extra

    def add_dense(
        self,
        field: LearnedIndex,
        fused: Sequence[np.ndarray],
        texts: Sequence[str],
        mask: np.ndarray | None,
        vectors: VectorIndex,
        floor: float,
        cache: VectorCache | None,
        base: Sequence[BaseRelevance],
    ) -> None:
        """Add each text's similarity to the tools' learned terms to its fused scores (in
        place), as :class:`~toolmgmt_core._search.hybrid.FusionWeights` counts a cosine, for the
        tools its ``base`` relevance reaches."""
        weight = self.weights.dense
        if weight <= 0 or not field.texts:
            return
        cached = self._vectors
        if cached is None or cached[0] is not field:
            positions = np.fromiter(field.texts, dtype=np.int64, count=len(field.texts))
            matrix = embed_with_cache(vectors.embedder, list(field.texts.values()), cache=cache)
            cached = self._vectors = (field, (positions, normalize_rows(matrix)))
        positions, matrix = cached[1]
        for scores, text, reached in zip(fused, texts, base, strict=True):
            cosine = matvec(matrix, vectors.query_vector(read_request(text).focus))
            extra = np.clip((cosine - floor) / (1.0 - floor), 0.0, None) * weight
            extra = extra * reached.at(positions)
            if mask is not None:
                extra = extra * mask[positions]
            scores[positions] += extra.astype(scores.dtype)
