from __future__ import annotations

import importlib

import pytest

MODULES = [
    "toolmgmt_core._providers",
    "toolmgmt_core._providers.anthropic",
    "toolmgmt_core._providers.caching",
    "toolmgmt_core._providers.gemini",
    "toolmgmt_core._model.provider_names",
    "toolmgmt_core._providers.openai",
    "toolmgmt_core._providers.report",
    "toolmgmt_core._providers.schema_utils",
]


def _isort_key(name: str) -> tuple[int, str]:
    # constants, then classes, then functions: ruff's RUF022 order, as in catalog.py
    if name.isupper():
        return (0, name)
    return (1, name) if name[:1].isupper() else (2, name)


@pytest.mark.parametrize("module_name", MODULES)
def test_all_is_sorted_and_importable(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert module.__all__ == sorted(module.__all__, key=_isort_key)
    for name in module.__all__:
        assert hasattr(module, name), name
