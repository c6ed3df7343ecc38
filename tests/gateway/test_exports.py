"""Every public module of toolmgmt_gateway has a sorted ``__all__`` of names that exist."""

from __future__ import annotations

import importlib

import pytest

pytest.importorskip("mcp")

MODULES = [
    "toolmgmt_mcp",
    "toolmgmt_mcp.convert",
    "toolmgmt_mcp.transport",
    "toolmgmt_mcp.upstream_config",
    "toolmgmt_mcp.upstreams",
    "toolmgmt_gateway",
    "toolmgmt_gateway.approval",
    "toolmgmt_gateway.cli",
    "toolmgmt_gateway.config",
    "toolmgmt_gateway.config_file",
    "toolmgmt_gateway.conversations",
    "toolmgmt_gateway.exchange",
    "toolmgmt_gateway.headers",
    "toolmgmt_gateway.lifecycle",
    "toolmgmt_gateway.logs",
    "toolmgmt_gateway.pins",
    "toolmgmt_gateway.questions",
    "toolmgmt_gateway.responses",
    "toolmgmt_gateway.server",
    "toolmgmt_gateway.state_keys",
    "toolmgmt_gateway.telemetry",
    "toolmgmt_gateway.upstream_stderr",
    "toolmgmt_gateway.upstreams",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_is_sorted_and_complete(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported)
    assert all(hasattr(module, item) for item in exported)


def test_serve_and_gateway_configs_reach_the_core_by_entry_point() -> None:
    from importlib.metadata import entry_points

    from toolmgmt_gateway.cli import gateway_catalog, register

    commands = {e.name: e.load() for e in entry_points(group="toolmgmt.commands")}
    sources = {e.name: e.load() for e in entry_points(group="toolmgmt.catalog_sources")}
    assert commands["serve"] is register
    assert sources["gateway"] is gateway_catalog
