"""The policy pipeline: which tools one agent may see and run, and why.

A :class:`PolicyView` puts a :class:`~toolmgmt_core.Profile` first and then an ordered
list of :class:`Policy` steps (for example ``global``, ``agent``, ``user``)::

    catalog ──> profile ──> Policy("global") ──> Policy("agent") ──> Policy("user") ──> visible

Each step can only narrow what the previous one passed on:

- a tool matching one of the step's ``deny`` patterns is removed (deny always wins: a later step
  cannot bring it back);
- when the step has ``allow`` patterns, a tool matching none of them is removed;
- a step with no ``allow`` patterns is transparent (it removes only what it denies).

Meta-tools (``Tool.metadata["meta"]``) are never removed, so a "deny everything" policy still
leaves the model able to search; the view narrows what the meta-tools reveal, never the
meta-tools themselves. Patterns are described in :mod:`toolmgmt_core._policy.profiles`.

The session asks the view about every listing, search hit, browse entry, schema and call, so a
removed tool is invisible and uncallable through every integration. :meth:`PolicyView.allows` is
cached per catalog version.

Steps are :class:`~toolmgmt_core.Policy` objects; policy files (TOML or JSON) that
hold profiles and steps are read by :mod:`toolmgmt_core._policy.files`.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolmgmt_core._model.errors import ConfigError
from toolmgmt_core._model.names import fold_name
from toolmgmt_core._model.shadowing import find_shadows
from toolmgmt_core._model.tool import Tool, is_meta_tool
from toolmgmt_core._policy.files import PolicyFile, load_policy_file
from toolmgmt_core._policy.profiles import BUILTIN_PROFILES, Profile, get_profile
from toolmgmt_core._policy.steps import (
    PROFILE_STEP,
    Approval,
    ApprovalCallback,
    Decision,
    Explanation,
    Policy,
    decide,
    lint_steps,
    may_pass,
)

__all__ = ["PolicyView"]


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
        approval: which calls need approval and who decides them: an
            :class:`~toolmgmt_core.Approval`, or its callback alone (destructive tools need
            approval unless ``Approval(destructive=False)``).
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
        approval: Approval | ApprovalCallback | None = None,
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
        self.approval: Approval = Approval.of(approval)
        """Which calls need approval, and the callback deciding them."""
        labels = [p.label for p in self.policies]
        duplicates = sorted({label for label in labels if labels.count(label) > 1})
        if duplicates or PROFILE_STEP in labels:
            clash = duplicates[0] if duplicates else PROFILE_STEP
            raise ConfigError(
                f"Policy label {clash!r} is used twice (the profile step is labelled "
                f"{PROFILE_STEP!r}); give each step its own label so explain() can name it."
            )
        self._state: _State | None = None
        self._shadows: tuple[int | None, dict[str, str]] | None = None
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

    def within(self, profile: str | Profile | Mapping[str, Any] | None) -> PolicyView:
        """The same policies and approval over ``profile``, confined within this view's own
        profile: a session may narrow what its manager allows, never widen it.

        Raises:
            ConfigError: an unknown profile name, listing the known ones.
        """
        return self._derived(
            get_profile(profile, self.known_profiles), self.ceiling or self.profile
        )

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

    def _decide(self, tool: Tool) -> Decision:
        if self._is_meta(tool):
            return Decision(True, reason="is a meta-tool; policies never remove meta-tools")
        shadows = self._shadow_map() if any(p.quarantine_shadowing for p in self.policies) else None
        return decide(tool, self.profile, self.policies, self.ceiling, shadows)

    def _shadow_map(self) -> dict[str, str]:
        """The catalog's tools that shadow another domain's, for this catalog version."""
        version = getattr(self.catalog, "version", None)
        cached = self._shadows
        if cached is None or cached[0] != version or version is None:
            cached = (version, find_shadows(list(self.catalog)))
            self._shadows = cached
        return cached[1]

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
        annotations (see :func:`~toolmgmt_core._policy.steps.may_pass`)."""
        return may_pass(
            domain,
            name,
            self.profile,
            self.policies,
            self.ceiling,
            name_prefix=name_prefix,
            profiles=profiles,
        )

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
            state = _State(
                version, allowed, lint_steps(tools, allowed, self.profile, self.policies)
            )
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
        """Why calls of ``tool`` need approval, or None when they do not: a step's
        ``require_approval``, a destructive tool, or the tool's own framework marker
        (``metadata["requires_approval"]``: its reason, or True; set by an adapter from, for
        example, PydanticAI's ``requires_approval``), whichever path reaches it."""
        if self._is_meta(tool):
            return None
        marker = tool.metadata.get("requires_approval")
        if marker:
            return marker if isinstance(marker, str) else "the tool requires approval"
        for step in self.policies:
            if not step.applies_to(tool.domain):
                continue
            pattern = next((p for p in step._patterns("require_approval") if p.matches(tool)), None)
            if pattern is not None:
                return f"step {step.label!r} requires approval for {pattern.text!r}"
        if self.approval.destructive and tool.annotations.destructive is True:
            if tool.annotations.read_only is not True:
                return "the tool is annotated destructive"
        return None

    def needs_approval(self, tool: Tool) -> bool:
        """Whether each call of ``tool`` needs the approval callback's yes."""
        return self.approval_reason(tool) is not None

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

    def __repr__(self) -> str:
        steps = ", ".join(p.label for p in self.policies)
        return f"PolicyView(profile={self.profile.name!r}, steps=[{steps}])"
