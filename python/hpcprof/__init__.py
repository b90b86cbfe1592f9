# SPDX-License-Identifier: MIT
"""Read hpcprof traces and reports in Python notebooks.

    import hpcprof
    with hpcprof.open("job.hpcprof") as trace:
        io = trace.event_view("class = ?", ("io",))      # pandas DataFrame
        trace.rank_breakdown()                           # where each rank's time went
        hpcprof.plot.rank_breakdown(trace)               # matplotlib

Standard library only at its core (``Trace.query`` returns dicts); DataFrames need pandas and
plots matplotlib (the ``pandas`` and ``plot`` extras). Reports come from the installed
``hpcprof`` executable (``hpcprof.cli``). See docs/python.md.
"""
from . import cli
from .cli import HpcprofError, find_hpcprof, import_trace, report, run
from .trace import APPLICATION_ID, TIME_CLASSES, NotATrace, Trace, open, rank_breakdown

__version__ = "0.1.0"


def __getattr__(name):
    # hpcprof.plot imports matplotlib's machinery only when a plot is asked for.
    if name == "plot":
        from . import plot
        return plot
    raise AttributeError(f"module 'hpcprof' has no attribute {name!r}")


__all__ = ["APPLICATION_ID", "TIME_CLASSES", "HpcprofError", "NotATrace", "Trace", "cli",
           "find_hpcprof", "import_trace", "open", "rank_breakdown", "report", "run"]
