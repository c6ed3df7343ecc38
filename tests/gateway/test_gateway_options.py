"""Gateway options that reach the core: budgets, profile, and the policy steps built from the
gateway-wide ``[policy]`` and each upstream's own ``policy`` (no upstream processes needed)."""

from __future__ import annotations

import pytest

pytest.importorskip("mcp")

from toolmgmt_gateway import Gateway, parse_config  # noqa: E402

from toolmgmt_core import (
    Approval,
    Execution,
    Tool,  # noqa: E402
)

CONFIG = """\
[gateway]
max_result_tokens = 123
default_timeout = 7

[policy]
deny = ["notes_purge_*"]

[upstreams.notes]
command = "python"
policy = { allow = ["get_*", "list_*"], deny = ["get_secret"] }

[upstreams.files]
command = "python"
"""


def _gateway() -> Gateway:
    gateway = Gateway(parse_config(CONFIG))
    for domain, names in {
        "notes": ["get_note", "get_secret", "list_notes", "delete_note", "purge_all"],
        "files": ["read_file", "delete_file"],
    }.items():
        for name in names:
            gateway.catalog.add(Tool(f"{domain}_{name}", f"{name} tool.", domain=domain))
    return gateway


def test_budget_and_timeout_reach_the_manager() -> None:
    gateway = _gateway()
    manager = gateway.manager
    # The config file fills the core's own option objects, which the manager uses as they are.
    assert manager.result_budget.max_result_tokens == 123
    assert gateway.config.gateway.execution == Execution(timeout=7)
    # the same options, with the key and lifetime of code mode's paused runs added
    assert manager.execution.timeout == 7 and manager.execution.run_key is not None
    assert manager.policy.approval == Approval()  # destructive tools need approval by default


def test_upstream_policy_narrows_only_its_own_domain() -> None:
    session = _gateway().manager.session()
    visible = {t.name for t in session.visible_tools()}
    assert visible == {
        "notes_get_note",
        "notes_list_notes",
        "files_read_file",
        "files_delete_file",  # the notes allow list does not touch another domain
    }
    assert "upstream:notes" in str(session.explain("notes_delete_note"))
    assert "upstream:notes" in str(session.explain("notes_get_secret"))


def test_a_session_result_budget_keeps_its_callers_in_a_store_with_the_configured_ttl() -> None:
    # Each 2026 caller's spent budget lives in this process's store, kept for [store]
    # session_ttl (a GatewayConfig built in Python may set it without Redis): the gateway reads
    # the budget from the core's ResultBudget, which is where the config file puts it.
    import dataclasses

    budget = "[gateway]\nsession_result_budget = 5000\n"
    config = parse_config(CONFIG.replace("[gateway]\n", budget))
    config = dataclasses.replace(
        config, store=dataclasses.replace(config.store, session_ttl=120.0)
    )
    gateway = Gateway(config)
    assert gateway.manager.result_budget.session_tokens == 5000
    assert gateway.manager.session_store.ttl == 120.0  # type: ignore[attr-defined]
    assert all(c.session_store is gateway.manager.session_store for c in gateway.clients.values())
