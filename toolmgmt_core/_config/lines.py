"""Where each key path of a TOML or JSON document is written: the line an error points at.

Neither ``tomllib`` nor ``json`` keeps positions, so :func:`key_lines` reads the text once more
(after it parsed) and notes the line of every key and every list item, by key path
(``("upstreams", "notes", "timeout")``, ``("policies", 1, "deny", 0)``): TOML table headers,
arrays of tables (numbered as ``tomllib`` numbers their items), dotted keys, inline tables,
multi-line arrays and strings; JSON objects and arrays. Paths deeper than ``max_depth`` are
not noted (an error there points at their deepest noted parent), so a large catalog file costs
a bounded index.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Literal

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "KeyPath",
    "key_lines",
    "key_path",
]

KeyPath = tuple[str | int, ...]
"""Keys of tables (str) and indexes of lists (int, from 0), from the top of a document."""

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def key_path(path: KeyPath) -> str:
    """A key path as written in messages: ``upstreams.notes.timeout``, ``policies[1].deny``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            shown = part if _BARE_KEY.fullmatch(part) else json.dumps(part, ensure_ascii=False)
            text += f".{shown}" if text else shown
    return text

_SPACE = " \t"
_SCALAR_END = ",]}#\r\n"
_TOML_STRINGS = (
    re.compile(r'"""(?:[^\\]|\\.)*?"""(?:"{1,2}(?!"))?', re.DOTALL),
    re.compile(r"'''.*?'''(?:'{1,2}(?!'))?", re.DOTALL),
    re.compile(r'"(?:[^"\\\n]|\\.)*"'),
    re.compile(r"'[^'\n]*'"),
)
"""Multi-line basic and literal strings (up to two quotes of their content may touch the
closing delimiter), then one-line basic and literal strings."""
_JSON = json.JSONDecoder()


def key_lines(text: str, fmt: Literal["toml", "json"], *, max_depth: int = 8) -> dict[KeyPath, int]:
    """The 1-based line of each key path of ``text`` (already known to parse), to ``max_depth``.

    A path is noted where it first appears: a table by its header (or the first dotted key
    that makes it), a key where it is set, a list item where it starts. Text that does not scan
    (it should not happen: it parsed) gives what was noted before the problem.
    """
    scanner = _Scanner(text, max_depth)
    try:
        if fmt == "toml":
            scanner.toml_document()
        else:
            scanner.json_value(())
    except (IndexError, ValueError, RecursionError):
        pass
    return scanner.found


class _Scanner:
    def __init__(self, text: str, max_depth: int) -> None:
        self.text = text
        self.pos = 0
        self.line = 1
        self.max_depth = max_depth
        self.found: dict[KeyPath, int] = {}

    # -- moving -----------------------------------------------------------------------------

    def _peek(self, token: str = "") -> bool:
        return self.text.startswith(token, self.pos) if token else self.pos < len(self.text)

    def _advance(self, count: int = 1) -> None:
        end = self.pos + count
        self.line += self.text.count("\n", self.pos, end)
        self.pos = end

    def _expect(self, token: str) -> None:
        if not self._peek(token):
            raise ValueError(f"expected {token!r} at line {self.line}")
        self._advance(len(token))

    def _skip(self, *, newlines: bool, comments: bool = True) -> None:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in _SPACE or (newlines and char in "\r\n"):
                self._advance()
            elif comments and char == "#":
                end = text.find("\n", self.pos)
                self._advance((len(text) if end < 0 else end) - self.pos)
            else:
                return

    def _note(self, path: KeyPath, line: int) -> None:
        if len(path) <= self.max_depth:
            self.found.setdefault(path, line)

    # -- TOML -------------------------------------------------------------------------------

    def toml_document(self) -> None:
        table: KeyPath = ()
        arrays: dict[KeyPath, int] = {}  # array-of-tables path -> items so far
        while True:
            self._skip(newlines=True)
            if not self._peek():
                return
            line = self.line
            if self._peek("[["):
                self._advance(2)
                keys = self._toml_keys()
                self._skip(newlines=False)
                self._expect("]]")
                parent = self._toml_table(keys[:-1], arrays, line)
                path = (*parent, keys[-1])
                self._note(path, line)
                count = arrays.get(path, 0)
                arrays[path] = count + 1
                table = (*path, count)
                self._note(table, line)
            elif self._peek("["):
                self._advance()
                keys = self._toml_keys()
                self._skip(newlines=False)
                self._expect("]")
                table = self._toml_table(keys, arrays, line)
            else:
                self._toml_pair(table, line)

    def _toml_table(self, keys: KeyPath, arrays: dict[KeyPath, int], line: int) -> KeyPath:
        """The path a header names: an array of tables along the way means its last item."""
        path: KeyPath = ()
        for key in keys:
            path = (*path, key)
            self._note(path, line)
            if path in arrays:
                path = (*path, arrays[path] - 1)
        return path

    def _toml_pair(self, table: KeyPath, line: int) -> None:
        keys = self._toml_keys()
        self._skip(newlines=False)
        self._expect("=")
        path = table
        for key in keys:
            path = (*path, key)
            self._note(path, line)
        self._skip(newlines=False)
        self._toml_value(path)

    def _toml_keys(self) -> KeyPath:
        keys: list[str] = []
        while True:
            self._skip(newlines=False, comments=False)
            if self._peek('"') or self._peek("'"):
                start = self.pos
                self._string_literal()
                keys.append(tomllib.loads("k = " + self.text[start : self.pos])["k"])
            else:
                bare = _BARE_KEY.match(self.text, self.pos)
                if bare is None:
                    raise ValueError(f"expected a key at line {self.line}")
                keys.append(bare.group())
                self._advance(len(bare.group()))
            self._skip(newlines=False, comments=False)
            if not self._peek("."):
                return tuple(keys)
            self._advance()

    def _toml_value(self, path: KeyPath) -> None:
        if self._peek('"') or self._peek("'"):
            self._string_literal()
        elif self._peek("["):
            self._advance()
            index = 0
            while True:
                self._skip(newlines=True)
                if self._peek("]"):
                    self._advance()
                    return
                item = (*path, index)
                self._note(item, self.line)
                self._toml_value(item)
                self._skip(newlines=True)
                if self._peek(","):
                    self._advance()
                index += 1
        elif self._peek("{"):
            self._advance()
            while True:
                self._skip(newlines=True)
                if self._peek("}"):
                    self._advance()
                    return
                self._toml_pair(path, self.line)
                self._skip(newlines=True)
                if self._peek(","):
                    self._advance()
        else:  # a number, a boolean or a date (which may hold a space)
            start = self.pos
            while self.pos < len(self.text) and self.text[self.pos] not in _SCALAR_END:
                self.pos += 1
            if self.pos == start:
                raise ValueError(f"expected a value at line {self.line}")

    def _string_literal(self) -> None:
        """Past one TOML string: basic or literal, one line or several."""
        for pattern in _TOML_STRINGS:
            found = pattern.match(self.text, self.pos)
            if found:
                self._advance(found.end() - self.pos)
                return
        raise ValueError(f"unterminated string at line {self.line}")

    # -- JSON -------------------------------------------------------------------------------

    def json_value(self, path: KeyPath) -> None:
        self._skip(newlines=True, comments=False)
        if len(path) >= self.max_depth or not (self._peek("{") or self._peek("[")):
            _, end = _JSON.raw_decode(self.text, self.pos)  # in C: a string, a number, a deep value
            self._advance(end - self.pos)
        elif self._peek("{"):
            self._advance()
            while True:
                self._skip(newlines=True, comments=False)
                if self._peek("}"):
                    self._advance()
                    return
                line = self.line
                key, end = _JSON.raw_decode(self.text, self.pos)
                self._advance(end - self.pos)
                self._note((*path, key), line)
                self._skip(newlines=True, comments=False)
                self._expect(":")
                self.json_value((*path, key))
                self._skip(newlines=True, comments=False)
                if self._peek(","):
                    self._advance()
        else:
            self._advance()
            index = 0
            while True:
                self._skip(newlines=True, comments=False)
                if self._peek("]"):
                    self._advance()
                    return
                self._note((*path, index), self.line)
                self.json_value((*path, index))
                self._skip(newlines=True, comments=False)
                if self._peek(","):
                    self._advance()
                index += 1
