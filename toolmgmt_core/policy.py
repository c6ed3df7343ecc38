"""The policy pipeline: which tools one agent may see and run, and why.

A :class:`PolicyView` puts a :class:`~toolmgmt_core.profiles.Profile` first and then an ordered
list of :class:`Policy` steps (for example ``global``, ``agent``, ``user``)::

    catalog ──> profile ──> Policy("global") ──> Policy("agent") ──> Policy("user") ──> visible

Each step can only narrow what the previous one passed on:

- a tool matching one of the step's ``deny`` patterns is removed (deny always wins: a later step
  cannot bring it back);
- when the step has ``allow`` patterns, a tool matching none of them is removed;
- a step with no ``allow`` patterns is transparent (it removes only what it denies).

Meta-tools (``Tool.metadata["meta"]``) are never removed, so a "deny everything" policy still
leaves the model able to search; the view narrows what the meta-tools reveal, never the
meta-tools themselves. Patterns are described in :mod:`toolmgmt_core.profiles`.

The session asks the view about every listing, search hit, browse entry, schema and call, so a
removed tool is invisible and uncallable through every door. :meth:`PolicyView.allows` is cached
per catalog version.

Policy files (TOML or JSON) hold profiles and steps::

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
"""

from __future__ import annotations

import fnmatch
import functools
import inspect
import json
import re
import sys
import threading
import warnings
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolmgmt_core.control import reraise_control_flow
from toolmgmt_core.errors import ApprovalDeniedError, ConfigError
from toolmgmt_core.meta_tools import is_meta_tool
from toolmgmt_core.names import fold_name
from toolmgmt_core.profiles import (
    BUILTIN_PROFILES,
    Profile,
    ToolPattern,
    _check_overrides,
    get_profile,
    parse_pattern,
    parse_patterns,
)
from toolmgmt_core.tool import Tool

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "ApprovalCallback",
    "ApprovalRequest",
    "Explanation",
    "Policy",
    "PolicyFile",
    "PolicyView",
    "is_meta_tool",
    "load_policy_file",
    "may_match",
]

PROFILE_STEP = "profile"
"""The label of the pipeline's first step, the profile."""


def _shown(value: Any, limit: int = 60) -> str:
    """``repr(value)`` clipped for a message: untrusted input is echoed, not resent."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _override_for(overrides: Mapping[str, str], name: str) -> str | None:
    """The override for tool ``name``, its key compared as names are (folded)."""
    found = overrides.get(name)
    if found is None and overrides:
        folded = fold_name(name)
        found = next((v for k, v in overrides.items() if fold_name(k) == folded), None)
    return found


@dataclass(frozen=True)
class Policy:
    """One labelled step of the policy pipeline.

    Usage::

        Policy("global", deny=["admin_*", "group:billing/refunds"], require_approval=["delete_*"])
        Policy("agent", allow=["domain:crm"], description_overrides={"read_file": "Only src/."})
    """

    label: str
    """What the step is (``global``, ``agent``, ``user``...); ``explain`` names it."""
    allow: Sequence[str] = ()
    """Patterns of tools this step lets through; none means every tool (a transparent step)."""
    deny: Sequence[str] = ()
    """Patterns of tools this step removes; deny wins over any allow, here or later."""
    description_overrides: Mapping[str, str] = field(default_factory=dict)
    """Tool name -> the description the model sees instead (a later step's override wins)."""
    require_approval: Sequence[str] = ()
    """Patterns of tools whose every call needs the approval callback's yes."""
    domain: str | None = None
    """When set, the step applies to this domain's tools only; the others pass it untouched
    (an MCP gateway's per-upstream policy)."""

    def __post_init__(self) -> None:
        if self.domain is not None and (not isinstance(self.domain, str) or not self.domain):
            raise ConfigError(
                f"Policy {self.label!r}: domain must be a domain name or None, got {self.domain!r}."
            )
        if not isinstance(self.label, str) or not self.label.strip():
            raise ConfigError(
                f"A policy step needs a non-empty label (such as 'global', 'agent' or 'user'), "
                f"got {self.label!r}."
            )
        owner = f"Policy {self.label!r}"
        for attr in ("allow", "deny", "require_approval"):
            value = parse_patterns(getattr(self, attr), what=f"{owner} {attr}")
            object.__setattr__(self, attr, value)
        object.__setattr__(
            self, "description_overrides", _check_overrides(self.description_overrides, owner)
        )

    def _patterns(self, attr: str) -> tuple[ToolPattern, ...]:
        return tuple(getattr(self, attr))

    def applies_to(self, domain: str) -> bool:
        """Whether this step decides about tools of ``domain`` (every domain when unscoped)."""
        return self.domain is None or fold_name(self.domain) == fold_name(domain)

    def to_dict(self) -> dict[str, Any]:
        """The step as plain JSON (what :meth:`from_dict` reads)."""
        data: dict[str, Any] = {"label": self.label}
        for attr in ("allow", "deny", "require_approval"):
            if getattr(self, attr):
                data[attr] = [p.text for p in self._patterns(attr)]
        if self.description_overrides:
            data["description_overrides"] = dict(self.description_overrides)
        if self.domain is not None:
            data["domain"] = self.domain
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | Policy) -> Policy:
        """A step from a mapping with ``label``, ``allow``, ``deny``, ``description_overrides``,
        ``require_approval`` and ``domain``.

        Raises:
            ConfigError: a missing label, an unknown key or a bad pattern, naming the valid keys.
        """
        if isinstance(data, Policy):
            return data
        if not isinstance(data, Mapping):
            raise ConfigError(f"A policy step must be a table/object, got {type(data).__name__}.")
        unknown = sorted(set(data) - set(_POLICY_KEYS))
        if unknown:
            raise ConfigError(
                f"Policy {data.get('label', '?')!r}: unknown key {unknown[0]!r}; valid keys: "
                f"{', '.join(_POLICY_KEYS)}."
            )
        if "label" not in data:
            raise ConfigError(
                "A policy step needs a 'label' (such as 'global', 'agent' or 'user')."
            )
        return cls(**data)


_POLICY_KEYS = ("label", "allow", "deny", "description_overrides", "require_approval", "domain")
_PROFILE_KEYS = ("include", "exclude", "description_overrides")


@dataclass(frozen=True)
class ApprovalRequest:
    """What an approval callback is asked about: one call of one tool."""

    tool: Tool
    """The tool about to run (as the model sees it)."""
    arguments: Mapping[str, Any]
    """The validated arguments of the call."""
    reason: str
    """Why approval is needed (the tool is destructive, or which step's pattern asks for it)."""


ApprovalCallback = Callable[[ApprovalRequest], "bool | Awaitable[bool]"]
"""Decides one call: return (or resolve to) True to run it, False to refuse it."""


@dataclass(frozen=True)
class Explanation:
    """Why a tool is or is not visible to an agent."""

    tool_name: str
    """The name asked about."""
    allowed: bool
    """Whether the tool is visible and callable."""
    step: str | None
    """The label of the step that removed it (``profile``, ``global``...), None when allowed."""
    reason: str
    """One sentence a developer can act on."""
    pattern: str | None = None
    """The pattern that decided it, when one did."""
    exists: bool = True
    """Whether the catalog (or the session's meta-tools) has a tool by that name."""
    needs_approval: bool = False
    """Whether each call needs the approval callback's yes."""
    description_from: str | None = None
    """The step whose description override the model sees, if any."""

    def __bool__(self) -> bool:
        return self.allowed

    def __str__(self) -> str:
        return self.reason

    def to_dict(self) -> dict[str, Any]:
        """The explanation as plain JSON."""
        return {
            "tool_name": self.tool_name,
            "allowed": self.allowed,
            "step": self.step,
            "reason": self.reason,
            "pattern": self.pattern,
            "exists": self.exists,
            "needs_approval": self.needs_approval,
            "description_from": self.description_from,
        }


@dataclass(frozen=True)
class _Decision:
    allowed: bool
    step: str | None = None
    pattern: str | None = None
    reason: str = ""


@dataclass
class _State:
    """What the view knows about one catalog version."""

    version: int | None
    allowed: frozenset[str]
    warnings: list[str]
    presented: dict[str, tuple[Tool, Tool]] = field(default_factory=dict)


class PolicyView:
    """A profile plus ordered policy steps over a catalog: the one place that decides visibility.

    Usage::

        view = PolicyView(catalog, "readonly", [Policy("global", deny=["admin_*"])])
        view.allows(catalog.get("search_contacts"))   # True / False
        view.present(tool)                            # with the description override applied
        view.explain("admin_reset")                   # which step removed it
        view.needs_approval(tool)

    Args:
        catalog: the tool catalog.
        profile: a profile name (``full``, ``minimal``, ``readonly`` or a custom one), a
            :class:`Profile`, or None for ``full``.
        policies: the steps after the profile, in order, as :class:`Policy` objects or mappings,
            or a path to a TOML/JSON policy file (its profiles become known by name).
        approval: a sync or async callback deciding calls that need approval; with one
            configured, destructive tools need approval too.
        profiles: custom profiles known by name (for ``profile`` and :meth:`with_profile`).
        ceiling: a profile every visible tool must also be in (see :meth:`narrowed`).

    Raises:
        ConfigError: an unknown profile (listing the known ones), a bad pattern or a bad file.
    """

    def __init__(
        self,
        catalog: Any,
        profile: str | Profile | Mapping[str, Any] | None = None,
        policies: Iterable[Policy | Mapping[str, Any]] | str | Path | PolicyFile | None = None,
        approval: ApprovalCallback | None = None,
        *,
        profiles: Mapping[str, Profile] | Iterable[Profile] | None = None,
        ceiling: Profile | None = None,
    ) -> None:
        known: dict[str, Profile] = {}
        if profiles is not None:
            items = profiles.values() if isinstance(profiles, Mapping) else profiles
            known.update({p.name: p for p in items})
        if isinstance(policies, str | Path):
            policies = load_policy_file(policies)
        if isinstance(policies, PolicyFile):
            known = {**policies.profiles, **known}
            if profile is None:
                profile = policies.profile
            policies = policies.policies
        if approval is not None and not callable(approval):
            raise ConfigError(
                f"approval must be a callable taking an ApprovalRequest and returning a bool "
                f"(sync or async), got {type(approval).__name__}."
            )
        self.catalog = catalog
        """The catalog this view filters."""
        self.known_profiles: dict[str, Profile] = known
        """Custom profiles known by name."""
        self.profile: Profile = get_profile(profile, known)
        """The profile, the pipeline's first step."""
        self.ceiling: Profile | None = None if ceiling == self.profile else ceiling
        """The configured profile this view is confined within (a profile chosen by restored
        session state can only narrow it, see :meth:`narrowed`), or None."""
        if not self.profile.builtin:
            known.setdefault(self.profile.name, self.profile)  # so sessions can switch back
        self.policies: tuple[Policy, ...] = tuple(
            Policy.from_dict(p)
            for p in (policies or ())  # type: ignore[arg-type]
        )
        """The steps after the profile, in order."""
        self.approval = approval
        """The approval callback, or None."""
        labels = [p.label for p in self.policies]
        duplicates = sorted({label for label in labels if labels.count(label) > 1})
        if duplicates or PROFILE_STEP in labels:
            clash = duplicates[0] if duplicates else PROFILE_STEP
            raise ConfigError(
                f"Policy label {clash!r} is used twice (the profile step is labelled "
                f"{PROFILE_STEP!r}); give each step its own label so explain() can name it."
            )
        self._state: _State | None = None
        self._lock = threading.Lock()
        self._warned: set[str] = set()
        # Views over the other profiles, shared by the whole family so that many sessions
        # switching to one profile share its cache.
        self._family: dict[tuple[str, str | None], PolicyView] = {
            (self.profile.name, self.ceiling.name if self.ceiling else None): self
        }
        self._family_lock = threading.Lock()
        if len(catalog):
            self._current()  # report patterns that match nothing now, where the view is built

    def with_profile(self, profile: str | Profile | Mapping[str, Any] | None) -> PolicyView:
        """The same policies and approval over another profile (for trusted code: it may widen
        what the agent sees; restored state goes through :meth:`narrowed` instead).

        Raises:
            ConfigError: an unknown profile name, listing the known ones.
        """
        return self._derived(get_profile(profile, self.known_profiles), None)

    def narrowed(self, name: str) -> PolicyView:
        """The view a restored session may choose: the known profile spelled exactly ``name``,
        confined within this view's profile, so restored state can narrow what the agent sees
        and never widen it (``"full"`` restored under a ``readonly`` manager stays read-only).

        Raises:
            ConfigError: ``name`` is not a string spelling a known profile exactly (inline
                profiles and look-alike names are refused); the message lists the known ones.
        """
        registry = {**BUILTIN_PROFILES, **self.known_profiles}
        chosen = registry.get(name) if isinstance(name, str) else None
        if chosen is None:
            raise ConfigError(
                f"Session state names profile {_shown(name)}, which is not one of this "
                f"manager's profiles ({', '.join(sorted(registry))}); state can only choose "
                "among them, by their exact name."
            )
        base = self.ceiling or self.profile
        return self._derived(chosen, base)

    def _derived(self, chosen: Profile, ceiling: Profile | None) -> PolicyView:
        if ceiling is not None and (ceiling == chosen or not (ceiling.include or ceiling.exclude)):
            ceiling = None  # no ceiling below it, or one that holds every tool
        if chosen == self.profile and ceiling == self.ceiling:
            return self
        key = (chosen.name, ceiling.name if ceiling is not None else None)
        with self._family_lock:
            derived = self._family.get(key)
            if derived is None or derived.profile != chosen or derived.ceiling != ceiling:
                derived = PolicyView(
                    self.catalog,
                    chosen,
                    self.policies,
                    self.approval,
                    profiles=self.known_profiles,
                    ceiling=ceiling,
                )
                derived._family, derived._family_lock = self._family, self._family_lock
                self._family[key] = derived
            return derived

    # -- decisions ------------------------------------------------------------------------

    def _is_meta(self, tool: Tool) -> bool:
        """A session meta-tool. A catalog tool never is, whatever its metadata says: a
        ``{"meta": True}`` flag must not lift it past every step and the approver."""
        return is_meta_tool(tool) and tool.name not in self.catalog

    def _decide(self, tool: Tool) -> _Decision:
        if self._is_meta(tool):
            return _Decision(True, reason="is a meta-tool; policies never remove meta-tools")
        ceiling = self.ceiling
        if ceiling is not None and not ceiling.contains(tool):
            return _Decision(
                False,
                PROFILE_STEP,
                None,
                f"not in the configured profile {ceiling.name!r} (a session's restored state can "
                f"only narrow it, here to {self.profile.name!r})",
            )
        profile = self.profile
        excluded = profile.matching_exclude(tool)
        if excluded is not None:
            return _Decision(
                False,
                PROFILE_STEP,
                excluded.text,
                f"excluded by profile {profile.name!r} (pattern {excluded.text!r})",
            )
        if profile.matching_include(tool) is None:
            wanted = ", ".join(p.text for p in profile.include_patterns)
            return _Decision(
                False,
                PROFILE_STEP,
                None,
                f"not in profile {profile.name!r} (it includes only: {wanted})",
            )
        for step in self.policies:
            if not step.applies_to(tool.domain):
                continue
            denied = next((p for p in step._patterns("deny") if p.matches(tool)), None)
            if denied is not None:
                return _Decision(
                    False,
                    step.label,
                    denied.text,
                    f"denied by step {step.label!r} (pattern {denied.text!r})",
                )
            allow = step._patterns("allow")
            if allow and not any(p.matches(tool) for p in allow):
                wanted = ", ".join(p.text for p in allow)
                return _Decision(
                    False,
                    step.label,
                    None,
                    f"not allowed by step {step.label!r} (it allows only: {wanted})",
                )
        return _Decision(True, reason="passes the profile and every policy step")

    def may_show(
        self,
        domain: str,
        name: str | None = None,
        *,
        name_prefix: str = "",
        profiles: Sequence[str] = (),
    ) -> bool:
        """Whether a tool of ``domain`` named ``name`` (any name starting with ``name_prefix``
        when None), declaring ``profiles``, could be visible, whatever its group, keywords and
        annotations. False only when the profile or a step hides every such tool for certain:
        for deciding about tools that do not exist yet (an MCP upstream never started for a
        caller when the policy denies its whole domain)."""

        def match(pattern: ToolPattern) -> bool | None:
            return may_match(pattern, domain, name, name_prefix=name_prefix, profiles=profiles)

        for profile in (self.ceiling, self.profile):
            if profile is None:
                continue
            if any(match(p) is True for p in profile.exclude_patterns):
                return False
            declared = profile.name in profiles
            if profile.include and not declared:
                if all(match(p) is False for p in profile.include_patterns):
                    return False
        for step in self.policies:
            if not step.applies_to(domain):
                continue
            if any(match(p) is True for p in step._patterns("deny")):
                return False
            allow = step._patterns("allow")
            if allow and all(match(p) is False for p in allow):
                return False
        return True

    def _current(self) -> _State:
        version = getattr(self.catalog, "version", None)
        state = self._state
        if state is not None and state.version == version:
            return state
        with self._lock:
            state = self._state
            if state is not None and state.version == version:
                return state
            tools = list(self.catalog)
            allowed = frozenset(t.name for t in tools if self._decide(t).allowed)
            state = _State(version, allowed, self._lint(tools, allowed))
            self._state = state
        for message in state.warnings:
            if message not in self._warned:
                self._warned.add(message)
                warnings.warn(message, UserWarning, stacklevel=3)
        return state

    def allows(self, tool: Tool | str) -> bool:
        """Whether the agent may see and call ``tool`` (a tool or a catalog name)."""
        if isinstance(tool, str):
            found = self.catalog.find(tool) if hasattr(self.catalog, "find") else None
            if found is None or found.name != tool:
                return False
            return self.allows(found)
        if tool.name in self._current().allowed or self._is_meta(tool):
            return True
        return tool.name not in self.catalog and self._decide(tool).allowed

    __call__ = allows

    def filter(self, tools: Iterable[Tool]) -> list[Tool]:
        """The tools the agent may see, in order, as the model sees them."""
        return [self.present(t) for t in tools if self.allows(t)]

    def description_override(self, tool: Tool) -> tuple[str, str] | None:
        """(step label, description) of the override the model sees for ``tool``, if any."""
        if self._is_meta(tool):
            return None
        found: tuple[str, str] | None = None
        override = _override_for(self.profile.description_overrides, tool.name)
        if override is not None:
            found = (PROFILE_STEP, override)
        for step in self.policies:
            override = _override_for(step.description_overrides, tool.name)
            if override is not None and step.applies_to(tool.domain):
                found = (step.label, override)
        return found

    def present(self, tool: Tool) -> Tool:
        """``tool`` as the model sees it: with the description override applied, if any."""
        override = self.description_override(tool)
        if override is None or override[1] == tool.description:
            return tool
        state = self._current()
        cached = state.presented.get(tool.name)
        if cached is not None and cached[0] is tool:
            return cached[1]
        presented = tool.replace(description=override[1])
        state.presented[tool.name] = (tool, presented)
        return presented

    def approval_reason(self, tool: Tool) -> str | None:
        """Why calls of ``tool`` need approval, or None when they do not."""
        if self._is_meta(tool):
            return None
        for step in self.policies:
            if not step.applies_to(tool.domain):
                continue
            pattern = next((p for p in step._patterns("require_approval") if p.matches(tool)), None)
            if pattern is not None:
                return f"step {step.label!r} requires approval for {pattern.text!r}"
        if self.approval is not None and tool.annotations.destructive is True:
            if tool.annotations.read_only is not True:
                return "the tool is annotated destructive"
        return None

    def needs_approval(self, tool: Tool) -> bool:
        """Whether each call of ``tool`` needs the approval callback's yes."""
        return self.approval_reason(tool) is not None

    async def check_approval(self, tool: Tool, arguments: Mapping[str, Any]) -> None:
        """Ask the approval callback about one call, when the tool needs it.

        A callback that raises refuses the call (fail closed).

        Raises:
            ApprovalDeniedError: the callback said no, failed, or none is configured while a
                step requires approval; the message tells the model not to retry unchanged.
        """
        reason = self.approval_reason(tool)
        if reason is None:
            return
        name = tool.name
        if self.approval is None:
            raise ApprovalDeniedError(
                f"Calling {name!r} needs approval and no approver is configured, so it did not "
                "run. Choose another tool or ask the user.",
                tool_name=name,
            )
        request = ApprovalRequest(tool, dict(arguments), reason)
        try:
            decision = self.approval(request)
            if inspect.isawaitable(decision):
                decision = await decision
        except ApprovalDeniedError:
            raise
        except Exception as exc:
            reraise_control_flow(exc)
            raise ApprovalDeniedError(
                f"The approval check for {name!r} failed ({type(exc).__name__}), so the call "
                "did not run.",
                tool_name=name,
            ) from exc
        if decision is not True:
            raise ApprovalDeniedError(
                f"The call to {name!r} was refused by the approver and did not run. Do not retry "
                "it unchanged; ask the user or choose another approach.",
                tool_name=name,
            )

    # -- reporting ------------------------------------------------------------------------

    def explain(self, name: str) -> Explanation:
        """Why the tool named ``name`` is visible or not (for developers, not for the model)."""
        tool = self.catalog.find(name) if hasattr(self.catalog, "find") else None
        if tool is None:
            return Explanation(
                name,
                False,
                None,
                f"There is no tool named {name!r} in the catalog.",
                exists=False,
            )
        decision = self._decide(tool)
        override = self.description_override(tool) if decision.allowed else None
        if decision.allowed:
            reason = f"{tool.name!r} {decision.reason}."
        else:
            reason = f"{tool.name!r} is hidden: {decision.reason}."
        return Explanation(
            tool.name,
            decision.allowed,
            decision.step,
            reason,
            decision.pattern,
            needs_approval=decision.allowed and self.needs_approval(tool),
            description_from=override[0] if override else None,
        )

    @property
    def warnings(self) -> list[str]:
        """Problems worth a look: patterns or overrides that match no tool in the catalog."""
        return list(self._current().warnings)

    def _lint(self, tools: list[Tool], allowed: frozenset[str]) -> list[str]:
        found: list[str] = []
        names = {fold_name(t.name) for t in tools}

        def check(patterns: Iterable[ToolPattern], where: str, domain: str | None = None) -> None:
            scope = [t for t in tools if domain is None or fold_name(t.domain) == fold_name(domain)]
            for pattern in patterns:
                if not any(pattern.matches(t) for t in scope):
                    found.append(f"Pattern {pattern.text!r} in {where} matches no tool.")

        def check_overrides(overrides: Mapping[str, str], where: str) -> None:
            for name in overrides:
                if fold_name(name) not in names:
                    found.append(
                        f"Description override for {name!r} in {where} names no tool in the "
                        "catalog."
                    )

        profile = self.profile
        if not profile.builtin:
            check(profile.include_patterns, f"profile {profile.name!r} include")
            check(profile.exclude_patterns, f"profile {profile.name!r} exclude")
        check_overrides(profile.description_overrides, f"profile {profile.name!r}")
        for step in self.policies:
            for attr in ("allow", "deny", "require_approval"):
                check(step._patterns(attr), f"step {step.label!r} {attr}", step.domain)
            check_overrides(step.description_overrides, f"step {step.label!r}")
        if tools and not allowed:
            found.append(
                f"No catalog tool passes profile {profile.name!r} and the policy steps; the "
                "model can use only the meta-tools."
            )
        return found

    def __repr__(self) -> str:
        steps = ", ".join(p.label for p in self.policies)
        return f"PolicyView(profile={self.profile.name!r}, steps=[{steps}])"


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
        return fnmatch.fnmatchcase(fold_name(domain), value)
    if kind == "profile":
        return any(fnmatch.fnmatchcase(fold_name(p), value) for p in profiles)
    if kind == "group" and "/" in value:
        if not fnmatch.fnmatchcase(fold_name(domain), value.split("/", 1)[0]):
            return False
        return None
    if kind != "name":
        return None  # group, keyword, annotations: known once the tool is
    if name is not None:
        return fnmatch.fnmatchcase(fold_name(name), value)
    prefix = fold_name(name_prefix) if name_prefix else ""
    head = re.split(r"[*?\[]", value, maxsplit=1)[0]
    if value == head + "*" and prefix.startswith(head):
        return True  # "evil_*" matches every name of a domain whose names start "evil_"
    if head.startswith(prefix) or prefix.startswith(head):
        return None
    return False


# -- files ------------------------------------------------------------------------------------


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
            _build(Policy.from_dict, body, _POLICY_KEYS, fail, start, f"policy #{index + 1}")
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
