"""The declarative steps of the policy pipeline and what a policy decision hands out.

A :class:`Policy` is one labelled step after the profile (``global``, ``agent``, ``user``...):
it denies, allows, overrides descriptions and asks for approval by pattern (the patterns of
:mod:`toolmgmt_core._policy.profiles`). :class:`Approval` says which calls need approval and
who gives it, :class:`ApprovalRequest` what an approver is asked about, :class:`Explanation`
what ``explain`` answers. How the steps are applied, in order and
narrowing only, is :class:`~toolmgmt_core.PolicyView`'s; reading them from a file is
:mod:`toolmgmt_core._policy.files`'.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._model.names import fold_name
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._policy.profiles import (
    Profile,
    ToolPattern,
    _check_overrides,
    may_match,
    parse_patterns,
)
from toolmgmt_core._policy.quarantine import quarantined
from toolmgmt_core._policy.verdicts import (
    ApprovalCallback,
    ApprovalEdit,
    ApprovalRequest,
    ApprovalResponse,
)

__all__ = [
    "POLICY_KEYS",
    "PROFILE_STEP",
    "Approval",
    "ApprovalCallback",
    "ApprovalEdit",
    "ApprovalRequest",
    "ApprovalResponse",
    "Decision",
    "Explanation",
    "Policy",
    "decide",
    "lint_steps",
    "may_pass",
]

POLICY_KEYS = (
    "label",
    "allow",
    "deny",
    "description_overrides",
    "require_approval",
    "domain",
    "quarantine",
    "quarantine_shadowing",
    "trusted",
)
"""The keys a policy step may have (in a mapping or a policy file)."""

PROFILE_STEP = "profile"
"""The label of the pipeline's first step, the profile."""


@dataclass(frozen=True)
class Policy:
    """One labelled step of the policy pipeline.

    Usage::

        Policy("global", deny=["admin_*", "group:billing/refunds"], require_approval=["delete_*"])
        Policy("agent", allow=["domain:crm"], description_overrides={"read_file": "Only src/."})
        Policy("review", quarantine=True, trusted=["notes_*"])  # text addressing the model
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
    quarantine: bool = False
    """Remove every tool whose text addresses the model (prompt injection: "ignore previous
    instructions", "always call this tool first", a chat template's role markers; see
    :mod:`toolmgmt_core._model.injection`, the linter's ``description-addresses-model``) until
    an operator who has read it lets it through with ``trusted``."""
    trusted: Sequence[str] = ()
    """Patterns of tools the quarantine lets through although their text addresses the model."""
    quarantine_shadowing: bool = False
    """Remove every tool that shadows another domain's (:mod:`toolmgmt_core._model.shadowing`)."""

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
        for flag in ("quarantine", "quarantine_shadowing"):
            if not isinstance(value := getattr(self, flag), bool):
                raise ConfigError(f"{owner}: {flag} must be true or false, got {value!r}.")
        for attr in ("allow", "deny", "require_approval", "trusted"):
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
        for attr in ("allow", "deny", "require_approval", "trusted"):
            if getattr(self, attr):
                data[attr] = [p.text for p in self._patterns(attr)]
        data.update({f: True for f in ("quarantine", "quarantine_shadowing") if getattr(self, f)})
        if self.description_overrides:
            data["description_overrides"] = dict(self.description_overrides)
        if self.domain is not None:
            data["domain"] = self.domain
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | Policy) -> Policy:
        """A step from a mapping with ``label``, ``allow``, ``deny``, ``description_overrides``,
        ``require_approval``, ``domain``, ``quarantine``, ``quarantine_shadowing``, ``trusted``.

        Raises:
            ConfigError: a missing label, an unknown key or a bad pattern, naming the valid keys.
        """
        if isinstance(data, Policy):
            return data
        if not isinstance(data, Mapping):
            raise ConfigError(f"A policy step must be a table/object, got {type(data).__name__}.")
        unknown = sorted(set(data) - set(POLICY_KEYS))
        if unknown:
            raise ConfigError(
                f"Policy {data.get('label', '?')!r}: unknown key {unknown[0]!r}; valid keys: "
                f"{', '.join(POLICY_KEYS)}."
            )
        if "label" not in data:
            raise ConfigError(
                "A policy step needs a 'label' (such as 'global', 'agent' or 'user')."
            )
        return cls(**data)


@dataclass(frozen=True)
class Approval:
    """Which calls need a yes before they run, and who says it.

    A call needs approval when a policy step's ``require_approval`` matches its tool, or when
    the tool is annotated destructive (and not read-only) while :attr:`destructive` is True.
    The :attr:`callback` decides it; without one, a framework's own approval does (LangGraph's
    ``interrupt()``, PydanticAI's deferred tools, an approver the LiteLLM runner is given); with
    neither, the call is refused (fail closed), through every integration alike.

    Usage::

        ToolManager(catalog, approval=Approval(callback=ask_a_human))
        ToolManager(catalog, approval=ask_a_human)           # the same, shorter
        ToolManager(catalog, approval=Approval(destructive=False))  # only require_approval
    """

    callback: ApprovalCallback | None = None
    """Decides each call that needs approval (sync or async); None leaves it to the
    framework's approval, else refuses."""
    destructive: bool = True
    """Whether tools annotated destructive need approval (the explicit opt-out is False)."""

    def __post_init__(self) -> None:
        if self.callback is not None and not callable(self.callback):
            raise ConfigError(
                "approval must be a callable taking an ApprovalRequest and returning a bool, an "
                f"ApprovalEdit or an ApprovalResponse (sync or async), got "
                f"{type(self.callback).__name__}."
            )
        if not isinstance(self.destructive, bool):
            raise ConfigError(
                f"Approval.destructive must be True or False, got {self.destructive!r}."
            )

    @classmethod
    def of(cls, value: Approval | ApprovalCallback | None) -> Approval:
        """``value`` as an :class:`Approval`: itself, a callback's, or the default.

        Raises:
            ConfigError: neither an Approval, a callable nor None.
        """
        if isinstance(value, Approval):
            return value
        return cls() if value is None else cls(callback=value)


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
class Decision:
    """Whether the profile and the steps let one tool through, and which step removed it."""

    allowed: bool
    """Whether the tool passes."""
    step: str | None = None
    """The label of the step that removed it (``profile`` for the profile), None when allowed."""
    pattern: str | None = None
    """The pattern that removed it, when one did."""
    reason: str = ""
    """Why, as the end of a sentence starting with the tool's name."""


def decide(
    tool: Tool,
    profile: Profile,
    steps: Sequence[Policy],
    ceiling: Profile | None = None,
    shadows: Mapping[str, str] | None = None,
) -> Decision:
    """Run ``tool`` through ``ceiling`` (when set), ``profile`` and ``steps``, in that order:
    the first that removes it decides (meta-tools are the caller's to let through first);
    ``shadows`` (name -> why) for the steps' ``quarantine_shadowing``."""
    if ceiling is not None and not ceiling.contains(tool):
        return Decision(
            False,
            PROFILE_STEP,
            None,
            f"not in the configured profile {ceiling.name!r} (a session's restored state can "
            f"only narrow it, here to {profile.name!r})",
        )
    excluded = profile.matching_exclude(tool)
    if excluded is not None:
        return Decision(
            False,
            PROFILE_STEP,
            excluded.text,
            f"excluded by profile {profile.name!r} (pattern {excluded.text!r})",
        )
    if profile.matching_include(tool) is None:
        wanted = ", ".join(p.text for p in profile.include_patterns)
        return Decision(
            False,
            PROFILE_STEP,
            None,
            f"not in profile {profile.name!r} (it includes only: {wanted})",
        )
    for step in steps:
        if not step.applies_to(tool.domain):
            continue
        denied = next((p for p in step._patterns("deny") if p.matches(tool)), None)
        if denied is not None:
            return Decision(
                False,
                step.label,
                denied.text,
                f"denied by step {step.label!r} (pattern {denied.text!r})",
            )
        allow = step._patterns("allow")
        if allow and not any(p.matches(tool) for p in allow):
            wanted = ", ".join(p.text for p in allow)
            return Decision(
                False,
                step.label,
                None,
                f"not allowed by step {step.label!r} (it allows only: {wanted})",
            )
        flags = (step.quarantine, step.quarantine_shadowing)
        why = quarantined(tool, step.label, flags, step._patterns("trusted"), shadows)
        if why is not None:
            return Decision(False, step.label, None, why)
    return Decision(True, reason="passes the profile and every policy step")


def may_pass(
    domain: str,
    name: str | None,
    profile: Profile,
    steps: Sequence[Policy],
    ceiling: Profile | None = None,
    *,
    name_prefix: str = "",
    profiles: Sequence[str] = (),
) -> bool:
    """Whether a tool of ``domain`` named ``name`` (any name starting with ``name_prefix`` when
    None), declaring ``profiles``, could pass ``ceiling``, ``profile`` and ``steps``, whatever
    its group, keywords and annotations. False only when they hide every such tool for
    certain: for deciding about tools that do not exist yet (an MCP upstream never started for
    a caller when the policy denies its whole domain)."""

    def match(pattern: ToolPattern) -> bool | None:
        return may_match(pattern, domain, name, name_prefix=name_prefix, profiles=profiles)

    for current in (ceiling, profile):
        if current is None:
            continue
        if any(match(p) is True for p in current.exclude_patterns):
            return False
        declared = current.name in profiles
        if current.include and not declared:
            if all(match(p) is False for p in current.include_patterns):
                return False
    for step in steps:
        if not step.applies_to(domain):
            continue
        if any(match(p) is True for p in step._patterns("deny")):
            return False
        allow = step._patterns("allow")
        if allow and all(match(p) is False for p in allow):
            return False
    return True


def lint_steps(
    tools: list[Tool],
    allowed: frozenset[str],
    profile: Profile,
    steps: Sequence[Policy],
) -> list[str]:
    """Problems worth a look in ``profile`` and ``steps`` over the catalog's ``tools`` (of
    which ``allowed`` pass): patterns or description overrides that match no tool, or no tool
    passing at all."""
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
                    f"Description override for {name!r} in {where} names no tool in the catalog."
                )

    if not profile.builtin:
        check(profile.include_patterns, f"profile {profile.name!r} include")
        check(profile.exclude_patterns, f"profile {profile.name!r} exclude")
    check_overrides(profile.description_overrides, f"profile {profile.name!r}")
    for step in steps:
        for attr in ("allow", "deny", "require_approval"):
            check(step._patterns(attr), f"step {step.label!r} {attr}", step.domain)
        check_overrides(step.description_overrides, f"step {step.label!r}")
    if tools and not allowed:
        found.append(
            f"No catalog tool passes profile {profile.name!r} and the policy steps; the "
            "model can use only the meta-tools."
        )
    return found
