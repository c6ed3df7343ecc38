"""``toolmgmt usage`` on a recorded demo session: the table, the same figures as JSON, and a PNG
that opens as an image; and the report's arithmetic on hand-made records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolmgmt_core._cli import main
from toolmgmt_core._events.usage import usage_report
from toolmgmt_demo.usage import DEMO_REQUESTS, record_demo_usage


@pytest.fixture(scope="module")
def demo_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("usage") / "usage.jsonl"
    answers = record_demo_usage(path)
    assert len(answers) == len(DEMO_REQUESTS)
    assert answers[DEMO_REQUESTS.index("Tune my guitar strings.")].startswith("I found no tool")
    return path


def test_the_report_on_a_recorded_demo_session(
    demo_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["usage", str(demo_log), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["conversations"] == len(DEMO_REQUESTS)
    assert report["searches"] >= 4
    assert report["searches_without_call"] == 1
    assert report["searches_with_call"] == report["searches"] - 1
    assert report["search_call_share"] == round(
        report["searches_with_call"] / report["searches"], 4
    )
    (unanswered,) = report["unanswered_searches"]
    assert (
        unanswered["conversation"] == f"demo-{DEMO_REQUESTS.index('Tune my guitar strings.') + 1}"
    )
    assert "queries" not in unanswered  # not recorded without capture
    tools = report["tools"]
    assert tools["tool_search"]["meta"] is True
    assert tools["payments_refund_charge"] == {
        **tools["payments_refund_charge"],
        "calls": 2,
        "errors": 1,
    }
    assert tools["payments_refund_charge"]["error_codes"] == {"tool_error": 1}
    assert report["tokens_saved"]["discovery"] > 100_000  # 151 tools flat on every request
    assert report["tokens_saved"]["truncation"] > 0  # the app log was cut to 300 tokens
    assert report["catalog_tools"] == 151
    assert "payments_refund_charge" not in report["tools_never_found"]
    assert "crm_delete_deal" in report["tools_never_found"]


def test_the_table_and_the_plot(
    demo_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plot = tmp_path / "usage.png"
    assert main(["usage", str(demo_log), "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    for line in (
        "searches",
        "led to a call",
        "led to no call",
        "tokens saved by discovery",
        "tokens saved by truncation",
        "calls and errors per tool",
        "searches that led to no call (1 of 1)",
        "tools never found by a search",
        f"plot written to {plot}",
    ):
        assert line in out, line
    from PIL import Image

    with Image.open(plot) as image:
        assert image.format == "PNG"
        width, height = image.size
        assert width >= 600 and height >= 400
        colors = image.convert("RGB").getcolors(maxcolors=1_000_000)
        assert colors is not None and len(colors) > 10  # drawn, not blank


def test_usage_needs_one_source(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["usage"]) == 2
    assert "give a usage log FILE or --store DSN" in capsys.readouterr().err
    assert main(["usage", str(tmp_path / "nope.jsonl")]) == 2
    assert "Cannot read the usage log" in capsys.readouterr().err
    assert main(["usage", "--store", "mysql://x/y"]) == 2
    assert "redis://" in capsys.readouterr().err


def test_a_file_that_is_not_a_usage_log_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Meeting notes\n- ship the gateway\n{\"a\": 1}\n", encoding="utf-8")
    assert main(["usage", str(notes)]) == 2
    err = capsys.readouterr().err
    assert f"{notes}: not a usage log" in err and '"event"' in err
    empty = tmp_path / "usage.jsonl"  # a log nothing was written to yet is a log
    empty.write_text("", encoding="utf-8")
    assert main(["usage", str(empty), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["records"] == 0


def test_the_arithmetic_on_hand_made_records() -> None:
    records = [
        {"event": "search", "time": 1, "conversation": "a", "hits": ["x", "y"]},
        {"event": "search", "time": 2, "conversation": "a", "hits": ["z"]},
        {
            "event": "call",
            "time": 3,
            "conversation": "a",
            "tool": "y",
            "outcome": "success",
            "duration": 0.5,
        },
        {
            "event": "call",
            "time": 0,
            "conversation": "b",
            "tool": "y",
            "outcome": "failed",
            "error_code": "tool_error",
            "duration": 1.5,
        },
        {"event": "search", "time": 1, "conversation": "b", "hits": ["y"]},  # after its call
        {"event": "list", "conversation": "a", "flat_tokens": 1000, "definition_tokens": 300},
        {"event": "list", "conversation": "a", "flat_tokens": 100, "definition_tokens": 300},
        {"event": "truncated", "conversation": "a", "tokens_before": 900, "tokens_after": 200},
        {"event": "denied", "conversation": "b", "tool": "q", "code": "tool_denied"},
        {"event": "call", "conversation": "b", "tool": "w", "outcome": "interrupted"},
    ]
    report = usage_report(records, ["x", "y", "z", "w", "v"])
    assert (report.searches, report.searches_with_call, report.unanswered_count) == (3, 1, 2)
    assert report.tools["y"].calls == 2 and report.tools["y"].errors == 1
    assert report.tools["y"].codes == {"tool_error": 1}
    assert "w" not in report.tools  # an interrupted call came to nothing
    assert report.saved_by_discovery == 700 and report.listings == 2
    assert report.saved_by_truncation == 700 and report.denials == 1
    assert report.never_found == ["w", "v"]
    assert report.to_dict()["tools"]["y"]["mean_seconds"] == 1.0


def test_the_plot_shows_each_outcome_its_number_and_latency() -> None:
    """Denials and unknown tools are bars of their own, every bar carries its number, the
    tokens-saved panel is on a log axis (discovery's share shows beside truncation's), and a
    panel shows each tool's mean latency."""
    import matplotlib.pyplot as plt

    from toolmgmt_core._cli.usage import draw_report
    from toolmgmt_core._events.usage import ToolUsage, UsageReport

    report = UsageReport(
        searches=3,
        searches_with_call=2,
        unanswered_count=1,
        saved_by_discovery=366_588,
        saved_by_truncation=2_490,
        tools={
            "crm_find": ToolUsage(
                calls=9,
                errors=6,
                codes={"not_permitted": 2, "approval_denied": 1, "unknown_tool": 2, "x": 1},
                seconds=0.45,
            ),
            "mail_send": ToolUsage(calls=1, seconds=0.002),
        },
    )
    figure = draw_report(report)
    try:
        axes = {axis.get_title(): axis for axis in figure.axes}
        tokens = axes["tokens saved (log scale)"]
        assert tokens.get_yscale() == "log"
        assert {"366,588 (99%)", "2,490 (1%)"} <= {t.get_text() for t in tokens.texts}
        calls = axes["calls per tool, by outcome"]
        legend = [t.get_text() for t in calls.get_legend().get_texts()]
        assert legend == ["success", "denied", "unknown tool", "other error"]
        numbers = [t.get_text() for t in calls.texts if t.get_text()]
        assert sorted(numbers) == sorted(["3", "1", "3", "2", "1"])  # crm: 3/3/2/1, mail: 1
        latency = axes["mean call latency per tool (ms)"]
        assert {"50 ms", "2 ms"} <= {t.get_text() for t in latency.texts}
        searches = axes["3 searches"]
        assert {"2", "1"} <= {t.get_text() for t in searches.texts}
    finally:
        plt.close(figure)
