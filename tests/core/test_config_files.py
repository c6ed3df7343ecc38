"""One reader for every configuration file: policy files, gateway configs and catalog files say
each problem as ``file:line: key.path: problem``, in TOML and in JSON alike."""

from __future__ import annotations

import json
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolmgmt_core._catalog.sources import load_catalog
from toolmgmt_core._config.document import ConfigDocument, config_problem, key_path
from toolmgmt_core._config.lines import key_lines
from toolmgmt_core._model.errors import CatalogSourceError, ConfigError
from toolmgmt_core._policy.files import load_policy_file


def _message(call: Any, *args: Any) -> str:
    with pytest.raises((ConfigError, CatalogSourceError)) as caught:
        call(*args)
    return str(caught.value)


# -- each reader, TOML and JSON ---------------------------------------------------------------


def test_a_policy_file_says_file_line_key_and_problem_in_toml_and_json(tmp_path: Path) -> None:
    toml = tmp_path / "policy.toml"
    toml.write_text('[[policies]]\nlabel = "a"\n\n[[policies]]\nlabel = "b"\ndeny = 3\n')
    assert _message(load_policy_file, toml) == (
        f"{toml}:6: policies[1].deny: must be a list of patterns, got 3."
    )
    data = {"policies": [{"label": "a"}, {"label": "b", "deny": 3}]}
    js = tmp_path / "policy.json"
    js.write_text(json.dumps(data, indent=2))
    assert _message(load_policy_file, js) == (
        f"{js}:8: policies[1].deny: must be a list of patterns, got 3."
    )


def test_a_policy_file_with_several_problems_reports_them_all_by_line(tmp_path: Path) -> None:
    toml = tmp_path / "policy.toml"
    toml.write_text(
        'profile = "ops"\n\n[[policies]]\nlabel = "a"\ndeny = 3\n\n'
        '[[policies]]\nlabel = "b"\nflavour = 1\n\n'
        '[[policies]]\nlabel = "c"\nallow = ["domian:crm"]\n'
    )
    lines = _message(load_policy_file, toml).splitlines()  # each step's first problem
    assert [line.split(": ")[0] for line in lines] == [f"{toml}:{n}" for n in (5, 9, 13)], lines
    assert "must be a list of patterns, got 3." in lines[0] and "unknown key" in lines[1]
    assert "domian" in lines[2]


def test_a_gateway_config_says_file_line_key_and_problem_in_toml_and_json(
    tmp_path: Path,
) -> None:
    pytest.importorskip("mcp")
    from toolmgmt_gateway import load_config

    toml = tmp_path / "gateway.toml"
    toml.write_text("[upstreams.notes]\ncommand = 'python'\ntimeout = 0\n")
    expected = "upstreams.notes.timeout: must be a number of seconds, more than 0, got 0."
    assert _message(load_config, toml) == f"{toml}:3: {expected}"
    js = tmp_path / "gateway.json"
    js.write_text(
        json.dumps({"upstreams": {"notes": {"command": "python", "timeout": 0}}}, indent=2)
    )
    assert _message(load_config, js) == f"{js}:5: {expected}"


def test_a_catalog_file_says_file_line_key_and_problem(tmp_path: Path) -> None:
    js = tmp_path / "tools.json"
    js.write_text('{"tools": [\n  {"name": "a", "description": "A."},\n  {"name": 3}\n]}\n')
    warnings: list[str] = []
    catalog = load_catalog(str(js), warn=warnings.append)
    assert [t.name for t in catalog] == ["a"]
    assert warnings[0].startswith(f"{js}:3: tools[1]: skipped tool #2: ")
    assert warnings[1] == f"{js}: loaded 1 tools, skipped 1."
    js.write_text('[\n  {"name": "a",}\n]')
    assert _message(load_catalog, str(js)) == (
        f"{js}:2: invalid JSON: Expecting property name enclosed in double quotes (column 16)."
    )


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("absent.toml", None, "{file}: cannot read the {what}: no such file."),
        ("folder.json", "dir", "{file}: cannot read the {what}: is a directory."),
        ("latin.toml", b"a = '\xe9'\n", "{file}: cannot read the {what}: not UTF-8 text (byte 5)."),
        ("bad.toml", "a = 1\nb = \n", "{file}:2: invalid TOML: Invalid value (column 5)."),
        (
            "bad.json",
            '{\n  "a": 1\n  "b": 2\n}',
            "{file}:3: invalid JSON: Expecting ',' delimiter (column 3).",
        ),
        ("deep.json", "[" * 100_000 + "]" * 100_000, "{file}: invalid JSON: nested too deeply."),
    ],
)
def test_the_file_itself_is_reported_the_same_way_by_every_reader(
    tmp_path: Path, name: str, content: str | bytes | None, expected: str
) -> None:
    file = tmp_path / name
    if content == "dir":
        file.mkdir()
    elif isinstance(content, bytes):
        file.write_bytes(content)
    elif content is not None:
        file.write_text(content)
    readers: list[tuple[Any, str]] = [(load_policy_file, "policy file")]
    if file.suffix == ".json":
        readers.append((load_catalog, "catalog"))
    try:
        from toolmgmt_gateway import load_config
    except ImportError:
        pass
    else:
        readers.append((load_config, "gateway config"))
    for reader, what in readers:
        assert _message(reader, str(file)) == expected.format(file=file, what=what)


# -- the accessors ------------------------------------------------------------------------------


def test_accessors_name_the_valid_choices_at_the_line_of_the_key(monkeypatch) -> None:
    text = (
        "[server]\nmode = 'fast'\nport = 70000\nwait = -1\nflag = 'yes'\n"
        "names = ['a', 2]\ntoken = 'x'\ntoken_env = 'Y'\nsecret_env = 'UNSET_VAR'\n"
    )
    server = ConfigDocument.parse(text, source="s.toml").root().table("server")
    cases = [
        (
            lambda: server.choice("mode", ("slow", "safe", "off"), "off"),
            "s.toml:2: server.mode: must be 'slow', 'safe' or 'off', got 'fast'.",
        ),
        (
            lambda: server.integer("port", 1, low=0, high=65535),
            "s.toml:3: server.port: must be a whole number from 0 to 65535, got 70000.",
        ),
        (
            lambda: server.seconds("wait", 1.0),
            "s.toml:4: server.wait: must be a number of seconds, more than 0, got -1.",
        ),
        (
            lambda: server.boolean("flag", False),
            "s.toml:5: server.flag: must be true or false, got 'yes'.",
        ),
        (
            lambda: server.strings("names"),
            "s.toml:6: server.names: must be a list of strings, got ['a', 2].",
        ),
        (
            lambda: server.secret("token"),
            "s.toml:8: server.token_env: set token or token_env, not both.",
        ),
        (lambda: server.string("absent"), "s.toml:1: server.absent: is required."),
    ]
    monkeypatch.delenv("UNSET_VAR", raising=False)
    cases.append(
        (
            lambda: server.secret("secret"),
            "s.toml:9: server.secret_env: environment variable 'UNSET_VAR' is not set or empty.",
        )
    )
    for call, expected in cases:
        assert _message(call) == expected
    with pytest.raises(
        ConfigError, match=r"^s\.toml:2: server\.mode: unknown key; valid keys: port, wait"
    ):
        ConfigDocument.parse(text, source="s.toml").root().table("server", ("port", "wait"))
    monkeypatch.setenv("SECRET_VAR", "s3")
    other = ConfigDocument.parse("secret_env = 'SECRET_VAR'\n").root()
    assert other.secret("secret") == "s3" and other.secret("missing") is None
    assert other.seconds("absent", 2) == 2.0 and other.choice("absent", ("a",), None) is None


def test_a_catalog_error_is_the_catalog_kind_and_a_config_error_elsewhere(tmp_path: Path) -> None:
    document = ConfigDocument.parse('{"a": [1, {"b": true}]}', fmt="json", error=CatalogSourceError)
    error = document.error(("a", 1, "b"), "wrong.")
    assert isinstance(error, CatalogSourceError) and str(error) == "<config>:1: a[1].b: wrong."
    assert config_problem("f.toml", "bad.", ("x", "a b", 0)) == 'f.toml: x."a b"[0]: bad.'
    assert key_path(("policies", 2, "deny", 0)) == "policies[2].deny[0]"


# -- the lines, as a property -------------------------------------------------------------------

_KEYS = st.text(string.ascii_letters + "_- .é", min_size=1, max_size=6)
_SCALARS = st.one_of(st.integers(-5, 5), st.booleans(), st.text("ab\"\\'#[]{}=,\n", max_size=5))
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=12,
)
_DOCUMENTS = st.dictionaries(_KEYS, _VALUES, max_size=4)


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path] if path else []
    items = (
        value.items()
        if isinstance(value, dict)
        else enumerate(value)
        if isinstance(value, list)
        else ()
    )
    for key, item in items:
        found += _paths(item, (*path, key))
    return found


@settings(max_examples=150, deadline=None)
@given(_DOCUMENTS)
def test_every_key_path_of_a_json_file_is_found_on_its_own_line(data: dict[str, Any]) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False)
    lines = text.splitlines()
    found = key_lines(text, "json", max_depth=50)
    for path in _paths(data):
        line = lines[found[path] - 1].strip()
        if isinstance(path[-1], str):
            assert line.startswith(json.dumps(path[-1], ensure_ascii=False) + ":"), (path, line)
        else:  # a list item starts on its line
            item: Any = data
            for part in path:
                item = item[part]
            start = json.dumps(item, ensure_ascii=False)[:1] if item not in ([], {}) else ""
            assert line.startswith(start), (path, line)


def _toml(data: dict[str, Any]) -> tuple[str, dict[tuple[Any, ...], int]]:
    """TOML for ``data`` (nested tables as headers, lists and the rest inline), and the line of
    each key it sets at the top of a table."""
    lines: list[str] = []
    expected: dict[tuple[Any, ...], int] = {}

    def key(k: str) -> str:
        return k if all(c.isalnum() or c in "_-" for c in k) and k.isascii() else json.dumps(k)

    def table(body: dict[str, Any], path: tuple[str, ...]) -> None:
        nested = {k: v for k, v in body.items() if isinstance(v, dict)}
        for k, v in body.items():
            if k not in nested:
                lines.append(f"{key(k)} = {json.dumps(v, ensure_ascii=False)}")
                expected[(*path, k)] = len(lines)
        for k, v in nested.items():
            lines.append("[" + ".".join(key(p) for p in (*path, k)) + "]")
            expected[(*path, k)] = len(lines)
            table(v, (*path, k))

    def inline(value: Any) -> bool:  # JSON arrays of scalars and inline-able tables are TOML
        return not isinstance(value, list) or all(
            not isinstance(v, dict) and inline(v) for v in value
        )

    table({k: v for k, v in data.items() if inline(v) or isinstance(v, dict)}, ())
    return "\n".join(lines) + "\n", expected


@settings(max_examples=150, deadline=None)
@given(_DOCUMENTS)
def test_every_key_of_a_toml_file_is_found_where_it_is_set(data: dict[str, Any]) -> None:
    text, expected = _toml(data)
    try:
        ConfigDocument.parse(text)
    except ConfigError:  # the writer above is not a full TOML writer (a key set twice)
        return
    found = key_lines(text, "toml", max_depth=50)
    for path, line in expected.items():
        assert found[path] == line, (path, text)


def test_a_shallow_document_points_deep_keys_at_their_parent() -> None:
    text = json.dumps({"tools": [{"name": "a"}, {"name": "b", "parameters": {"x": 1}}]}, indent=2)
    deep = ConfigDocument.parse(text, fmt="json")
    shallow = ConfigDocument.parse(text, fmt="json", depth=2)
    path = ("tools", 1, "parameters", "x")
    assert deep.line_of(path) == 9 and shallow.line_of(path) == shallow.line_of(("tools", 1)) == 6
