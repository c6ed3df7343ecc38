"""Property: listing and execution always agree, for random policies over random catalogs.

A tool is callable (by its own name, directly or through ``execute_tool``) iff the session lists
it as visible; whatever a call by any name runs is visible; and search, browse and ``explain``
tell the same story.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolmgmt_core import (
    Access,
    Approval,
    ConfigError,
    Discovery,
    Policy,
    Profile,
    Tool,
    ToolCatalog,
    ToolManager,
    ToolSession,
)
from toolmgmt_core._model.names import fold_name
from toolmgmt_core._policy.profiles import get_profile

NAMES = [
    "read_a",
    "read_b",
    "admin_x",
    "Admin_Y",
    "admin_y",
    "crm.get",
    "crm_get",
    "delete_all",
    "send mail",
    "fetch-url",
]
PATTERNS = [
    "read_a",
    "admin_*",
    "*_y",
    "crm?get",
    "name:crm.*",
    "domain:fs",
    "domain:c*",
    "group:g1",
    "group:crm/g2",
    "keyword:k1",
    "profile:p1",
    "readonly",
    "destructive",
    "openworld",
    "*",
]
flags = st.sampled_from([None, True, False])


def _handler(name: str):
    def run(**kwargs: Any) -> dict[str, str]:
        return {"ran": name}

    return run


@st.composite
def catalogs(draw) -> ToolCatalog:
    # Names that fold alike cannot share a catalog (one is refused), so at most one of them.
    chosen = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=8, unique_by=fold_name))
    tools = [
        Tool(
            name,
            f"Tool {name} does a thing.",
            domain=draw(st.sampled_from(["fs", "crm", "code"])),
            group=draw(st.sampled_from(["g1", "g2"])),
            keywords=tuple(draw(st.lists(st.sampled_from(["k1", "k2"]), max_size=2))),
            profiles=tuple(draw(st.lists(st.sampled_from(["p1"]), max_size=1))),
            annotations={
                "read_only": draw(flags),
                "destructive": draw(flags),
                "open_world": draw(flags),
            },
            handler=_handler(name),
        )
        for name in chosen
    ]
    return ToolCatalog(tools)


patterns = st.lists(st.sampled_from(PATTERNS), max_size=3)
profiles = st.one_of(
    st.sampled_from(["full", "minimal", "readonly"]),
    st.builds(lambda i, e: Profile("custom", include=i, exclude=e), patterns, patterns),
)
policies = st.lists(
    st.builds(
        lambda i, a, d: Policy(f"step{i}", allow=a, deny=d), st.integers(), patterns, patterns
    ),
    max_size=3,
    unique_by=lambda p: p.label,
)


def _expected(catalog: ToolCatalog, profile: Profile, steps: list[Policy]) -> set[str]:
    """The pipeline's meaning, spelled out: in the profile, then per step deny wins and a step
    with allow patterns keeps only what they match."""

    def passes(tool: Tool, step: Policy) -> bool:
        if any(p.matches(tool) for p in step.deny):  # type: ignore[attr-defined]
            return False
        allow = step.allow
        return not allow or any(p.matches(tool) for p in allow)  # type: ignore[attr-defined]

    return {t.name for t in catalog if profile.contains(t) and all(passes(t, s) for s in steps)}


def _check_agreement(session: ToolSession, expected: set[str]) -> None:
    catalog, mode = session.manager.catalog, session.manager.mode
    visible = {t.name for t in session.visible_tools()}
    assert visible == expected
    meta = {t.name for t in session.manager.meta_tools()}

    # What is listed is visible (or a meta-tool), and explain agrees with the listing.
    assert {t.name for t in session.tools()} <= visible | meta
    for tool in catalog:
        assert session.explain(tool.name).allowed == (tool.name in visible)

    # Discovery only ever surfaces visible tools.
    if mode == "gateway":
        toc = session.call_sync("discover_tools", {}).value["domains"]
        assert sum(d["tools"] for d in toc.values()) == len(visible)
    elif "tool_search" in {t.name for t in session.tools()}:
        found = session.call_sync("tool_search", {"query": ".", "method": "regex"}).value
        assert set(found["found"]) <= visible

    for tool in catalog:
        direct = session.call_sync(tool.name, {})
        if tool.name in visible:
            assert direct.value == {"ran": tool.name}, direct.content
        else:
            # Refused, or (a forgiving lookup) another tool that is visible itself.
            assert direct.is_error or direct.value["ran"] in visible
            assert direct.is_error or direct.value["ran"] != tool.name
        if mode == "gateway":
            # execute_tool resolves a name exactly as a direct call does: a hidden name that is
            # also a visible tool's provider form (crm_get for crm.get) runs that visible tool.
            via = session.call_sync("execute_tool", {"tool_name": tool.name, "arguments": {}})
            assert via.is_error == direct.is_error
            assert via.is_error or via.value == direct.value
        for variant in (tool.name.upper(), f" {tool.name} ", tool.name.replace("a", "\u0430")):
            result = session.call_sync(variant, {})
            assert result.is_error or result.value["ran"] in visible


@settings(
    max_examples=50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    catalog=catalogs(),
    profile=profiles,
    switch_to=profiles,
    steps=policies,
    mode=st.sampled_from(["search", "gateway", "lazy", "auto"]),
)
def test_listing_and_execution_always_agree(catalog, profile, switch_to, steps, mode) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # patterns matching nothing are expected here
        manager = ToolManager(
            catalog,
            mode,
            discovery=Discovery(call_unloaded="load"),
            access=Access(profile=profile, policies=steps),
            approval=Approval(destructive=False),  # visibility is what this checks
        )
        session = manager.session()
        _check_agreement(session, _expected(catalog, get_profile(profile), steps))
        # Mid-conversation, after loads and calls, switch profile: they still agree, within
        # the manager's profile (a ceiling).
        session.set_profile(switch_to)
        ceiling = _expected(catalog, get_profile(profile), steps)
        _check_agreement(session, ceiling & _expected(catalog, get_profile(switch_to), steps))
        # Restored state only narrows: its profile applies within the manager's own, and a
        # profile the manager does not know by name is refused.
        state = session.to_json()
        name = state.get("profile")
        known = manager.policy.known_profiles
        if name is not None and name not in {"full", "minimal", "readonly", *known}:
            with pytest.raises(ConfigError, match="not one of this manager's profiles"):
                manager.session(state)
            return
        restored = manager.session(state)
        chosen = get_profile(name, known) if name is not None else get_profile(profile)
        narrowed = _expected(catalog, get_profile(profile), steps)
        _check_agreement(restored, narrowed & _expected(catalog, chosen, steps))
