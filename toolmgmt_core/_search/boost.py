"""The hook through which what a catalog learned from use reaches a search:
:class:`LearnedBoost`, the few methods a :class:`~toolmgmt_core._search.engine.SearchEngine`
calls on it.

Search knows nothing of learning: the learning package
(:class:`toolmgmt_core._learning.ranking.LearnedSearch`) implements this protocol, and a catalog
that learns hands the engine one. Without one (the default) a search adds nothing learned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from toolmgmt_core._embeddings import VectorCache
from toolmgmt_core._search.hybrid import VectorIndex
from toolmgmt_core._search.index import BM25Index

__all__ = ["LearnedBoost"]


class LearnedBoost(Protocol):
    """What a search adds for the learned field: the field over an index's tools, which tools
    each text already reaches by their own text, and the scores it adds to the keyword and the
    fused (hybrid) scores of those, in place."""

    def field(self, index: BM25Index) -> Any:
        """The learned field over ``index``'s tools, or a false value when nothing moves a
        tool (the value is handed back to the methods below as it is)."""
        ...

    def relevance(
        self, keyword: Sequence[np.ndarray], cosines: np.ndarray | None, floor: float
    ) -> Sequence[Any]:
        """Per text, which tools it reaches by their own text: judged on its keyword scores
        and (with an embedder) its cosines (``floor``: the cosine counted as none), before
        anything learned is added (handed back to the methods below as it is)."""
        ...

    def add_keyword(
        self,
        field: Any,
        keyword: Sequence[np.ndarray],
        texts: Sequence[str],
        mask: np.ndarray | None,
        base: Sequence[Any],
    ) -> None:
        """Add each text's learned scores to its keyword scores (in place)."""
        ...

    def add_dense(
        self,
        field: Any,
        fused: Sequence[np.ndarray],
        texts: Sequence[str],
        mask: np.ndarray | None,
        vectors: VectorIndex,
        floor: float,
        cache: VectorCache | None,
        base: Sequence[Any],
    ) -> None:
        """Add each text's similarity to the tools' learned terms to its fused scores."""
        ...
