"""The ``toolmgmt`` command line, driven through ``main([...])`` and the installed script."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import toolmgmt_demo
from toolmgmt_core import ToolCatalog
from toolmgmt_core import _cli as cli
from toolmgmt_core._cli import console, main
from toolmgmt_core._session.report import report_tables as report_rows
from toolmgmt_demo import demo_catalog

MIXED_SHAPES: list[dict[str, Any]] = [
    {
        "name": "get_weather",
        "description": "Get the weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
    {
        "type": "function",
        "function": {
            "name": "send_sms",
            "description": "Send a text message to a phone number.",
            "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
        },
    },
    {
        "type": "function",
        "name": "book_flight",
        "description": "Book a flight between two airports.",
        "parameters": {"type": "object", "properties": {"origin": {"type": "string"}}},
    },
    {
        "name": "translate_text",
        "description": "Translate text into another language.",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
    },
    {
        "name": "list_notes",
        "description": "List the user's notes.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]


@pytest.fixture(scope="module")
def shared_demo() -> ToolCatalog:
    return demo_catalog()


@pytest.fixture(autouse=True)
def fast_default_catalog(monkeypatch: pytest.MonkeyPatch, shared_demo: ToolCatalog) -> None:
    """Build the demo catalog once for this module (the subprocess test uses the real path)."""
    monkeypatch.setattr(toolmgmt_demo, "demo_catalog", lambda: shared_demo)


def write_json(tmp_path: Path, data: Any, name: str = "tools.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- search ---------------------------------------------------------------------------------


def test_search_prints_a_ranked_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "search", "refund", "a", "customer's", "payment")
    assert code == 0 and not err
    lines = out.splitlines()
    assert lines[0].split() == ["#", "tool", "domain/group", "score", "description"]
    assert set(lines[1]) <= {"-", " "}
    assert lines[2].split()[:3] == ["1", "payments_refund_charge", "payments/charges"]
    assert len(lines) == 2 + 5


def test_search_json_with_limit_and_domain(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "search", "delete", "--domain", "files", "--limit", "3", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["query"] == "delete" and data["regex"] is False
    assert 1 <= len(data["results"]) <= 3
    assert {r["domain"] for r in data["results"]} == {"files"}
    assert data["results"][0]["name"] in ("files_delete_file", "files_delete_folder")
    assert set(data["results"][0]) == {"name", "domain", "group", "description", "score"}


def test_search_regex(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "search", "^email_send", "--regex", "--json")
    assert code == 0
    names = {r["name"] for r in json.loads(out)["results"]}
    assert names == {"email_send_email", "email_send_draft"}


def test_search_without_results_says_so_and_exits_zero(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "search", "zzqxv")
    assert code == 0
    assert "No tools match 'zzqxv'" in out and "151 tools" in out
    code, out, _ = run(capsys, "search", "zzqxv", "--json")
    assert code == 0 and json.loads(out)["results"] == []


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["search", "(", "--regex"], "does not compile"),
        (["search", "x", "--domain", "nope"], "Valid domains: analytics, calendar"),
        (["browse", "crm", "nope"], "Valid groups: activities, companies, contacts, deals"),
        (["browse", "nope"], "Unknown domain 'nope'"),
    ],
)
def test_bad_input_exits_two_with_the_reason(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and not out
    assert message in err and err.startswith(f"toolmgmt {argv[0]}: error:")


@pytest.mark.parametrize(
    "argv",
    [[], ["search"], ["search", "x", "--limit", "0"], ["search", "x", "--limit", "many"], ["nope"]],
)
def test_usage_errors_exit_two(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    code, _, err = run(capsys, *argv)
    assert code == 2 and "usage: toolmgmt" in err


def test_help_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for command in ("search", "browse", "report"):
        assert command in out


# -- browse ---------------------------------------------------------------------------------


def test_browse_levels(capsys: pytest.CaptureFixture[str], shared_demo: ToolCatalog) -> None:
    code, out, _ = run(capsys, "browse")
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines()[2:] if line.strip()}
    assert {"crm", "payments", "web_search"} <= set(rows)
    assert "151 tools in 8 domains." in out
    assert "contacts, deals" in rows["crm"] or "contacts" in rows["crm"]

    code, out, _ = run(capsys, "browse", "crm", "--json")
    data = json.loads(out)
    assert code == 0 and data["domain"] == "crm" and data["group"] is None
    assert [t["name"] for t in data["tools"]] == [t.name for t in shared_demo if t.domain == "crm"]

    code, out, _ = run(capsys, "browse", "crm", "deals")
    rows = [line for line in out.splitlines()[2:] if not line[:1].isspace()]  # not wrapped text
    names = [line.split()[0] for line in rows]
    assert code == 0 and names and all(n.startswith("crm_") for n in names)
    assert "crm_update_deal_stage" in names and "crm_search_contacts" not in names


def test_browse_json_domains(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "browse", "--json")
    data = json.loads(out)
    assert code == 0 and data["tools"] == 151
    assert {d["domain"] for d in data["domains"]} >= {"crm", "email"}


# -- report ---------------------------------------------------------------------------------


def test_report_counts_tools_domains_and_tokens(
    capsys: pytest.CaptureFixture[str], shared_demo: ToolCatalog
) -> None:
    code, out, _ = run(capsys, "report", "--json")
    assert code == 0
    data = json.loads(out)
    summary = data["summary"]
    assert summary["tools"] == 151 and summary["domains"] == 8
    assert summary["definition tokens (all tools, flat)"] == shared_demo.definition_tokens()
    assert summary["encoding"] == "o200k_base"
    domains = {row["domain"]: row for row in data["domains"]}
    assert sum(row["tokens"] for row in domains.values()) == shared_demo.definition_tokens()
    assert sum(row["tools"] for row in domains.values()) == 151

    code, out, _ = run(capsys, "report")
    assert code == 0
    assert "definition tokens (all tools, flat)" in out
    assert f"{shared_demo.definition_tokens():,}" in out


def test_report_compares_modes_and_providers_against_flat(
    capsys: pytest.CaptureFixture[str], shared_demo: ToolCatalog
) -> None:
    from toolmgmt_core._providers import PROVIDERS
    from toolmgmt_core._session.manager import ToolManager

    code, out, _ = run(capsys, "report", "--json")
    assert code == 0
    data = json.loads(out)
    modes = {row["mode"]: row for row in data["modes"]}
    flat = data["summary"]["definition tokens (all tools, flat)"]
    assert modes["flat"]["tokens"] == flat and modes["flat"]["cold start tokens"] is None
    for mode in ("search", "gateway", "lazy"):
        session = ToolManager(shared_demo, mode=mode).session()  # type: ignore[arg-type]
        assert modes[mode]["tokens"] == session.usage().definition_tokens
        assert modes[mode]["tools listed"] == len(session.tools())
        assert 0 < modes[mode]["cold start tokens"] < 5000
    assert modes["search"]["tokens"] < flat / 10 and modes["gateway"]["tokens"] < flat / 10
    assert modes["lazy"]["tokens"] < flat
    # the demo's ~20k flat tokens exceed auto's default threshold (10% of a 128k window)
    assert modes["auto (search)"]["tokens"] == modes["search"]["tokens"]
    providers = {row["provider"]: row for row in data["providers"]}
    assert set(providers) == set(PROVIDERS)
    for row in providers.values():
        assert row["flat"] > 10 * row["gateway"] > 0
        assert row["search"] < row["lazy"] < row["flat"]
    code, out, _ = run(capsys, "report")
    assert "Definition tokens per provider" in out and "cold start" in out.lower()


def test_report_rows_median_on_a_small_catalog() -> None:
    catalog = ToolCatalog()
    catalog.add_schemas(MIXED_SHAPES, domain="misc")
    tables = {t.key: t for t in report_rows(catalog)}
    summary = dict(tables["summary"].rows)
    per_tool = sorted(catalog.definition_tokens([t]) for t in catalog)
    assert summary["tools"] == 5
    assert summary["median tokens per tool"] == per_tool[2]
    assert tables["domains"].to_json()[0]["domain"] == "misc"
    modes = {row["mode"]: row for row in tables["modes"].to_json()}
    auto = [key for key in modes if key.startswith("auto")]
    assert auto and modes[auto[0]]["tokens"] >= modes["flat"]["tokens"]  # small: sent flat


# -- --catalog ------------------------------------------------------------------------------


def test_catalog_file_in_every_accepted_shape(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_json(tmp_path, MIXED_SHAPES)
    code, out, err = run(capsys, "report", "--catalog", path, "--json")
    assert code == 0 and not err
    assert json.loads(out)["summary"]["tools"] == 5
    wrapped = write_json(tmp_path, {"tools": MIXED_SHAPES}, "wrapped.json")
    code, out, _ = run(capsys, "search", "text", "message", "--catalog", wrapped, "--json")
    assert code == 0
    assert json.loads(out)["results"][0]["name"] == "send_sms"


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = str(tmp_path / "absent.json")
    code, out, err = run(capsys, "report", "--catalog", missing)
    assert code == 2 and not out
    assert f"{missing}: cannot read the catalog: no such file." in err


def test_malformed_json_names_line_and_column(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "broken.json"
    path.write_text('[\n  {"name": "a",\n   "description": }\n]\n', encoding="utf-8")
    code, _, err = run(capsys, "search", "a", "--catalog", str(path))
    assert code == 2
    assert f"{path}:3: invalid JSON: Expecting value (column 19)." in err


def test_wrong_top_level_shape(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write_json(tmp_path, {"name": "lonely"})
    code, _, err = run(capsys, "report", "--catalog", path)
    assert code == 2 and 'expected a JSON list of tool schemas or an object with a "tools"' in err


def test_bad_tools_are_skipped_with_a_warning_and_counted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    definitions = [
        MIXED_SHAPES[0],
        {"name": "bad_schema", "parameters": {"type": "string"}},
        {"description": "no name"},
        MIXED_SHAPES[0],
        "not a dict",
    ]
    path = tmp_path / "tools.json"  # one definition a line: each warning points at its own
    path.write_text("[\n" + ",\n".join(json.dumps(d) for d in definitions) + "\n]\n")
    code, out, err = run(capsys, "report", "--catalog", str(path), "--json")
    assert code == 0
    assert json.loads(out)["summary"]["tools"] == 1
    assert f"warning: {path}:3: [1]: skipped tool #2 (bad_schema):" in err
    assert '"type": "object"' in err
    assert f"warning: {path}:4: [2]: skipped tool #3:" in err and "no name" in err
    assert f"{path}:5: [3]: skipped tool #4 (get_weather): the name 'get_weather' is already" in err
    assert f"{path}:6: [4]: skipped tool #5:" in err
    assert f"warning: {path}: loaded 1 tools, skipped 4." in err


def test_no_valid_tool_is_an_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = write_json(tmp_path, [{"name": "x", "parameters": []}])
    code, _, err = run(capsys, "report", "--catalog", path)
    assert code == 2
    assert "no valid tool definitions (all 1 definitions were skipped)" in err
    empty = write_json(tmp_path, [], "empty.json")
    code, _, err = run(capsys, "report", "--catalog", empty)
    assert code == 2 and "the list is empty" in err


def test_catalog_from_python_module(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_tools.py").write_text(
        textwrap.dedent(
            """
            from toolmgmt_core import ToolCatalog

            def ping(host: str) -> str:
                '''Check that a host answers network pings.'''
                return host

            def build():
                catalog = ToolCatalog()
                catalog.add_function(ping, domain="net")
                return catalog

            CATALOG = build()
            SCHEMAS = [{"name": "echo", "description": "Repeat the input text back."}]
            NOT_A_CATALOG = 42
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for spec in ("my_tools:build", "my_tools:CATALOG"):
        code, out, _ = run(capsys, "search", "ping", "host", "--catalog", spec, "--json")
        assert code == 0, spec
        assert json.loads(out)["results"][0]["name"] == "ping"
    code, out, _ = run(capsys, "report", "--catalog", "my_tools:SCHEMAS", "--json")
    assert code == 0 and json.loads(out)["summary"]["tools"] == 1

    code, _, err = run(capsys, "report", "--catalog", "my_tools:missing")
    assert code == 2 and "module 'my_tools' has no attribute 'missing'" in err
    code, _, err = run(capsys, "report", "--catalog", "my_tools:NOT_A_CATALOG")
    assert code == 2 and "expected a ToolCatalog" in err and "got int" in err
    code, _, err = run(capsys, "report", "--catalog", "no_such_module_xyz:catalog")
    assert code == 2 and "cannot import module 'no_such_module_xyz'" in err


# -- progress bar and command registry ------------------------------------------------------


class _FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_for_large_catalogs_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = write_json(tmp_path, MIXED_SHAPES)
    fake = _FakeTTY()
    monkeypatch.setattr(sys, "stderr", fake)
    monkeypatch.setattr(console, "PROGRESS_THRESHOLD", 3)
    assert main(["search", "weather", "--catalog", path, "--json"]) == 0
    assert "indexing" in fake.getvalue()
    assert main(["report", "--catalog", path, "--json"]) == 0
    assert "measuring" in fake.getvalue()

    quiet = _FakeTTY()
    monkeypatch.setattr(sys, "stderr", quiet)
    monkeypatch.setattr(console, "PROGRESS_THRESHOLD", 2000)
    assert main(["search", "weather", "--catalog", path, "--json"]) == 0
    assert quiet.getvalue() == ""

    not_a_tty = io.StringIO()
    monkeypatch.setattr(sys, "stderr", not_a_tty)
    monkeypatch.setattr(console, "PROGRESS_THRESHOLD", 3)
    assert main(["search", "weather", "--catalog", path, "--json"]) == 0
    assert not_a_tty.getvalue() == ""


def test_command_modules_add_subcommands_and_a_broken_one_is_contained(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "hello_cmd.py").write_text(
        textwrap.dedent(
            """
            from toolmgmt_core._cli.commands import load_catalog
            from toolmgmt_core._cli.console import add_catalog_argument

            def register(subparsers):
                parser = subparsers.add_parser("hello", help="count tools")
                add_catalog_argument(parser)
                parser.set_defaults(run=run)

            def run(args):
                print("hello", len(load_catalog(args.catalog)))
                return 0
            """
        ),
        encoding="utf-8",
    )
    (tmp_path / "broken_cmd.py").write_text("import not_installed_dependency\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(cli, "COMMAND_MODULES", {"hello": "hello_cmd", "broken": "broken_cmd"})
    code, out, _ = run(capsys, "hello")
    assert code == 0 and out.strip() == "hello 151"
    code, out, _ = run(capsys, "--help")
    assert "hello" in out and "unavailable" in out
    code, _, err = run(capsys, "broken")
    assert code == 2 and "not_installed_dependency" in err
    code, _, _ = run(capsys, "browse")
    assert code == 0


def test_an_add_on_with_a_bug_is_not_called_unavailable(tmp_path, monkeypatch, capsys) -> None:
    """Only an ImportError (a missing extra) makes an add-on 'unavailable'; a bug surfaces."""
    (tmp_path / "buggy_cmd.py").write_text(
        "def register(subparsers):\n    raise RuntimeError('a bug in the add-on')\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(cli, "COMMAND_MODULES", {"buggy": "buggy_cmd"})
    with pytest.raises(RuntimeError, match="a bug in the add-on"):
        cli.build_parser()


# -- the installed script -------------------------------------------------------------------


def _script() -> str:
    script = Path(sys.executable).parent / "toolmgmt"
    if not script.exists():
        pytest.skip("the toolmgmt console script is not installed in this environment")
    return str(script)


def test_installed_script(tmp_path: Path) -> None:
    script = _script()
    result = subprocess.run(
        [script, "search", "refund", "a", "customer's", "payment", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["results"][0]["name"] == "payments_refund_charge"

    missing = tmp_path / "nope.json"
    result = subprocess.run(
        [script, "report", "--catalog", str(missing)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2
    assert f"{missing}: cannot read the catalog: no such file." in result.stderr
    assert not result.stdout


def test_search_each_need_separately(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "search",
        "--each",
        "read the application log file",
        "send an email to my team",
        "--limit",
        "2",
        "--json",
    )
    assert code == 0
    data = json.loads(out)
    assert data["query"] == ["read the application log file", "send an email to my team"]
    assert [r["name"] for r in data["results"]] == ["files_read_file", "email_send_email"]
    code, _, err = run(capsys, "search", "--each", "x", "--regex")
    assert code == 2 and "--each and --regex do not combine" in err


def test_gateway_config_without_the_mcp_extra_names_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    packages = ("toolmgmt_mcp", "toolmgmt_gateway")
    for name in [m for m in sys.modules if m.split(".")[0] in packages]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "mcp", None)  # `import mcp` fails as without the extra
    config = tmp_path / "gateway.toml"
    config.write_text('[upstreams.notes]\ncommand = "notes-server"\n', encoding="utf-8")
    code, _, err = run(capsys, "browse", "--catalog", str(config))
    assert code == 2
    assert f"{config}: no catalog source could read it" in err
    assert 'pip install "toolmgmt[gateway]"' in err
    as_json = write_json(tmp_path, {"upstreams": {"notes": {"command": "x"}}}, "gateway.json")
    code, _, err = run(capsys, "browse", "--catalog", as_json)
    assert code == 2 and "gateway config" in err and 'pip install "toolmgmt[gateway]"' in err


def test_report_counts_with_the_chosen_encoding(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from toolmgmt_core._model.tokens import definition_tokens

    path = write_json(tmp_path, MIXED_SHAPES)
    catalog = ToolCatalog()
    catalog.add_schemas(MIXED_SHAPES)
    expected = {name: definition_tokens(catalog, name) for name in ("o200k_base", "cl100k_base")}
    assert expected["o200k_base"] != expected["cl100k_base"]
    for name, tokens in expected.items():
        code, out, _ = run(capsys, "report", "--catalog", path, "--encoding", name, "--json")
        summary = json.loads(out)["summary"]
        assert code == 0 and summary["encoding"] == name
        assert summary["definition tokens (all tools, flat)"] == tokens
    code, _, err = run(capsys, "report", "--catalog", path, "--encoding", "nope")
    assert code == 2 and "Unknown encoding 'nope'. Known: cl100k_base" in err


def test_lint_wraps_its_findings_to_the_terminal_and_cuts_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolmgmt_core._cli.commands import load_catalog
    from toolmgmt_core._lint import lint_catalog

    tool = {"name": "do_thing", "description": "x", "parameters": {"type": "object"}}
    path = write_json(tmp_path, [tool])
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "lint", "--catalog", path)
    assert code == 0 and "…" not in out
    assert all(len(line) <= 80 for line in out.splitlines()), out
    column = out.splitlines()[0].index("finding")
    text = " ".join(line[column:].strip() for line in out.splitlines()[2:])
    findings = lint_catalog(load_catalog(path))
    assert len(findings) >= 3
    for finding in findings:  # every word of every message and fix, in order
        assert " ".join(f"{finding.message} Fix: {finding.hint}".split()) in text
