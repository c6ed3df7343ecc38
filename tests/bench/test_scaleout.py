"""bench/scaleout.py's accounting of failed calls when a replica is killed: only a call in
flight on the killed replica whose connection or stream was lost is *interrupted*; any other
failure is *lost*, so the bench cannot hide a lost call behind the kill."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]

KILL = (100.0, 100.5)  # SIGKILL sent at 100 s, the replica gone at 100.5 s


def _scaleout() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_scaleout", ROOT / "bench" / "scaleout.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _failure(started: float, ended: float, error: str, raised: bool = True) -> dict[str, object]:
    failure: dict[str, object] = {"started": started, "ended": ended, "error": error}
    if raised:
        failure["raised"] = True
    return failure


STREAM = "MCPError(-32000, 'SSE stream ended without a response', None)"
BALANCER_502 = "MCPError(-32603, 'Server returned an error response', None)"


def test_only_calls_cut_off_on_the_killed_replica_are_interrupted() -> None:
    split = _scaleout().split_failures
    interrupted = [
        _failure(99.0, 100.2, STREAM),  # its answer was streaming when the replica died
        _failure(99.9, 100.1, BALANCER_502),  # the replica died before answering
        _failure(100.2, 100.4, STREAM),  # sent while the replica was dying
    ]
    lost = [
        _failure(90.0, 95.0, STREAM),  # a stream lost before any kill: not the kill's doing
        _failure(101.0, 102.0, STREAM),  # started after the replica was gone
        _failure(99.0, 100.3, "MCPError(-32603, 'Service unavailable (503): ...')"),  # an answer
        _failure(99.0, 130.0, "TimeoutError()"),  # in flight, but not cut off: it hung
        _failure(99.5, 100.1, '{"error": "upstream ReadError"}', raised=False),  # an answer
    ]
    assert split(interrupted + lost, KILL) == (len(interrupted), len(lost))
    assert split(interrupted, None) == (0, len(interrupted))  # no kill: every failure is lost
