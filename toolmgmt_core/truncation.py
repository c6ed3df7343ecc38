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

MCP results (:func:`truncate_mcp_result`) share one budget between text blocks, embedded text
resources and structured content; binary blobs become a short description. Summarisation
(:func:`summarize_result`) asks a pluggable summariser and falls back to truncation, reporting
why, when it fails or times out.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import datetime as _dt
import enum
import functools
import inspect
import json
import math
import re
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from toolmgmt_core.errors import ConfigError
from toolmgmt_core.tokens import DEFAULT_ENCODING, Encoding, counter, get_encoding

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "MIN_RESULT_TOKENS",
    "STRATEGIES",
    "McpTruncationResult",
    "Summarizer",
    "TruncationResult",
    "render_result",
    "summarize_result",
    "summarize_result_sync",
    "to_jsonable",
    "truncate_mcp_result",
    "truncate_result",
]

Strategy = Literal["head", "tail", "smart"]

STRATEGIES: tuple[str, ...] = ("head", "tail", "smart")
"""The truncation strategies, by name."""

MIN_RESULT_TOKENS = 16
"""The smallest budget accepted: enough for the smallest marker of any value in any tokenizer."""

DEFAULT_MAX_DEPTH = 12
"""Containers nested deeper than this collapse to a marker when a value has to be cut."""

_SEPARATORS = (",", ":")
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')
_ELLIPSIS = "…"
_FAIR_SHARE_ITEMS = 6
"""At most 1/_FAIR_SHARE_ITEMS of a container's room goes to one item before others are seen."""
_MIN_SHRUNK = 24
"""A cut item gets at least this many characters, or is left out."""
_MAX_ROUNDS = 12
_CLOSE_ENOUGH = 0.97


# --------------------------------------------------------------------------------------------
# Rendering


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=_SEPARATORS, allow_nan=False)


def render_result(value: Any) -> str:
    """The text a model receives for ``value``: a string as is, anything else as compact JSON.

    Values that are not JSON-compatible are first converted with :func:`to_jsonable`.
    """
    if isinstance(value, str):
        return value
    try:
        return _dumps(value)
    except (TypeError, ValueError):
        return _dumps(to_jsonable(value))


def to_jsonable(value: Any) -> Any:
    """``value`` made JSON-compatible: containers become dicts and lists, keys strings.

    Pydantic models are dumped, dataclasses become dicts, dates ISO strings, enums their value,
    bytes a short description, NaN and infinities strings, integers too long to print a
    marker, circular references a marker, and anything else its ``str()``.
    """
    return _jsonable(value, set())


def _jsonable(value: Any, path: set[int]) -> Any:
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, enum.Enum):
        return _jsonable(value.value, path)
    if isinstance(value, int):
        try:
            str(value)
        except ValueError:
            return (
                f"{_ELLIPSIS} {value.bit_length() * 30103 // 100000 + 1}-digit number {_ELLIPSIS}"
            )
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(bytes(value)):,} bytes>"
    if isinstance(value, _dt.datetime | _dt.date | _dt.time):
        return value.isoformat()
    key = id(value)
    if key in path:
        return "<circular reference>"
    path.add(key)
    try:
        if hasattr(value, "model_dump") and callable(value.model_dump):
            return _jsonable(value.model_dump(mode="json"), path)
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            return _jsonable(dataclasses.asdict(value), path)
        if isinstance(value, Mapping):
            return {_key_text(k): _jsonable(v, path) for k, v in value.items()}
        if isinstance(value, list | tuple | set | frozenset):
            return [_jsonable(v, path) for v in value]
        return str(value)
    finally:
        path.discard(key)


def _key_text(key: Any) -> str:
    """A dict key as JSON writes it."""
    if isinstance(key, str):
        return key
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, int | float):
        return _dumps(key) if not isinstance(key, float) or math.isfinite(key) else str(key)
    return str(key)


# --------------------------------------------------------------------------------------------
# The result object


@dataclass(frozen=True)
class TruncationResult:
    """A result cut (or not) to a token budget."""

    value: Any
    """The result within budget: a string for a string, a JSON-compatible value otherwise."""
    text: str
    """The text sent to the model: ``render_result(value)``."""
    truncated: bool
    """Whether anything was cut, summarised or replaced."""
    tokens: int
    """Tokens of ``text``."""
    original_tokens: int
    """Tokens of the untouched result, rendered the same way."""
    strategy: str = "smart"
    """The strategy used (``head``, ``tail``, ``smart``, or ``summary``)."""
    note: str | None = None
    """What happened besides cutting, for logs: ``SummaryFailed: ...`` when a summary failed."""

    @property
    def summarized(self) -> bool:
        """Whether the value is a summary written by a summariser."""
        return self.strategy == "summary"


# --------------------------------------------------------------------------------------------
# Sizes (characters of the rendered JSON), measured with early exit


def _str_size(text: str, cap: int) -> int:
    """Rendered length of a JSON string; exact when at most ``cap``, else some number > cap."""
    size = len(text) + 2
    if size > cap or _NEEDS_ESCAPE.search(text) is None:
        return size
    return len(_dumps(text))


def _size(value: Any, cap: int, depth: int = 0) -> int:
    """Rendered length of ``value``; exact when at most ``cap``, else some number > ``cap``."""
    kind = type(value)  # exact types first: isinstance on ABCs is slow in this hot loop
    if kind is str:
        return _str_size(value, cap)
    if kind is int or kind is float:
        return len(repr(value))  # what json writes for finite numbers
    if kind is dict or (kind is not list and isinstance(value, Mapping)):
        if not value:
            return 2
        if depth > 200:  # json's own recursion stays in C; ours would not
            return len(_dumps(value))
        total = 2 * len(value) + 1  # braces, colons, commas
        for key, item in value.items():
            total += _str_size(key if type(key) is str else _key_text(key), cap)
            total += _size(item, cap - total, depth + 1)
            if total > cap:
                return total
        return total
    if kind is list or kind is tuple:
        if not value:
            return 2
        if depth > 200:
            return len(_dumps(value))
        total = len(value) + 1  # brackets, commas
        if total > cap:
            return total
        for item in value:
            total += _size(item, cap - total, depth + 1)
            if total > cap:
                return total
        return total
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if isinstance(value, str):
        return _str_size(value, cap)
    if isinstance(value, list | tuple):
        return _size(list(value), cap, depth)
    return len(_dumps(value))


def _is_fixed(value: Any) -> bool:
    """Numbers, booleans and null: never cut inside a container."""
    kind = type(value)
    if kind is str or kind is dict or kind is list:
        return False
    return not isinstance(value, str | Mapping | list | tuple)


def _min_size(value: Any, size: int) -> int:
    """The smallest size :meth:`_Shrinker.shrink` can reach for ``value`` (of size ``size``)."""
    if isinstance(value, str):
        return min(size, 3)  # "…"
    if isinstance(value, Mapping):
        return min(size, 9)  # {"…":"…"}
    if isinstance(value, list | tuple):
        return min(size, 5)  # ["…"]
    return size


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


# --------------------------------------------------------------------------------------------
# Strings


def _prefix_within(text: str, room: int, quoted: bool) -> str:
    """The longest-ish prefix of ``text`` whose (rendered) length is at most ``room``."""
    piece = text[: max(room, 0)]
    if quoted and piece and _NEEDS_ESCAPE.search(piece):
        size = len(_dumps(piece)) - 2
        while size > room:
            piece = piece[: len(piece) - (size - room)]
            size = len(_dumps(piece)) - 2
    return piece


def _suffix_within(text: str, room: int, quoted: bool) -> str:
    """The longest-ish suffix of ``text`` whose (rendered) length is at most ``room``."""
    piece = text[len(text) - room :] if room > 0 else ""
    if quoted and piece and _NEEDS_ESCAPE.search(piece):
        size = len(_dumps(piece)) - 2
        while size > room:
            piece = piece[size - room :]
            size = len(_dumps(piece)) - 2
    return piece


def _string_marker(omitted: int, side: str) -> str:
    chars = _plural(omitted, "char")
    if side == "head":
        return f" {_ELLIPSIS} {chars} omitted"
    if side == "tail":
        return f"{chars} omitted {_ELLIPSIS} "
    return f" {_ELLIPSIS} {chars} omitted {_ELLIPSIS} "


def _cut_string(text: str, limit: int, side: str, quoted: bool) -> str:
    """``text`` cut to at most ``limit`` characters (rendered as JSON when ``quoted``)."""
    n = len(text)
    quotes = 2 if quoted else 0
    room = limit - quotes - len(_string_marker(n, side))
    if room < (2 if side == "smart" else 1):
        bare = f"{_ELLIPSIS} {_plural(n, 'char')} omitted {_ELLIPSIS}"
        if len(bare) + quotes <= limit:
            return bare
        # Too tight for a counted marker: the ellipsis alone marks the cut.
        room = limit - quotes - 1
        if room < 4:
            return _ELLIPSIS
        head = _prefix_within(text, (room + 1) // 2 if side == "smart" else room, quoted)
        tail = _suffix_within(text, room - (room + 1) // 2 if side == "smart" else room, quoted)
        if side == "head":
            return head + _ELLIPSIS
        if side == "tail":
            return _ELLIPSIS + tail
        return head + _ELLIPSIS + tail
    if side == "head":
        head, tail = _prefix_within(text, room, quoted), ""
    elif side == "tail":
        head, tail = "", _suffix_within(text, room, quoted)
    else:
        head = _prefix_within(text, (room + 1) // 2, quoted)
        tail = _suffix_within(text, room - (room + 1) // 2, quoted)
        # End on a line break when one is near: easier to read than a cut mid-line.
        if len(head) >= 40:
            cut = head.rfind("\n", len(head) - len(head) // 5)
            if cut > 0:
                head = head[: cut + 1]
        if len(tail) >= 40:
            cut = tail.find("\n", 0, len(tail) // 5)
            if cut >= 0:
                tail = tail[cut + 1 :]
    if len(head) + len(tail) >= n:  # only when escapes inflate: keep at least one char out
        tail = tail[len(head) + len(tail) - n + 1 :]
    return head + _string_marker(n - len(head) - len(tail), side) + tail


# --------------------------------------------------------------------------------------------
# JSON values


class _Shrinker:
    """Builds a value whose rendering fits a character limit; one instance per strategy."""

    def __init__(self, side: str, max_depth: int) -> None:
        self.side = side
        self.max_depth = max_depth
        # Sizes of the input's containers, kept across the candidates of one call (the input
        # is alive and unchanged meanwhile, so ids are stable): exact ones, and lower bounds.
        self._exact: dict[int, int] = {}
        self._over: dict[int, int] = {}

    def measure(self, value: Any, cap: int) -> int:
        """:func:`_size`, remembered for containers."""
        if type(value) is not dict and type(value) is not list:
            return _size(value, cap)
        key = id(value)
        exact = self._exact.get(key)
        if exact is not None:
            return exact
        over = self._over.get(key)
        if over is not None and over > cap:
            return over
        size = _size(value, cap)
        if size <= cap:
            self._exact[key] = size
        else:
            self._over[key] = size
        return size

    def shrink(self, value: Any, limit: int, depth: int = 0) -> tuple[Any, int]:
        """``value`` cut to ``limit`` rendered characters (or its minimal form), and its size."""
        size = self.measure(value, limit)
        if size <= limit:
            return value, size
        if isinstance(value, str):
            out = _cut_string(value, limit, self.side, quoted=True)
            return out, _str_size(out, 1 << 62)
        if isinstance(value, Mapping | list | tuple):
            if depth >= self.max_depth:
                return self._collapsed(value, limit)
            if isinstance(value, Mapping):
                return self._shrink_dict(value, limit, depth)
            return self._shrink_list(value, limit, depth)
        return self._shrink_scalar(value, limit, size)

    def _collapsed(self, value: Any, limit: int) -> tuple[Any, int]:
        """The marker a container collapses to: the count when it fits, else a bare ellipsis."""
        out: Any
        if isinstance(value, Mapping):
            out = {_ELLIPSIS: f"{_plural(len(value), 'key')} omitted"}
            if len(_dumps(out)) > limit:
                out = {_ELLIPSIS: _ELLIPSIS}
        else:
            out = [f"{_ELLIPSIS} {_plural(len(value), 'item')} omitted {_ELLIPSIS}"]
            if len(_dumps(out)) > limit:
                out = [_ELLIPSIS]
        return out, len(_dumps(out))

    @staticmethod
    def _shrink_scalar(value: Any, limit: int, size: int) -> tuple[Any, int]:
        if isinstance(value, int) and not isinstance(value, bool):
            try:
                approx: Any = float(f"{float(value):.3e}")
            except OverflowError:
                approx = f"{_ELLIPSIS} {len(str(abs(value))):,}-digit number {_ELLIPSIS}"
            return approx, len(_dumps(approx))
        return value, size

    def _order(self, n: int) -> Iterator[int]:
        if self.side == "head":
            return iter(range(n))
        if self.side == "tail":
            return iter(range(n - 1, -1, -1))
        return (i // 2 if i % 2 == 0 else n - 1 - i // 2 for i in range(n))

    def _select(
        self, values: Sequence[Any], extra: Callable[[int], int], order: Iterable[int], room: int
    ) -> list[tuple[int, int, int]]:
        """Which entries to keep, filling ``room`` in ``order``: (index, size, allotted size).

        An entry is kept whole when it is small (a third of the room at most, or its fair share
        among the first few entries); a larger one is allotted its fair share for now. The
        first entry that does not fit is kept cut when enough room is left, and ends the
        selection.
        """
        fair = room // min(len(values), _FAIR_SHARE_ITEMS)
        whole_up_to = max(fair, room // 3)
        cap = max(fair, _MIN_SHRUNK)
        chosen: list[tuple[int, int, int]] = []
        used = 0
        for index in order:
            remaining = room - used - extra(index) - (1 if chosen else 0)
            if remaining <= 0:
                break
            value = values[index]
            size = self.measure(value, room)
            cost = size if _is_fixed(value) or size <= whole_up_to else min(size, cap)
            if cost <= remaining:
                chosen.append((index, size, cost))
                used += cost + extra(index) + (1 if len(chosen) > 1 else 0)
                continue
            # A cut entry is worth its markers when half of it stays, or when it is the only one.
            if (
                not _is_fixed(value)
                and remaining >= _MIN_SHRUNK
                and (2 * remaining >= size or not chosen)
            ):
                chosen.append((index, size, remaining))
            break
        return chosen

    def _fill(
        self,
        values: Sequence[Any],
        extra: Callable[[int], int],
        chosen: list[tuple[int, int, int]],
        room: int,
        depth: int,
    ) -> dict[int, Any]:
        """Cut the entries allotted less than their size; share the room left over among them.

        Cut entries are visited smallest first, each getting an even share of what is left, so
        the room an entry does not use (markers are coarse) flows on to the larger ones.
        """
        overhead = sum(extra(index) for index, _, _ in chosen) + max(len(chosen) - 1, 0)
        slack = room - overhead - sum(allotted for _, _, allotted in chosen)
        cut = sorted((size, allotted, index) for index, size, allotted in chosen if allotted < size)
        out: dict[int, Any] = {index: values[index] for index, _, _ in chosen}
        for position, (size, allotted, index) in enumerate(cut):
            target = min(size, allotted + max(slack, 0) // (len(cut) - position))
            if size <= target:
                slack -= size - allotted
                continue
            out[index], used = self.shrink(values[index], target, depth + 1)
            slack -= used - allotted
        return out

    def _shrink_list(self, items: Sequence[Any], limit: int, depth: int) -> tuple[Any, int]:
        n = len(items)
        reserve = len(_dumps(f"{_ELLIPSIS} {_plural(n, 'item')} omitted {_ELLIPSIS}")) + 1
        room = limit - 2 - reserve
        chosen = self._select(items, _no_extra, self._order(n), room) if room > 0 else []
        if len(chosen) == n:
            room += reserve
        if not chosen:
            return self._collapsed(items, limit)
        kept = self._fill(items, _no_extra, chosen, room, depth)
        if len(kept) == n:
            out = [kept[i] for i in range(n)]
        else:
            indices = sorted(kept)
            if self.side == "head":
                split = len(indices)
            elif self.side == "tail":
                split = 0
            else:
                split = next((i for i, index in enumerate(indices) if index != i), len(indices))
            marker = f"{_ELLIPSIS} {_plural(n - len(kept), 'item')} omitted {_ELLIPSIS}"
            out = [kept[i] for i in indices[:split]] + [marker] + [kept[i] for i in indices[split:]]
        return out, len(_dumps(out))

    def _shrink_dict(self, obj: Mapping[Any, Any], limit: int, depth: int) -> tuple[Any, int]:
        keys = list(obj)
        values = list(obj.values())
        n = len(keys)
        extras: dict[int, int] = {}

        def extra(index: int) -> int:
            size = extras.get(index)
            if size is None:
                size = extras[index] = _str_size(_key_text(keys[index]), 1 << 62) + 1
            return size

        if self.side == "smart":
            overhead = n + 1  # braces and commas
            for index in range(n):
                overhead += extra(index)
                if overhead > limit:
                    break
            if overhead <= limit:
                sizes = [self.measure(v, limit - overhead) for v in values]
                floors = [_min_size(v, s) for v, s in zip(values, sizes, strict=True)]
                if overhead + sum(floors) <= limit:
                    chosen = list(zip(range(n), sizes, floors, strict=True))
                    kept = self._fill(values, extra, chosen, limit - 2, depth)
                    out = {keys[i]: kept[i] for i in range(n)}
                    return out, len(_dumps(out))
        marker_key = _ELLIPSIS
        while marker_key in obj:
            marker_key += _ELLIPSIS
        marker_value = f"{_plural(n, 'key')} omitted"
        reserve = len(_dumps({marker_key: marker_value}))  # braces stand in for the comma
        room = limit - 2 - reserve
        order = range(n - 1, -1, -1) if self.side == "tail" else range(n)
        chosen = self._select(values, extra, order, room) if room > 0 else []
        if not chosen:
            return self._collapsed(obj, limit)
        whole = len(chosen) == n
        kept = self._fill(values, extra, chosen, room + (reserve if whole else 0), depth)
        marker_value = f"{_plural(n - len(kept), 'key')} omitted"
        result: dict[Any, Any] = {}
        if self.side == "tail" and not whole:
            result[marker_key] = marker_value
        for index in sorted(kept):
            result[keys[index]] = kept[index]
        if self.side != "tail" and not whole:
            result[marker_key] = marker_value
        return result, len(_dumps(result))


def _no_extra(index: int) -> int:
    return 0


# --------------------------------------------------------------------------------------------
# The search over the character limit


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
    shrinker = _Shrinker(side, max_depth)

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


# --------------------------------------------------------------------------------------------
# MCP results

_BINARY_TYPES = ("image", "audio")


@dataclass(frozen=True)
class McpTruncationResult:
    """An MCP tool result (content blocks and structured content) cut to one shared budget."""

    content: list[dict[str, Any]]
    """The content blocks, in order, as plain dicts in MCP's shapes (copies; input untouched)."""
    structured: Any
    """The structured content (``structuredContent``), cut like the rest, or None."""
    truncated: bool
    """Whether anything was cut, replaced or dropped."""
    tokens: int
    """Tokens of the text parts sent (text blocks, resource texts, structured JSON), summed."""
    original_tokens: int
    """The same sum for the untouched result (binary blobs not counted)."""
    replaced: list[str] = field(default_factory=list)
    """A description of each binary block replaced by text."""


@dataclass
class _Part:
    """One text part of an MCP result that shares the budget."""

    value: Any
    tokens: int
    block: int | None  # index into the blocks, None for the structured content
    copies: int = 1  # the structured content counts once more for each block mirroring it
    out: Any = None
    out_tokens: int = 0


def _approx_bytes(data: Any) -> str:
    if isinstance(data, str):
        size = len(data) * 3 // 4  # base64
    elif isinstance(data, bytes | bytearray):
        size = len(data)
    else:
        return "unknown size"
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:,.1f} {unit}"
    return _plural(size, "byte")


def _describe_binary(block: Mapping[str, Any]) -> str:
    kind = block.get("type", "binary")
    if kind == "resource":
        resource = block.get("resource") or {}
        mime = resource.get("mimeType") or "unknown type"
        where = f" {resource.get('uri')}" if resource.get("uri") else ""
        return f"[binary resource{where} omitted: {mime}, {_approx_bytes(resource.get('blob'))}]"
    mime = block.get("mimeType") or "unknown type"
    return f"[{kind} omitted: {mime}, {_approx_bytes(block.get('data'))}]"


def _same_json(text: str, structured: Any) -> bool:
    stripped = text.strip()
    if not stripped or stripped[0] not in "{[":
        return False
    try:
        return bool(json.loads(stripped) == structured)
    except ValueError:
        return False


def _share_budget(
    parts: list[_Part], room: int, strategy: str, count: Callable[[str], int], max_depth: int
) -> None:
    """Water-fill ``room`` over the parts, smallest first; unused room flows to larger ones."""
    remaining = room
    left = sum(p.copies for p in parts)
    for part in sorted(parts, key=lambda p: p.tokens):
        share = remaining // left
        if part.tokens <= share:
            part.out, part.out_tokens = part.value, part.tokens
        else:
            cut = _truncate(
                part.value, max(share, MIN_RESULT_TOKENS), strategy, count, max_depth, part.tokens
            )
            part.out, part.out_tokens = cut.value, cut.tokens
        remaining -= part.out_tokens * part.copies
        left -= part.copies


def truncate_mcp_result(
    content_blocks: Sequence[Mapping[str, Any]],
    structured: Any = None,
    max_tokens: int = 2_000,
    allow_binary: bool = False,
    *,
    strategy: Strategy | str = "smart",
    encoding: str | Encoding = DEFAULT_ENCODING,
) -> McpTruncationResult:
    """Cap an MCP tool result: text, embedded text resources and structured content together.

    One budget is shared by every text part, so the structured content can never ride along in
    full beside capped text. A text block that mirrors the structured content (the JSON the MCP
    spec asks servers to add) is replaced by exactly the cut structured content. Image and
    audio blocks and binary resources become a short text description unless ``allow_binary``
    (kept binary data is not counted as text tokens). Blocks are plain dicts in MCP's shapes
    (``type`` text, image, audio, resource, resource_link); the fields of ``resource_link`` and
    unknown block types are counted and cut as JSON.

    Args:
        content_blocks: the result's ``content`` list.
        structured: the result's ``structuredContent``, or None.
        max_tokens: the shared budget. Each part gets at least :data:`MIN_RESULT_TOKENS`; when
            the budget cannot give every part that much, trailing blocks are dropped (never the
            structured content) and a closing text block says how many.
        allow_binary: keep image, audio and blob blocks as they are.
        strategy: the truncation strategy for each part.
        encoding: the tokenizer.

    Raises:
        ConfigError: a budget under the minimum, or an unknown strategy.
    """
    _check_budget(max_tokens, strategy)
    enc = get_encoding(encoding) if isinstance(encoding, str) else encoding
    count = counter(enc)
    blocks: list[dict[str, Any]] = []
    replaced: list[str] = []
    parts: list[_Part] = []
    mirrors: list[int] = []
    mirror_tokens = 0

    for raw in content_blocks:
        block = dict(raw) if isinstance(raw, Mapping) else to_jsonable(raw)
        if not isinstance(block, dict):
            block = {"type": "text", "text": render_result(block)}
        kind = block.get("type")
        resource = block.get("resource") if kind == "resource" else None
        is_blob = isinstance(resource, Mapping) and "blob" in resource
        if (kind in _BINARY_TYPES or is_blob) and not allow_binary:
            description = _describe_binary(block)
            replaced.append(description)
            block, kind = {"type": "text", "text": description}, "text"
        index = len(blocks)
        blocks.append(block)
        if kind == "text":
            text = block.get("text")
            text = text if isinstance(text, str) else render_result(text)
            if structured is not None and _same_json(text, structured):
                mirrors.append(index)
                mirror_tokens += count(text)
            else:
                parts.append(_Part(text, count(text), index))
        elif kind == "resource" and isinstance(resource, Mapping) and "text" in resource:
            text = render_result(resource["text"])
            parts.append(_Part(text, count(text), index))
        elif kind not in _BINARY_TYPES and kind != "resource":
            payload = {k: v for k, v in block.items() if k != "type"}
            parts.append(_Part(payload, count(render_result(payload)), index))

    structured_part = None
    if structured is not None:
        structured_part = _Part(
            structured, count(render_result(structured)), None, 1 + len(mirrors)
        )
        parts.append(structured_part)

    # As sent, a mirror counts its own text; once cut, it is the cut structured content again.
    original = sum(p.tokens for p in parts) + mirror_tokens
    truncated = bool(replaced)
    dropped: set[int] = set()
    note = None
    if original <= max_tokens:
        for part in parts:
            part.out, part.out_tokens = part.value, part.tokens
    else:
        truncated = True
        room = max_tokens
        while sum(p.copies for p in parts) * MIN_RESULT_TOKENS > room:
            victims = [p for p in parts if p is not structured_part]
            if victims:
                parts.remove(victims[-1])
                dropped.add(victims[-1].block)  # type: ignore[arg-type]
            elif mirrors and structured_part is not None:
                dropped.add(mirrors.pop())
                structured_part.copies -= 1
            else:
                break
            note = f"[{_plural(len(dropped), 'more content block')} omitted to fit the budget]"
            room = max_tokens - count(note)
        if note is not None and sum(p.copies for p in parts) * MIN_RESULT_TOKENS > room:
            note, room = None, max_tokens  # no room left to say so; ``truncated`` still does
        _share_budget(parts, room, str(strategy), count, DEFAULT_MAX_DEPTH)

    for part in parts:
        if part.block is None:
            continue
        block = blocks[part.block]
        if block.get("type") == "text":
            block["text"] = part.out
        elif block.get("type") == "resource":
            block["resource"] = {**block["resource"], "text": part.out}
        else:
            blocks[part.block] = {"type": block.get("type"), **part.out}
    out_structured = structured_part.out if structured_part is not None else None
    if original <= max_tokens:
        tokens = original
    else:
        mirror_text = render_result(out_structured)
        for index in mirrors:
            blocks[index]["text"] = mirror_text
        tokens = sum(p.out_tokens * p.copies for p in parts)
    content = [b for i, b in enumerate(blocks) if i not in dropped]
    if note is not None:
        content.append({"type": "text", "text": note})
        tokens += count(note)
    return McpTruncationResult(content, out_structured, truncated, tokens, original, replaced)


# --------------------------------------------------------------------------------------------
# Summarisation


class Summarizer(Protocol):
    """Writes a summary of a large result; sync or async.

    Called as ``summarizer(text, tool_name=..., goal=...)`` where ``goal`` is the user's goal
    when known (else None). Returns the summary text (or an awaitable of it).
    """

    def __call__(self, text: str, *, tool_name: str, goal: str | None) -> str | Awaitable[str]: ...


# Sync summarisers run here, not in the loop's default executor: ``asyncio.run`` (the sync
# paths) waits for its default executor on exit, so a timed-out summariser would still hold
# the call for as long as it runs.
_SUMMARIZER_POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="toolmgmt-summarizer")


async def _call_summarizer(
    summarizer: Callable[..., Any], text: str, tool_name: str, goal: str | None
) -> Any:
    call = getattr(summarizer, "__call__", None)  # noqa: B004 - async __call__ on an object
    if inspect.iscoroutinefunction(summarizer) or inspect.iscoroutinefunction(call):
        result = await summarizer(text, tool_name=tool_name, goal=goal)
    else:
        run = functools.partial(
            contextvars.copy_context().run, summarizer, text, tool_name=tool_name, goal=goal
        )
        result = await asyncio.get_running_loop().run_in_executor(_SUMMARIZER_POOL, run)
    if inspect.isawaitable(result):
        result = await result
    return result


async def summarize_result(
    value: Any,
    summarizer: Callable[..., Any],
    max_tokens: int,
    *,
    tool_name: str,
    goal: str | None = None,
    threshold: int | None = None,
    timeout: float | None = 30.0,
    input_tokens: int | None = None,
    strategy: Strategy | str = "smart",
    encoding: str | Encoding = DEFAULT_ENCODING,
) -> TruncationResult:
    """A summary of ``value`` when it is over ``threshold`` tokens, else ``truncate_result``.

    The summary is itself capped at ``max_tokens``. When the summariser raises, times out or
    returns something other than a string, the truncated result is returned instead, with a
    ``note`` starting ``SummaryFailed:`` that says why.

    Args:
        value: the tool result (a string or a JSON-compatible value).
        summarizer: a sync or async callable ``(text, *, tool_name, goal) -> str``; a sync one
            runs in a worker thread (which is left to finish on its own after a timeout).
        max_tokens: the budget of what is returned.
        tool_name: the tool that produced the result, passed to the summariser.
        goal: the user's goal when known, passed to the summariser.
        threshold: summarise only results over this many tokens; None uses ``max_tokens``.
        timeout: seconds the summariser may take; None waits for ever.
        input_tokens: cut what the summariser reads to this many tokens first (None: all).
        strategy: the truncation strategy, for the fallback and the summary's cap.
        encoding: the tokenizer.
    """
    _check_budget(max_tokens, strategy)
    enc = get_encoding(encoding) if isinstance(encoding, str) else encoding
    count = counter(enc)
    fallback = _truncate(value, max_tokens, str(strategy), count, DEFAULT_MAX_DEPTH)
    limit = max_tokens if threshold is None else threshold
    if fallback.original_tokens <= limit:
        return fallback
    if input_tokens is not None:
        source = _truncate(
            value,
            max(input_tokens, MIN_RESULT_TOKENS),
            str(strategy),
            count,
            DEFAULT_MAX_DEPTH,
            fallback.original_tokens,
        )
        text = source.text
    else:
        text = render_result(value)
    # asyncio.wait rather than wait_for: a TimeoutError the summariser raises itself is a
    # failure like any other, not our timeout.
    task = asyncio.ensure_future(_call_summarizer(summarizer, text, tool_name, goal))
    done, _ = await asyncio.wait({task}, timeout=timeout)
    if not done:
        task.cancel()
        return dataclasses.replace(fallback, note=f"SummaryFailed: timed out after {timeout:g} s")
    try:
        summary = task.result()
    except Exception as exc:  # a summariser is user code: any failure falls back
        reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return dataclasses.replace(fallback, note=f"SummaryFailed: {reason}")
    if not isinstance(summary, str) or not summary.strip():
        got = "an empty string" if isinstance(summary, str) else type(summary).__name__
        return dataclasses.replace(
            fallback, note=f"SummaryFailed: the summariser returned {got}, expected text"
        )
    capped = _truncate(summary, max_tokens, str(strategy), count, DEFAULT_MAX_DEPTH)
    return TruncationResult(
        capped.value,
        capped.text,
        True,
        capped.tokens,
        fallback.original_tokens,
        "summary",
        "summary cut to the budget" if capped.truncated else None,
    )


_SYNC_RUNNER = ThreadPoolExecutor(max_workers=4, thread_name_prefix="toolmgmt-summary")


def summarize_result_sync(
    value: Any, summarizer: Callable[..., Any], max_tokens: int, **options: Any
) -> TruncationResult:
    """:func:`summarize_result` for synchronous code (safe inside a running event loop too)."""
    future = _SYNC_RUNNER.submit(
        asyncio.run, summarize_result(value, summarizer, max_tokens, **options)
    )
    return future.result()
