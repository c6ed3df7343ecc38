"""A throw-away PostgreSQL cluster on loopback (:class:`LocalPostgres`)."""

from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Sequence
from pathlib import Path

from toolmgmt_core import StoreUnavailableError
from toolmgmt_deploy.process import LocalServer

__all__ = ["LocalPostgres", "find_postgres_bindir"]


def find_postgres_bindir() -> Path | None:
    """The folder of PostgreSQL's ``initdb`` and ``postgres``, newest version first, or None.

    ``$TOOLMGMT_PG_BINDIR``, then Debian's ``/usr/lib/postgresql/<version>/bin``, then the PATH.
    """
    configured = os.environ.get("TOOLMGMT_PG_BINDIR")
    candidates = [Path(configured)] if configured else []
    if not configured:
        versions = glob.glob("/usr/lib/postgresql/*/bin")
        versions.sort(key=lambda p: [int(n) for n in re.findall(r"\d+", p)], reverse=True)
        candidates += [Path(p) for p in versions]
        on_path = shutil.which("initdb")
        if on_path:
            candidates.append(Path(on_path).parent)
    for folder in candidates:
        if all(os.access(folder / name, os.X_OK) for name in ("initdb", "postgres")):
            return folder
    return None


class LocalPostgres(LocalServer):
    """A throw-away PostgreSQL cluster on 127.0.0.1 (trust authentication); ``dsn`` to connect."""

    name = "postgres"
    stop_signal = signal.SIGINT  # "fast" shutdown: disconnect clients, stop at once

    def __init__(self, bindir: str | Path | None = None, *, durable: bool = False) -> None:
        """
        Args:
            bindir: the folder of ``initdb`` and ``postgres`` (default:
                :func:`find_postgres_bindir`).
            durable: keep fsync and synchronous commits on (off by default: test data).

        Raises:
            StoreUnavailableError: PostgreSQL was not found, or this process is root and there
                is no ``postgres`` user to run it as.
        """
        super().__init__()
        found = Path(bindir) if bindir else find_postgres_bindir()
        if found is None:
            raise StoreUnavailableError(
                "PostgreSQL was not found (initdb and postgres): install it (apt-get install "
                "postgresql) or set TOOLMGMT_PG_BINDIR to the folder holding them."
            )
        self.bindir = found
        self.durable = durable
        if os.geteuid() == 0:
            import pwd

            try:
                user = pwd.getpwnam("postgres")
            except KeyError:
                raise StoreUnavailableError(
                    "PostgreSQL refuses to run as root and there is no 'postgres' user to run "
                    "it as: install Debian's postgresql package (which creates it) or run as "
                    "another user."
                ) from None
            self._uid, self._gid = user.pw_uid, user.pw_gid
            self._run_as = {"user": self._uid, "group": self._gid, "extra_groups": []}

    @property
    def dsn(self) -> str:
        """``postgresql://postgres@127.0.0.1:<port>/postgres``."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    @property
    def _data(self) -> Path:
        assert self.folder is not None
        return self.folder / "data"

    def _prepare(self, folder: Path) -> None:
        if self._run_as:
            os.chown(folder, self._uid, self._gid)
        result = subprocess.run(
            self._initdb_command(),
            cwd=folder,
            capture_output=True,
            text=True,
            env={**os.environ, "LC_ALL": "C"},
            check=False,
            timeout=120,
            **self._run_as,
        )
        if result.returncode != 0:
            raise StoreUnavailableError(
                f"initdb failed (code {result.returncode}):\n{result.stdout}\n{result.stderr}"
            )

    def _initdb_command(self) -> Sequence[str]:
        return [
            str(self.bindir / "initdb"),
            "-D", str(self._data),
            "-U", "postgres",
            "-A", "trust",
            "-E", "UTF8",
            "--locale=C",
            "--no-sync",
        ]  # fmt: skip

    def _command(self) -> list[str]:
        assert self.folder is not None
        command = [
            str(self.bindir / "postgres"),
            "-D", str(self._data),
            "-p", str(self.port),
            "-h", "127.0.0.1",
            "-k", str(self.folder),
            "-c", "max_connections=200",
        ]  # fmt: skip
        if not self.durable:
            command += ["-c", "fsync=off", "-c", "synchronous_commit=off"]
            command += ["-c", "full_page_writes=off"]
        return command

    def _ready(self) -> bool:
        # postmaster.pid's eighth line is the server's status, "ready" once it accepts clients;
        # its first line is the pid (a file left by a killed server is not ours).
        try:
            lines = (self._data / "postmaster.pid").read_text(encoding="utf-8").splitlines()
        except OSError:
            return False
        mine = self._process is not None and lines[:1] == [str(self._process.pid)]
        return mine and len(lines) >= 8 and lines[7].strip() == "ready"

    def start(self) -> LocalPostgres:
        """See :meth:`LocalServer.start`."""
        super().start()
        return self
