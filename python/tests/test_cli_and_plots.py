# SPDX-License-Identifier: MIT
"""hpcprof.cli (report formats, errors) and the plots (what they draw, from the same numbers)."""
import json

import matplotlib
import pytest

matplotlib.use("Agg")  # no display in tests

import hpcprof  # noqa: E402
import hpcprof.plot  # noqa: E402
from conftest import DEMO_RANKS  # noqa: E402


def test_report_formats_and_output_file(demo_trace, tmp_path):
    text = hpcprof.report(demo_trace, format="text")
    assert "Stragglers" in text and f"rank {DEMO_RANKS - 1}" in text
    out = hpcprof.report(demo_trace, format="json", output=tmp_path / "r.json")
    assert json.loads(out.read_text())["summary"]["ranks"] == DEMO_RANKS
    html = hpcprof.report(demo_trace, format="html", output=tmp_path / "r.html")
    assert html.read_text().lstrip().lower().startswith("<!doctype html")


def test_failed_gate_is_a_result_not_an_error(demo_trace):
    report = hpcprof.report(demo_trace, fail_on="summary.ranks > 1")
    assert [g["failed"] for g in report["gates"]] == [True]


def test_cli_errors_carry_hpcprofs_message(tmp_path, hpcprof_bin):
    with pytest.raises(hpcprof.HpcprofError) as e:
        hpcprof.report(tmp_path / "missing.hpcprof")
    assert e.value.returncode == 2
    assert "missing.hpcprof" in e.value.stderr
    with pytest.raises(FileNotFoundError):
        hpcprof.find_hpcprof(tmp_path / "no-such-hpcprof")
    assert hpcprof.find_hpcprof(hpcprof_bin) == hpcprof_bin


def test_rank_breakdown_plot_draws_each_rank_and_class(demo_trace):
    with hpcprof.open(demo_trace) as t:
        ax = hpcprof.plot.rank_breakdown(t)
        bars = ax.patches
        assert len(bars) == DEMO_RANKS * len(hpcprof.TIME_CLASSES)
        # The compute bars are the report's compute time, in seconds.
        compute = [b.get_width() for b in ax.containers[0]]
        expected = [r["compute_ns"] / 1e9 for r in t.report()["ranks"]]
        assert compute == pytest.approx(expected)
        assert [lbl.get_text() for lbl in ax.get_yticklabels()] == \
            [f"rank {r}" for r in range(DEMO_RANKS)]
        pct = hpcprof.plot.rank_breakdown(t, percent=True)
        ends = [sum(c[i].get_width() for c in pct.containers) for i in range(DEMO_RANKS)]
        assert ends == pytest.approx([100.0] * DEMO_RANKS)


def test_timeline_plot_has_a_lane_per_track(demo_trace):
    with hpcprof.open(demo_trace) as t:
        lanes = t.query("SELECT COUNT(DISTINCT track_id) AS n FROM event_view "
                        "WHERE depth = 0 AND rank IN (0, 3)")[0]["n"]
        ax = hpcprof.plot.timeline(t, ranks=[0, 3])
        labels = [lbl.get_text() for lbl in ax.get_yticklabels()]
        assert len(labels) == lanes
        assert labels[0].startswith("rank 0") and labels[-1].startswith("rank 3")
        io_only = hpcprof.plot.timeline(t, ranks=[1], classes=["io"])
        assert {text.get_text() for text in io_only.get_legend().get_texts()} == {"io"}
