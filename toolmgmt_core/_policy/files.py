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
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolmgmt_core._config.document import ConfigDocument, ConfigTable
from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._policy.profiles import Profile, get_profile, parse_pattern
from toolmgmt_core._policy.steps import POLICY_KEYS, Policy

__all__ = [
    "PolicyFile",
    "load_policy_file",
    "load_profile",
]

_PROFILE_KEYS = ("include", "exclude", "description_overrides", "name")
_PATTERN_KEYS = ("include", "exclude", "allow", "deny", "require_approval")


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


def load_policy_file(path: str | Path) -> PolicyFile:
    """Read profiles and policy steps from a TOML (``.toml``) or JSON file.

    The file has an optional ``profile`` (the default profile's name), a ``profiles`` table of
    custom profiles by name and a ``policies`` list of steps (see the module docstring). A JSON
    file may also be just the list of steps.

    Raises:
        ConfigError: the file is missing or invalid; the message is
            ``file:line: key.path: problem`` (a syntax error, an unknown key, a bad pattern).
    """
    document = ConfigDocument.read(path, what="policy file")
    if isinstance(document.data, list):  # just the steps
        steps = [_table(document, (index,), body) for index, body in enumerate(document.data)]
        return PolicyFile(document.source, {}, [_step(step) for step in steps])
    if not isinstance(document.data, Mapping):
        raise document.error(
            (), f"expected a table/object with 'profiles' and 'policies', got {document.data!r}."
        )
    with document.collecting():  # every bad profile and step in one error, by line
        root = document.root(keys=("profile", "profiles", "policies"))
        profiles_table = root.table("profiles")
        profiles: dict[str, Profile] = {}
        for name in profiles_table:
            make = functools.partial(Profile.from_dict, name=name)
            read = functools.partial(_profile, profiles_table, name, make)
            profile = document.section(read, None)
            if profile is not None:
                profiles[name] = profile
        tables = root.tables("policies")  # each step's keys are checked in its own section
        read_steps = [functools.partial(_checked_step, table) for table in tables]
        policies: list[Policy | None] = [document.section(read, None) for read in read_steps]
        default = root.string("profile", None)
        if default is not None and not document.has_problems:
            try:
                get_profile(default, profiles)
            except ConfigError as exc:
                raise root.fail("profile", str(exc)) from exc
        return PolicyFile(
            document.source, profiles, [step for step in policies if step is not None], default
        )


def _table(document: ConfigDocument, path: tuple[int, ...], body: Any) -> ConfigTable:
    if not isinstance(body, Mapping):
        raise document.error(path, f"must be a table/object, got {type(body).__name__}.")
    return ConfigTable(document, path, body, POLICY_KEYS)


def _step(table: ConfigTable) -> Policy:
    return _build(Policy.from_dict, table)


def _checked_step(table: ConfigTable) -> Policy:
    """A step of ``policies``, its keys checked first."""
    return _step(ConfigTable(table.document, table.path, table.body, POLICY_KEYS))


def _profile(profiles: ConfigTable, name: str, make: Callable[[Any], Any]) -> Profile:
    """The profile ``name`` of the ``profiles`` table, its keys checked first."""
    built: Profile = _build(make, profiles.table(name, _PROFILE_KEYS))
    return built


def _build(make: Callable[[Any], Any], table: ConfigTable) -> Any:
    """Build one profile or step, pointing an error at the line of the bad key or pattern."""
    for key in _PATTERN_KEYS:
        if key in table:
            for index, item in enumerate(table.strings(key, of="patterns", single=True)):
                try:
                    parse_pattern(item)
                except ConfigError as exc:
                    path = (key,) if isinstance(table[key], str) else (key, index)
                    raise table.document.error((*table.path, *path), str(exc)) from exc
    try:
        return make(dict(table))
    except ConfigError as exc:
        raise table.fail(None, str(exc)) from exc


def load_profile(path: str | Path, name: str) -> Profile:
    """The profile ``name`` from a TOML or JSON policy file (see :func:`load_policy_file`).

    Raises:
        ConfigError: the file is invalid (``file:line: key.path: problem``) or has no such
            profile; the message lists the known profiles.
    """
    return get_profile(name, load_policy_file(path).profiles)
