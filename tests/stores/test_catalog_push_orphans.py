"""``toolmgmt catalog push --config gateway.toml``: a tool no upstream of that gateway serves is
named and nothing is pushed (exit code 1) unless ``--allow-orphans``, against a real PostgreSQL.

Every replica skips such a row with a warning in its log, so the tool is searchable nowhere and
runs nowhere: the push is where to say so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolmgmt_core._cli import main

pytest.importorskip("psycopg")
from toolmgmt_core._stores.postgres import PostgresCatalogStore  # noqa: E402

CONFIG = """\
[upstreams.notes]
command = "python"

[upstreams.search]
url = "http://127.0.0.1:8765/mcp"
prefix = "find_"
"""

TOOLS = [
    {"name": "notes_tag_note", "description": "Tag a note.", "domain": "notes"},
    {"name": "find_pages", "description": "Find pages.", "domain": "search"},
    {"name": "weather_get_history", "description": "Past weather.", "domain": "weather"},
    {"name": "search_pages", "description": "Search pages.", "domain": "search"},
]


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    (tmp_path / "gateway.toml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    return str(tmp_path / "tools.json"), str(tmp_path / "gateway.toml")


def test_push_of_tools_no_upstream_serves_pushes_nothing_and_exits_1(
    capsys: pytest.CaptureFixture[str], pg_dsn: str, files: tuple[str, str]
) -> None:
    tools, config = files
    code = main(["catalog", "push", tools, "--config", config, "--store", pg_dsn])
    err = capsys.readouterr().err
    assert code == 1
    assert (
        f"no upstream of {config} serves 'weather_get_history': its domain 'weather' is no "
        "upstream (notes, search)." in err
    )
    assert (
        f"no upstream of {config} serves 'search_pages': its name lacks the 'search' "
        "upstream's 'find_'." in err
    )
    assert "2 tools no upstream serves (above): nothing pushed" in err
    assert PostgresCatalogStore(pg_dsn).tools() == []

    code = main(["catalog", "push", tools, "--config", config, "--store", pg_dsn, "--json"])
    assert code == 1 and capsys.readouterr().out == ""


def test_allow_orphans_pushes_them_with_a_warning_each(
    capsys: pytest.CaptureFixture[str], pg_dsn: str, files: tuple[str, str]
) -> None:
    tools, config = files
    argv = ["catalog", "push", tools, "--config", config, "--store", pg_dsn, "--allow-orphans"]
    assert main([*argv, "--json"]) == 0
    pushed = json.loads(capsys.readouterr().out)
    assert len(pushed["added"]) == 4
    assert [w.split(": ")[0] for w in pushed["warnings"]] == [
        f"no upstream of {config} serves 'weather_get_history'",
        f"no upstream of {config} serves 'search_pages'",
    ]


def test_push_without_a_config_says_the_check_was_not_made(
    capsys: pytest.CaptureFixture[str], pg_dsn: str, files: tuple[str, str]
) -> None:
    tools, _ = files
    assert main(["catalog", "push", tools, "--store", pg_dsn]) == 0
    assert "whether an upstream serves each tool was not checked: pass --config" in (
        capsys.readouterr().err
    )
