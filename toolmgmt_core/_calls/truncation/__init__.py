"""Cutting tool results down to a token budget, keeping them readable and parseable.

A result is measured as the text a model receives: a string as it is, anything else as compact
JSON (``ensure_ascii=False``), see :func:`render_result`. Three strategies:

- ``head`` keeps the beginning (first items, first keys, start of a string);
- ``tail`` keeps the end;
- ``smart`` keeps the structure of JSON: every key of an object stays (as long as the keys alone
  fit), long arrays keep their first and last items around a marker such as
  ``"… 9,812 items omitted …"``, long strings are cut in the middle around a marker, and
  containers nested deeper than ``max_depth`` collapse to a marker. Plain text keeps its head and
  tail around a marker.

A string that holds a JSON object or array is cut as JSON (with any strategy) and stays a
string: the compact JSON text of the cut value.

Guarantees, for any JSON-compatible value or string and any ``max_tokens >=``
:data:`MIN_RESULT_TOKENS`:

- the rendered output takes at most ``max_tokens`` tokens in the same tokenizer;
- JSON in gives valid JSON out (a value that renders with :func:`render_result`);
- nothing is cut when it fits (the very same object comes back);
- cutting a cut result again with the same budget changes nothing.

How it stays fast on 10 MB inputs: the input is rendered and tokenised exactly once (for
``original_tokens`` and the fit check). The cut is then searched on a *character* limit: a
shrinking pass builds a candidate within ``L`` characters, touching only the parts it keeps
(sizes are measured with early exit), and only the small candidate is tokenised. The first ``L``
comes from the input's own characters-per-token ratio; a few bracketed secant steps settle on the
largest candidate that fits.

A result made of MCP content blocks reaches truncation as one value
(:meth:`~toolmgmt_core.ContentResult.value`: its structured content, else its text, binary
described), through the call pipeline like any other. Summarisation (:func:`summarize_result`)
asks a pluggable summariser and falls back to truncation, reporting why, when it fails or times
out.

The package, by part: :mod:`.render` (measuring and the result object), :mod:`.shrink`
(building a candidate within a character limit), :mod:`.fit` (the search over that limit) and
:mod:`.summarize` (summaries, with truncation as the fallback).
"""

from __future__ import annotations

from toolmgmt_core._calls.truncation.fit import truncate_result
from toolmgmt_core._calls.truncation.render import (
    DEFAULT_MAX_DEPTH,
    MIN_RESULT_TOKENS,
    STRATEGIES,
    TruncationResult,
    render_result,
    to_jsonable,
)
from toolmgmt_core._calls.truncation.summarize import (
    Summarizer,
    summarize_result,
    summarize_result_sync,
)

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "MIN_RESULT_TOKENS",
    "STRATEGIES",
    "Summarizer",
    "TruncationResult",
    "render_result",
    "summarize_result",
    "summarize_result_sync",
    "to_jsonable",
    "truncate_result",
]
