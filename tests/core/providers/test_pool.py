"""The whole BFCL dev pool formatted for every provider: every tool valid or reported."""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.bfcl import bfcl_dir, bfcl_missing

from toolmgmt_core._model.schema import tool_from_dict
from toolmgmt_core._model.tool import Tool
from toolmgmt_core._providers import format_tools

pytestmark = pytest.mark.skipif(bfcl_missing("dev") is not None, reason=str(bfcl_missing("dev")))


@pytest.fixture(scope="module")
def pool() -> list[Tool]:
    data = json.loads((bfcl_dir("dev") / "bfcl_pool.json").read_text())
    return [tool_from_dict(entry) for entry in data["tools"]]


def _chunks(tools: list[Tool], size: int = 100) -> list[list[Tool]]:
    return [tools[i : i + size] for i in range(0, len(tools), size)]


@pytest.mark.parametrize(
    ("provider", "options"),
    [
        ("anthropic", {}),
        ("gemini", {}),
        ("gemini", {"gemini_json_schema": True}),
        ("openai", {}),
        ("openai", {"strict": True}),
        ("openai-responses", {"strict": True}),
    ],
)
def test_pool_formats_for_every_provider(
    pool: list[Tool], provider: str, options: dict[str, Any], check_provider: Any
) -> None:
    sent = skipped = strict_fallbacks = 0
    for chunk in _chunks(pool):
        out = format_tools(chunk, provider, **options)
        check_provider(provider, out["tools"])
        report = out["report"]
        assert set(report.name_map.values()) | set(report.skipped) == {t.name for t in chunk}
        sent += len(report.name_map)
        skipped += len(report.skipped)
        strict_fallbacks += len(report.strict_fallbacks)
        assert all(report.strict_fallbacks.values())
    assert sent + skipped == len(pool)
    # the pool is made of ordinary tools: nearly all must go through
    assert skipped == 0
    if options.get("strict"):
        # untyped ("any") BFCL parameters cannot be strict; they fall back, with a reason
        assert 0 < strict_fallbacks < len(pool) // 2
