"""``toolmgmt catalog push|list|remove`` against a real PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolmgmt_core._cli import main

pytest.importorskip("psycopg")
from toolmgmt_core._stores.postgres import PostgresCatalogStore  # noqa: E402


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def tools_file(tmp_path: Path) -> Path:
    path = tmp_path / "tools.json"
    path.write_text(
        json.dumps(
            {
                "tools": [
                    {"name": "crm_search", "description": "Find contacts.", "domain": "crm"},
                    {"name": "bad_schema", "parameters": {"type": "string"}},
                    {
                        "type": "function",
                        "function": {"name": "mail_send", "description": "Send mail."},
                    },
                ]
            }
        ),
        encoding="utf-8",
    )
    return path


def test_push_reports_added_and_skipped_then_list_shows_the_store(
    capsys: pytest.CaptureFixture[str], pg_dsn: str, tools_file: Path
) -> None:
    code, out, err = run(capsys, "catalog", "push", str(tools_file), "--store", pg_dsn)
    assert code == 0, err
    assert "crm_search" in out and "mail_send" in out and "added" in out
    assert "2 added, 0 updated, 0 unchanged; 2 warnings reading" in out
    assert "skipped tool #2 (bad_schema)" in err and '"type": "object"' in err  # with the reason
    assert [t.name for t in PostgresCatalogStore(pg_dsn).tools()] == ["crm_search", "mail_send"]

    code, out, err = run(capsys, "catalog", "list", "--store", pg_dsn)
    assert code == 0, err
    assert "crm_search" in out and "crm/general" in out and "Find contacts." in out
    assert "2 tools" in out

    code, out, _ = run(capsys, "catalog", "push", str(tools_file), "--store", pg_dsn, "--json")
    pushed = json.loads(out)
    assert pushed["unchanged"] == ["crm_search", "mail_send"] and pushed["added"] == []
    assert any("bad_schema" in w and '"type": "object"' in w for w in pushed["warnings"])


def test_list_json_can_be_pushed_back(
    capsys: pytest.CaptureFixture[str],
    pg_dsn: str,
    tools_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TOOLMGMT_CATALOG_DSN", pg_dsn)  # no --store: the environment
    assert run(capsys, "catalog", "push", str(tools_file))[0] == 0
    code, out, _ = run(capsys, "catalog", "list", "--json")
    assert code == 0
    listed = json.loads(out)["tools"]
    assert [t["name"] for t in listed] == ["crm_search", "mail_send"]
    assert all(t["revision"] >= 1 and t["updated_at"] for t in listed)
    dump = tmp_path / "dump.json"
    dump.write_text(out, encoding="utf-8")
    code, out, _ = run(capsys, "catalog", "push", str(dump), "--json")
    assert json.loads(out)["unchanged"] == ["crm_search", "mail_send"]


def test_remove(capsys: pytest.CaptureFixture[str], pg_dsn: str, tools_file: Path) -> None:
    run(capsys, "catalog", "push", str(tools_file), "--store", pg_dsn)
    code, out, _ = run(capsys, "catalog", "remove", "crm_search", "nope", "--store", pg_dsn)
    assert code == 0
    assert "removed" in out and "not found" in out
    code, out, _ = run(capsys, "catalog", "list", "--store", pg_dsn, "--json")
    assert [t["name"] for t in json.loads(out)["tools"]] == ["mail_send"]


def test_without_a_store_or_with_an_unreachable_one(
    capsys: pytest.CaptureFixture[str],
    tools_file: Path,
    closed_port: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TOOLMGMT_CATALOG_DSN", raising=False)
    monkeypatch.delenv("TOOLMGMT_CATALOG_STORE", raising=False)
    code, _, err = run(capsys, "catalog", "list")
    assert code == 2 and "pass --store postgresql://" in err and "TOOLMGMT_CATALOG_DSN" in err
    dsn = f"postgresql://me:s3cret@127.0.0.1:{closed_port}/db"
    code, _, err = run(capsys, "catalog", "push", str(tools_file), "--store", dsn)
    assert code == 2
    assert f"postgresql://me@127.0.0.1:{closed_port}/db refused the connection" in err
    assert "s3cret" not in err
    code, _, err = run(capsys, "catalog", "list", "--store", "nonsense")
    assert code == 2 and "Not a PostgreSQL DSN" in err


def test_a_file_without_valid_tools_is_refused_before_connecting(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, closed_port: int
) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    dsn = f"postgresql://127.0.0.1:{closed_port}/db"
    code, _, err = run(capsys, "catalog", "push", str(empty), "--store", dsn)
    assert code == 2 and "no valid tool definitions" in err


def test_the_former_variable_name_still_works_with_a_warning(
    capsys: pytest.CaptureFixture[str],
    pg_dsn: str,
    tools_file: Path,
    closed_port: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("TOOLMGMT_CATALOG_DSN", raising=False)
    monkeypatch.setenv("TOOLMGMT_CATALOG_STORE", pg_dsn)
    code, out, err = run(capsys, "catalog", "push", str(tools_file), "--json")
    assert code == 0 and json.loads(out)["added"] == ["crm_search", "mail_send"]
    assert "$TOOLMGMT_CATALOG_STORE is deprecated" in err and "set TOOLMGMT_CATALOG_DSN" in err
    # both set: the new name wins, and the old one is said to be ignored
    monkeypatch.setenv("TOOLMGMT_CATALOG_DSN", pg_dsn)
    monkeypatch.setenv("TOOLMGMT_CATALOG_STORE", f"postgresql://x@127.0.0.1:{closed_port}/db")
    code, out, err = run(capsys, "catalog", "list", "--json")
    assert code == 0 and len(json.loads(out)["tools"]) == 2
    assert "$TOOLMGMT_CATALOG_STORE is ignored" in err
    # --store wins over both, silently
    code, out, err = run(capsys, "catalog", "list", "--json", "--store", pg_dsn)
    assert code == 0 and "TOOLMGMT_CATALOG_STORE" not in err
