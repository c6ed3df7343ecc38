"""Version checks the framework adapters share (the core itself imports no framework), and
toolmgmt's own version."""

from __future__ import annotations

import re
from importlib import metadata

__all__ = ["package_version", "parse_version", "require_version"]


def parse_version(text: str) -> tuple[int, ...]:
    """The leading release numbers of a version string: ``"1.4.7rc1"`` gives ``(1, 4, 7)``."""
    numbers: list[int] = []
    for part in text.split("."):
        match = re.match(r"\d+", part)
        if not match:
            break
        numbers.append(int(match.group()))
        if match.group() != part:
            break
    return tuple(numbers)


def require_version(distribution: str, minimum: str, extra: str) -> str:
    """Check that ``distribution`` is installed at ``minimum`` or newer; return its version.

    Args:
        distribution: the package name on PyPI (``"langchain"``).
        minimum: the oldest supported version (``"1.0"``).
        extra: the toolmgmt extra that installs it (``"langchain"``), named in the message.

    Raises:
        ImportError: the package is missing or too old; the message says what to install.
    """
    hint = f'pip install "toolmgmt[{extra}]"'
    try:
        installed = metadata.version(distribution)
    except metadata.PackageNotFoundError as exc:
        raise ImportError(
            f"{distribution} is not installed; toolmgmt's {extra} adapter needs "
            f"{distribution}>={minimum}: {hint}"
        ) from exc
    if parse_version(installed) < parse_version(minimum):
        raise ImportError(
            f"toolmgmt's {extra} adapter needs {distribution}>={minimum}, found {installed}: "
            f'{hint} (or pip install -U "{distribution}>={minimum}").'
        )
    return installed


def package_version() -> str:
    """toolmgmt's installed version (``"0"`` when running from a checkout that is not
    installed): what ``--version``, the gateway and telemetry report."""
    try:
        return metadata.version("toolmgmt")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a checkout
        return "0"
