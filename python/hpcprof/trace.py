# SPDX-License-Identifier: MIT
"""An hpcprof trace opened read-only: its stable views as DataFrames or rows, its report.

The views (``event_view``, ``counter_view``, ``stats_view``) are the trace's stable query
surface (docs/trace-schema.md); everything here reads them or asks ``hpcprof report``, never
the internal tables, except ``metadata`` (a key/value table the docs name).
"""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from . import cli

PathLike = Union[str, os.PathLike]

#: ``PRAGMA application_id`` of every hpcprof trace (0x48504346, "HPCF").
APPLICATION_ID = 1213219654
#: Trace schema versions this package reads (``PRAGMA user_version``).
SCHEMA_VERSIONS = (1, 2, 3)
#: The seven exclusive time classes of a rank; they sum to its window (docs/analysis.md).
TIME_CLASSES = ("compute", "comm", "io", "memory", "sync", "idle", "setup")


#: Integer columns of the views that may be NULL.
_NULLABLE_INTEGERS = {"rank", "pid", "tid", "bytes", "peer", "seq", "correlation_id", "count",
                      "depth", "process_id", "track_id"}


class NotATrace(ValueError):
    """The file is not an hpcprof trace this package can read."""


def pandas():
    """The pandas module, or an ImportError that says how to install it."""
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("DataFrames need pandas: pip install './python[pandas]' "
                          "(Debian: apt install python3-pandas)") from e
    return pd


def _connect_read_only(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such trace")
    # mode=ro: a notebook never changes the trace (nor leaves a journal beside it).
    uri = "file:" + str(path.resolve()).replace("?", "%3f").replace("#", "%23") + "?mode=ro"
    return sqlite3.connect(uri, uri=True)


class Trace:
    """One hpcprof trace. Use as a context manager, or call close()."""

    def __init__(self, path: PathLike, hpcprof: Optional[PathLike] = None):
        self.path = Path(path)
        #: The hpcprof executable report() runs (None: $HPCPROF, then PATH).
        self.hpcprof = hpcprof
        self._db = _connect_read_only(self.path)
        try:
            app_id = self._db.execute("PRAGMA application_id").fetchone()[0]
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as e:
            self._db.close()
            raise NotATrace(f"{self.path}: not an SQLite database ({e})") from e
        if app_id != APPLICATION_ID:
            self._db.close()
            raise NotATrace(f"{self.path}: not an hpcprof trace (application_id {app_id})")
        if version not in SCHEMA_VERSIONS:
            self._db.close()
            raise NotATrace(f"{self.path}: trace schema version {version}; this package reads "
                            f"{', '.join(map(str, SCHEMA_VERSIONS))}")
        #: ``PRAGMA user_version`` of the file.
        self.schema_version = version
        self._report: Optional[Dict[str, Any]] = None

    # -- plumbing ---------------------------------------------------------------------------
    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "Trace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Trace({str(self.path)!r})"

    @property
    def connection(self) -> sqlite3.Connection:
        """The read-only sqlite3 connection, e.g. for ``pandas.read_sql``."""
        return self._db

    # -- SQL --------------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] = ()) -> List[Dict[str, Any]]:
        """Runs SQL and returns the rows as dicts (standard library only)."""
        cur = self._db.execute(sql, tuple(params))
        names = [d[0] for d in cur.description or ()]
        return [dict(zip(names, row)) for row in cur.fetchall()]

    def frame(self, sql: str, params: Sequence[Any] = ()):
        """Runs SQL and returns a pandas DataFrame."""
        return pandas().read_sql_query(sql, self._db, params=tuple(params))

    def _view(self, view: str, where: Optional[str], params: Sequence[Any],
              columns: Union[str, Sequence[str]], order: str, limit: Optional[int]):
        cols = columns if isinstance(columns, str) else ", ".join(columns)
        sql = f"SELECT {cols} FROM {view}"
        if where:
            sql += f" WHERE {where}"
        if order:
            sql += f" ORDER BY {order}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        frame = self.frame(sql, params)
        # A column with a NULL (rank of a launcher, bytes of a failed call) would come back as
        # floats: keep such integer columns integers (pandas' nullable Int64, NULL as <NA>).
        for col in _NULLABLE_INTEGERS.intersection(frame.columns):
            if frame[col].dtype.kind == "f" or frame[col].isna().all():
                frame[col] = frame[col].astype("Int64")
        return frame

    def event_view(self, where: Optional[str] = None, params: Sequence[Any] = (),
                   columns: Union[str, Sequence[str]] = "*", limit: Optional[int] = None):
        """Rows of ``event_view`` (one per recorded event) as a DataFrame, in time order.

        ``where`` is an SQL condition with ``?`` placeholders bound to ``params``, e.g.
        ``trace.event_view("class = ? AND rank = ?", ("io", 0))``.
        """
        return self._view("event_view", where, params, columns, "ts_ns, event_id", limit)

    def counter_view(self, where: Optional[str] = None, params: Sequence[Any] = (),
                     columns: Union[str, Sequence[str]] = "*", limit: Optional[int] = None):
        """Rows of ``counter_view`` (one per counter sample; cumulative counters are running
        totals, use differences) as a DataFrame."""
        return self._view("counter_view", where, params, columns, "rank, pid, tid, counter, ts_ns",
                          limit)

    def stats_view(self, nonzero: bool = False):
        """``stats_view``, the data-quality counters, worst severity first, as a DataFrame."""
        return self._view("stats_view", "value > 0" if nonzero else None, (), "*", "", None)

    def metadata(self) -> Dict[str, str]:
        """The trace's metadata (hpcprof version, command, time origin, partial, ...)."""
        return {r["key"]: r["value"] for r in self.query("SELECT key, value FROM metadata")}

    def ranks(self) -> List[int]:
        """The world ranks in the trace, in order (empty for a program without ranks)."""
        rows = self.query("SELECT DISTINCT rank FROM event_view WHERE rank IS NOT NULL ORDER BY rank")
        return [r["rank"] for r in rows]

    # -- the report -------------------------------------------------------------------------
    def report(self, refresh: bool = False, args: Sequence[str] = ()) -> Dict[str, Any]:
        """The JSON report (``hpcprof report TRACE --format json``) as a dict; computed once
        and kept unless ``refresh`` or ``args`` are given."""
        if self._report is None or refresh or args:
            result = cli.report(self.path, "json", args=args, hpcprof=self.hpcprof)
            if args:
                return result
            self._report = result
        return self._report

    def findings(self):
        """The report's findings (id, severity, ranks, estimated gain, ...) as a DataFrame."""
        keep = ("id", "severity", "title", "ranks", "estimated_gain_ns", "exclusive_gain_ns")
        rows = [{k: f.get(k) for k in keep} for f in self.report().get("findings", [])]
        return pandas().DataFrame(rows, columns=list(keep))

    def rank_breakdown(self):
        """Where each rank's time went, from the report: one row per rank (index ``rank``),
        the seven exclusive classes in ns (``compute_ns`` ... ``setup_ns``, summing to
        ``window_ns``), and ``window_ns``."""
        return rank_breakdown(self.report())


def rank_breakdown(report: Dict[str, Any]):
    """The per-rank breakdown of a JSON report dict as a DataFrame (see Trace.rank_breakdown)."""
    cols = [f"{c}_ns" for c in TIME_CLASSES] + ["window_ns"]
    rows = [{"rank": r.get("rank"), **{c: r.get(c, 0) for c in cols}} for r in report.get("ranks", [])]
    return pandas().DataFrame(rows, columns=["rank"] + cols).set_index("rank")


def open(path: PathLike, hpcprof: Optional[PathLike] = None) -> Trace:  # noqa: A001 - like io.open
    """Opens an hpcprof trace read-only."""
    return Trace(path, hpcprof=hpcprof)
