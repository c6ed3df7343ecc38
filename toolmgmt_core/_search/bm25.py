"""A BM25 scorer built and queried with whole-array numpy operations.

Why not bm25s or rank-bm25 directly: rank-bm25 scores a query with a Python loop over every
document (tens of milliseconds at 10,000 tools), and bm25s, which precomputes the same sparse
(term, document) score matrix as this module, builds it with per-document Python loops that
take most of the 10-second budget for 100,000 tools. Here the matrix comes from one in-place
sort of a (term, document) key per term occurrence, and a query is a ``np.bincount`` over the
postings of its terms. The formulas are bm25s's and rank-bm25's (the tests check the scores
against both):

- ``idf="lucene"`` (default, bm25s's default): ``log(1 + (N - df + 0.5) / (df + 0.5))``, never
  negative, so a term in most tools still counts a little;
- ``idf="robertson"`` (rank-bm25's ``BM25Okapi``): ``log((N - df + 0.5) / (df + 0.5))``, with
  negative values replaced by ``epsilon`` times the average IDF, as rank-bm25 does;
- a term's contribution: ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Literal

import numpy as np

__all__ = ["BM25Matrix"]

IdfVariant = Literal["lucene", "robertson"]


@dataclass(frozen=True)
class BM25Matrix:
    """Precomputed BM25 contributions, one row of postings per term (CSR by term)."""

    vocab: dict[str, int]
    """Term to row."""
    indptr: np.ndarray
    """Row ``t``'s postings are ``indices[indptr[t]:indptr[t + 1]]``."""
    indices: np.ndarray
    """Document positions, ascending within a row."""
    data: np.ndarray
    """The BM25 contribution of the term to each of those documents."""
    n_docs: int
    """How many documents were indexed."""
    idf: np.ndarray | None = None
    """Each row's IDF (``None`` for an empty index)."""
    fields: np.ndarray | None = None
    """Per posting, which fields the term occurs in, as bits (``from_terms(fields=...)``), or
    None when the occurrences carried no fields."""

    @classmethod
    def build(
        cls,
        corpus: Sequence[Sequence[str]],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        idf: IdfVariant = "lucene",
        epsilon: float = 0.25,
    ) -> BM25Matrix:
        """Index ``corpus`` (one list of terms per document).

        Raises:
            ValueError: an unknown ``idf`` variant or a negative ``k1``/``b``.
        """
        if idf not in ("lucene", "robertson"):
            raise ValueError(f"idf must be 'lucene' or 'robertson', got {idf!r}.")
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}.")
        lengths = np.fromiter(map(len, corpus), dtype=np.int64, count=len(corpus))
        doc_ids = np.repeat(np.arange(len(corpus), dtype=np.int64), lengths)
        terms = list(chain.from_iterable(corpus))
        return cls.from_terms(doc_ids, terms, len(corpus), k1=k1, b=b, idf=idf, epsilon=epsilon)

    @classmethod
    def from_terms(
        cls,
        doc_ids: np.ndarray,
        terms: Sequence[str],
        n_docs: int,
        *,
        weights: np.ndarray | None = None,
        fields: np.ndarray | None = None,
        k1: float = 1.2,
        b: float = 0.75,
        idf: IdfVariant = "lucene",
        epsilon: float = 0.25,
    ) -> BM25Matrix:
        """Index term occurrences given flat: ``terms[i]`` occurs in document ``doc_ids[i]``.

        ``weights[i]`` (default 1) is what the occurrence adds to the term frequency and the
        document length: a weight of 3 is the same as repeating the term three times.
        ``fields[i]`` (a bit per field, at most 8 fields) says where the occurrence is; each
        posting keeps the union of its occurrences' bits in :attr:`fields`.
        """
        vocab = {term: i for i, term in enumerate(dict.fromkeys(terms))}
        rows = np.fromiter(map(vocab.__getitem__, terms), dtype=np.int64, count=len(terms))
        doc_ids = np.asarray(doc_ids, dtype=np.int64)
        params = {"k1": k1, "b": b, "idf": idf, "epsilon": epsilon}
        if (weights is None and fields is None) or not len(rows):
            plain = np.zeros(len(rows), dtype=np.uint8)
            return cls.from_rows(doc_ids, rows, plain, vocab, n_docs, **params)  # type: ignore[arg-type]
        # one class per distinct (weight, field bits) of an occurrence
        kinds, classes = np.unique(
            np.stack(
                [
                    np.ones(len(rows)) if weights is None else np.asarray(weights, np.float64),
                    np.zeros(len(rows)) if fields is None else np.asarray(fields, np.float64),
                ]
            ),
            axis=1,
            return_inverse=True,
        )
        return cls.from_rows(
            doc_ids,
            rows,
            classes.reshape(-1),
            vocab,
            n_docs,
            class_weights=kinds[0],
            class_fields=None if fields is None else kinds[1].astype(np.uint8),
            **params,  # type: ignore[arg-type]
        )

    @classmethod
    def from_rows(
        cls,
        doc_ids: np.ndarray,
        rows: np.ndarray,
        classes: np.ndarray,
        vocab: dict[str, int],
        n_docs: int,
        *,
        class_weights: np.ndarray | None = None,
        class_fields: np.ndarray | None = None,
        k1: float = 1.2,
        b: float = 0.75,
        idf: IdfVariant = "lucene",
        epsilon: float = 0.25,
    ) -> BM25Matrix:
        """:meth:`from_terms` with the terms already vocabulary rows (``vocab``'s values) and
        each occurrence's weight and field bits given by its class: occurrence ``i`` of row
        ``rows[i]`` in document ``doc_ids[i]`` adds ``class_weights[classes[i]]`` (default 1)
        and has the bits ``class_fields[classes[i]]``.

        The postings come from one in-place sort of an int64 key per occurrence (row,
        document, class): no index array, inverse or Python object per occurrence, so
        indexing 100,000 tools needs a few bytes a term.
        """
        if idf not in ("lucene", "robertson"):
            raise ValueError(f"idf must be 'lucene' or 'robertson', got {idf!r}.")
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}.")
        n_terms = len(vocab)
        if not len(rows):
            empty = np.zeros(0, dtype=np.int32)
            return cls(vocab, np.zeros(n_terms + 1, dtype=np.int64), empty, empty, n_docs)
        n_classes = 1 if class_weights is None else len(class_weights)
        if class_weights is None:
            class_weights = np.ones(1)
        classes = np.asarray(classes)
        lengths = np.zeros(n_docs, dtype=np.float64)
        for c in range(n_classes):  # a weighted count per class: exact sums, no weight array
            of_class = doc_ids if n_classes == 1 else doc_ids[classes == c]
            lengths += np.bincount(of_class, minlength=n_docs) * float(class_weights[c])
        # term-major keys: postings come out grouped by term, documents ascending
        keys = np.asarray(rows, dtype=np.int64) * n_docs
        keys += doc_ids
        keys *= n_classes
        keys += classes
        keys.sort()
        occ_class = (keys % n_classes).astype(np.uint8)
        keys //= n_classes  # now the (row, document) pair of each sorted occurrence
        first = np.empty(len(keys), dtype=bool)
        first[0] = True
        np.not_equal(keys[1:], keys[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        del first
        pairs = keys[starts]
        del keys
        tf = np.add.reduceat(np.asarray(class_weights, dtype=np.float64)[occ_class], starts)
        posting_fields = None
        if class_fields is not None:
            bits = np.asarray(class_fields, dtype=np.uint8)[occ_class]
            posting_fields = np.bitwise_or.reduceat(bits, starts)
            del bits
        del occ_class, starts
        pair_term = pairs // n_docs
        pair_doc = (pairs - pair_term * n_docs).astype(np.int32)
        del pairs
        df = np.bincount(pair_term, minlength=n_terms)
        df_f = df.astype(np.float64)
        if idf == "lucene":
            idf_values = np.log1p((n_docs - df_f + 0.5) / (df_f + 0.5))
        else:
            idf_values = np.log(n_docs - df_f + 0.5) - np.log(df_f + 0.5)
            floor = epsilon * float(idf_values.mean())
            idf_values = np.where(idf_values < 0, floor, idf_values)
        avgdl = float(lengths.mean()) or 1.0
        norm = k1 * (1.0 - b + b * lengths[pair_doc] / avgdl)
        scores = idf_values[pair_term] * tf * (k1 + 1.0) / (tf + norm)
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(df, out=indptr[1:])
        return cls(
            vocab=vocab,
            indptr=indptr,
            indices=pair_doc,
            data=scores.astype(np.float32),
            n_docs=n_docs,
            idf=idf_values,
            fields=posting_fields,
        )

    def postings(self, term_ids: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """Where the postings of these term rows are: (positions in :attr:`indices`,
        :attr:`data` and :attr:`fields`; the index in ``term_ids`` of each one's row)."""
        rows = np.asarray(term_ids, dtype=np.int64)
        starts, ends = self.indptr[rows], self.indptr[rows + 1]
        sizes = ends - starts
        which = np.repeat(np.arange(len(rows)), sizes)
        offsets = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        return starts[which] + offsets, which

    def term_ids(self, terms: Sequence[str]) -> list[int]:
        """Rows of the known ``terms`` (unknown ones dropped, repeats kept)."""
        vocab = self.vocab
        return [vocab[t] for t in terms if t in vocab]

    def scores(self, term_ids: Sequence[int], weights: Sequence[float] | None = None) -> np.ndarray:
        """The BM25 score of every document for a query of these term rows (a new array).

        A repeated term counts once per occurrence, as in rank-bm25 and bm25s. ``weights``
        (one per term row, default 1) scales each occurrence's contribution.
        """
        if not term_ids or not self.n_docs:
            return np.zeros(self.n_docs, dtype=np.float64)
        if weights is not None and len(weights) != len(term_ids):
            raise ValueError(f"{len(term_ids)} terms but {len(weights)} weights: give one each.")
        if len(term_ids) == 1:
            start, end = self.indptr[term_ids[0]], self.indptr[term_ids[0] + 1]
            out = np.zeros(self.n_docs, dtype=np.float64)
            out[self.indices[start:end]] = self.data[start:end]
            return out * weights[0] if weights is not None else out
        starts = self.indptr[term_ids]
        ends = self.indptr[np.asarray(term_ids) + 1]
        indices = np.concatenate([self.indices[s:e] for s, e in zip(starts, ends, strict=True)])
        data = np.concatenate([self.data[s:e] for s, e in zip(starts, ends, strict=True)])
        if weights is not None:
            data = data * np.repeat(np.asarray(weights, dtype=np.float64), ends - starts)
        return np.bincount(indices, weights=data, minlength=self.n_docs)

