"""The usage log in a shared store: a ``StoreListener`` writes records to a Redis stream or a
PostgreSQL table from its own thread, several writers (replicas) share one log, the log keeps
its bound, a store that is down drops records and counts them without holding a call up, and
``toolmgmt usage --store`` reports on it."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

import pytest

from toolmgmt_core import ToolCatalog, ToolManager
from toolmgmt_core._cli import main
from toolmgmt_core._stores.event_log import StoreListener, open_event_log

SECRET = "ssn-078-05-1120"


def _catalog() -> ToolCatalog:
    def lookup_member(member_id: str) -> dict[str, str]:
        """Look up a club member by id."""
        return {"member": member_id, "status": "active"}

    catalog = ToolCatalog()
    catalog.add_function(lookup_member)
    return catalog


def _run_replica(dsn: str, conversation: str, **log_options: Any) -> StoreListener:
    log = StoreListener(open_event_log(dsn, **log_options), flush_seconds=0.05)
    session = ToolManager(_catalog(), listeners=[log]).session(conversation)
    asyncio.run(session.call("tool_search", {"query": f"member {SECRET}"}))
    asyncio.run(session.call("lookup_member", {"member_id": SECRET}))
    assert log.flush(20)
    return log


@pytest.fixture(params=["redis", "postgres"])
def dsn(request: pytest.FixtureRequest) -> str:
    if request.param == "redis":
        return str(request.getfixturevalue("redis_url"))
    return str(request.getfixturevalue("pg_dsn"))


def test_replicas_share_one_log_and_the_report_reads_it(
    dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = [_run_replica(dsn, f"conv-{n}") for n in range(2)]
    assert [log.written for log in logs] == [4, 4] and not any(log.dropped for log in logs)
    for log in logs:
        log.close()
    reader = open_event_log(dsn)
    records = list(reader.read())
    reader.close()
    assert [r["event"] for r in records] == ["search", "load", "call", "call"] * 2
    assert SECRET not in json.dumps(records)
    assert main(["usage", "--store", dsn, "--json", "--catalog", "toolmgmt_demo:demo_catalog"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["conversations"] == 2 and report["searches"] == 2
    assert report["searches_with_call"] == 2
    assert report["tools"]["lookup_member"]["calls"] == 2


def test_the_log_keeps_its_bound(redis_url: str, pg_dsn: str) -> None:
    for dsn in (redis_url, pg_dsn):
        log = open_event_log(dsn, max_records=150)
        for start in range(0, 1000, 100):
            log.write([json.dumps({"event": "call", "n": n}) for n in range(start, start + 100)])
        records = list(log.read())
        log.close()
        assert 150 <= len(records) <= 350, dsn  # Redis trims whole nodes: about the bound
        assert records[-1]["n"] == 999


def test_a_store_that_is_down_drops_records_without_holding_calls(closed_port: int) -> None:
    log = StoreListener(
        open_event_log(f"redis://127.0.0.1:{closed_port}/0", timeout=0.5), flush_seconds=0.05
    )
    session = ToolManager(_catalog(), "flat", listeners=[log]).session()
    started = time.monotonic()
    for _ in range(20):
        result = asyncio.run(session.call("lookup_member", {"member_id": "m1"}))
        assert result.outcome == "success"
    assert time.monotonic() - started < 5  # the calls never waited on the store
    assert log.flush(30)
    assert log.written == 0 and log.dropped == 20 and log.errors >= 1
    log.close()


def test_a_full_queue_drops_and_counts() -> None:
    class Stuck:
        def __init__(self) -> None:
            self.release = False

        def write(self, lines: Any) -> None:
            while not self.release:
                time.sleep(0.01)

        def read(self) -> Any:
            return iter(())

        def close(self) -> None:
            self.release = True

    stuck = Stuck()
    log = StoreListener(stuck, max_pending=10, flush_seconds=0.01)
    session = ToolManager(_catalog(), "flat", listeners=[log]).session()
    for _ in range(40):  # one record each
        asyncio.run(session.call("lookup_member", {"member_id": "m1"}))
    assert log.dropped > 0  # at most 10 wait, beside the batch the writer holds
    stuck.release = True
    log.close()
    assert log.written + log.dropped == 40


def test_an_unknown_scheme_is_refused() -> None:
    from toolmgmt_core import ConfigError

    with pytest.raises(ConfigError, match="redis://"):
        open_event_log("mongodb://127.0.0.1/x")


def test_dropped_records_are_logged_once_named_and_counted(
    closed_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    """What a replica's operator sees of a usage log whose store is down: one warning, named
    by its logger (a gateway writes ``name: message``, so never ``toolmgmt: toolmgmt:``), and
    the dropped records as a metric, exported from 0."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    log = StoreListener(
        open_event_log(f"redis://127.0.0.1:{closed_port}/0", timeout=0.5),
        flush_seconds=0.05,
        meter_provider=provider,
    )

    def dropped() -> list[float]:
        data = reader.get_metrics_data()
        return [
            point.value
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
            if metric.name == "toolmgmt.usage_log.dropped"
            for point in metric.data.data_points
        ]

    assert dropped() == [0]
    session = ToolManager(_catalog(), "flat", listeners=[log]).session()
    with caplog.at_level("WARNING", logger="toolmgmt"):
        for _ in range(5):
            asyncio.run(session.call("lookup_member", {"member_id": "m1"}))
        assert log.flush(30)
    log.close()
    assert dropped() == [5]
    (warning,) = [r for r in caplog.records if "dropped" in r.getMessage()]
    line = logging.Formatter("%(name)s: %(message)s").format(warning)
    assert line.startswith("toolmgmt.usage_log: ") and "toolmgmt: toolmgmt:" not in line
    assert "records dropped" in line and "127.0.0.1" in line
