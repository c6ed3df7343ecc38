"""A source brings its domain's tools in line: its old tools go, another domain's names stay."""

from __future__ import annotations

from toolmgmt_core import Tool, ToolCatalog
from toolmgmt_core.integration import describe_exception, group_names, sync_domain


def _tool(name: str, domain: str, description: str = "A tool.") -> Tool:
    return Tool(name=name, description=description, domain=domain)


def test_a_domain_is_brought_in_line_and_never_takes_another_domains_name() -> None:
    catalog = ToolCatalog(
        [
            _tool("notes_get", "notes"),
            _tool("notes_old", "notes"),
            _tool("web_search", "web"),
            _tool("shared_name", "web"),
        ]
    )
    listed = [
        _tool("notes_get", "notes", "Get a note, newly described."),
        _tool("notes_new", "notes"),
        _tool("Shared-Name", "notes"),  # the same name folded: another domain's, kept
        _tool("web_search", "notes"),  # another domain's exact name
        _tool("notes_gеt", "notes"),  # Cyrillic 'е': a look-alike of its own notes_get
    ]
    kept, skipped = sync_domain(catalog, "notes", listed)
    assert kept == ["notes_get", "notes_new"]
    assert [name for name, _ in skipped] == ["Shared-Name", "web_search", "notes_gеt"]
    assert "name clash with 'shared_name' of domain 'web'" in skipped[0][1]
    assert "name clash with 'web_search' of domain 'web'" in skipped[1][1]
    assert "notes_old" not in catalog  # no longer listed: removed
    assert catalog.get("notes_get").description == "Get a note, newly described."
    assert catalog.get("web_search").domain == "web" and catalog.get("shared_name").domain == "web"
    assert sorted(catalog.names()) == ["notes_get", "notes_new", "shared_name", "web_search"]

    assert sync_domain(catalog, "notes", []) == ([], [])  # a domain that lists nothing
    assert sorted(catalog.names()) == ["shared_name", "web_search"]


def test_a_domains_tools_are_grouped_by_pattern_then_by_a_shared_first_word() -> None:
    names = ["issue_create", "Issue-close", "issue.list", "repo_get", "search"]
    names += ["admin_x", "admin_y"]
    groups = group_names(names, {"ops": ("admin_*",)})
    assert groups == {
        "issue_create": "issue",  # three names share it (case apart)...
        "Issue-close": "general",  # ...but words are compared as written: "Issue" is alone
        "issue.list": "issue",
        "repo_get": "general",  # alone with its first word
        "search": "general",  # no first word
        "admin_x": "ops",  # the operator's pattern comes first
        "admin_y": "ops",
    }
    assert set(group_names(names, by_prefix=False).values()) == {"general"}


def test_an_exception_is_described_in_one_line_even_when_its_message_fails() -> None:
    class Unreadable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no")

    class Group(Exception):  # an exception group's shape (ExceptionGroup is Python 3.11+)
        def __init__(self, *inner: BaseException) -> None:
            super().__init__("outer")
            self.exceptions = inner

    group = Group(Group(OSError("refused\nmore detail")), ValueError("second"))
    assert describe_exception(group) == "OSError: refused"
    assert describe_exception(TimeoutError()) == "TimeoutError"
    assert describe_exception(Unreadable()) == "Unreadable: (its message could not be read)"
