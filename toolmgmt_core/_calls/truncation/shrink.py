"""Building a candidate within a character limit: sizes measured with early exit, strings cut
around a marker, JSON values shrunk by strategy (:class:`Shrinker`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from toolmgmt_core._calls.truncation.render import (
    _ELLIPSIS,
    _FAIR_SHARE_ITEMS,
    _MIN_SHRUNK,
    _NEEDS_ESCAPE,
    _dumps,
    _key_text,
)

__all__ = [
    "Shrinker",
]


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
    """The smallest size :meth:`Shrinker.shrink` can reach for ``value`` (of size ``size``)."""
    if isinstance(value, str):
        return min(size, 3)  # "…"
    if isinstance(value, Mapping):
        return min(size, 9)  # {"…":"…"}
    if isinstance(value, list | tuple):
        return min(size, 5)  # ["…"]
    return size


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


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


class Shrinker:
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
