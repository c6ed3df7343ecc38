"""The local Redis and PostgreSQL servers clean up after themselves, even when killed."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import toolmgmt_deploy as local

from toolmgmt_core._model.errors import StoreUnavailableError

REPO = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped by its parent) is not a running server
    try:
        status = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return False
    return status != "Z"


def _wait_gone(pid: int, within: float = 10) -> None:
    deadline = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)  # do not leave it behind even when the test fails
            pytest.fail(f"process {pid} still runs {within}s later")
        time.sleep(0.05)


def test_a_server_is_stopped_and_its_folder_removed_when_the_block_fails(
    redis_server: object,
) -> None:
    server = local.LocalRedis()
    with pytest.raises(RuntimeError, match="test failure"), server:
        assert server._process is not None
        pid, folder = server._process.pid, server.folder
        assert folder is not None and folder.is_dir()
        raise RuntimeError("test failure")
    _wait_gone(pid)
    assert not folder.exists()
    assert not server.running


@pytest.mark.parametrize("kind", ["redis", "postgres"])
def test_a_killed_owner_leaves_no_server_behind(kind: str, request: pytest.FixtureRequest) -> None:
    request.getfixturevalue(f"{kind}_server")  # skips (or fails in CI) without the binaries
    owner = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time\n"
            "from toolmgmt_deploy import LocalPostgres, LocalRedis\n"
            f"server = {'LocalRedis' if kind == 'redis' else 'LocalPostgres'}().start()\n"
            "print(server._process.pid, server.folder, flush=True)\n"
            "time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert owner.stdout is not None
    line = owner.stdout.readline().split()
    assert line, "the owner did not start its server"
    pid, folder = int(line[0]), Path(line[1])
    assert _alive(pid)
    owner.kill()  # no cleanup code runs: only the kernel's parent-death signal is left
    owner.wait()
    _wait_gone(pid)
    shutil.rmtree(folder, ignore_errors=True)  # the folder is left: nothing ran to remove it


def test_a_missing_binary_is_named_with_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TOOLMGMT_REDIS_SERVER", str(tmp_path / "no-redis-server"))
    assert local.find_redis_server() is None
    with pytest.raises(StoreUnavailableError, match="apt-get install redis-server"):
        local.LocalRedis()
    monkeypatch.setenv("TOOLMGMT_PG_BINDIR", str(tmp_path))
    assert local.find_postgres_bindir() is None
    with pytest.raises(StoreUnavailableError, match="apt-get install postgresql"):
        local.LocalPostgres()


def test_a_server_that_cannot_start_says_why(tmp_path: Path, redis_server: object) -> None:
    fake = tmp_path / "redis-server"
    fake.write_text("#!/bin/sh\necho 'FATAL: bad config directive' >&2\nexit 3\n")
    fake.chmod(0o755)
    server = local.LocalRedis(str(fake))
    with pytest.raises(StoreUnavailableError, match="exited with code 3(.|\n)*bad config"):
        server.start()
    assert server.folder is None  # cleaned up


def test_the_session_servers_answer(
    redis_server: local.LocalRedis, postgres_server: local.LocalPostgres
) -> None:
    assert redis_server.url.startswith("redis://127.0.0.1:")
    assert postgres_server.dsn.startswith("postgresql://postgres@127.0.0.1:")
    assert redis_server.running and postgres_server.running
    if os.geteuid() == 0:  # PostgreSQL refuses root: it runs as the postgres user
        assert postgres_server._process is not None
        status = Path(f"/proc/{postgres_server._process.pid}/status").read_text()
        uid = next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1]
        assert uid != "0"
