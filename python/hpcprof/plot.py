# SPDX-License-Identifier: MIT
"""matplotlib plots of a trace: the per-rank breakdown and a timeline of every rank's lanes.

Both take an ``ax`` to draw into (a new figure when None) and return it, so they compose in a
notebook. They draw what the trace and the report hold; they compute no analysis of their own.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Union

from .trace import TIME_CLASSES, Trace, rank_breakdown as _breakdown_frame

#: One colour per class, shared by both plots (report classes and event_view classes).
CLASS_COLOURS = {
    "compute": "#4c9f50", "comm": "#d9822b", "communication": "#d9822b", "io": "#3b7dd8",
    "memory": "#9467bd", "sync": "#c44e52", "idle": "#c8c8c8", "setup": "#8c8c8c",
    "annotation": "#e0c341", "other": "#606060",
}


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("plots need matplotlib: pip install './python[plot]' "
                          "(Debian: apt install python3-matplotlib)") from e
    return plt


def _axes(ax, width: float, height: float):
    if ax is not None:
        return ax
    _, ax = _pyplot().subplots(figsize=(width, height))
    return ax


def rank_breakdown(source: Union[Trace, Dict[str, Any]], ax=None, percent: bool = False):
    """Stacked horizontal bars: each rank's window split into the seven exclusive classes.

    ``source`` is a Trace or a JSON report dict. Seconds on the x axis, or percentages of each
    rank's window with ``percent``.
    """
    report = source.report() if isinstance(source, Trace) else source
    frame = _breakdown_frame(report)
    ax = _axes(ax, 8, 0.5 + 0.4 * max(len(frame), 1))
    labels = [f"rank {r}" if r is not None else "process" for r in frame.index]
    left = [0.0] * len(frame)
    for cls in TIME_CLASSES:
        ns = frame[f"{cls}_ns"].astype(float)
        values = (100.0 * ns / frame["window_ns"].clip(lower=1)) if percent else ns / 1e9
        ax.barh(labels, values, left=left, color=CLASS_COLOURS[cls], label=cls)
        left = [a + b for a, b in zip(left, values)]
    ax.set_xlabel("% of the rank's window" if percent else "seconds")
    ax.invert_yaxis()  # rank 0 on top
    ax.legend(ncol=len(TIME_CLASSES), fontsize="small", loc="lower center",
              bbox_to_anchor=(0.5, 1.0), frameon=False)
    return ax


def timeline(trace: Trace, ranks: Optional[Sequence[int]] = None, start_ns: Optional[int] = None,
             end_ns: Optional[int] = None, classes: Optional[Sequence[str]] = None,
             ax=None, max_events: int = 200_000):
    """Every CPU, GPU and NIC lane of the chosen ranks as bars coloured by class.

    Only outermost events (depth 0) are drawn; ``start_ns``/``end_ns`` zoom into a window of
    the trace's clock, ``classes`` keeps some classes only (e.g. ``["communication", "io"]``).
    At most ``max_events`` events are read (the earliest).
    """
    where, params = ["depth = 0"], []
    if ranks is not None:
        where.append(f"rank IN ({', '.join('?' * len(ranks))})")
        params += list(ranks)
    if start_ns is not None:
        where.append("ts_ns + dur_ns >= ?")
        params.append(int(start_ns))
    if end_ns is not None:
        where.append("ts_ns <= ?")
        params.append(int(end_ns))
    if classes:
        where.append(f"class IN ({', '.join('?' * len(classes))})")
        params += list(classes)
    events = trace.event_view(" AND ".join(where), params,
                              ["rank", "pid", "track_id", "track", "class", "ts_ns", "dur_ns"],
                              limit=max_events)
    lanes = events[["rank", "pid", "track_id", "track"]].drop_duplicates()
    lanes = lanes.sort_values(["rank", "pid", "track_id"], na_position="last")
    ax = _axes(ax, 12, 0.6 + 0.35 * max(len(lanes), 1))
    row = {tid: i for i, tid in enumerate(lanes["track_id"])}
    for cls, group in events.groupby("class"):
        for tid, lane in group.groupby("track_id"):
            spans = list(zip(lane["ts_ns"] / 1e9, lane["dur_ns"].clip(lower=1) / 1e9))
            ax.broken_barh(spans, (row[tid] - 0.4, 0.8),
                           color=CLASS_COLOURS.get(cls, CLASS_COLOURS["other"]),
                           label=cls if tid == group["track_id"].iloc[0] else None)
    ax.set_yticks(range(len(lanes)))
    ax.set_yticklabels([_lane_label(r) for r in lanes.itertuples()])
    ax.invert_yaxis()
    ax.set_xlabel("seconds since the trace's origin")
    if len(events):
        ax.legend(fontsize="small", loc="lower center", bbox_to_anchor=(0.5, 1.0),
                  ncol=6, frameon=False)
    return ax


def _lane_label(lane) -> str:
    who = f"rank {int(lane.rank)}" if lane.rank == lane.rank and lane.rank is not None \
        else f"pid {lane.pid}"
    return f"{who} {lane.track}"
