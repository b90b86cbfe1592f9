# SPDX-License-Identifier: MIT
"""The package against real traces: the numbers mpi_demo knows it made, SQL and the JSON report."""
import sqlite3

import pytest

import hpcprof
from conftest import DEMO_RANKS, DEMO_STEPS, DEMO_WRITE_BYTES, DEMO_WRITES_PER_RANK


def sql(path, query, params=()):
    with sqlite3.connect(path) as db:
        return db.execute(query, params).fetchall()


def test_event_view_holds_every_checkpoint_write(demo_trace):
    with hpcprof.open(demo_trace) as t:
        writes = t.event_view("name = ? AND object LIKE ?", ("write", "%mpi_demo.rank%.ckpt"))
        per_rank = writes.groupby("rank").agg(calls=("event_id", "size"), bytes=("bytes", "sum"))
        assert list(per_rank.index) == list(range(DEMO_RANKS))
        assert set(per_rank["calls"]) == {DEMO_WRITES_PER_RANK}
        assert set(per_rank["bytes"]) == {DEMO_WRITES_PER_RANK * DEMO_WRITE_BYTES}
        # The frame is the view, row for row.
        assert len(t.event_view()) == sql(demo_trace, "SELECT COUNT(*) FROM event_view")[0][0]
        assert t.ranks() == list(range(DEMO_RANKS))


def test_event_view_columns_limit_and_query(demo_trace):
    with hpcprof.open(demo_trace) as t:
        allreduces = t.event_view("name = 'MPI_Allreduce'", columns=["rank", "dur_ns"])
        assert list(allreduces.columns) == ["rank", "dur_ns"]
        assert allreduces.groupby("rank").size().tolist() == [DEMO_STEPS] * DEMO_RANKS
        assert len(t.event_view(limit=3)) == 3
        # Standard library only: rows as dicts, the same numbers.
        rows = t.query("SELECT rank, COUNT(*) AS n FROM event_view WHERE name = ? GROUP BY rank",
                       ("MPI_Allreduce",))
        assert rows == [{"rank": r, "n": DEMO_STEPS} for r in range(DEMO_RANKS)]


def test_counter_view_and_stats_view_match_sql(demo_trace):
    with hpcprof.open(demo_trace) as t:
        counters = t.counter_view()
        assert len(counters) == sql(demo_trace, "SELECT COUNT(*) FROM counter_view")[0][0] > 0
        assert {"rank", "pid", "tid", "counter", "unit", "ts_ns", "value"} <= set(counters.columns)
        stats = t.stats_view()
        expected = sql(demo_trace, "SELECT name, value FROM stats_view")
        assert list(zip(stats["name"], stats["value"])) == expected
        assert (t.stats_view(nonzero=True)["value"] > 0).all()
        assert t.metadata()["schema_version"] == str(t.schema_version)


def test_report_names_the_straggler_and_the_breakdown_adds_up(demo_trace):
    with hpcprof.open(demo_trace) as t:
        report = t.report()
        assert report["summary"]["ranks"] == DEMO_RANKS
        # mpi_demo's last rank computes three times as long: the others wait for it.
        assert report["stragglers"][0]["rank"] == DEMO_RANKS - 1
        ids = set(t.findings()["id"])
        assert {"straggler", "load-imbalance"} <= ids
        breakdown = t.rank_breakdown()
        assert list(breakdown.index) == list(range(DEMO_RANKS))
        classes = [f"{c}_ns" for c in hpcprof.TIME_CLASSES]
        assert (breakdown[classes].sum(axis=1) == breakdown["window_ns"]).all()
        for rank in report["ranks"]:
            assert breakdown.loc[rank["rank"], "compute_ns"] == rank["compute_ns"]
        slow = breakdown.loc[DEMO_RANKS - 1, "compute_ns"]
        assert slow > breakdown.drop(index=DEMO_RANKS - 1)["compute_ns"].max()


def test_kineto_import_through_the_cli(kineto_trace):
    with hpcprof.open(kineto_trace) as t:
        assert t.ranks() == [0, 1]
        kernels = t.event_view("category = 'gpu_kernel'")
        assert len(kernels) > 0
        assert len(kernels) == sql(kineto_trace,
                                   "SELECT COUNT(*) FROM event_view WHERE category = 'gpu_kernel'")[0][0]
        assert t.report()["summary"]["gpu_ranks"] == 2
        assert t.metadata()["created_by"].startswith("hpcprof import")


def test_refuses_what_is_not_a_trace(tmp_path):
    plain = tmp_path / "plain.db"
    sqlite3.connect(plain).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(hpcprof.NotATrace, match="not an hpcprof trace"):
        hpcprof.open(plain)
    text = tmp_path / "text.hpcprof"
    text.write_text("hello, this is not SQLite at all" * 10)
    with pytest.raises(hpcprof.NotATrace):
        hpcprof.open(text)
    with pytest.raises(FileNotFoundError):
        hpcprof.open(tmp_path / "missing.hpcprof")


def test_trace_is_opened_read_only(demo_trace):
    with hpcprof.open(demo_trace) as t:
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            t.connection.execute("DELETE FROM metadata")
