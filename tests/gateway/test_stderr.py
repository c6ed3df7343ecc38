"""A stdio upstream starts even where ``sys.stderr`` has no file descriptor (a Jupyter kernel).

The MCP SDK binds ``sys.stderr`` as the subprocess's stderr when it is imported, so the check runs
in a fresh interpreter whose ``sys.stderr`` is replaced before anything is imported.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

pytest.importorskip("mcp")

SCRIPT = textwrap.dedent(
    """
    import io, json, sys
    real = sys.stdout
    sys.stderr = io.StringIO()  # fileno() raises UnsupportedOperation, as in a notebook kernel
    import anyio
    from toolmgmt_gateway import Gateway, parse_config

    async def main():
        async with Gateway(parse_config(sys.argv[1])) as gw:
            status = {s.name: s for s in gw.upstreams.status()}
            real.write(json.dumps({"tools": status["notes"].tools, "error": status["notes"].error}))

    anyio.run(main)
    """
)


@pytest.mark.timeout(60)
def test_stdio_upstream_without_a_stderr_file_descriptor(mcp_kit: Any) -> None:
    config = mcp_kit.stdio_upstream("notes")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, config], capture_output=True, text=True, timeout=50
    )
    assert done.returncode == 0, done.stderr
    status = json.loads(done.stdout)
    assert status["tools"], status
