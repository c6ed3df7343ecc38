"""The gateway configuration: the issue's shape, JSON, and errors with file, line and problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from toolmgmt_gateway import load_config, parse_config  # noqa: E402

from toolmgmt_core._model.errors import ConfigError  # noqa: E402

ISSUE_SHAPE = """\
[upstreams.notes]            # the table name is the domain
command = "python"
args = ["notes_server.py"]
timeout = 10                 # seconds per call

[upstreams.search]
url = "http://127.0.0.1:8765/mcp"

[policy]
deny = ["notes_delete_*"]
"""


def test_the_issue_shape_parses(tmp_path: Path) -> None:
    file = tmp_path / "gateway.toml"
    file.write_text(ISSUE_SHAPE)
    config = load_config(file)
    notes, search = config.upstreams
    assert (notes.name, notes.command, notes.args, notes.timeout) == (
        "notes",
        "python",
        ("notes_server.py",),
        10.0,
    )
    assert notes.transport == "stdio" and notes.cwd == str(tmp_path.resolve())
    assert search.transport == "http" and search.url == "http://127.0.0.1:8765/mcp"
    assert config.policy.deny == ("notes_delete_*",)
    assert config.gateway.host == "127.0.0.1" and config.gateway.transport == "stdio"


def test_json_is_accepted_with_every_upstream_key(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("GW_TOKEN", "s3cret")
    data = {
        "gateway": {"transport": "http", "port": 0, "token_env": "GW_TOKEN", "profile": "full"},
        "upstreams": {
            "files": {
                "command": "node",
                "args": ["server.js"],
                "env": {"ROOT": "/srv"},
                "cwd": "sub",
                "timeout": 2.5,
                "groups": {"write": ["write_*", "delete_*"]},
                "profile": "ops",
                "policy": {"deny": ["delete_*"]},
                "max_result_tokens": 500,
                "truncation": "head",
            },
            "web": {"url": "https://example.test/mcp", "headers": {"Authorization": "Bearer x"}},
        },
    }
    file = tmp_path / "gateway.json"
    file.write_text(json.dumps(data, indent=2))
    config = load_config(file)
    files = config.upstream("files")
    assert files.cwd == str((tmp_path / "sub").resolve())
    assert files.groups == {"write": ("write_*", "delete_*")}
    assert files.profiles == ("ops",) and files.max_result_tokens == 500
    assert files.truncation == "head"
    assert files.policy.deny == ("delete_*",)
    assert config.upstream("web").headers == {"Authorization": "Bearer x"}
    assert config.gateway.token == "s3cret" and config.gateway.port == 0
    with pytest.raises(ConfigError, match="configured upstreams: files, web"):
        config.upstream("nope")


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("[upstreams.a]\ncommand = 'x'\nurl = 'http://h/mcp'\n", 1, "exactly one of command"),
        (
            "[upstreams.a]\ncommand = 'x'\n\ntimout = 3\n",
            4,
            "unknown key; valid keys: accept_changes, allow_secret_questions, args",
        ),
        ("[gateway]\nport = 'eighty'\n[upstreams.a]\nurl = 'http://h/mcp'\n", 2, "whole number"),
        ("[upstreams.a]\nurl = 'ftp://h'\n", 2, "http:// or https://"),
        ("[upstreams.a]\ncommand = 'x'\ntimeout = 0\n", 3, "more than 0"),
        ("[upstreams.a]\ncommand = 'x'\nargs = 'one'\n", 3, "list of strings"),
        ("[upstreams.a]\ncommand = 'x'\npolicy = { deny = ['domain:b'] }\n", 3, "globs"),
        ("[upstreams.'a b']\ncommand = 'x'\n", 1, "letter, then letters"),
        ("[gateway]\ntransport = 'sse'\n[upstreams.a]\ncommand = 'x'\n", 2, "'stdio' or 'http'"),
        ("[policy]\ndeny = ['x']\n", None, "at least one upstream"),
        ("[upstreams.a]\ncommand = 'x'\n[extra]\n", 3, "unknown section"),
        ("[upstreams.a]\ncommand = 'x'\n[store]\nsessions = 'http://h'\n", 4, "Redis URL"),
        ("[upstreams.a]\ncommand = 'x'\n[store]\ncatalog = 'mysql://h'\n", 4, "PostgreSQL DSN"),
        ("[upstreams.a]\ncommand = 'x'\n[store]\nsession_ttl = 60\n", 4, "only applies with"),
        ("[upstreams.a]\ncommand = 'x'\n[store]\ncache = 1\n", 4, "valid keys: catalog"),
        (
            "[upstreams.a]\ncommand = 'x'\n[store]\nsessions = 'redis://h'\nsession_ttl = 0\n",
            5,
            "more than 0",
        ),
        ("[gateway]\nsession_result_budget = 0\n[upstreams.a]\ncommand = 'x'\n", 2, "16 to"),
        # the check's floor is the core's: a value it passes is one the gateway starts with
        ("[gateway]\nmax_result_tokens = 5\n[upstreams.a]\ncommand = 'x'\n", 2, "16 to"),
        ("[upstreams.a]\ncommand = 'x'\nmax_result_tokens = 15\n", 3, "16 to"),
        ("[upstreams.a]\ncommand = 'x'\n[search]\nembedder = 'minilm'\n", 4, "onnx:<folder>"),
        ("[upstreams.a]\ncommand = 'x'\n[search]\nembedder = 'onnx:'\n", 4, "names no model"),
        ("[upstreams.a]\ncommand = 'x'\n[search]\nembedder = 'a b:c'\n", 4, "neither a kind"),
        ("[upstreams.a]\ncommand = 'x'\n[search]\nmodel = 'x'\n", 4, "valid keys: embedder"),
        ("[gateway]\nstate_key = 'short'\n[upstreams.a]\ncommand = 'x'\n", 2, "at least 32"),
        ("[gateway]\nstate_key = ' , '\n[upstreams.a]\ncommand = 'x'\n", 2, "holds no key"),
        ("[gateway]\nlist_ttl = -1\n[upstreams.a]\ncommand = 'x'\n", 2, "0 or more"),
    ],
)
def test_bad_values_name_file_line_and_problem(
    tmp_path: Path, text: str, line: int | None, problem: str
) -> None:
    file = tmp_path / "bad.toml"
    file.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(file)
    message = str(caught.value)
    assert message.startswith(f"{file}:{line}:" if line else f"{file}:")
    assert problem in message


def test_every_problem_of_a_file_is_reported_at_once(tmp_path: Path) -> None:
    file = tmp_path / "gateway.toml"
    file.write_text(
        "[gateway]\nport = 'eighty'\nmax_result_tokens = 5\n\n[upstreams.a]\ncommand = 'x'\n"
        "timeout = 0\n\n[upstreams.b]\nurl = 'ftp://h'\n[extra]\n"
    )
    with pytest.raises(ConfigError) as caught:
        load_config(file)
    lines = str(caught.value).splitlines()
    assert [line.split(": ")[0] for line in lines] == [
        f"{file}:{n}" for n in (2, 3, 7, 10, 11)
    ], lines
    assert "whole number from 0 to 65535" in lines[0] and "unknown section" in lines[-1]


def test_the_least_result_budget_the_check_passes_starts(tmp_path: Path) -> None:
    file = tmp_path / "gateway.toml"
    file.write_text("[gateway]\nmax_result_tokens = 16\n[upstreams.a]\ncommand = 'x'\n")
    config = load_config(file)
    assert config.gateway.results.max_result_tokens == 16
    from toolmgmt_core import ResultBudget

    assert ResultBudget(max_result_tokens=config.gateway.results.max_result_tokens)


def test_syntax_errors_give_the_parser_position(tmp_path: Path) -> None:
    toml = tmp_path / "broken.toml"
    toml.write_text("[upstreams.a]\ncommand = \n")
    with pytest.raises(ConfigError, match=r"broken\.toml:2: invalid TOML: .*\(column 11\)\.$"):
        load_config(toml)
    js = tmp_path / "broken.json"
    js.write_text('{"upstreams": {\n  "a": {"command": "x",}\n}}')
    with pytest.raises(ConfigError, match=r"broken\.json:2: invalid JSON: .*\(column 24\)\.$"):
        load_config(js)
    with pytest.raises(ConfigError, match=r"missing\.toml: cannot read the gateway config: no"):
        load_config(tmp_path / "missing.toml")


def test_token_env_must_be_set(monkeypatch) -> None:
    monkeypatch.delenv("NOPE_TOKEN", raising=False)
    text = "[gateway]\ntoken_env = 'NOPE_TOKEN'\n[upstreams.a]\ncommand = 'x'\n"
    with pytest.raises(ConfigError, match=r"<config>:2: gateway.token_env: .*NOPE_TOKEN"):
        parse_config(text)


def test_request_state_keys_come_from_the_file_or_a_variable(monkeypatch) -> None:
    new, old = "n" * 64, "o" * 32
    monkeypatch.setenv("GW_STATE", f"{new}, {old}")
    text = "[gateway]\nstate_key_env = 'GW_STATE'\nlist_ttl = 0\n[upstreams.a]\ncommand = 'x'\n"
    gateway = parse_config(text).gateway
    assert gateway.state_keys == (new, old) and gateway.list_ttl == 0  # the first one seals
    assert new not in repr(gateway)
    default = parse_config("[upstreams.a]\ncommand = 'x'\n").gateway
    assert default.state_keys == () and default.list_ttl == 60
    both = (
        f"[gateway]\nstate_key = '{new}'\nstate_key_env = 'GW_STATE'\n"
        "[upstreams.a]\ncommand = 'x'\n"
    )
    with pytest.raises(ConfigError, match="not both"):
        parse_config(both)


def test_the_store_table_takes_urls_or_the_variables_holding_them(monkeypatch) -> None:
    monkeypatch.setenv("GW_REDIS", "redis://:pw@cache:6380/2")
    text = (
        "[gateway]\nsession_result_budget = 4000\n[upstreams.a]\ncommand = 'x'\n"
        "[store]\nsessions_env = 'GW_REDIS'\nsession_ttl = 600\n"
        "catalog = 'postgresql://toolmgmt@db/toolmgmt'\n"
    )
    config = parse_config(text)
    assert config.store.sessions == "redis://:pw@cache:6380/2"
    assert config.store.session_ttl == 600.0 and config.store.session_prefix is None
    assert config.store.catalog == "postgresql://toolmgmt@db/toolmgmt"
    assert "pw" not in repr(config.store)  # secrets stay out of reprs and logs
    assert config.gateway.results.session_tokens == 4000
    assert not parse_config("[upstreams.a]\ncommand = 'x'\n").store  # nothing shared
    monkeypatch.delenv("GW_REDIS")
    with pytest.raises(ConfigError, match=r"<config>:6: store.sessions_env: .*GW_REDIS"):
        parse_config(text)
    both = "[upstreams.a]\ncommand = 'x'\n[store]\ncatalog = 'host=db'\ncatalog_env = 'X'\n"
    with pytest.raises(ConfigError, match="set catalog or catalog_env, not both"):
        parse_config(both)


def test_the_search_table_names_an_embedder(tmp_path: Path) -> None:
    upstream = "[upstreams.a]\ncommand = 'x'\n"
    (tmp_path / "models" / "minilm-onnx").mkdir(parents=True)
    file = tmp_path / "gateway.toml"
    file.write_text(upstream + "[search]\nembedder = 'onnx:models/minilm-onnx'\n")
    folder = (tmp_path / "models" / "minilm-onnx").resolve()
    assert load_config(file).search.embedder == f"onnx:{folder}"  # beside the config file
    named = upstream + "[search]\nembedder = 'support.embedders:HashingEmbedder'\n"
    assert parse_config(named).search.embedder == "support.embedders:HashingEmbedder"
    assert parse_config(upstream).search.embedder is None
