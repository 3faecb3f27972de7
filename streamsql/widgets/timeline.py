"""The timeline of a query: one lane per input stream, per stateful operator and for the output,
time across. Rows by rowtime, each stream's clock, the bounds it received (eclipsed ones grey),
late rows, rows a stream holds back for a slower producer, open windows (join windows, aggregation periods, OVER frames) as intervals, released
and held output rows, and for each held row the clock it waits for; rows refused for a calculator
error are marked like late rows, on their stream's lane, with the message in the tooltip.

:func:`timeline_records` is the data (plain dicts, also what tests check); :func:`timeline_chart`
draws it with Altair; :class:`Timeline` keeps the drawing current as the query runs."""
from __future__ import annotations

import re
import threading

import altair as alt
import ipywidgets as widgets

from ..engine import time as T
from ..engine.plan import Aggregate
from ..engine.types import format_value
from .hooks import Debounced, on_inject, weak_method
from .live import snapshot
from .render import ts
from .steps import held_rows
from . import vega

#: (what, colour) in legend order; ``what`` is the value of the records' ``what`` field
KINDS = [
    ("row", "#1f77b4"),
    ("late row", "#d62728"),
    ("pending row", "#aec7e8"),
    ("bound", "#17becf"),
    ("eclipsed bound", "#b0b0b0"),
    ("clock", "#000000"),
    ("open window", "#9467bd"),
    ("released row", "#2ca02c"),
    ("held row", "#ff7f0e"),
    ("waits for", "#e377c2"),
    ("output bound", "#8c564b"),
    ("calc error", "#7f0000"),         # in the legend only when a chart has one
]

_WAITS = re.compile(r"(\S+) clock (?:must reach|passes) (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?)")
_DAY = 86_400_000


def _real(t) -> bool:
    return t is not None and T.NO_TIME < t < T.END_OF_TIME


def _rec(what: str, lane: str, t: int, *, t2: int | None = None, step: int | None = None, detail: str = ""):
    return {"what": what, "lane": lane, "t": t, "t2": t if t2 is None else t2, "time": ts(t),
            "step": step, "detail": detail}


def _op_lanes(ops: list[dict]) -> list[str]:
    """A lane name per traced operator (``join``, ``union``, ``aggregate#2`` for repeats)."""
    seen: dict[str, int] = {}
    out = []
    for op in ops:
        n = op["operator"]
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out


def _aggregates(node) -> list[Aggregate]:
    out = []
    for child in node.inputs():
        out += _aggregates(child)
    if isinstance(node, Aggregate):
        out.append(node)
    return out


def _period_start(q, end: int) -> int | None:
    """Where the aggregation period that ends at ``end`` begins (the earliest rowtime whose
    period ends there), from the query's one GROUP BY time key; None when there is not exactly one."""
    aggs = [a for a in _aggregates(q.plan.root) if a.time_key is not None]
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
    """The query's last ``last`` input events, oldest first."""
    out = []
    for r in reversed(wb.event_trace):
        if r["step"] <= q.start_seq or len(out) >= last:
            break
        if r["stream"] in streams:
            out.append(r)
    return out[::-1]


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
        for rt, seq, producer, values in st.pending:
            slow = [f"{p} (clock {ts(c)})" for p, c in sorted(clocks.items()) if c is None or c < rt]
            vals = _values_text({f.name: v for f, v in zip(d.fields, values)})
            out[(s, seq)] = (rt, f"{vals}; from {producer}, waits for {', '.join(slow) or 'a slower producer'} "
                                 f"to reach {ts(rt)}")
    return out


def timeline_records(q, last: int = 500) -> tuple[list[str], list[dict]]:
    """``(lanes, records)``: everything the timeline draws, one dict per mark, in a stable order
    (the query's ``last`` input events and released rows, so a long replay stays drawable)."""
    wb = q.wb
    streams = list(q.plan.streams)
    ops = q.trace[-1]["operators"] if q.trace else []
    op_lanes = _op_lanes(ops)
    lanes = streams + op_lanes + ["output"]
    recs: list[dict] = []

    # rows a stream still holds back for a slower producer: accepted, not yet in the stream
    pending = _pending_rows(wb, streams)
    for (s, seq), (rt, text) in pending.items():
        recs.append(_rec("pending row", s, rt, step=seq, detail=text))

    # input streams: rows, late rows, bounds (eclipsed or not), from the events the query saw
    for r in _recent_events(wb, q, streams, last):
        if r["kind"] == "row" and r["status"] == "ok" and (r["stream"], r["step"]) in pending:
            continue
        if r["kind"] == "row" and r["status"] == "ok":
            recs.append(_rec("row", r["stream"], r["rowtime"], step=r["step"], detail=_values_text(r["values"])))
        elif r["kind"] == "row" and r["status"] == "late":
            recs.append(_rec("late row", r["stream"], r["rowtime"], step=r["step"],
                             detail=f"{_values_text(r['values'])}; clock was {ts(r['clock'])}"))
        elif r["kind"] == "bound" and r["status"] in ("ok", "eclipsed"):
            t = r["rowtime"] + (1 if r["strict"] else 0)
            what = "eclipsed bound" if r["status"] == "eclipsed" else "bound"
            recs.append(_rec(what, r["stream"], t, step=r["step"],
                             detail=f"rowtime {'>' if r['strict'] else '>='} {ts(r['rowtime'])}"))
    for s in streams:
        try:
            c = wb.clock(s)
        except Exception:
            c = None
        if _real(c):
            recs.append(_rec("clock", s, c, detail=f"{s} clock"))

    # operators: open windows and held rows, as of the last traced step
    for op, lane in zip(ops, op_lanes):
        state = op.get("state") or {}
        names = op.get("inputs", [])
        if op["operator"] == "join" and "kept" in state:
            for side, kept in enumerate(state["kept"]):
                w = state["windows"][side]
                p, f = w.get("preceding", 0), w.get("following", 0)
                if p == 0 and f == 0:
                    continue
                side_lane = names[side] if side < len(names) and names[side] in lanes else lane
                for r in kept:
                    recs.append(_rec("open window", side_lane, r - f, t2=r + p,
                                     detail=f"{side_lane} row at {ts(r)} can match base times "
                                            f"{ts(r - f)} to {ts(r + p)}"))
        for g in state.get("open_groups", []):
            end = g["end"]
            start = g.get("start")
            if start is None or start >= end:
                start = _period_start(q, end)
            if _real(end):
                recs.append(_rec("open window", lane, start if start is not None else end, t2=end,
                                 detail=f"group {', '.join(g.get('labels') or [format_value(k) for k in g.get('keys', [])])} "
                                        f"closes when the clock reaches {ts(end)}"))
        for part in state.get("partitions", []):
            if part.get("from") is not None and _real(op.get("present")):
                recs.append(_rec("open window", lane, part["from"], t2=max(part["from"], op["present"]),
                                 detail=f"partition {', '.join(map(format_value, part.get('partition', [])))}: "
                                        f"{part.get('rows', 0)} rows in the frame"))
    for h in held_rows(q):
        lane = "output" if h["root"] else op_lanes[h["index"]]
        waits = "; ".join(h["waits_for"])
        recs.append(_rec("held row", lane, h["rowtime"],
                         detail=f"{', '.join(format_value(v) for v in h['values'])}; waits for: {waits}"))
        for text in h["waits_for"]:
            for name, when in _WAITS.findall(text):
                if name in lanes:
                    recs.append(_rec("waits for", name, T.parse_timestamp(when),
                                     detail=f"held row at {ts(h['rowtime'])} waits for this clock"))

    # output: released rows and the output bound
    snap = snapshot(q)
    for row in snap.rows[-last:]:
        recs.append(_rec("released row", "output", row.rowtime, step=row.step,
                         detail=", ".join(f"{f.name}={format_value(v, f.type)}"
                                          for f, v in zip(snap.fields, row.values))))
    if _real(snap.output_bound):
        recs.append(_rec("output bound", "output", snap.output_bound, detail="output bound"))
    for e in [e for e in snap.errors if e.is_calc][-last:]:
        recs.append(_rec("calc error", e.stream if e.stream in lanes else "output", e.data_rowtime, step=e.step,
                         detail=f"{e.name}: {e.message}"))
    return lanes, [r for r in recs if _real(r["t"]) and _real(r["t2"])]


def timeline_chart(q, width: int = 640) -> alt.LayerChart:
    """The timeline as an Altair layer chart over one inline data set (``spec["data"]["values"]``)."""
    lanes, recs = timeline_records(q)
    errors = any(r["what"] == "calc error" for r in recs)
    kinds = [(k, c) for k, c in KINDS if k != "calc error" or errors]
    whats = [k for k, _c in kinds]
    x = alt.X("t:T", scale=alt.Scale(type="utc", padding=24, nice=False),
              axis=alt.Axis(format="%H:%M:%S", title="rowtime (UTC)"))
    y = alt.Y("lane:N", scale=alt.Scale(domain=lanes), sort=lanes, title=None)
    color = alt.Color("what:N", scale=alt.Scale(domain=whats, range=[c for _k, c in kinds]),
                      legend=alt.Legend(title=None, orient="bottom", columns=5))
    tooltip = [alt.Tooltip("what:N"), alt.Tooltip("lane:N"), alt.Tooltip("time:N"), alt.Tooltip("step:Q"),
               alt.Tooltip("detail:N")]
    base = alt.Chart().encode(x=x, y=y, color=color, tooltip=tooltip)

    def only(*what):
        return base.transform_filter(alt.FieldOneOfPredicate(field="what", oneOf=list(what)))

    zoom = alt.selection_interval(bind="scales", encodings=["x"], name="zoom")
    layers = [
        only("open window").mark_bar(opacity=0.3, height=18).encode(x2="t2:T").add_params(zoom),
        only("row", "released row").mark_circle(size=70, opacity=1),
        only(*(["late row", "calc error"] if errors else ["late row"])).mark_point(shape="cross", size=110,
                                                                                  filled=True),
        only("pending row").mark_circle(size=70, opacity=0.5, stroke="#1f77b4", strokeWidth=1),
        only("bound", "output bound").mark_tick(thickness=3, size=24),
        only("eclipsed bound").mark_tick(thickness=2, size=24, opacity=0.6, strokeDash=[2, 2]),
        only("clock").mark_point(shape="triangle-left", filled=True, size=120),
        only("held row").mark_point(filled=False, size=110, strokeWidth=2),
        only("waits for").mark_point(shape="diamond", filled=False, size=110, strokeWidth=2),
    ]
    return alt.layer(*layers, data=alt.Data(values=recs)).properties(
        width=width, height=max(80, 34 * len(lanes)), title=f"Timeline of query {q.name}")


def timeline_summary(q) -> str:
    """One deterministic line counting what the chart shows (its text/plain form)."""
    lanes, recs = timeline_records(q)
    counts = {k: 0 for k, _c in KINDS}
    for r in recs:
        counts[r["what"]] += 1
    shown = ", ".join(f"{k} {n}" for k, n in counts.items() if n)
    return f"Timeline of query {q.name} (lanes: {', '.join(lanes)}): {shown or 'nothing yet'}"


class Timeline(widgets.VBox):
    """The timeline chart of a query, redrawn after every event and release."""

    def __init__(self, q, width: int = 640):
        self.q = q
        self.width = width
        self.out = widgets.Output()
        super().__init__([self.out])
        self.add_class("streamsql-timeline")
        self._lock = threading.Lock()
        self._later = Debounced(weak_method(self.refresh))
        q.on_release(self._later.trigger)
        on_inject(q.wb, self._later.trigger)
        self.refresh()

    def chart(self) -> alt.LayerChart:
        return timeline_chart(self.q, self.width)

    def spec(self) -> dict:
        return vega.spec_of(self.chart())

    def refresh(self) -> None:
        with self._lock:
            data = vega.bundle(self.chart(), timeline_summary(self.q))
            self.out.outputs = ({"output_type": "display_data", "data": data, "metadata": {}},)

    def _repr_mimebundle_(self, **kwargs):
        if self.q.running:
            try:
                self.q.wait(120)
            except Exception:
                pass
        self.refresh()
        data = super()._repr_mimebundle_(**kwargs)
        data.update(vega.bundle(self.chart(), timeline_summary(self.q)))
        return data
