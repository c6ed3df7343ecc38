"""The adapters' shared version check."""

from __future__ import annotations

from importlib import metadata

import pytest

from toolmgmt_core._compat import parse_version, require_version


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.4.7", (1, 4, 7)),
        ("1.71", (1, 71)),
        ("2.0.0rc1", (2, 0, 0)),
        ("1.2.post3", (1, 2)),
        ("dev", ()),
    ],
)
def test_parse_version(text: str, expected: tuple[int, ...]) -> None:
    assert parse_version(text) == expected


def test_require_version_accepts_installed_and_names_the_extra_when_not() -> None:
    installed = metadata.version("pytest")
    assert require_version("pytest", "1.0", "dev") == installed
    with pytest.raises(ImportError, match=r"toolmgmt\[dev\].*") as too_old:
        require_version("pytest", "999.1", "dev")
    assert installed in str(too_old.value) and "pytest>=999.1" in str(too_old.value)
    with pytest.raises(ImportError, match=r'pip install "toolmgmt\[langchain\]"'):
        require_version("no-such-distribution-xyz", "1.0", "langchain")
