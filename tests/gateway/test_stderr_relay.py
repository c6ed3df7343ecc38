"""A stdio upstream's stderr reaches the gateway's after the upstream's name, line by line (an
operator can tell whose it is), with its secrets replaced (a tool's failure the upstream logs,
a token wrapped onto the line after its keyword included), or nowhere with ``stderr = "drop"``
(it may echo a call's arguments). The gateway runs in a fresh interpreter so its stderr is read
whole."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from toolmgmt_gateway import parse_config  # noqa: E402

from toolmgmt_core._model.errors import ConfigError  # noqa: E402

SECRET = "arg-4471-secret"
LEAKS = ["S3cr3t", "tok3n-9f8e7d6c5b4a"]
"""What the upstream's own log of a failure quotes, over two lines."""

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import anyio
    from toolmgmt_gateway import Gateway, parse_config

    async def main():
        async with Gateway(parse_config(sys.argv[1])) as gw:
            status = {s.name: s for s in gw.upstreams.status()}
            print(json.dumps({"tools": status["loud"].tools}))
            await anyio.sleep(0.5)  # the relay thread passes the lines on

    anyio.run(main)
    """
)


def _loud_upstream(tmp_path: Path, notes: Path) -> Path:
    """The notes server, saying four lines on stderr first (a long one, and a failure quoting
    a password and a bearer token wrapped onto the next line)."""
    script = tmp_path / "loud_server.py"
    script.write_text(
        "import runpy, sys\n"
        f"print('starting with {SECRET}', file=sys.stderr)\n"
        "print('x' * 10000, file=sys.stderr)\n"
        "print('postgresql://admin:S3cr3t@db/x down (Authorization: Bearer', file=sys.stderr)\n"
        "print('    tok3n-9f8e7d6c5b4a)', file=sys.stderr)\n"
        "sys.stderr.flush()\n"
        f"runpy.run_path({str(notes)!r}, run_name='__main__')\n"
    )
    return script


@pytest.mark.timeout(90)
@pytest.mark.parametrize("stderr", ["log", "drop"])
def test_an_upstreams_stderr_is_named_or_dropped(
    mcp_kit: Any, tmp_path: Path, stderr: str
) -> None:
    from support.upstreams import NOTES

    config = mcp_kit.stdio_upstream("loud", _loud_upstream(tmp_path, NOTES), stderr=stderr)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, config], capture_output=True, text=True, timeout=80
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["tools"]
    theirs = [line for line in done.stderr.splitlines() if SECRET in line or "xxxx" in line]
    if stderr == "drop":
        assert theirs == []
        return
    assert theirs[0] == f"upstream loud: starting with {SECRET}"
    assert theirs[1].startswith("upstream loud: xxx") and theirs[1].endswith("…")
    assert len(theirs[1]) < 4200  # a line is bounded
    assert not [leak for leak in LEAKS if leak in done.stderr]
    assert "upstream loud: postgresql://admin:<secret>@db/x down" in done.stderr
    assert "upstream loud:     <secret>" in done.stderr


def test_the_option_is_checked() -> None:
    base = '[upstreams.a]\ncommand = "python"\n'
    assert parse_config(base).upstreams[0].stderr == "log"
    assert parse_config(base + 'stderr = "drop"\n').upstreams[0].stderr == "drop"
    with pytest.raises(ConfigError, match="stderr"):
        parse_config(base + 'stderr = "quiet"\n')
    with pytest.raises(ConfigError, match="only applies to an upstream with command"):
        parse_config('[upstreams.a]\nurl = "http://127.0.0.1:1/mcp"\nstderr = "drop"\n')
