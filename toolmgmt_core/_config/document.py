"""Configuration files, read one way: TOML or JSON text, typed values, one error format.

Policy files (:mod:`toolmgmt_core._policy.files`), the gateway's config
(``toolmgmt_gateway.config_file``) and catalog files (:mod:`toolmgmt_core._catalog.sources`) are
read through a :class:`ConfigDocument`, and each value is taken through a :class:`ConfigTable`
accessor that checks it. Every problem, from a file that cannot be read to a value out of
range, is reported the same way::

    gateway.toml:12: upstreams.notes.timeout: must be a number of seconds, more than 0, got 0.
    policy.json:4: policies[0].deny[1]: Unknown pattern prefix 'domian' ...
    tools.json:3: invalid JSON: Expecting value (column 19).
    notes.toml: cannot read the gateway config: no such file.

that is ``file:line: key.path: problem``, where the line is the one that sets the key (found
by :mod:`toolmgmt_core._config.lines`; left out when the key is not in the file) and the
key path is left out when the problem is the whole file's. Within
:meth:`ConfigDocument.collecting`, an accessor's problem is noted and its default used, so one
error lists every problem of the file, by line. Usage::

    document = ConfigDocument.read("gateway.toml", what="gateway config")
    gateway = document.root().table("gateway", keys={"port", "token", "token_env"})
    port = gateway.integer("port", 8765, low=0, high=65535)
    token = gateway.secret("token")            # token = "...", or token_env = "VARIABLE"
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

from toolmgmt_core._config.lines import KeyPath, key_lines, key_path
from toolmgmt_core._model.errors import ConfigError, ToolmgmtError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "ConfigDocument",
    "ConfigTable",
    "config_problem",
    "key_path",
]

Format = Literal["toml", "json"]
_Default = TypeVar("_Default")
_Choice = TypeVar("_Choice", bound=str)
_REQUIRED: Any = object()
_TOML_WHERE = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_END = re.compile(r"\s*\(at end of document\)\s*$")


def config_problem(source: str, problem: str, path: KeyPath = (), line: int | None = None) -> str:
    """The one format of a configuration problem: ``file:line: key.path: problem``.

    The line is left out when unknown, the key path when the problem is the whole file's.
    """
    place = f"{source}:{line}" if line else source
    return f"{place}: {key_path(path)}: {problem}" if path else f"{place}: {problem}"


def _choices(values: Sequence[object]) -> str:
    shown = [repr(v) for v in values]
    return shown[0] if len(shown) == 1 else f"{', '.join(shown[:-1])} or {shown[-1]}"


class ConfigDocument:
    """A configuration file's data, with where each key path of it is written.

    Args:
        data: the parsed document.
        text: its text (to find the line of a key path); "" when there is none.
        source: where it came from, for messages (a path, ``<config>``).
        fmt: ``toml`` or ``json``, how ``text`` is written.
        error: the exception raised for a problem (:class:`ConfigError`, or a subclass of
            :class:`ToolmgmtError` such as ``CatalogSourceError``).
        depth: the deepest key paths given their own line (a deeper one is given its
            parent's): a large file (a catalog) is then indexed in a bounded time.
    """

    def __init__(
        self,
        data: Any,
        *,
        text: str = "",
        source: str = "<config>",
        fmt: Format = "json",
        error: type[ToolmgmtError] = ConfigError,
        depth: int = 8,
    ) -> None:
        self.data = data
        self.text = text
        self.source = source
        self.fmt = fmt
        self.error_type = error
        self.depth = depth
        self._lines: dict[KeyPath, int] | None = None
        self._noted: list[tuple[int, str]] | None = None

    @classmethod
    def read(
        cls,
        path: str | os.PathLike[str],
        *,
        what: str = "config file",
        fmt: Format | None = None,
        error: type[ToolmgmtError] = ConfigError,
        depth: int = 8,
    ) -> ConfigDocument:
        """Read and parse a file: TOML or JSON by its suffix (``.toml``, ``.json``) or ``fmt``.

        Args:
            path: the file.
            what: what the file is, for messages ("policy file", "gateway config").
            fmt: the format whatever the suffix; None: by the suffix, any other one refused.
            error: the exception raised for a problem.
            depth: see :class:`ConfigDocument`.

        Raises:
            ToolmgmtError: ``error``: the file is missing, a directory, unreadable, not UTF-8,
                of an unknown format, or does not parse (with its line).
        """
        file = Path(path)
        source = str(file)
        if fmt is None:
            suffix = file.suffix.casefold()
            if suffix not in (".toml", ".json"):
                raise error(
                    config_problem(
                        source,
                        f"unknown format {file.suffix or '(no suffix)'!r}; use a .toml or .json "
                        "file.",
                    )
                )
            fmt = "toml" if suffix == ".toml" else "json"
        try:
            text = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            reason = "no such file"
        except IsADirectoryError:
            reason = "is a directory"
        except UnicodeDecodeError as exc:
            reason = f"not UTF-8 text (byte {exc.start})"
        except OSError as exc:
            reason = str(exc.strerror or exc)
        else:
            return cls.parse(text, source=source, fmt=fmt, error=error, depth=depth)
        raise error(config_problem(source, f"cannot read the {what}: {reason}."))

    @classmethod
    def parse(
        cls,
        text: str,
        *,
        source: str = "<config>",
        fmt: Format = "toml",
        error: type[ToolmgmtError] = ConfigError,
        depth: int = 8,
    ) -> ConfigDocument:
        """Parse TOML or JSON text (``depth``: see :class:`ConfigDocument`).

        Raises:
            ToolmgmtError: ``error``: the text does not parse; the message gives its line and
                column (``file:3: invalid JSON: Expecting value (column 19).``).
        """
        try:
            data = tomllib.loads(text) if fmt == "toml" else json.loads(text)
        except tomllib.TOMLDecodeError as exc:
            message = str(exc)
            where = _TOML_WHERE.search(message)
            if where:
                line, column = int(where.group(1)), int(where.group(2))
            else:  # "(at end of document)"
                line = text.count("\n") + 1
                column = len(text) - text.rfind("\n")
            problem = _TOML_END.sub("", _TOML_WHERE.sub("", getattr(exc, "msg", None) or message))
            raise error(
                config_problem(source, f"invalid TOML: {problem} (column {column}).", line=line)
            ) from exc
        except json.JSONDecodeError as exc:
            raise error(
                config_problem(
                    source, f"invalid JSON: {exc.msg} (column {exc.colno}).", line=exc.lineno
                )
            ) from exc
        except RecursionError:
            raise error(
                config_problem(source, f"invalid {fmt.upper()}: nested too deeply.")
            ) from None
        return cls(data, text=text, source=source, fmt=fmt, error=error, depth=depth)

    def line_of(self, path: KeyPath) -> int | None:
        """The line that sets ``path``, else that of its deepest parent in the text, or None."""
        if self._lines is None:
            self._lines = key_lines(self.text, self.fmt, max_depth=self.depth) if self.text else {}
        for end in range(len(path), 0, -1):
            line = self._lines.get(path[:end])
            if line is not None:
                return line
        return None

    def problem(self, path: KeyPath, problem: str) -> str:
        """``problem`` at ``path`` in the one format: ``file:line: key.path: problem``."""
        return config_problem(self.source, problem, path, self.line_of(path))

    def error(self, path: KeyPath, problem: str) -> ToolmgmtError:
        """The exception to raise for ``problem`` at ``path`` (see :meth:`problem`)."""
        return self.error_type(self.problem(path, problem))

    @contextmanager
    def collecting(self) -> Iterator[None]:
        """Note every problem of the block, then raise the document's error listing them all,
        one a line, by line number (a noted value takes its default; a raised one ends it)."""
        self._noted = []
        try:
            yield
        except self.error_type as exc:
            self.note(exc)
        finally:
            noted, self._noted = self._noted, None
        if noted:  # by line (a problem of the whole file, line 0, first), each once
            raise self.error_type("\n".join(message for _, message in sorted(set(noted))))

    @property
    def has_problems(self) -> bool:
        """Whether the current :meth:`collecting` block noted a problem."""
        return bool(self._noted)

    def note(self, error: ToolmgmtError) -> bool:
        """Note ``error`` when collecting (and say so); False: the caller raises it."""
        if self._noted is None:
            return False
        line = re.match(rf"{re.escape(self.source)}:(\d+):", str(error))
        self._noted.append((int(line.group(1)) if line else 0, str(error)))
        return True

    def section(self, read: Callable[[], _Default], fallback: _Default) -> _Default:
        """``read()``, stopping at its first problem; when collecting, that problem is noted
        and ``fallback`` returned, so the sections after it are still checked."""
        noted, self._noted = self._noted, None  # within one section, the first problem only
        try:
            return read()
        except self.error_type as exc:
            self._noted = noted
            if not self.note(exc):
                raise
            return fallback
        finally:
            self._noted = noted

    def root(self, keys: Collection[str] | None = None) -> ConfigTable:
        """The top of the document as a table.

        Raises:
            ToolmgmtError: the top is not a table, or holds a key not in ``keys``.
        """
        if not isinstance(self.data, Mapping):
            raise self.error((), "the top level must be a table/object.")
        return ConfigTable(self, (), self.data, keys)


class ConfigTable(Mapping[str, Any]):
    """One table of a :class:`ConfigDocument`, its values taken through checking accessors.

    Each accessor returns the value or its default when the key is absent, and raises the
    document's error at the key's line, naming what is valid, when it is there but wrong.

    Args:
        document: the document.
        path: where this table is in it.
        body: the table.
        keys: the keys it may hold (in the order messages list them); None: any.
    """

    def __init__(
        self,
        document: ConfigDocument,
        path: KeyPath,
        body: Mapping[str, Any],
        keys: Collection[str] | None = None,
    ) -> None:
        self.document = document
        self.path = path
        self.body = body
        if keys is not None:
            for key in body:
                if key not in keys:
                    self._bad(key, f"unknown key; valid keys: {', '.join(keys)}.", None)

    def __getitem__(self, key: str) -> Any:
        return self.body[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.body)

    def __len__(self) -> int:
        return len(self.body)

    def fail(self, key: str | int | None, problem: str) -> ToolmgmtError:
        """The error for ``problem`` at ``key`` of this table (None: the table itself)."""
        return self.document.error(self.path if key is None else (*self.path, key), problem)

    def _bad(self, key: str, problem: str, fallback: _Default) -> _Default:
        """Raise the error for ``problem`` at ``key``, or, when collecting, note it and go on
        with ``fallback``."""
        error = self.fail(key, problem)
        if not self.document.note(error):
            raise error
        return fallback

    def table(
        self, key: str, keys: Collection[str] | None = None, *, value: Any = _REQUIRED
    ) -> ConfigTable:
        """The table at ``key`` (empty when absent); ``value``: check this instead of the
        table's own value at ``key`` (a default, or a value already taken from it).

        Raises:
            ToolmgmtError: it is not a table, or holds a key not in ``keys``.
        """
        body = self.body.get(key, {}) if value is _REQUIRED else value
        if not isinstance(body, Mapping):
            raise self.fail(key, f"must be a table/object, got {type(body).__name__}.")
        return ConfigTable(self.document, (*self.path, key), body, keys)

    def tables(self, key: str, keys: Collection[str] | None = None) -> list[ConfigTable]:
        """The list of tables at ``key`` (``[[key]]`` in TOML), each checked as by :meth:`table`.

        Raises:
            ToolmgmtError: it is not a list, or an item is not a table or holds a key not in
                ``keys``.
        """
        items = self.body.get(key, [])
        if not isinstance(items, list):
            raise self.fail(key, f"must be a list of tables, got {type(items).__name__}.")
        path = (*self.path, key)
        tables = []
        for index, body in enumerate(items):
            if not isinstance(body, Mapping):
                raise self.document.error(
                    (*path, index), f"must be a table/object, got {type(body).__name__}."
                )
            tables.append(ConfigTable(self.document, (*path, index), body, keys))
        return tables

    @overload
    def string(self, key: str, default: str = ...) -> str: ...
    @overload
    def string(self, key: str, default: _Default) -> str | _Default: ...
    def string(self, key: str, default: Any = _REQUIRED) -> Any:
        """A non-empty string (``default`` when absent; required without one)."""
        if key not in self.body and default is not _REQUIRED:
            return default
        value = self._get(key, default)
        if not isinstance(value, str) or not value:
            if default is _REQUIRED:
                raise self.fail(key, f"must be a non-empty string, got {value!r}.")
            return self._bad(key, f"must be a non-empty string, got {value!r}.", default)
        return value

    @overload
    def choice(self, key: str, choices: Sequence[_Choice], default: _Choice) -> _Choice: ...
    @overload
    def choice(self, key: str, choices: Sequence[_Choice], default: None) -> _Choice | None: ...
    def choice(self, key: str, choices: Sequence[Any], default: Any) -> Any:
        """One of ``choices`` (``default`` when absent)."""
        if key not in self.body:
            return default
        value = self.body[key]
        if value not in choices:
            return self._bad(key, f"must be {_choices(choices)}, got {value!r}.", default)
        return value

    def integer(self, key: str, default: int, *, low: int, high: int) -> int:
        """A whole number from ``low`` to ``high`` (``default`` when absent)."""
        value = self.body.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            problem = f"must be a whole number from {low} to {high}, got {value!r}."
            return self._bad(key, problem, default)
        return value

    def seconds(self, key: str, default: float, *, allow_zero: bool = False) -> float:
        """A finite number of seconds, more than 0 (or 0 too; ``default`` when absent)."""
        value = self.body.get(key, default)
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            floor = "0 or more" if allow_zero else "more than 0"
            return self._bad(key, f"must be a number of seconds, {floor}, got {value!r}.", default)
        return float(value)

    def boolean(self, key: str, default: bool) -> bool:
        """``true`` or ``false`` (``default`` when absent)."""
        value = self.body.get(key, default)
        if not isinstance(value, bool):
            return self._bad(key, f"must be true or false, got {value!r}.", default)
        return value

    def strings(
        self, key: str, default: Sequence[str] = (), *, of: str = "strings", single: bool = False
    ) -> tuple[str, ...]:
        """A list of strings (``default`` when absent); ``single``: one string is a list of
        one; ``of`` names the items in the message ("patterns")."""
        value = self.body.get(key, default)
        if single and isinstance(value, str):
            return (value,)
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            return self._bad(key, f"must be a list of {of}, got {value!r}.", tuple(default))
        return tuple(value)

    def string_map(self, key: str) -> dict[str, str]:
        """A table of strings by name (empty when absent)."""
        table = self.table(key)
        out: dict[str, str] = {}
        for name, item in table.items():
            if not isinstance(item, str):
                raise table.fail(str(name), f"must be a string, got {item!r}.")
            out[str(name)] = item
        return out

    def secret(self, key: str) -> str | None:
        """``key``'s string, or the value of the environment variable ``<key>_env`` names
        (for secrets: a token, a password in a URL), or None when neither is set.

        Raises:
            ToolmgmtError: both are set, or the variable is not set or empty.
        """
        env_key = f"{key}_env"
        if key in self.body and env_key in self.body:
            raise self.fail(env_key, f"set {key} or {env_key}, not both.")
        if env_key in self.body:
            variable = self.string(env_key)
            value = os.environ.get(variable)
            if not value:
                raise self.fail(env_key, f"environment variable {variable!r} is not set or empty.")
            return value
        return self.string(key, None)

    def _get(self, key: str, default: Any) -> Any:
        if key in self.body:
            return self.body[key]
        if default is _REQUIRED:
            raise self.fail(key, "is required.")
        return default
