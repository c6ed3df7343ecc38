"""Checking a configuration file whole: every problem at once, and the names it gives tools.

A reader (:func:`~toolmgmt_core._policy.files.load_policy_file`, the gateway's ``load_config``)
stops a file that cannot run; what it accepts may still do nothing. A deny of a misspelled name
(``weather_get_histroy``) denies nothing while the tool it meant runs. :func:`pattern_findings`
holds a list of patterns against the tools they are meant for: an exact name that matches no
tool is an error naming the closest one, a pattern (a glob, ``domain:``, ``readonly``) that
matches none a warning (it may be meant for a tool to come). Each finding is said in the one
format of configuration problems (:mod:`toolmgmt_core._config.document`)::

    policy.toml:9: policies[0].deny[1]: 'weather_get_histroy' names no tool; did you mean
    'weather_get_history'?

``toolmgmt check --config FILE`` prints them; :func:`check_policy_file` is its check of a policy
file, and the gateway adds its own for a gateway config.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from toolmgmt_core._config.document import ConfigDocument
from toolmgmt_core._config.lines import KeyPath
from toolmgmt_core._model.errors import ConfigError, ToolmgmtError
from toolmgmt_core._model.names import fold_name
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._policy.files import load_policy_file
from toolmgmt_core._policy.profiles import ToolPattern, parse_pattern

__all__ = [
    "ConfigFinding",
    "check_policy_file",
    "name_findings",
    "pattern_findings",
    "reader_findings",
]

Severity = Literal["error", "warning", "info"]
_GLOB = frozenset("*?[")
_STEP_PATTERNS = ("allow", "deny", "require_approval")
_PROFILE_PATTERNS = ("include", "exclude")


@dataclass(frozen=True)
class ConfigFinding:
    """One problem of a configuration file."""

    severity: Severity
    """``error`` (the file does not do what it says; ``toolmgmt check`` exits 1), ``warning``
    or ``info`` (what was not checked, and why)."""
    message: str
    """``file:line: key.path: problem``."""

    def to_dict(self) -> dict[str, Any]:
        """The finding as plain JSON."""
        return dataclasses.asdict(self)


def reader_findings(error: ToolmgmtError) -> list[ConfigFinding]:
    """The problems a configuration reader raised, one error each (a reader collecting a
    file's problems raises them in one error, one a line)."""
    return [ConfigFinding("error", line) for line in str(error).splitlines() if line.strip()]


def _is_exact(pattern: ToolPattern) -> bool:
    return pattern.kind == "name" and not _GLOB & set(pattern.value)


def _closest(name: str, names: Sequence[str], prefix: str = "") -> str:
    """ "; did you mean 'NAME'?" for the closest of ``names`` (``prefix`` taken off), or "."."""
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return f"; did you mean {close[0].removeprefix(prefix)!r}?" if close else "."


def pattern_findings(
    document: ConfigDocument,
    path: KeyPath,
    tools: Sequence[Tool],
    *,
    domain: str | None = None,
    prefix: str = "",
) -> list[ConfigFinding]:
    """Each pattern of the list (or single pattern) at ``path`` in ``document`` that matches
    none of ``tools``: an error for an exact name (naming the closest tool), a warning for a
    pattern.

    Args:
        document: the file, its data and lines.
        path: where the patterns are (``("policy", "deny")``).
        tools: the tools they are meant for.
        domain: only the tools of this domain (a policy step scoped to one).
        prefix: put before each pattern, as the gateway does with an upstream's own globs.
    """
    value = _at(document.data, path)
    items = (
        [(path, value)]
        if isinstance(value, str)
        else [
            ((*path, index), item)
            for index, item in enumerate(value if isinstance(value, list) else ())
        ]
    )
    scope = [t for t in tools if domain is None or fold_name(t.domain) == fold_name(domain)]
    names = [t.name for t in scope]
    found = []
    for where, text in items:
        if not isinstance(text, str):
            continue
        try:
            pattern = parse_pattern(prefix + text)
        except ConfigError:  # the reader says so
            continue
        if any(pattern.matches(tool) for tool in scope):
            continue
        if _is_exact(pattern):
            hint = _closest(prefix + text, names, prefix)
            found.append(
                ConfigFinding("error", document.problem(where, f"{text!r} names no tool{hint}"))
            )
        else:
            in_scope = f" of domain {domain!r}" if domain else ""
            found.append(
                ConfigFinding(
                    "warning",
                    document.problem(
                        where, f"{text!r} matches none of the {len(scope)} tools{in_scope}."
                    ),
                )
            )
    return found


def name_findings(
    document: ConfigDocument, path: KeyPath, tools: Sequence[Tool]
) -> list[ConfigFinding]:
    """Each key of the table at ``path`` (tool names: description overrides) naming no tool."""
    table = _at(document.data, path)
    folded = {fold_name(t.name) for t in tools}
    names = [t.name for t in tools]
    return [
        ConfigFinding(
            "error", document.problem((*path, key), f"{key!r} names no tool{_closest(key, names)}")
        )
        for key in (table if isinstance(table, Mapping) else ())
        if fold_name(str(key)) not in folded
    ]


def check_policy_file(path: str | Path, tools: Sequence[Tool] | None) -> list[ConfigFinding]:
    """Every problem of a policy file: what its reader refuses, then (with ``tools``) each
    pattern, trusted name and description override that names no tool."""
    found: list[ConfigFinding] = []
    try:
        load_policy_file(path)
    except ConfigError as exc:
        found = reader_findings(exc)
    if tools is None:
        note = f"{path}: tool names not checked: pass --catalog."
        return [*found, ConfigFinding("info", note)]
    try:
        document = ConfigDocument.read(path, what="policy file")
    except ConfigError:  # the reader said why
        return found
    data = document.data
    if not isinstance(data, Mapping | list):
        return found
    steps: KeyPath = () if isinstance(data, list) else ("policies",)
    for index, step in enumerate(_at(data, steps) or ()):
        at = (*steps, index)
        if not isinstance(step, Mapping):
            continue
        domain = step.get("domain") if isinstance(step.get("domain"), str) else None
        for key in (*_STEP_PATTERNS, "trusted"):
            found += pattern_findings(document, (*at, key), tools, domain=domain)
        found += name_findings(document, (*at, "description_overrides"), tools)
    profiles = data.get("profiles", {}) if isinstance(data, Mapping) else {}
    for name in profiles:
        for key in _PROFILE_PATTERNS:
            found += pattern_findings(document, ("profiles", name, key), tools)
        found += name_findings(document, ("profiles", name, "description_overrides"), tools)
    return found


def _at(data: Any, path: KeyPath) -> Any:
    """The value at ``path`` in ``data``, or None."""
    for key in path:
        if isinstance(key, int) and isinstance(data, list) and key < len(data):
            data = data[key]
        elif isinstance(key, str) and isinstance(data, Mapping):
            data = data.get(key)
        else:
            return None
    return data
