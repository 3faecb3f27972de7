"""The timeline of a query: one lane per input stream, per stateful operator (an operator with
several inputs, a join or a union, also gets one lane per input: the clock it has for that
input and the rows it keeps) and for the output, time across. Rows by rowtime, each stream's
clock, the bounds it received (eclipsed ones grey, backwards ones refused), late rows, rows a
stream holds back for a slower producer, open windows (join windows, aggregation periods, OVER
frames) as intervals, released and held output rows, and for each held row the clock it waits
for. Every event mark carries its step number (the step table's Step), drawn beside it and
again on a step axis under the chart; marks at the same place are spread apart; many loaded
rows are drawn binned. Rows refused for a calculator error are marked like late rows, on
their stream's lane, with the message in the tooltip.

:func:`timeline_records` is the data (plain dicts, also what tests check); :func:`timeline_chart`
draws it with Altair; :class:`TimelineView` keeps the drawing current as the query runs."""
from __future__ import annotations

import math

import altair as alt
import pandas  # noqa: F401 - Altair imports it on first use: here, on the importing thread, not half-way on the redrawing one
import ipywidgets as widgets
import numpy as np

from ..engine import time as sqltime
from ..engine.operators.describe import AggregateState, JoinState, WindowState
from .openstate import agg_node, aggregate_nodes, partials_text
from ..engine.runtime.trace_records import clock_targets
from ..engine.types import format_value
from .hooks import LiveView
from .labels import FONT_SIZE, Box, place
from .live import query_key, settled, snapshot
from .render import ts
from .static import StaticMixin, snapshot_html, spec_html
from .openstate import held_rows, state_step
from . import vega
from .windowbands import NOT_A_BAND, band_layers, window_band_records, with_bands

#: (what, colour) in legend order; ``what`` is the value of the records' ``what`` field
KINDS = [
    ("row", "#1f77b4"),
    ("rows (binned)", "#9ecae1"),
    ("late row", "#d62728"),
    ("pending row", "#aec7e8"),
    ("bound", "#17becf"),
    ("eclipsed bound", "#b0b0b0"),
    ("backwards bound", "#e7969c"),
    ("clock", "#000000"),
    ("kept row", "#bcbd22"),
    ("window", "#c5b0d5"),             # a window operator's closed windows (windowbands.py)
    ("open window", "#9467bd"),
    ("released row", "#2ca02c"),
    ("held row", "#ff7f0e"),
    ("waits for", "#e377c2"),
    ("output bound", "#8c564b"),
    ("calc error", "#7f0000"),         # in the legend only when a chart has one
    # the native twin's lane (native_records), only when the query has a twin
    ("spark watermark", "#e6550d"),
    ("spark row", "#7570b3"),
    ("spark dropped row", "#a50f15"),
]
#: what a legend entry means, where the name alone does not say it
MEANING = {
    "eclipsed bound": "eclipsed bound: says nothing new",
    "backwards bound": "backwards bound: refused",
    "kept row": "kept row: for partners to come",
    "window": "window: closed, released",
    "rows (binned)": "rows (binned): counted per bin",
    "spark watermark": "spark watermark: the twin's, after a step",
    "spark row": "spark row: emitted by the twin",
    "spark dropped row": "spark dropped row: dropped as late",
}
#: the name of the timeline's zoom and pan along rowtime (a selection bound to its x scale)
ZOOM = "zoom"
#: at most this many marks are drawn at one spot (lane and time); the last drawn one's tooltip
#: counts the rest (a join that releases hundreds of rows at one rowtime stays one stack)
STACK = 5
#: kinds whose marks are events: they carry the step that caused them
EVENT_KINDS = ("row", "late row", "calc error", "pending row", "bound", "eclipsed bound", "backwards bound", "released row")
#: kinds whose marks get step labels: the events, and the native twin's marks (on its own lane,
#: not on the step strip)
LABELLED_KINDS = EVENT_KINDS + ("spark watermark", "spark row", "spark dropped row")
#: how far apart (pixels) marks at the same lane and time are drawn
SPREAD = 8
#: binned rows: into at most this many bins, when the query saw more input events than are drawn
BINS = 60

_DAY = 86_400_000


def _real(t) -> bool:
    return t is not None and sqltime.NO_TIME < t < sqltime.END_OF_TIME


def _rec(what: str, lane: str, t: int, *, t2: int | None = None, step: int | None = None, detail: str = "",
         producer: str = "", values: str = ""):
    return {"what": what, "lane": lane, "t": t, "t2": t if t2 is None else t2, "time": ts(t),
            "step": step, "detail": detail, "producer": producer, "values": values}


def _op_lanes(ops) -> list[str]:
    """A lane name per traced operator (``join``, ``union``, ``aggregate#2`` for repeats)."""
    seen: dict[str, int] = {}
    out = []
    for op in ops:
        n = op.operator
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out


def _period_start(q, end: int) -> int | None:
    """Where the aggregation period that ends at ``end`` begins (the earliest rowtime whose
    period ends there), from the query's one GROUP BY time key; None when there is not exactly one."""
    aggs = [a for a in aggregate_nodes(q.plan.root) if a.time_key is not None]
    if len(aggs) != 1:
        return None
    from ..engine.operators.timekey import TimeKey
    try:
        tk = TimeKey(aggs[0].keys[aggs[0].time_key])
    except Exception:
        return None
    lo, hi = end - 400 * _DAY, end
    if tk.period_end(lo) >= end:
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if tk.period_end(mid) >= end:
            hi = mid
        else:
            lo = mid
    return hi


def _values_text(values: dict | None) -> str:
    return ", ".join(f"{k}={format_value(v)}" for k, v in (values or {}).items())


def _recent_events(wb, q, streams: list[str], last: int) -> list[dict]:
    """The query's last ``last`` input events (bulk loads included), oldest first."""
    return wb.traced_events(q.start_step, streams, last)


def _pending_rows(wb, streams: list[str]) -> dict:
    """``(stream, step) -> (rowtime, detail)`` of the rows each stream holds back until its
    slowest producer's clock reaches them (several producers on one stream)."""
    out = {}
    for s in streams:
        st = wb.catalog.state.get(s)
        d = wb.catalog.streams.get(s)
        if st is None or d is None or not st.pending:
            continue
        clocks = wb.catalog.producer_clocks(s)
        for rt, step, producer, values in st.pending:
            slow = [f"{p} (clock {ts(c)})" for p, c in sorted(clocks.items()) if c is None or c < rt]
            vals = _values_text({f.name: v for f, v in zip(d.fields, values)})
            out[(s, step)] = (rt, f"{vals}; from {producer}, waits for {', '.join(slow) or 'a slower producer'} "
                                 f"to reach {ts(rt)}")
    return out


def timeline_records(q, last: int = 500, width: int = 640) -> tuple[list[str], list[dict]]:
    """``(lanes, records)``: everything the timeline draws, one dict per mark, in a stable order
    (the query's ``last`` input events and released rows, so a long replay stays drawable), its
    step labels placed for a chart ``width`` px wide."""
    wb = q.wb
    streams = list(q.plan.streams)
    ops = q.trace[-1].operators if q.trace else ()
    op_lanes = _op_lanes(ops)
    lanes = streams + op_lanes + ["output"]
    recs: list[dict] = []

    # rows a stream still holds back for a slower producer: accepted, not yet in the stream
    pending = _pending_rows(wb, streams)
    for (s, step), (rt, text) in pending.items():
        recs.append(_rec("pending row", s, rt, step=step, detail=text))

    # input streams: rows, late rows, bounds (eclipsed, backwards or not), from the events the
    # query saw (bulk loads included); when it saw more than are drawn, every row binned too
    events = _recent_events(wb, q, streams, last)
    recs += _input_records(wb, q, streams, events, last, pending)
    for s in streams:
        try:
            c = wb.clock(s)
        except Exception:
            c = None
        if _real(c):
            recs.append(_rec("clock", s, c, detail=f"{s} clock"))

    # operators: open windows and held rows, as of the last traced step
    for op, lane in zip(ops, op_lanes):
        state = op.state
        names = op.inputs
        if isinstance(state, JoinState):
            for side, js in enumerate(state.sides):
                p, f = js.preceding, js.following
                if p == 0 and f == 0:
                    continue
                side_lane = names[side] if side < len(names) and names[side] in lanes else lane
                for r in js.kept:
                    recs.append(_rec("open window", side_lane, r - f, t2=r + p,
                                     detail=f"{side_lane} row at {ts(r)} can match base times "
                                            f"{ts(r - f)} to {ts(r + p)}"))
        if isinstance(state, AggregateState):
            for g in state.groups:
                end = g.end
                start = g.start
                if start is None or start >= end:
                    start = _period_start(q, end)
                if _real(end):
                    so_far = partials_text(agg_node(q, op), g.partials)
                    recs.append(_rec("open window", lane, start if start is not None else end, t2=end,
                                     detail=f"group {', '.join(g.labels or [format_value(k) for k in g.keys])} "
                                            f"({so_far}) closes when the clock reaches {ts(end)}"))
        if isinstance(state, WindowState):
            for part in state.partitions:
                if part.first is not None and _real(op.present):
                    recs.append(_rec("open window", lane, part.first, t2=max(part.first, op.present),
                                     detail=f"partition {', '.join(map(format_value, part.partition))}: "
                                            f"{part.rows} rows in the frame"))
    recs += window_band_records(q, ops, op_lanes, _rec)     # window operators' windows as bands
    for h in held_rows(q):
        lane = "output" if h["root"] else op_lanes[h["index"]]
        waits = "; ".join(h["waits_for"])
        recs.append(_rec("held row", lane, h["rowtime"],
                         detail=f"{', '.join(format_value(v) for v in h['values'])}; waits for: {waits}"))
        for w in h["waits"]:
            for name, when in clock_targets(w):
                if name in lanes:
                    recs.append(_rec("waits for", name, when,
                                     detail=f"held row at {ts(h['rowtime'])} waits for this clock"))

    # operators with several inputs: a lane per input, with the operator's clock for it
    side_lanes, side_recs = _input_lanes(ops, op_lanes)
    recs += side_recs

    # output: released rows and the output bound
    snap = snapshot(q)
    for row in snap.rows[-last:]:
        text = ", ".join(f"{f.name}={format_value(v, f.type)}" for f, v in zip(snap.fields, row.values))
        recs.append(_rec("released row", "output", row.rowtime, step=row.step, detail=text, values=text))
    if _real(snap.output_bound):
        recs.append(_rec("output bound", "output", snap.output_bound, detail="output bound"))
    for e in [e for e in snap.errors if e.is_calc][-last:]:
        recs.append(_rec("calc error", e.stream if e.stream in streams else "output", e.data_rowtime, step=e.step,
                         detail=f"{e.name}: {e.message}", values=e.data_row))
    recs += native_records(q)
    # every lane over the same steps: from the first step whose events and releases are all drawn
    # (a query that saw more than ``last`` events, or released more than ``last`` rows, is drawn
    # from the later of the two cuts on; the binned rows still cover every row, by rowtime)
    cuts = ([events[0]["step"]] if len(events) >= last else []) + \
        ([snap.rows[-last].step] if len(snap.rows) > last else [])
    since = max(cuts) if cuts else None
    recs = [r for r in recs if _real(r["t"]) and _real(r["t2"])
            and (since is None or r["step"] is None or r["step"] >= since)]
    lanes, recs = _finish(q, streams, ops, op_lanes, side_lanes, with_bands(recs))
    if any(r["lane"] == NATIVE_LANE for r in recs):
        lanes.append(NATIVE_LANE)
    _place_labels(lanes, recs, width)
    return lanes, recs


#: the lane of a query's native Spark twin
NATIVE_LANE = "Spark (native twin)"


def native_records(q) -> list[dict]:
    """The native twin's lane, when the query has one (``q.native()``): Spark's watermark after
    each step where it moved, the rows Spark emitted (at the step of their batch) and the rows it
    dropped as late."""
    twin = getattr(q, "twin", None)
    if twin is None:
        return []
    c = twin.comparison
    recs, last = [], None
    for s in twin.steps:
        if s.watermark is not None and s.watermark != last:
            recs.append(_rec("spark watermark", NATIVE_LANE, s.watermark, step=s.step,
                             detail=f"Spark's watermark after step {s.step}"))
            last = s.watermark
        for b in s.batches:
            for r in b.rows:
                text = c.row_text(r)
                recs.append(_rec("spark row", NATIVE_LANE, r.rowtime, step=s.step,
                                 detail=f"emitted by Spark in batch {b.batch}", values=text))
        if s.dropped:
            recs.append(_rec("spark dropped row", NATIVE_LANE, s.event.rowtime, step=s.step,
                             detail=f"Spark dropped this {s.event.stream} row as late"))
    return recs


def native_layers(only, points) -> list:
    """The marks of the twin's lane: Spark's watermark (ticks), its rows, the rows it dropped."""
    return [only(points, "spark watermark").mark_tick(thickness=3, size=22),
            only(points, "spark row").mark_circle(size=70),
            only(points, "spark dropped row").mark_point(shape="cross", size=110, filled=True)]


def _input_records(wb, q, streams: list[str], events: list[dict], last: int, pending: dict) -> list[dict]:
    recs = []
    for r in events:
        if r["kind"] == "row" and r["status"] == "ok" and (r["stream"], r["step"]) in pending:
            continue
        who = r.get("producer") or "default"
        if r["kind"] == "row" and r["status"] == "ok":
            text = _values_text(r["values"])
            recs.append(_rec("row", r["stream"], r["rowtime"], step=r["step"], detail=text, producer=who,
                             values=text))
        elif r["kind"] == "row" and r["status"] == "late":
            text = _values_text(r["values"])
            recs.append(_rec("late row", r["stream"], r["rowtime"], step=r["step"], producer=who, values=text,
                             detail=f"{text}; clock was {ts(r['clock'])}"))
        elif r["kind"] == "bound" and r["status"] in ("ok", "eclipsed"):
            t = r["rowtime"] + (1 if r["strict"] else 0)
            what = "eclipsed bound" if r["status"] == "eclipsed" else "bound"
            recs.append(_rec(what, r["stream"], t, step=r["step"], producer=who,
                             detail=f"rowtime {'>' if r['strict'] else '>='} {ts(r['rowtime'])}"
                                    + (f"; the clock was already {ts(r['bound_before'])}" if what != "bound" else "")))
        elif r["kind"] == "bound" and r["status"] == "error" and "backwards" in (r["message"] or ""):
            t = r["rowtime"] + (1 if r["strict"] else 0)
            recs.append(_rec("backwards bound", r["stream"], t, step=r["step"], producer=who,
                             detail=f"refused: {r['message']}"))
    first = events[0]["step"] if events else None
    if first is not None and len(events) >= last:
        recs += _binned_rows(wb, q, streams)
    return recs


def _binned_rows(wb, q, streams: list[str]) -> list[dict]:
    """Every row of each input stream since the query started, counted in up to ``BINS`` equal
    time bins over their whole range."""
    times = wb.traced_rowtimes(q.start_step, streams)
    everything = [t for t in times.values() if len(t)]
    if not everything:
        return []
    lo = int(min(t.min() for t in everything))
    hi = int(max(t.max() for t in everything)) + 1
    edges = np.linspace(lo, hi, BINS + 1).astype(np.int64)
    recs = []
    for s in streams:
        t = times.get(s)
        if t is None or not len(t):
            continue
        counts, _e = np.histogram(t, bins=edges)
        for k in np.nonzero(counts)[0]:
            n = int(counts[k])
            recs.append(_rec("rows (binned)", s, int(edges[k]), t2=int(edges[k + 1]),
                             detail=f"{n} row{'s' if n != 1 else ''} from {ts(int(edges[k]))} to {ts(int(edges[k + 1]))}"))
    return recs


def _input_lanes(ops: list[dict], op_lanes: list[str]) -> tuple[dict[str, list[str]], list[dict]]:
    """For each operator with several inputs: its input lanes (``join input ORDERS``) and on each
    the operator's clock for that input and, for a join, the rows it keeps from it."""
    lanes: dict[str, list[str]] = {}
    recs = []
    for op, lane in zip(ops, op_lanes):
        names = list(op.inputs or ())
        if len(names) < 2:
            continue
        mine = lanes[lane] = [f"{lane} input {n}" for n in names]
        clocks = list(op.clocks or ())
        kept = [side.kept for side in op.state.sides] if isinstance(op.state, JoinState) else []
        for i, side in enumerate(mine):
            if i < len(clocks) and _real(clocks[i]):
                recs.append(_rec("clock", side, clocks[i],
                                 detail=f"the {op.operator}'s clock for {names[i]}: every later {names[i]} row "
                                        f"it gets is at or after {ts(clocks[i])}"))
            for rt in (kept[i] if i < len(kept) else []):
                recs.append(_rec("kept row", side, rt,
                                 detail=f"a {names[i]} row at {ts(rt)} the {op.operator} keeps for partners "
                                        f"still to come"))
    return lanes, recs


def _finish(q, streams, ops, op_lanes, side_lanes, recs) -> tuple[list[str], list[dict]]:
    """The lanes in drawing order (an operator lane with several inputs only when it has marks),
    and each record's tooltip step (``at``), spread (``dy``) and step label (see :func:`_label`;
    placed by :func:`_place_labels` once the lanes are final)."""
    used = {r["lane"] for r in recs}
    lanes = list(streams)
    for lane in op_lanes:
        if lane not in side_lanes or lane in used:
            lanes.append(lane)
        lanes += side_lanes.get(lane, [])
    lanes.append("output")
    as_of = state_step(q)
    for r in recs:
        r["at"] = (f"step {r['step']}" if r["step"] is not None
                   else f"after step {as_of}" if as_of is not None else "now")
        r["dy"] = 0
        r["label"] = ""
        r["lx"] = r["ly"] = 0.0
        r["kmin"] = None
    # marks at the same lane and time are spread vertically, in record order
    spots: dict[tuple, list[dict]] = {}
    for r in recs:
        if r["what"] not in ("open window", "window", "rows (binned)"):
            spots.setdefault((r["lane"], r["t"]), []).append(r)
    for group in spots.values():
        n = min(len(group), STACK)
        for k, r in enumerate(group[:n]):
            r["dy"] = round((k - (n - 1) / 2) * min(SPREAD, 24 / max(1, n - 1)), 1) if n > 1 else 0
        if len(group) > STACK:
            more = group[STACK - 1]
            more["detail"] = f"{more['detail']} (and {len(group) - STACK} more marks at this time)"
            for r in group[STACK:]:
                r["stacked"] = True
    _label(spots)
    return lanes, recs


def _steps_text(steps: list[int]) -> str:
    """``8``, ``8,9``, ``8–10`` (a run), ``8…31`` (many): the steps of the marks at one spot."""
    steps = sorted(set(steps))
    if len(steps) == 1:
        return str(steps[0])
    if steps[-1] - steps[0] == len(steps) - 1 and len(steps) > 2:
        return f"{steps[0]}–{steps[-1]}"
    return ",".join(map(str, steps)) if len(steps) <= 3 else f"{steps[0]}…{steps[-1]}"


def _label(spots: dict) -> None:
    """One label per spot (lane and time) that has event marks: their steps, on the spot's top
    mark (the rest are in the tooltips and the step strip)."""
    for (_lane, _t), group in spots.items():
        events = [r for r in group if r["what"] in LABELLED_KINDS and r["step"] is not None]
        if events:
            events[0]["label"] = _steps_text([r["step"] for r in events])


#: each kind of point mark's half width and half height (px) as drawn (a symbol of area ``size``
#: is about ``sqrt(size)`` across, a circle ``2 * sqrt(size / pi)``, plus half its stroke; a tick
#: is ``thickness`` wide and ``size`` tall); the bars (open windows, binned rows) are not here:
#: labels may lie over them
EXTENT = {
    "row": (4.8, 4.8), "released row": (4.8, 4.8), "pending row": (5.3, 5.3), "spark row": (4.8, 4.8),
    "late row": (5.3, 5.3), "calc error": (5.3, 5.3), "spark dropped row": (5.3, 5.3),
    "kept row": (4.9, 4.9), "clock": (5.5, 5.5), "held row": (6.9, 6.9), "waits for": (6.3, 6.3),
    "bound": (1.5, 11.0), "output bound": (1.5, 11.0), "eclipsed bound": (1.0, 11.0),
    "backwards bound": (1.0, 11.0), "spark watermark": (1.5, 11.0),
}
#: the chart's first layers, bars (open windows, binned rows, window bands), which a step label
#: may cover; :func:`_place_labels` keeps labels clear of every mark after them
COVERABLE_LAYERS = 4

#: pixels between two lanes (the chart's height is this times the number of lanes, at least 60)
LANE_PX = 28


def chart_height(lanes: list[str]) -> int:
    return max(60, LANE_PX * len(lanes))


def _place_labels(lanes: list[str], recs: list[dict], width: int) -> None:
    """Each label's place beside its mark (``lx``, ``ly``: px from the lane's centre line at its
    time) and the zoom (``kmin``, px per ms) from which it is drawn, clear of every drawn mark
    and of the labels placed before it, the newest steps first (:func:`.labels.place`); a chart
    ``width`` px wide shows them first at :func:`first_zoom`."""
    height = chart_height(lanes)
    step = height / len(lanes)                       # the point scale's step (padding 0.5)
    centre = {lane: step * (i + 0.5) for i, lane in enumerate(lanes)}
    shown = [r for r in recs if r["what"] in EXTENT and not r.get("stacked") and r["lane"] in centre]
    marks = [Box(r["t"], centre[r["lane"]] + r["dy"], *EXTENT[r["what"]]) for r in shown]
    order = sorted((i for i, r in enumerate(shown) if r["label"]), key=lambda i: -shown[i]["step"])
    for i, p in zip(order, place(marks, [(i, shown[i]["label"]) for i in order], height, first_zoom(recs, width))):
        r = shown[i]
        r["lx"], r["ly"], r["kmin"] = p.dx, round(r["dy"] + p.dy, 1), p.kmin


#: the x axis keeps this many pixels free at each end (its scale's padding)
X_PADDING = 24


def first_zoom(recs: list[dict], width: int) -> float:
    """Pixels per millisecond of a chart ``width`` px wide as first drawn: its x scale spans the
    drawn marks' times (bars' ends too), less :data:`X_PADDING` at each end."""
    ts = [v for r in recs if not r.get("stacked") for v in (r["t"], r["t2"]) if v is not None]
    span = (max(ts) - min(ts)) if ts else 0
    return (width - 2 * X_PADDING) / span if span > 0 else math.inf


def label_fits(r: dict, px_per_ms: float) -> bool:
    """Whether record ``r``'s label is drawn when the x axis shows ``px_per_ms`` pixels per
    millisecond (the chart's own test, :func:`_label_test`, in Python)."""
    return bool(r["label"]) and r["kmin"] is not None and px_per_ms >= r["kmin"]


def _label_test(width: int) -> str:
    """:func:`label_fits` as a Vega expression over the main chart's x scale as zoomed."""
    span = "max(1, domain('main_x')[1] - domain('main_x')[0])"
    return f"isValid(datum.kmin) && {width} / {span} >= datum.kmin"


#: events outside the step strip's brushed range fade (marks without a step never do)
_BRUSHED = "!isValid(datum.step) || !length(data('steps_store')) || vlSelectionTest('steps_store', datum)"


def _layout(q, lanes: list[str], recs: list[dict]) -> tuple:
    """What the chart's shape depends on (data changes within one shape update it in place)."""
    present = tuple(k for k, _c in KINDS if any(r["what"] == k for r in recs))
    step_lanes = tuple(lane for lane in lanes if lane in set(q.plan.streams) or lane == "output")
    return tuple(lanes), step_lanes, present


def _chart(name: str, lanes, step_lanes, present, width: int, data) -> alt.VConcatChart:
    """The timeline as Altair charts over one data set (``data``: inline values or a named
    source): the lanes across rowtime, zoomed and panned along it, and under them the same
    events across steps (the step table's Step), where a dragged range brushes the steps above."""
    present = set(present)
    refused = ["late row"] + (["calc error"] if "calc error" in present else [])   # marked alike
    kinds = [(k, c) for k, c in KINDS if k in present] or KINDS[:1]
    whats = [k for k, _c in kinds]
    legend_labels = " : ".join(f"datum.label == {k!r} ? {MEANING[k]!r}" for k, _c in kinds if k in MEANING)
    legend = alt.Legend(title=None, orient="right", columns=1, labelLimit=210, symbolOpacity=1,
                        labelExpr=(legend_labels + " : datum.label") if legend_labels else alt.Undefined)
    color = alt.Color("what:N", scale=alt.Scale(domain=whats, range=[c for _k, c in kinds]), legend=legend)
    tooltip = [alt.Tooltip("what:N"), alt.Tooltip("lane:N"), alt.Tooltip("at:N", title="step"),
               alt.Tooltip("time:N", title="rowtime"), alt.Tooltip("producer:N"), alt.Tooltip("values:N"),
               alt.Tooltip("detail:N")]
    # a point scale: every mark is centred on its lane, and ``dy`` spreads marks from there
    y = alt.Y("lane:N", scale=alt.Scale(domain=list(lanes), type="point", padding=0.5), sort=list(lanes), title=None)
    dy = alt.YOffset("dy:Q", scale=None)
    x = alt.X("t:T", scale=alt.Scale(type="utc", padding=X_PADDING, nice=False),
              axis=alt.Axis(format="%H:%M:%S", title="rowtime (UTC): drag to pan, wheel to zoom, double-click to reset",
                            labelOverlap=True))
    faded = alt.condition(_BRUSHED, alt.value(1), alt.value(0.15))
    base = alt.Chart().encode(x=x, y=y, color=color, tooltip=tooltip)

    def only(chart, *what):
        return chart.transform_filter(alt.FieldOneOfPredicate(field="what", oneOf=list(what)))

    zoom = alt.selection_interval(bind="scales", encodings=["x"], name=ZOOM)
    points = base.encode(yOffset=dy, opacity=faded)
    layers = [     # the first COVERABLE_LAYERS (bars) are the only marks step labels may cover
        only(base, "open window").transform_filter(NOT_A_BAND).mark_bar(opacity=0.3, height=16)
            .encode(x2="t2:T").add_params(zoom),
        only(base, "rows (binned)").mark_bar(opacity=0.45, height=10).encode(x2="t2:T"),
        *band_layers(only, base),
        only(points, "row", "released row").mark_circle(size=70),
        only(points, *refused).mark_point(shape="cross", size=110, filled=True),
        only(points, "pending row").mark_circle(size=70, stroke="#1f77b4", strokeWidth=1, fillOpacity=0.5),
        only(points, "kept row").mark_point(shape="square", size=60, filled=False, strokeWidth=2),
        only(points, "bound", "output bound").mark_tick(thickness=3, size=22),
        only(points, "eclipsed bound").mark_tick(thickness=2, size=22, strokeDash=[2, 2]),
        only(points, "backwards bound").mark_tick(thickness=2, size=22, strokeDash=[1, 3]),
        only(points, "clock").mark_point(shape="triangle-left", filled=True, size=120),
        only(points, "held row").mark_point(filled=False, size=110, strokeWidth=2),
        only(points, "waits for").mark_point(shape="diamond", filled=False, size=110, strokeWidth=2),
    ]
    if NATIVE_LANE in lanes:
        layers += native_layers(only, points)
    # the step labels, each where :func:`_place_labels` put it, drawn from the zoom it needs on
    # (an offset along a time axis is the text's ``dx``: Vega-Lite's xOffset channel needs a band scale)
    layers.append(base.encode(yOffset=alt.YOffset("ly:Q", scale=None))
                  .transform_filter("datum.label != ''")
                  .mark_text(align="left", baseline="middle", fontSize=FONT_SIZE, dx=alt.ExprRef("datum.lx"))
                  .encode(text="label:N", color=alt.value("#444"),
                          opacity=alt.condition(f"({_label_test(width)}) && ({_BRUSHED})", alt.value(1),
                                                alt.value(0))))
    main = alt.layer(*layers).properties(name="main", width=width, height=chart_height(list(lanes)), title=name)
    brush = alt.selection_interval(encodings=["x"], name="steps")
    step_x = alt.X("step:Q", scale=alt.Scale(padding=12, zero=False, nice=False),
                   axis=alt.Axis(format="d", tickMinStep=1, labelExpr="datum.value % 1 ? '' : datum.label",
                                 title="step (as in the step table): drag to brush steps"))
    step_y = alt.Y("lane:N", scale=alt.Scale(domain=list(step_lanes), type="point", padding=0.5),
                   sort=list(step_lanes), title=None)
    events = [k for k in EVENT_KINDS if k != "calc error" or k in present]
    dots = (alt.Chart().transform_filter(alt.FieldOneOfPredicate(field="what", oneOf=events))
            .transform_filter("datum.step != null")
            .mark_circle(size=40, opacity=1)
            .encode(x=step_x, y=step_y, color=color, tooltip=tooltip).add_params(brush))
    scrub = (alt.Chart().transform_filter("datum.what == 'scrubber step'")
             .mark_rule(color="#e6a700", strokeWidth=3).encode(x=step_x))
    strip = alt.layer(dots, scrub).properties(name="strip", width=width, height=max(40, 20 * len(step_lanes)))
    # room on the right: the legend's labels are measured once, when the chart is drawn, and a font
    # that renders a few pixels wider than measured would be cut at the chart's edge
    return (alt.vconcat(main, strip, data=data, spacing=6).resolve_scale(color="shared")
            .properties(padding={"left": 5, "top": 5, "right": 16, "bottom": 5}))


def drawn(recs: list[dict]) -> list[dict]:
    """The records a chart draws: of the marks at one spot, the first :data:`STACK` (the last of
    them counts the rest in its tooltip)."""
    return [r for r in recs if not r.get("stacked")]


def _scrub_record(step: int | None) -> list[dict]:
    return [] if step is None else [{"what": "scrubber step", "step": step, "lane": None, "t": None}]


def timeline_chart(q, width: int = 640, step: int | None = None) -> alt.VConcatChart:
    """The timeline as Altair charts over one inline data set (``spec["data"]["values"]``): the
    lanes across rowtime, and under them the same events across steps (the step table's Step);
    ``step`` (the step scrubber's) is marked on the step axis."""
    lanes, recs = timeline_records(q, width=width)
    return _chart(f"Timeline of query {q.name}", *_layout(q, lanes, recs), width,
                  alt.Data(values=drawn(recs) + _scrub_record(step)))


def timeline_summary(q) -> str:
    """One deterministic line counting what the chart shows (its text/plain form)."""
    lanes, recs = timeline_records(q)
    counts = {k: 0 for k, _c in KINDS}
    for r in recs:
        counts[r["what"]] += 1
    shown = ", ".join(f"{k} {n}" for k, n in counts.items() if n)
    return f"Timeline of query {q.name} (lanes: {', '.join(lanes)}): {shown or 'nothing yet'}"


class TimelineView(LiveView, StaticMixin, widgets.VBox):
    """The timeline chart of a query, live: the chart is drawn once in the browser
    (a ``VegaView`` of ``streamsql.widgets.vega``) and then given new data as the query runs,
    so zoom, pan and brushed steps stay put; a new shape (a lane, a kind of mark) redraws it."""

    priority = 6
    #: a click's Spark micro-batches and row tables first (``Redrawer`` in ``widgets/hooks.py``)
    waits_for_quiet = True

    def __init__(self, q, width: int = 640, scrubber=None):
        """``scrubber``: a :class:`~streamsql.widgets.scrubber.StepScrubber` to show under the
        chart (as ``%streamsql timeline`` does); the chart marks its step."""
        self.q = q
        self.width = width
        self.view = vega.VegaView(kept=[ZOOM])        # a new shape keeps the user's zoom
        self.scrubber = scrubber
        self._layout_shown = None
        self._spec_cache: tuple | None = None       # (layout, the chart's spec with named data)
        super().__init__([self.view] + ([self.scrubber] if self.scrubber is not None else []))
        if self.scrubber is not None:
            self.scrubber.slider.observe(lambda _c: self.mark(), names="value")
        self.add_class("streamsql-timeline")
        self.follow(queries=[q], wb=q.wb)
        self.redraw_if_changed()    # the first drawing

    def chart(self) -> alt.VConcatChart:
        """The timeline as an Altair chart (:func:`timeline_chart` of this view's query), with the
        step scrubber's step marked when the scrubber is not at the last step."""
        return timeline_chart(self.q, self.width, self.marked_step())

    def marked_step(self) -> int | None:
        """The step a scrubber shows (its own, or the workbench's), when not the last one."""
        s = self.scrubber or getattr(self, "linked_scrubber", None)
        return None if s is None else s.marked_step()

    def spec(self) -> dict:
        """The chart's Vega-Lite spec (schema v5)."""
        return vega.spec_of(self.chart())

    def _spec_for(self, layout: tuple) -> dict:
        """The chart's spec for a shape, over the named data source: Altair builds it once per
        shape (a few hundred milliseconds of the kernel's CPU), the live chart and the snapshots
        then only change its data."""
        cached = self._spec_cache
        if cached is None or cached[0] != layout:
            cached = self._spec_cache = (layout, vega.spec_of(_chart(f"Timeline of query {self.q.name}", *layout,
                                                                      self.width, alt.Data(name=vega.DATA))))
        return cached[1]

    def static_parts(self) -> list[str]:
        """The pieces of its static snapshot (HTML), in display order: the live chart's spec with
        its data inline (the same drawing as :meth:`chart`'s)."""
        lanes, recs = timeline_records(self.q, width=self.width)
        spec = dict(self._spec_for(_layout(self.q, lanes, recs)))
        spec["data"] = {"values": drawn(recs) + _scrub_record(self.marked_step())}
        return [spec_html(spec)]

    def static_key(self):
        return query_key(self.q)

    def static_queries(self) -> list:
        return [self.q]

    def live_key(self):
        return self.static_key() + (self.marked_step(),)

    def static_html(self) -> str:
        """The view as a static HTML snapshot (what a notebook shows where no kernel runs it)."""
        return snapshot_html(self.static_parts(), f"Timeline of query {self.q.name}")

    def refresh(self) -> None:
        """Give the chart the query's current data (a new spec only when its shape changed)."""
        lanes, recs = timeline_records(self.q, width=self.width)
        layout = _layout(self.q, lanes, recs)
        values = drawn(recs) + _scrub_record(self.marked_step())
        if layout != self._layout_shown:
            spec = self._spec_for(layout)
            self.view.show(spec, values)
            self._layout_shown = layout
        else:
            self.view.values = values
        self.view.summary = timeline_summary(self.q)

    def bundle_settle(self) -> None:
        settled(self.q)
        self.refresh()

    def bundle_extra(self) -> dict:
        return vega.bundle(self.chart(), timeline_summary(self.q))

    def bundle_text(self) -> None:
        return None            # the chart's summary (vega.bundle's text/plain)
