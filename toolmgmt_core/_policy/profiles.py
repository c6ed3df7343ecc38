"""Tool patterns and profiles: named sets of tools an agent may use.

A *pattern* names tools in one of these forms. Matching compares names as lookup does, through
:func:`~toolmgmt_core._model.names.fold_name` (case, unicode look-alikes, invisible characters,
separators) and against every name lookup reaches a tool by (its provider forms too:
:func:`~toolmgmt_core._model.names.name_forms`), so a pattern covers every spelling of a name that
lookup
would run as that name::

    search_contacts        an exact tool name
    admin_*  *_delete      a glob over names (fnmatch: * ? [seq])
    name:NAME              an exact name or glob, spelled out (for names holding a colon)
    domain:crm             every tool of a domain (globs allowed: domain:crm*)
    group:contacts         every tool of a group, in any domain; group:crm/contacts for one domain
    keyword:invoice        tools carrying that search keyword
    profile:support        tools that declare the profile in ``Tool.profiles``
    readonly               tools annotated read-only
    destructive            tools annotated destructive (and not read-only)
    openworld              tools annotated open-world (the web, other people)
    *                      every tool

A :class:`Profile` is a named set: tools matching an ``include`` pattern (or every tool when there
are none, or any tool declaring the profile's name in ``Tool.profiles``), minus tools matching an
``exclude`` pattern. Exclusion wins. Built-in profiles:

- ``full``: every tool.
- ``readonly``: tools annotated read-only.
- ``minimal``: the smallest safe set: read-only tools that stay inside your own systems (not
  annotated open-world), plus tools that declare ``profiles=("minimal",)``; open-world tools are
  left out even then. Meta-tools (search, schema, execute) are never removed by any profile.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._model.names import fold_pattern, fold_prefix, name_forms, provider_safe
from toolmgmt_core._model.tool import Tool

__all__ = [
    "BUILTIN_PROFILES",
    "PATTERN_FORMS",
    "Profile",
    "ToolPattern",
    "get_profile",
    "may_match",
    "parse_pattern",
    "parse_patterns",
]

PATTERN_FORMS = (
    "an exact name or a glob such as 'admin_*'",
    "'name:NAME'",
    "'domain:NAME'",
    "'group:NAME' or 'group:DOMAIN/GROUP'",
    "'keyword:NAME'",
    "'profile:NAME'",
    "'readonly'",
    "'destructive'",
    "'openworld'",
    "'*'",
)
"""The forms a pattern may take, for error messages."""

_PREFIXES = ("name", "domain", "group", "keyword", "profile")
_FLAGS = ("readonly", "destructive", "openworld")


def _glob(pattern: str, value: str) -> bool:
    """Whether ``value`` matches the folded glob ``pattern``, compared as names are: under any
    name lookup reaches it by (:func:`~toolmgmt_core._model.names.name_forms`), so a deny of
    ``files_delete`` covers ``files.delete`` and ``files_deleteé``, which a model calls as
    ``files_delete``."""
    return any(fnmatch.fnmatchcase(form, pattern) for form in name_forms(value))


@dataclass(frozen=True)
class ToolPattern:
    """One parsed pattern; :meth:`matches` tells whether a tool falls under it."""

    text: str
    """The pattern as written."""
    kind: str
    """``name``, ``domain``, ``group``, ``keyword``, ``profile``, ``readonly``, ``destructive``,
    ``openworld`` or ``all``."""
    value: str = ""
    """The name or glob after the prefix, folded as names are (empty for flags)."""

    def matches(self, tool: Tool) -> bool:
        """Whether ``tool`` falls under this pattern."""
        kind, value = self.kind, self.value
        if kind == "all":
            return True
        if kind == "name":
            return _glob(value, tool.name)
        if kind == "domain":
            return _glob(value, tool.domain)
        if kind == "group":
            if "/" in value:
                domain, group = value.split("/", 1)
                return _glob(domain, tool.domain) and _glob(group, tool.group)
            return _glob(value, tool.group)
        if kind == "keyword":
            return any(_glob(value, k) for k in tool.keywords)
        if kind == "profile":
            return any(_glob(value, p) for p in tool.profiles)
        annotations = tool.annotations
        if kind == "readonly":
            return annotations.read_only is True
        if kind == "destructive":
            return annotations.destructive is True and annotations.read_only is not True
        return annotations.open_world is True  # openworld

    def __str__(self) -> str:
        return self.text


def parse_pattern(text: str) -> ToolPattern:
    """Parse one pattern (see the module docstring for the forms).

    Raises:
        ConfigError: not a string, empty, or an unknown ``prefix:`` form; lists the valid forms.
    """
    if isinstance(text, ToolPattern):
        return text
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(
            f"A tool pattern must be a non-empty string, got {text!r}. Valid forms: "
            f"{', '.join(PATTERN_FORMS)}."
        )
    raw = text.strip()
    lowered = raw.casefold()
    if lowered == "*":
        return ToolPattern(text, "all")
    if lowered in _FLAGS:
        return ToolPattern(text, lowered)
    prefix, colon, rest = raw.partition(":")
    if colon:
        kind = prefix.strip().casefold()
        if kind not in _PREFIXES:
            raise ConfigError(
                f"Unknown pattern prefix {prefix!r} in {text!r}. Valid forms: "
                f"{', '.join(PATTERN_FORMS)}."
            )
        if not rest.strip():
            raise ConfigError(f"Pattern {text!r} names no {kind} after the colon.")
        if kind == "group" and "/" in rest:  # domain/group: "/" would fold to "_"
            domain, group = rest.split("/", 1)
            return ToolPattern(text, kind, f"{fold_pattern(domain)}/{fold_pattern(group)}")
        return ToolPattern(text, kind, fold_pattern(rest))
    return ToolPattern(text, "name", fold_pattern(raw))


def parse_patterns(patterns: str | Iterable[str] | None, *, what: str = "patterns") -> tuple:
    """Parse a list of patterns (a single string counts as one pattern).

    Raises:
        ConfigError: ``patterns`` is not a list of strings, or one pattern is invalid.
    """
    if patterns is None:
        return ()
    if isinstance(patterns, str | ToolPattern):
        patterns = [patterns]  # type: ignore[list-item]
    if isinstance(patterns, Mapping) or not isinstance(patterns, Iterable):
        raise ConfigError(
            f"{what} must be a list of pattern strings, got {type(patterns).__name__}."
        )
    return tuple(parse_pattern(p) for p in patterns)


def _check_overrides(overrides: Any, owner: str) -> Mapping[str, str]:
    if overrides is None:
        return MappingProxyType({})
    if not isinstance(overrides, Mapping):
        raise ConfigError(
            f"{owner}: description_overrides must map tool names to descriptions, got "
            f"{type(overrides).__name__}."
        )
    for key, value in overrides.items():
        if not isinstance(key, str) or not isinstance(value, str) or not value.strip():
            raise ConfigError(
                f"{owner}: description override {key!r} must map a tool name to a non-empty "
                f"description string, got {value!r}."
            )
    return MappingProxyType(dict(overrides))


@dataclass(frozen=True)
class Profile:
    """A named set of tools.

    Usage::

        support = Profile(
            "support",
            include=["domain:crm", "readonly"],
            exclude=["admin_*"],
            description_overrides={"read_file": "Read a file. Only files under src/."},
        )
        ToolManager(catalog, profile=support)
    """

    name: str
    """The profile's name (what ``set_profile`` and ``explain`` use)."""
    include: Sequence[str] = ()
    """Patterns of tools in the profile; none means every tool."""
    exclude: Sequence[str] = ()
    """Patterns of tools left out, even when included."""
    description_overrides: Mapping[str, str] = field(default_factory=dict)
    """Tool name -> the description this profile's agent sees instead of the tool's own."""
    builtin: bool = field(default=False, compare=False)
    """Whether this is one of the built-in profiles (its patterns are not linted)."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigError(f"A profile needs a non-empty name, got {self.name!r}.")
        owner = f"Profile {self.name!r}"
        object.__setattr__(self, "include", parse_patterns(self.include, what=f"{owner} include"))
        object.__setattr__(self, "exclude", parse_patterns(self.exclude, what=f"{owner} exclude"))
        object.__setattr__(
            self, "description_overrides", _check_overrides(self.description_overrides, owner)
        )

    @property
    def include_patterns(self) -> tuple[ToolPattern, ...]:
        """The parsed include patterns."""
        return tuple(self.include)  # type: ignore[arg-type]

    @property
    def exclude_patterns(self) -> tuple[ToolPattern, ...]:
        """The parsed exclude patterns."""
        return tuple(self.exclude)  # type: ignore[arg-type]

    def matching_include(self, tool: Tool) -> ToolPattern | None:
        """The first include pattern ``tool`` matches (``*`` when there are none), else None."""
        if not self.include:
            return ToolPattern("*", "all")
        if self.name in tool.profiles:
            return ToolPattern(f"profile:{self.name}", "profile", fold_pattern(self.name))
        return next((p for p in self.include_patterns if p.matches(tool)), None)

    def matching_exclude(self, tool: Tool) -> ToolPattern | None:
        """The first exclude pattern ``tool`` matches, else None."""
        return next((p for p in self.exclude_patterns if p.matches(tool)), None)

    def contains(self, tool: Tool) -> bool:
        """Whether ``tool`` is in this profile."""
        return self.matching_include(tool) is not None and self.matching_exclude(tool) is None

    def to_dict(self) -> dict[str, Any]:
        """The profile as plain JSON (what :meth:`from_dict` reads)."""
        data: dict[str, Any] = {"name": self.name}
        if self.include:
            data["include"] = [p.text for p in self.include_patterns]
        if self.exclude:
            data["exclude"] = [p.text for p in self.exclude_patterns]
        if self.description_overrides:
            data["description_overrides"] = dict(self.description_overrides)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, name: str | None = None) -> Profile:
        """A profile from a plain mapping with ``include``, ``exclude``, ``description_overrides``.

        Raises:
            ConfigError: an unknown key or a bad value, naming the valid keys.
        """
        if not isinstance(data, Mapping):
            raise ConfigError(f"A profile must be a table/object, got {type(data).__name__}.")
        data = dict(data)
        profile_name = data.pop("name", name)
        valid = ("name", "include", "exclude", "description_overrides")
        unknown = sorted(set(data) - set(valid))
        if unknown:
            raise ConfigError(
                f"Profile {profile_name!r}: unknown key {unknown[0]!r}; valid keys: "
                f"{', '.join(valid)}."
            )
        return cls(profile_name, **data)


BUILTIN_PROFILES: Mapping[str, Profile] = MappingProxyType(
    {
        "full": Profile("full", builtin=True),
        "minimal": Profile(
            "minimal", include=["readonly", "profile:minimal"], exclude=["openworld"], builtin=True
        ),
        "readonly": Profile("readonly", include=["readonly"], builtin=True),
    }
)
"""The built-in profiles: ``full``, ``minimal`` and ``readonly`` (see the module docstring)."""


def get_profile(
    profile: str | Profile | Mapping[str, Any] | None,
    known: Mapping[str, Profile] | Iterable[Profile] | None = None,
) -> Profile:
    """Resolve a profile given by name, as a :class:`Profile`, or as a plain mapping.

    Args:
        profile: a name (built-in or one of ``known``), a profile, a mapping, or None (``full``).
        known: custom profiles, by name or as a list, looked up before the built-ins.

    Raises:
        ConfigError: an unknown name; the message lists the known profiles.
    """
    if profile is None:
        return BUILTIN_PROFILES["full"]
    if isinstance(profile, Profile):
        return profile
    if isinstance(profile, Mapping):
        return Profile.from_dict(profile)
    if not isinstance(profile, str):
        raise ConfigError(
            f"profile must be a name, a Profile or None, got {type(profile).__name__}."
        )
    registry = _registry(known)
    found = registry.get(profile) or registry.get(profile.strip().casefold())
    if found is None:
        raise ConfigError(
            f"Unknown profile {profile!r}. Known profiles: {', '.join(sorted(registry))}."
        )
    return found


def _registry(known: Mapping[str, Profile] | Iterable[Profile] | None) -> dict[str, Profile]:
    registry = dict(BUILTIN_PROFILES)
    if known is None:
        return registry
    items = known.values() if isinstance(known, Mapping) else known
    for item in items:
        if not isinstance(item, Profile):
            raise ConfigError(f"profiles must hold Profile objects, got {type(item).__name__}.")
        registry[item.name] = item
    return registry


def may_match(
    pattern: ToolPattern,
    domain: str,
    name: str | None = None,
    *,
    name_prefix: str = "",
    profiles: Sequence[str] = (),
) -> bool | None:
    """Whether ``pattern`` matches a tool of ``domain`` named ``name`` (or any name starting
    with ``name_prefix`` when None) that declares ``profiles``, before the tool exists: True
    (every such tool), False (none), or None (it depends on what is not known yet: the group,
    keywords, annotations, or the rest of the name)."""
    kind, value = pattern.kind, pattern.value
    if kind == "all":
        return True
    if kind == "domain":
        return _glob(value, domain)
    if kind == "profile":
        return any(_glob(value, p) for p in profiles)
    if kind == "group" and "/" in value:
        if not _glob(value.split("/", 1)[0], domain):
            return False
        return None
    if kind != "name":
        return None  # group, keyword, annotations: known once the tool is
    if name is not None:
        return _glob(value, name)
    prefix = fold_prefix(name_prefix) if name_prefix else ""
    head = re.split(r"[*?\[]", value, maxsplit=1)[0]
    if value == head + "*" and prefix.startswith(head):
        return True  # "evil_*" matches every name of a domain whose names start "evil_"
    if head.startswith(prefix) or prefix.startswith(head):
        return None
    if provider_safe(name_prefix.strip()) != name_prefix.strip():
        return None  # a name's provider form may start otherwise ("évil_x" is sent as "vil_x")
    return False
