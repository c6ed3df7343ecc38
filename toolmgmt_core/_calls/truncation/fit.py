"""The search over the character limit: the largest candidate within a token budget, found in
a few counts (:func:`truncate_result`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from toolmgmt_core._calls.truncation.render import (
    _CLOSE_ENOUGH,
    _ELLIPSIS,
    _MAX_ROUNDS,
    DEFAULT_MAX_DEPTH,
    MIN_RESULT_TOKENS,
    STRATEGIES,
    Strategy,
    TruncationResult,
    _dumps,
    to_jsonable,
)
from toolmgmt_core._calls.truncation.shrink import Shrinker, _cut_string, _plural
from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._model.tokens import DEFAULT_ENCODING, Encoding, counter, get_encoding

__all__ = [
    "truncate_result",
]


def _fit(
    build: Callable[[int], tuple[Any, str]],
    count: Callable[[str], int],
    max_tokens: int,
    start: int,
    ceiling: int,
) -> tuple[Any, str, int] | None:
    """The largest candidate ``build(limit)`` within ``max_tokens``, found in a few counts.

    Secant steps on (limit, tokens) while unbracketed, then interpolation inside the bracket,
    falling back to bisection; stops once a candidate is within 3% of the budget.
    """
    best: tuple[Any, str, int] | None = None
    low, high = -1, ceiling + 1  # largest limit known to fit, smallest known not to
    low_tokens, high_tokens = 0, 0
    limit = max(1, min(start, ceiling))
    for _ in range(_MAX_ROUNDS):
        value, text = build(limit)
        tokens = count(text)
        if tokens <= max_tokens:
            if best is None or tokens >= best[2]:
                best = (value, text, tokens)
            if limit > low:
                low, low_tokens = limit, tokens
            if tokens >= max_tokens * _CLOSE_ENOUGH:
                break
        elif limit < high:
            high, high_tokens = limit, tokens
        if high - low <= max(2, low // 200):
            break
        target = max_tokens * (1 + _CLOSE_ENOUGH) / 2
        if low >= 0 and high <= ceiling and high_tokens > low_tokens:
            guess = low + int((high - low) * (target - low_tokens) / (high_tokens - low_tokens))
        else:
            guess = int(limit * target / max(tokens, 1))
        if not low < guess < high:
            guess = (max(low, 0) + high) // 2 if high <= ceiling else max(limit * 2, limit + 1)
        limit = min(guess, ceiling)
        if limit <= low:
            break
    if best is None:
        value, text = build(0)
        tokens = count(text)
        if tokens <= max_tokens:
            best = (value, text, tokens)
    return best


def _check_budget(max_tokens: Any, strategy: Any) -> None:
    whole = isinstance(max_tokens, int) and not isinstance(max_tokens, bool)
    if not whole or max_tokens < MIN_RESULT_TOKENS:
        got = repr(max_tokens) if whole else f"{type(max_tokens).__name__} {max_tokens!r}"
        raise ConfigError(
            f"max_tokens must be a whole number of tokens of at least {MIN_RESULT_TOKENS} "
            f"(room for a truncation marker), got {got}."
        )
    if strategy not in STRATEGIES:
        raise ConfigError(
            f"Unknown truncation strategy {strategy!r}; use 'head', 'tail' or 'smart'."
        )


def _parse_json_text(text: str) -> Any | None:
    """The JSON object or array a string holds, or None (also for NaN, Infinity, 1e999)."""
    stripped = text.lstrip()
    if not stripped or stripped[0] not in "{[":
        return None
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict | list) else None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} overflows a float")
    return value


def truncate_result(
    value: Any,
    max_tokens: int,
    strategy: Strategy | str = "smart",
    *,
    encoding: str | Encoding = DEFAULT_ENCODING,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> TruncationResult:
    """Cut a tool result to at most ``max_tokens`` tokens, keeping it readable and parseable.

    Args:
        value: a string (sent as is) or a JSON-compatible value (sent as compact JSON); other
            values are converted with :func:`to_jsonable` first.
        max_tokens: the budget, at least :data:`MIN_RESULT_TOKENS`.
        strategy: ``"head"``, ``"tail"`` or ``"smart"`` (see the module docstring).
        encoding: the tokenizer (a tiktoken name or an encoding object).
        max_depth: containers nested deeper collapse to a marker when the value is cut.

    Returns:
        A :class:`TruncationResult`; ``value`` is the input itself when it fits.

    Raises:
        ConfigError: a budget under the minimum, or an unknown strategy.
    """
    _check_budget(max_tokens, strategy)
    enc = get_encoding(encoding) if isinstance(encoding, str) else encoding
    return _truncate(value, max_tokens, str(strategy), counter(enc), max_depth)


def _truncate(
    value: Any,
    max_tokens: int,
    side: str,
    count: Callable[[str], int],
    max_depth: int,
    original: int | None = None,
) -> TruncationResult:
    """:func:`truncate_result` with checked arguments; ``original`` skips counting again."""
    if isinstance(value, str):
        if original is None:
            original = count(value)
        if original <= max_tokens:
            return TruncationResult(value, value, False, original, original, side)
        parsed = _parse_json_text(value)
        if parsed is not None:
            text = _dumps(parsed)
            out = _truncate_json(parsed, text, original, max_tokens, side, count, max_depth)
            return TruncationResult(out[1], out[1], True, out[2], original, side)
        ratio = len(value) / max(original, 1)
        source = value

        def build_text(limit: int) -> tuple[Any, str]:
            cut = _cut_string(source, limit, side, quoted=False)
            return cut, cut

        found = _fit(build_text, count, max_tokens, int(max_tokens * ratio), len(value) - 1)
        if found is None:  # pragma: no cover - "…" always fits the minimum budget
            raise ConfigError(f"Cannot cut this text to {max_tokens} tokens.")
        return TruncationResult(found[0], found[1], True, found[2], original, side)

    try:
        text = _dumps(value)
    except (TypeError, ValueError):
        value = to_jsonable(value)
        text = _dumps(value)
    if original is None:
        original = count(text)
    if original <= max_tokens:
        return TruncationResult(value, text, False, original, original, side)
    out_value, out_text, tokens = _truncate_json(
        value, text, original, max_tokens, side, count, max_depth
    )
    return TruncationResult(out_value, out_text, True, tokens, original, side)


def _truncate_json(
    value: Any,
    text: str,
    original: int,
    max_tokens: int,
    side: str,
    count: Callable[[str], int],
    max_depth: int,
) -> tuple[Any, str, int]:
    shrinker = Shrinker(side, max_depth)

    def build(limit: int) -> tuple[Any, str]:
        out = shrinker.shrink(value, limit)[0]
        return out, _dumps(out)

    ratio = len(text) / max(original, 1)
    found = _fit(build, count, max_tokens, int(max_tokens * ratio * 0.95), len(text) - 1)
    if found is None:  # pragma: no cover - every minimal form fits MIN_RESULT_TOKENS
        for marker in (f"{_ELLIPSIS} {_plural(original, 'token')} omitted {_ELLIPSIS}", _ELLIPSIS):
            tokens = count(_dumps(marker))
            if tokens <= max_tokens:
                return marker, _dumps(marker), tokens
        raise ConfigError(f"Cannot cut this result to {max_tokens} tokens.")
    return found
