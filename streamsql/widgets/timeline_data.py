"""The data of a query's timeline: one record (a plain dict) per mark, lane by lane, from the
query's trace, its input events, its released rows and its native twin, with each mark's step,
spread and step label (placed by :mod:`.timeline_labels`). Tests check these records; the chart
(:mod:`.timeline_spec`) draws them."""
from __future__ import annotations

import numpy as np

from ..engine import time as sqltime
from ..engine.operators.describe import AggregateState, JoinState, WindowState
from ..engine.runtime.trace_records import clock_targets
from ..engine.types import format_value
from .live import snapshot
from .openstate import agg_node, aggregate_nodes, held_rows, partials_text, state_step
from .render import ts
from .timeline_labels import label_spots, place_labels
from .windowbands import window_band_records, with_bands

#: at most this many marks are drawn at one spot (lane and time); the last drawn one's tooltip
#: counts the rest (a join that releases hundreds of rows at one rowtime stays one stack)
STACK = 5

#: how far apart (pixels) marks at the same lane and time are drawn
SPREAD = 8
#: binned rows: into at most this many bins, when the query saw more input events than are drawn
BINS = 60

#: the lane of a query's native Spark twin
NATIVE_LANE = "Spark (native twin)"

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
    place_labels(lanes, recs, width)
    return lanes, recs


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
    and each record's tooltip step (``at``), spread (``dy``) and step label (see :func:`.timeline_labels.label_spots`;
    placed by :func:`.timeline_labels.place_labels` once the lanes are final)."""
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
    label_spots(spots)
    return lanes, recs


def drawn(recs: list[dict]) -> list[dict]:
    """The records a chart draws: of the marks at one spot, the first :data:`STACK` (the last of
    them counts the rest in its tooltip)."""
    return [r for r in recs if not r.get("stacked")]
