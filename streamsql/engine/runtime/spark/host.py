"""Hosting an operator in one key bucket over a whole micro-batch, and reading the frontier of an
upstream stage from what its buckets report.

A bucket sees only its own rows, but every input's clock at every step (the timelines). It
steps the operator at the steps where one of its rows becomes usable or a clock crosses one of
the operator's wake-up thresholds, nowhere else. Rule 1 of the release rule (stamp <= present)
is local, so it is applied here: a candidate leaves the bucket ("is emitted") at the first step
where the present reaches it. Rule 2 (nothing earlier can still be produced) needs all buckets:
each bucket reports its frontier parameters whenever they change, and the consumer takes the
minimum over buckets (:func:`frontier`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ... import time as sqltime
from ...operators.base import INF, Candidate, Operator
from ...operators.release import split_due
from .timeline import Timeline, union_points


@dataclass
class Emitted:
    step: int
    cand: Candidate


@dataclass
class BucketRun:
    """What one bucket did over a batch."""
    emitted: list            # Emitted candidates, in emission order
    changes: list            # frontier changes ``(step, params..., held_min)``
    clocks: list             # the operator's input clock timelines
    errors: list             # OperatorError records (rows the operator refused), in step order
    trace: "BucketTrace | None" = None


@dataclass
class BucketTrace:
    """What the trace needs from one bucket over the trace window (steps ``>= start``)."""
    start: int
    held: list               # (born, emitted or -1, Candidate): candidates held at some window step
    base: tuple              # the operator's state view (items, totals) before the window
    views: list              # (step, view) after each window step that changed it


@dataclass
class BucketState:
    held: list = field(default_factory=list)         # candidates waiting for the present (rule 1)
    last: tuple | None = None                         # last reported (params..., held min)
    born: list = field(default_factory=list)         # the step each of ``held`` was produced at


def run_bucket(op: Operator, st: BucketState, inputs: list[tuple[pd.DataFrame, Timeline]],
               values_of, trace_from: int | None = None, stream_of=None, values: list | None = None,
               batched: bool = True) -> BucketRun:
    """Step ``op`` through one batch. ``inputs[i] = (usable rows in order, clock timeline)``;
    ``values_of(i, row)`` gives the operator's input tuple of a row (``values[i][row]``, when
    given, is the same as a list). With ``trace_from``, also what the trace needs from the steps
    at and after it (:class:`BucketTrace`). ``stream_of(i, row)`` names the stream a row came
    from: the STREAM_NAME of an error its arrival causes.

    An operator that takes many steps at once (OVER windows) takes every step before the trace
    window (all of them without ``trace_from``) in one call (:func:`run_rows_batched`); the loop
    below steps the rest, so the trace sees the window's steps one by one. ``batched=False``
    steps every row (the reference the tests hold the batch path to)."""
    born = getattr(st, "born", None)
    if born is None or len(born) != len(st.held):   # state of an older version: born before this batch
        born = [sqltime.NO_TIME] * len(st.held)
    tr = None
    if trace_from is not None:
        tr = BucketTrace(trace_from, [], None, [])
    clocks_tl = [tl for _rows, tl in inputs]
    pts = union_points(*[tl.steps for tl in clocks_tl],
                       *[rows["rel"].to_numpy().astype(np.int64) for rows, _ in inputs if len(rows)])
    k = len(pts)
    C = np.stack([tl.at(pts) for tl in clocks_tl]) if k else np.zeros((len(inputs), 0), np.int64)
    present = C.min(axis=0) if k else np.zeros(0, np.int64)
    emitted: list[Emitted] = []
    changes: list[tuple] = []
    errors: list = []
    take_errors = getattr(op, "take_errors", None)
    cur = -1
    skip = 0                       # rows of input 0 the batch path took
    if batched and len(inputs) == 1 and hasattr(op, "on_rows_values") and len(inputs[0][0]):
        rows, tl = inputs[0]
        vals = values[0] if values is not None else [values_of(0, j) for j in range(len(rows))]
        until = trace_from if trace_from is not None else INF
        em, ch, skip, errs = run_rows_batched(op, st, rows, tl, vals, until)
        if skip:
            emitted += em
            changes += ch
            for j, e in errs:
                if stream_of is not None:
                    e.stream = e.stream or stream_of(0, j)
                errors.append(e)
            cur = int(np.searchsorted(pts, until, side="left")) - 1
    # rows grouped by step, inputs in order
    by_step: dict[int, list] = {}
    for i, (rows, _tl) in enumerate(inputs):
        if not len(rows):
            continue
        first = skip if i == 0 else 0
        for r in zip(rows["rel"].to_numpy()[first:], rows["T"].to_numpy()[first:], rows["arrival"].iloc[first:],
                     range(first, len(rows))):
            by_step.setdefault(int(r[0]), []).append((i, int(r[1]), r[2], r[3]))
    row_steps = np.array(sorted(by_step), dtype=np.int64)
    row_pos = np.searchsorted(pts, row_steps) if len(row_steps) else row_steps
    ri = 0
    while True:
        nxt = k
        if ri < len(row_pos):
            nxt = int(row_pos[ri])
        wake = op.wakeups()
        for c in range(len(inputs)):
            w = wake[c] if c < len(wake) else INF
            if w < INF:
                j = int(np.searchsorted(C[c], w, side="left"))
                j = max(j, cur + 1)
                nxt = min(nxt, j)
        if st.held:
            hmin = min(h.stamp for h in st.held)
            j = max(int(np.searchsorted(present, hmin, side="left")), cur + 1)
            nxt = min(nxt, j)
        if nxt >= k:
            break
        s = int(pts[nxt])
        if tr is not None and tr.base is None and s >= tr.start:
            tr.base = op.state_view()
        clocks = [int(x) for x in C[:, nxt]]
        cands: list[Candidate] = []
        if ri < len(row_pos) and int(row_pos[ri]) == nxt:
            for (i, rt, arrival, idx) in by_step[s]:
                cands += op.on_row(i, s, rt, values_of(i, idx), clocks, arrival)
                if take_errors is not None and stream_of is not None:
                    for e in take_errors():
                        e.stream = e.stream or stream_of(i, idx)
                        errors.append(e)
            ri += 1
        cands += op.on_clocks(s, clocks)
        if take_errors is not None:
            errors += take_errors()
        p = int(present[nxt])
        st.held += cands
        born += [s] * len(cands)
        due, kept = split_due(st.held, p, born)        # rule 1; rule 2 is the consumer's
        for b, c in due:
            emitted.append(Emitted(s, c))
            if tr is not None and s > tr.start and b < s:
                tr.held.append((b, s, c))
        st.held, born = [c for _b, c in kept], [b for b, _c in kept]
        if tr is not None and s >= tr.start:
            v = op.state_view()
            if v != (tr.views[-1][1] if tr.views else tr.base):
                tr.views.append((s, v))
        rep = tuple(int(x) for x in op.bound_params()) + (min((h.stamp for h in st.held), default=INF),)
        if rep != st.last:
            changes.append((s,) + rep)
            st.last = rep
        cur = nxt
    st.born = born
    if tr is not None:
        if tr.base is None:
            tr.base = op.state_view()
        tr.held += [(b, -1, c) for b, c in zip(born, st.held)]
    return BucketRun(emitted, changes, clocks_tl, errors, tr)


def run_rows_batched(op: Operator, st: BucketState, rows: pd.DataFrame, tl: Timeline, values: list,
                     until: int) -> tuple[list[Emitted], list[tuple], int, list]:
    """The steps before ``until`` of a one-input operator that takes many steps at once
    (``on_rows_values``: OVER windows), with the outcome :func:`run_bucket`'s loop has for them:
    every output leaves at its row's own step (the present has reached its stamp there: the
    input clock at a row's usable step is at least its stamp), the report of the frontier
    parameters, if it changes, comes at the first step the loop would have visited, and the
    records of rows the operator refuses come as ``(row index, record)`` in step order. ``rows``
    (usable rows in order: ``rel``, ``T``, ``arrival``) and ``values`` (their operator tuples)
    are those of :func:`run_bucket`; the caller steps the rows from the returned count on, and
    the loop then starts at ``until`` by itself (the operator's wake-ups lie past the clocks it
    has seen). Nothing is done (0 rows) for other operators, with rows held, or when no row comes
    before ``until``."""
    from ...operators.rowbatch import RowBatch
    if not hasattr(op, "on_rows_values") or st.held or op.n_params or op.n_inputs != 1:
        return [], [], 0, []
    rel = rows["rel"].to_numpy().astype(np.int64) if len(rows) else np.zeros(0, np.int64)
    done = int(np.searchsorted(rel, until, side="left"))
    if not done:        # no row before the cut: the loop's jumps from wake-up to wake-up are cheaper
        return [], [], 0, []
    pts = union_points(tl.steps[tl.steps < until], rel[:done])
    clocks = tl.at(pts)
    # the first step the loop visits: a row's, or where the clock crosses the wake-up
    wake = op.wakeups()[0]
    first = int(rel[0]) if done else INF
    j = int(np.searchsorted(clocks, wake, side="left")) if wake < INF else len(pts)
    if j < len(pts):
        first = min(first, int(pts[j]))
    stamps = rows["T"].to_numpy()[:done].astype(np.int64)
    arrivals = list(rows["arrival"][:done])
    batch = RowBatch(rel[:done], stamps, values[:done], arrivals, pts, clocks)
    errors: list = []
    idx, cols = op.on_rows_values(batch, errors)
    if len(idx) and bool(np.any(stamps[idx] > tl.at(rel[idx]))):
        raise RuntimeError("run_rows_batched: an output is stamped past the present at its step")
    emitted = [Emitted(s, Candidate(t, a, tuple(values[i]) + tuple(v)))
               for s, t, a, i, v in zip(rel[idx].tolist(), stamps[idx].tolist(), [arrivals[i] for i in idx.tolist()],
                                        idx.tolist(), zip(*cols) if cols else [()] * len(idx))]
    changes = []
    rep = tuple(int(x) for x in op.bound_params()) + (INF,)
    if rep != st.last and first < INF:
        changes.append((first,) + rep)
        st.last = rep
    return emitted, changes, done, errors


# --------------------------------------------------------------------------- the consumer's side

@dataclass
class FrontierState:
    """What a consumer remembers of an upstream stage between batches."""
    params: dict = field(default_factory=dict)       # bucket -> last (params..., held min)
    clocks: list | None = None                       # the upstream's input clocks at the last step


def frontier(op: Operator, n_buckets: int, fs: FrontierState, metas: list[dict],
             future: list | None = None) -> Timeline:
    """The upstream stage's frontier F over this batch: for every step, the minimum over its
    buckets of ``min(op.bound_eval(params), held min)``. With ``future`` (a list), also appends
    the trace's ``future``: the minimum over buckets of ``op.bound_eval(params)`` alone, as the
    operator's own rule (``Operator.future_bound``) gives it, without the held rows."""
    base = tuple(int(x) for x in op.bound_params()) + (INF,)
    inputs = None
    for m in metas:
        if m.get("inputs") is not None:
            inputs = [Timeline(np.frombuffer(s, np.int64).copy(), np.frombuffer(v, np.int64).copy(), int(i))
                      for s, v, i in m["inputs"]]
    if inputs is None:
        init = fs.clocks or [sqltime.NO_TIME] * op.n_inputs
        inputs = [Timeline.constant(c) for c in init]
    changes: dict[int, list] = {}
    for m in metas:
        changes.setdefault(int(m["bucket"]), []).extend(m["changes"])
    pts = union_points(*[tl.steps for tl in inputs],
                       *[np.array([c[0] for c in ch], np.int64) for ch in changes.values()])
    init_clocks = np.array([[tl.initial for tl in inputs]], dtype=np.int64)
    if len(pts):
        C = np.stack([tl.at(pts) for tl in inputs], axis=1)
    else:
        C = np.zeros((0, op.n_inputs), np.int64)
    F = np.full(len(pts), INF, dtype=np.int64)
    F0 = INF
    U = np.full(len(pts), INF, dtype=np.int64) if future is not None else None
    U0 = INF
    for b in range(n_buckets):
        last = fs.params.get(b, base)
        P0 = np.array([last], dtype=np.int64)
        e0 = int(op.bound_eval(P0[:, :-1], init_clocks)[0])
        U0 = min(U0, e0)
        f0 = min(e0, int(P0[0, -1]))
        F0 = min(F0, f0)
        if not len(pts):
            continue
        ch = sorted(changes.get(b, []), key=lambda c: c[0])
        P = np.tile(np.array(last, dtype=np.int64), (len(pts), 1))
        if ch:
            cs = np.array([c[0] for c in ch], dtype=np.int64)
            cv = np.array([c[1:] for c in ch], dtype=np.int64)
            idx = np.searchsorted(cs, pts, side="right") - 1
            has = idx >= 0
            P[has] = cv[idx[has]]
            fs.params[b] = tuple(int(x) for x in cv[-1])
        E = op.bound_eval(P[:, :-1], C)
        if U is not None:
            U = np.minimum(U, E)
        Fb = np.minimum(E, P[:, -1])
        F = np.minimum(F, Fb)
    if len(pts):
        fs.clocks = [int(x) for x in C[-1]]
    if future is not None:
        future.append(Timeline(pts, U.astype(np.int64), U0))
    F = np.maximum.accumulate(np.maximum(F, F0)) if len(F) else F
    return Timeline(pts, F, F0)
