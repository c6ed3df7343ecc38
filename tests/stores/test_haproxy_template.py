"""HAProxy's configuration template: one file, in the package, filled the same way by
``LocalHAProxy`` and ``deploy/launch.py haproxy-config``, and listed as package data."""

from __future__ import annotations

import fnmatch
import os
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import toolmgmt_deploy
from toolmgmt_deploy import HAPROXY_TEMPLATE, render_haproxy_config

ROOT = Path(__file__).resolve().parents[2]


def test_the_template_is_package_data_of_the_deploy_tooling() -> None:
    package = Path(toolmgmt_deploy.__file__).parent
    assert HAPROXY_TEMPLATE.is_file() and HAPROXY_TEMPLATE.is_relative_to(package)
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = settings["tool"]["setuptools"]["package-data"]["toolmgmt_deploy"]
    relative = HAPROXY_TEMPLATE.relative_to(package).as_posix()
    assert any(fnmatch.fnmatch(relative, pattern) for pattern in patterns), patterns
    assert not (ROOT / "deploy" / "haproxy.cfg").exists(), "one template, in the package"


def test_the_template_is_filled_for_every_replica() -> None:
    text = render_haproxy_config(
        HAPROXY_TEMPLATE.read_text(encoding="utf-8"),
        bind="127.0.0.1:8080",
        servers=["10.0.0.11:8765", "10.0.0.12:8765"],
        admin_socket="/run/haproxy.sock",
    )
    live = [line.strip() for line in text.splitlines() if not line.lstrip().startswith("#")]
    assert "bind 127.0.0.1:8080" in live
    assert "server gw1 10.0.0.11:8765" in live and "server gw2 10.0.0.12:8765" in live
    assert "stats socket /run/haproxy.sock mode 600 level admin" in live
    assert not any("@" in line for line in live), "a placeholder was left"
    with pytest.raises(ValueError, match="not HOST:PORT"):
        render_haproxy_config(HAPROXY_TEMPLATE.read_text(), bind="x", servers=["a:1"])


def test_launch_prints_the_packaged_template_filled_in() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "deploy" / "launch.py"), "haproxy-config"]
        + ["--bind", "0.0.0.0:8080", "--server", "10.0.0.11:8765"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=60,
        check=True,
    )
    expected = render_haproxy_config(
        HAPROXY_TEMPLATE.read_text(encoding="utf-8"),
        bind="0.0.0.0:8080",
        servers=["10.0.0.11:8765"],
    )
    assert done.stdout == expected
