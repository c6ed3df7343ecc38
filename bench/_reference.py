"""Measure a reference version beside this checkout, in the same run.

:func:`run_at` takes ``ref``'s ``toolmgmt_core`` (and ``toolmgmt_demo``) from git into a
temporary folder and calls one function of a bench module with them, in a subprocess; the
function's JSON answer comes back. :func:`manager` builds a ``ToolManager`` with either
version's options (this round grouped them into option objects), so one bench function measures
both.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = Path(__file__).resolve().parent

__all__ = ["alternate", "manager", "run_at", "run_here", "run_with"]


def run_at(ref: str, module: str, function: str, *args: Any) -> Any:
    """``module.function(*args)`` (a bench module) with ``ref``'s core, its JSON answer."""
    return _run_archived(ref, ["toolmgmt_core", "toolmgmt_demo"], module, function, args)


def run_with(ref: str, module: str, function: str, *args: Any) -> Any:
    """:func:`run_at` with ``ref``'s whole product: the core, the demo, the adapters and the
    gateway (for a bench that drives a framework or the gateway)."""
    folders = ["toolmgmt_core", "toolmgmt_demo", "adapters", "gateway"]
    return _run_archived(ref, folders, module, function, args)


def _run_archived(
    ref: str, folders: list[str], module: str, function: str, args: tuple[Any, ...]
) -> Any:
    """``module.function(*args)`` with ``folders`` as they are at ``ref`` first on the path
    (the adapters' and the gateway's packages live one folder down)."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref, *folders],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    with tempfile.TemporaryDirectory() as folder:
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
        path = os.pathsep.join(
            [folder, *(f"{folder}/{f}" for f in folders if f in ("adapters", "gateway"))]
        )
        return _run(path, module, function, args)


def run_here(module: str, function: str, *args: Any) -> Any:
    """:func:`run_at` for this checkout as it is (uncommitted changes included): the same kind
    of fresh process, so rounds of both can alternate on equal terms. This checkout's adapters
    and gateway come first on the path too, as :func:`run_with`'s do (not the installed ones)."""
    path = os.pathsep.join([str(ROOT), str(ROOT / "adapters"), str(ROOT / "gateway")])
    return _run(path, module, function, args)


def alternate(
    ref: str, module: str, function: str, *args: Any, rounds: int
) -> tuple[list[Any], list[Any]]:
    """``module.function(*args)`` with ``ref``'s core and with this checkout's, each in a fresh
    process, alternating for ``rounds`` rounds (so a machine that other work slows for a while
    skews neither side): (the reference's answers, this checkout's), one per round."""
    theirs, ours = [], []
    for _ in range(rounds):
        theirs.append(run_at(ref, module, function, *args))
        ours.append(run_here(module, function, *args))
    return theirs, ours


def _run(path: str, module: str, function: str, args: tuple[Any, ...]) -> Any:
    env = {**os.environ, "PYTHONPATH": path}
    script = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); import importlib; "
        f"fn = getattr(importlib.import_module({module!r}), {function!r}); "
        "print(json.dumps(fn(*json.loads(sys.argv[2]))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(BENCH), json.dumps(list(args))],
        env=env,
        # In the version's own folder: ``python -c`` puts its working folder first on the path,
        # so run from this checkout a reference would import this checkout's core.
        cwd=path.split(os.pathsep)[0],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


def manager(
    catalog: Any, mode: str = "search", *, policies: Any = None, profile: Any = None
) -> Any:
    """A manager whose direct calls load the tool (``call_unloaded="load"``), with ``profile``
    and ``policies``, in whichever version of the core is imported."""
    import toolmgmt_core as core

    if hasattr(core, "Discovery"):  # option objects
        access = core.Access(profile, policies) if profile or policies else None
        return core.ToolManager(
            catalog,
            mode,
            discovery=core.Discovery(call_unloaded="load"),
            access=access,
            approval=core.Approval(destructive=False),
        )
    options: dict[str, Any] = {"call_unloaded": "load"}
    if profile is not None:
        options["profile"] = profile
    if policies is not None:
        options["policies"] = policies
    return core.ToolManager(catalog, mode, **options)
