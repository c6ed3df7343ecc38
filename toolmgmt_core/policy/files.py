"""Policy files: profiles and policy steps read from TOML or JSON, errors pointing at the line.

A policy file holds an optional default profile, custom profiles by name and the ordered steps::

    profile = "support"                 # optional: the default profile

    [profiles.support]
    include = ["domain:crm", "readonly"]
    exclude = ["admin_*"]
    description_overrides = { read_file = "Read a file. Only files under src/." }

    [[policies]]
    label = "global"
    deny = ["admin_*"]
    require_approval = ["destructive"]

    [[policies]]
    label = "agent"
    allow = ["domain:crm", "domain:email"]

A JSON file has the same keys, or is just the list of steps. :func:`load_policy_file` reads one
into a :class:`PolicyFile`; ``ToolManager(policies=path)`` and
:class:`~toolmgmt_core.PolicyView` take its path directly.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolmgmt_core.model.errors import ConfigError
from toolmgmt_core.policy.profiles import Profile, get_profile, parse_pattern
from toolmgmt_core.policy.steps import POLICY_KEYS, Policy

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "PolicyFile",
    "load_policy_file",
    "load_profile",
]

_PROFILE_KEYS = ("include", "exclude", "description_overrides")


@dataclass(frozen=True)
class PolicyFile:
    """The contents of a TOML or JSON policy file."""

    path: str
    """Where it was read from."""
    profiles: dict[str, Profile]
    """Custom profiles by name."""
    policies: list[Policy]
    """The policy steps, in order."""
    profile: str | None = None
    """The default profile the file names, if any."""


_TOML_WHERE = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")
_TOML_END = re.compile(r"\s*\(at end of document\)\s*$")


def _line_of(text: str, needle: str, start: int = 1) -> int | None:
    """The first line at or after ``start`` (1-based) holding ``needle`` as a key or value."""
    lines = text.splitlines()
    quoted = (f'"{needle}"', f"'{needle}'")
    for number in range(max(start, 1), len(lines) + 1):
        line = lines[number - 1]
        bare = re.match(rf"\s*{re.escape(needle)}\s*=", line)
        if bare or any(q in line for q in quoted) or re.search(rf"\.{re.escape(needle)}\]", line):
            return number
    return None


def load_policy_file(path: str | Path) -> PolicyFile:
    """Read profiles and policy steps from a TOML (``.toml``) or JSON file.

    The file has an optional ``profile`` (the default profile's name), a ``profiles`` table of
    custom profiles by name and a ``policies`` list of steps (see the module docstring). A JSON
    file may also be just the list of steps.

    Raises:
        ConfigError: the file is missing or invalid; the message gives the file, the line and
            the problem (a syntax error, an unknown key, a bad pattern).
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"Cannot read policy file {str(file)!r}: {exc.strerror or exc}.") from exc
    is_toml = file.suffix.casefold() == ".toml"
    if not is_toml and file.suffix.casefold() != ".json":
        raise ConfigError(
            f"Policy file {str(file)!r}: unknown format {file.suffix or '(no suffix)'!r}; use a "
            ".toml or .json file."
        )
    try:
        data: Any = tomllib.loads(text) if is_toml else json.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        where = _TOML_WHERE.search(message)
        if where:
            lineno, colno = int(where.group(1)), int(where.group(2))
        else:  # "(at end of document)"
            lineno = text.count("\n") + 1
            colno = len(text) - text.rfind("\n")
        problem = _TOML_WHERE.sub("", getattr(exc, "msg", None) or message)
        problem = _TOML_END.sub("", problem)
        raise ConfigError(
            f"{file}, line {lineno}, column {colno}: invalid TOML: {problem}."
        ) from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{file}, line {exc.lineno}, column {exc.colno}: invalid JSON: {exc.msg}."
        ) from exc

    def fail(problem: str, *needles: str, start: int = 1) -> ConfigError:
        line = start
        for needle in needles:
            found = _line_of(text, needle, start)
            if found is not None:
                line = found
                break
        return ConfigError(f"{file}, line {line}: {problem}")

    if isinstance(data, list):
        data = {"policies": data}
    if not isinstance(data, dict):
        raise fail(f"expected a table/object with 'profiles' and 'policies', got {data!r}.")
    top_keys = ("profile", "profiles", "policies")
    for key in data:
        if key not in top_keys:
            raise fail(f"unknown top-level key {key!r}; valid keys: {', '.join(top_keys)}.", key)

    profiles: dict[str, Profile] = {}
    raw_profiles = data.get("profiles", {})
    if not isinstance(raw_profiles, dict):
        raise fail("'profiles' must be a table of profiles by name.", "profiles")
    for name, body in raw_profiles.items():
        start = _line_of(text, name) or 1
        profiles[name] = _build(
            functools.partial(Profile.from_dict, name=name),
            body,
            _PROFILE_KEYS,
            fail,
            start,
            f"profile {name!r}",
        )

    policies: list[Policy] = []
    raw_policies = data.get("policies", [])
    if not isinstance(raw_policies, list):
        raise fail("'policies' must be a list of steps ([[policies]] in TOML).", "policies")
    headers = [i + 1 for i, line in enumerate(text.splitlines()) if line.strip() == "[[policies]]"]
    for index, body in enumerate(raw_policies):
        label = body.get("label") if isinstance(body, dict) else None
        found = headers[index] if index < len(headers) else None
        if found is None and isinstance(label, str):
            found = _line_of(text, label)
        start = found or 1
        policies.append(
            _build(Policy.from_dict, body, POLICY_KEYS, fail, start, f"policy #{index + 1}")
        )

    default = data.get("profile")
    if default is not None:
        if not isinstance(default, str):
            raise fail("'profile' must be a profile name.", "profile")
        try:
            get_profile(default, profiles)
        except ConfigError as exc:
            raise fail(str(exc), "profile") from exc
    return PolicyFile(str(file), profiles, policies, default)


def _build(
    make: Callable[[Any], Any],
    body: Any,
    valid: Sequence[str],
    fail: Callable[..., ConfigError],
    start: int,
    what: str,
) -> Any:
    """Build one profile or step, pointing an error at the line of the bad key or pattern."""
    if not isinstance(body, dict):
        raise fail(f"{what} must be a table/object, got {body!r}.", start=start)
    for key, value in body.items():
        if key not in valid and key not in ("label", "name"):
            raise fail(
                f"{what}: unknown key {key!r}; valid keys: {', '.join(valid)}.", key, start=start
            )
        if key in ("include", "exclude", "allow", "deny", "require_approval"):
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, list):
                raise fail(
                    f"{what}: {key!r} must be a list of patterns, got {value!r}.", key, start=start
                )
            for item in items:
                try:
                    parse_pattern(item)
                except ConfigError as exc:
                    raise fail(f"{what}: {exc}", str(item), key, start=start) from exc
    try:
        return make(body)
    except ConfigError as exc:
        raise fail(f"{what}: {exc}", *body, start=start) from exc


def load_profile(path: str | Path, name: str) -> Profile:
    """The profile ``name`` from a TOML or JSON policy file (see :func:`load_policy_file`).

    Raises:
        ConfigError: the file is invalid (with file and line) or has no such profile; the
            message lists the known profiles.
    """
    return get_profile(name, load_policy_file(path).profiles)
