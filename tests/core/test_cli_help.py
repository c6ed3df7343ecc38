"""Every ``toolmgmt`` command and action says what it does, and every option what it takes:
``--help`` is where an operator reads first."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from toolmgmt_core._cli import build_parser


def _commands(
    parser: argparse.ArgumentParser, name: str = "toolmgmt"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, sub in action.choices.items():
                yield from _commands(sub, f"{name} {command}")


def test_every_command_and_option_has_a_help_text() -> None:
    missing = []
    for name, parser in _commands(build_parser()):
        if parser.add_help is False:  # a command listed as unavailable, with its reason
            continue
        if not parser.description:
            missing.append(f"{name}: no description")
        for action in parser._actions:
            if action.help is None and not isinstance(action, argparse._SubParsersAction):
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert not missing, "without help text: " + ", ".join(missing)


def test_serve_help_names_the_meta_tools_of_both_modes(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("mcp")
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "three meta-tools (discover_tools, get_tool_schema, execute_tool)" in text
    assert 'mode = "code", two (tool_search and run_code' in text


def test_deploy_up_says_what_replicas_means(capsys: pytest.CaptureFixture[str]) -> None:
    from toolmgmt_deploy.launch import main

    with pytest.raises(SystemExit):
        main(["up", "--help"])
    assert "gateway replicas behind HAProxy (default 2)" in capsys.readouterr().out
