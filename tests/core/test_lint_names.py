"""The verb rule reads past the tool's own domain and group prefix."""

from __future__ import annotations

from toolmgmt_core import Tool
from toolmgmt_core._lint import Finding, lint, lint_catalog
from toolmgmt_demo import demo_catalog


def _verb_findings(findings: list[Finding]) -> list[str]:
    return [f.tool for f in findings if f.code == "name-not-verb-led"]


def test_demo_catalog_domain_prefixed_names_are_verb_led() -> None:
    tools = list(demo_catalog())
    names = {t.name for t in tools}
    assert {"code_hosting_list_commits", "payments_refund_charge"} <= names
    assert _verb_findings(lint_catalog(tools)) == []


def test_prefix_is_only_the_tools_own_domain_and_group() -> None:
    assert _verb_findings(lint(Tool(name="user_data", domain="users"))) == ["user_data"]
    # the domain prefix is taken off, but what follows is still not a verb
    assert _verb_findings(lint(Tool(name="crm_user_data", domain="crm"))) == ["crm_user_data"]
    # a prefix that is not the tool's own domain is not taken off
    hosted = Tool(name="code_hosting_list_commits", domain="general")
    assert _verb_findings(lint(hosted)) == ["code_hosting_list_commits"]
    assert _verb_findings(lint(hosted.replace(domain="code_hosting"))) == []
    grouped = Tool(name="billing_invoices_void_invoice", domain="billing", group="invoices")
    assert _verb_findings(lint(grouped)) == []
    # the group prefix is left alone when the verb already leads (web_search_search_web)
    search = Tool(name="web_search_search_web", domain="web_search", group="search")
    assert _verb_findings(lint(search)) == []


def test_create_tools_behind_a_domain_prefix_get_the_server_id_check() -> None:
    parameters = {
        "type": "object",
        "properties": {"id": {"type": "string", "description": "The id."}},
        "required": ["id"],
    }
    tool = Tool(name="code_hosting_create_repository", domain="code_hosting", parameters=parameters)
    assert "server-generated-field" in {f.code for f in lint(tool)}
