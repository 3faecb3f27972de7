"""OVER windows over a whole micro-batch at once: the vectorised twin of ``WindowOp.on_row``.

A :class:`RowBatch` is what a host would feed the operator one call at a time: rows with their
steps, and the input clock after each step. :func:`on_rows` returns the candidates and leaves
the operator in exactly the state (rows kept, frames' running aggregates, partitions and their
order, expiry heap and wake-up) that stepping the rows one by one leaves, so a host can batch
some steps and step the others.

Why this is the same computation. Per window and partition, rows form a sequence (kept rows,
then the batch's) whose order values never decrease, so every frame is an index range found
with ``searchsorted`` (RANGE) or index arithmetic (ROWS), ends only moving forward; counts and
exact sums are prefix sums, MIN/MAX a range minimum (ties: the earliest row, as the row path's
monotonic queue keeps), FIRST/LAST_VALUE the nearest non-null index. Expiry is a function of
the clock: a kept row whose frame can no longer be reached is dropped at the first step where
the clock passes its expiry time, and a partition whose rows are all gone is deleted (and
re-created, last in order, by its next row). The one history-dependent value is a float
SUM/AVG: the row path keeps a running sum (add on entry, subtract on exit, restart when the
frame empties), so the batch path replays those additions and subtractions in the row path's
order (entries then exits per row, expiry exits after the step's rows) with a sequential
accumulate, bit for bit. Anything this path does not cover (DISTINCT, non-finite floats, sums
that could leave 62 bits, an expression that fails on a row) is stepped row by row.
"""
from __future__ import annotations

import decimal
import gc
import heapq
from contextlib import contextmanager
from collections import deque
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..expr import Col, Lit
from .aggregate import _avg, _fit, avg_int_array, fit_int_array
from .arrays import I64_MAX, GroupedSearch, range_min, segmented_accumulate
from .base import INF, Candidate
from .window_runs import _Run, _SlidingAcc

_CTX = decimal.Context(prec=80)
_SAFE = float(1 << 61)      # exact sums below this magnitude fit int64 with room to spare
_NEVER = np.iinfo(np.int64).max


@dataclass
class RowBatch:
    """Rows for one operator input, and that input's clock. Equivalent to: for every step in
    ``points`` (increasing), ``on_row`` for the rows whose step it is (in order), then
    ``on_clocks`` with the clock after that step. ``points`` must hold every row's step and
    every step where the clock changes."""
    steps: np.ndarray        # int64 per row, non-decreasing
    rowtimes: np.ndarray     # int64 per row
    rows: Sequence[tuple]
    arrivals: Sequence[bytes]
    points: np.ndarray       # int64, increasing
    clocks: np.ndarray       # int64 clock after each point, non-decreasing

    def __post_init__(self):
        self.steps = np.asarray(self.steps, np.int64)
        self.rowtimes = np.asarray(self.rowtimes, np.int64)
        self.points = np.asarray(self.points, np.int64)
        self.clocks = np.asarray(self.clocks, np.int64)
        n = len(self.steps)
        if not (len(self.rowtimes) == len(self.rows) == len(self.arrivals) == n):
            raise ValueError("RowBatch: steps, rowtimes, rows and arrivals differ in length")
        if len(self.points) != len(self.clocks):
            raise ValueError("RowBatch: points and clocks differ in length")
        if n and (np.any(np.diff(self.steps) < 0) or not np.isin(self.steps, self.points).all()):
            raise ValueError("RowBatch: row steps must be non-decreasing and listed in points")

    def __len__(self):
        return len(self.steps)

    def cut(self, step: int) -> tuple["RowBatch", "RowBatch"]:
        """(the steps before ``step``, the steps from ``step`` on)."""
        r = int(np.searchsorted(self.steps, step, "left"))
        p = int(np.searchsorted(self.points, step, "left"))
        a = RowBatch(self.steps[:r], self.rowtimes[:r], self.rows[:r], self.arrivals[:r],
                     self.points[:p], self.clocks[:p])
        b = RowBatch(self.steps[r:], self.rowtimes[r:], self.rows[r:], self.arrivals[r:],
                     self.points[p:], self.clocks[p:])
        return a, b


#: rows taken by each path since start-up (diagnostics: tests check the vectorised path ran)
STATS = {"vectorised": 0, "stepped": 0}


def step_rows(op, batch: RowBatch, errors: list | None = None, at: int = 0) -> list[Candidate]:
    """The batch through the row-by-row path (the reference the vectorised path must equal).
    With ``errors``, the records of rows the operator refuses are taken after each row, as a
    host stepping row by row takes them, and appended as ``(at + row index, record)``."""
    STATS["stepped"] += len(batch)
    out: list[Candidate] = []
    steps, rts = batch.steps.tolist(), batch.rowtimes.tolist()
    take = getattr(op, "take_errors", None) if errors is not None else None
    j, n = 0, len(steps)
    for p, c in zip(batch.points.tolist(), batch.clocks.tolist()):
        clocks = (c,)
        while j < n and steps[j] == p:
            out += op.on_row(0, p, rts[j], batch.rows[j], clocks, batch.arrivals[j])
            if take is not None:
                errors += [(at + j, e) for e in take()]
            j += 1
        out += op.on_clocks(p, clocks)
    return out


@contextmanager
def gc_paused():
    """No cyclic garbage collection while a batch builds its state: it makes millions of
    tuples and deques, none cyclic, and each collection would walk all of the state."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class _Fallback(Exception):
    """The batch needs the row-by-row path."""


class _Inconsistent(RuntimeError):
    """The batch path's own cross-checks failed: a bug, never hidden by the fallback."""


class _BadRow(Exception):
    def __init__(self, step: int):
        self.step = step


def _pieces(op, batch: RowBatch, errors: list | None = None, at: int = 0):
    """The batch as consecutive pieces, each ``(piece, candidates, None)`` when stepped row by
    row or ``(piece, None, values per call)`` when vectorised (every row one output). With
    ``errors``, refused rows' records go there as :func:`step_rows` puts them (``at``: the
    index of the batch's first row)."""
    while len(batch.points):
        if any(c.agg.distinct for c in op.node.calls) or not len(batch):
            yield batch, step_rows(op, batch, errors, at), None
            return
        try:
            ev = _Evaluated(op, batch)
        except _BadRow as bad:
            # the rows before the failing step together, that step row by row, then the rest
            head, rest = batch.cut(bad.step)
            one, rest = rest.cut(bad.step + 1)
            yield from _pieces(op, head, errors, at)
            yield one, step_rows(op, one, errors, at + len(head)), None
            batch = rest
            at += len(head) + len(one)
            continue
        with gc_paused():
            try:
                plans = [_GroupPlan(op, gi, batch, ev) for gi in range(len(op.groups))]
            except _Inconsistent:
                raise
            except Exception:
                plans = None
            # (nothing has changed yet: whatever the row path decides, a value that does not
            # fit its type or a calculator error, it decides for this batch)
            cols = _commit(op, plans) if plans is not None else None
        if cols is None:
            yield batch, step_rows(op, batch, errors, at), None
            return
        STATS["vectorised"] += len(batch)
        yield batch, None, cols
        return


def on_rows(op, batch: RowBatch) -> list[Candidate]:
    """``WindowOp.on_rows``: the candidates, in the order the row path produces them."""
    out: list[Candidate] = []
    for piece, cands, cols in _pieces(op, batch):
        if cands is not None:
            out += cands
        elif cols:
            out += [Candidate(t, a, tuple(row) + vals) for t, a, row, vals in
                    zip(piece.rowtimes.tolist(), piece.arrivals, piece.rows, zip(*cols))]
        else:
            out += [Candidate(t, a, tuple(row)) for t, a, row in zip(piece.rowtimes.tolist(), piece.arrivals, piece.rows)]
    return out


def on_rows_values(op, batch: RowBatch, errors: list | None = None) -> tuple[np.ndarray, list[list]]:
    """``WindowOp.on_rows_values``: the same outputs without building candidates: the indices
    of the rows that produced one (all, unless the row path refused some), and per call its
    values for those rows. Row ``j``'s candidate is ``(rowtimes[j], arrivals[j], rows[j] +
    values)``, emitted at its own step. With ``errors``, the records of refused rows are
    appended there as ``(row index, record)`` (else they wait in the operator)."""
    n_in = op.n_in
    idx, cols = [], [[] for _ in op.node.calls]
    at = 0
    for piece, cands, vals in _pieces(op, batch, errors):
        if cands is not None:
            pos = {a: i for i, a in enumerate(piece.arrivals)}
            idx.append(np.array([at + pos[c.tie] for c in cands], np.int64))
            for i, col in enumerate(cols):
                col += [c.row[n_in + i] for c in cands]
        else:
            idx.append(np.arange(at, at + len(piece), dtype=np.int64))
            for col, v in zip(cols, vals):
                col += v
        at += len(piece)
    return (np.concatenate(idx) if idx else np.zeros(0, np.int64)), cols


# --------------------------------------------------------------------------- evaluation

def _column(expr, fn, rows, rts) -> list:
    if isinstance(expr, Col):
        i = expr.index
        return [r[i] for r in rows]
    if isinstance(expr, Lit):
        return [expr.value] * len(rows)
    return [fn(r, (t,)) for r, t in zip(rows, rts)]


class _Evaluated:
    """Partition keys per window and argument values per call, for every row of the batch."""

    def __init__(self, op, batch: RowBatch):
        rows = batch.rows
        rts = batch.rowtimes.tolist()
        try:
            self.parts = []
            for gi, g in enumerate(op.groups):
                cols = [_column(e, f, rows, rts) for e, f in zip(g.spec.partition_by, op.part_fns[gi])]
                # one key: its values stand for the 1-tuples (same equality, fewer objects)
                self.parts.append(cols[0] if len(cols) == 1 else list(zip(*cols)) if cols else [()] * len(rows))
            self.single = [len(g.spec.partition_by) == 1 for g in op.groups]
            self.args = [None if c.agg.arg is None else _column(c.agg.arg, op.arg_fns[i], rows, rts)
                         for i, c in enumerate(op.node.calls)]
        except Exception:
            raise _BadRow(self._first_failure(op, batch)) from None

    @staticmethod
    def _first_failure(op, batch) -> int:
        for j, (row, t) in enumerate(zip(batch.rows, batch.rowtimes.tolist())):
            try:
                for fns in op.part_fns:
                    for f in fns:
                        f(row, (t,))
                for f in op.arg_fns:
                    if f is not None:
                        f(row, (t,))
            except Exception:
                return int(batch.steps[j])
        return int(batch.steps[0])


# --------------------------------------------------------------------------- one window

class _Vals:
    """One call's argument values by position (kept rows, then the batch's), as the aggregates
    need them: a non-null mask, numbers in an array, the values themselves."""

    def __init__(self, plan, batch_vals, ret_vals: list, arg):
        self.plan = plan
        self.batch = batch_vals
        self.ret = ret_vals
        t = arg.type if arg is not None else None
        self.kind = "f" if t is not None and t.is_approx else ("i" if t is not None and t.is_integer else "o")
        self._nonnull = self._typed = self._objects = None

    @property
    def nonnull(self) -> np.ndarray:
        if self._nonnull is None:
            pl = self.plan
            m = np.zeros(pl.total, bool)
            if len(self.ret):
                m[pl.ret_pos] = [v is not None for v in self.ret]
            if self.batch is not None and len(self.batch):
                if self.kind == "f":
                    m[pl.bq] = self._batch_floats_nonnull()[pl.perm]
                else:
                    m[pl.bq] = np.fromiter((v is not None for v in self.batch), bool, len(self.batch))[pl.perm]
            self._nonnull = m
        return self._nonnull

    def _batch_floats_nonnull(self) -> np.ndarray:
        try:
            a = np.array(self.batch, dtype=np.float64)     # NULL becomes NaN
        except (TypeError, ValueError):
            raise _Fallback() from None
        nn = ~np.isnan(a)
        for j in np.flatnonzero(~nn).tolist():
            if self.batch[j] is not None:              # a real NaN: not for this path
                raise _Fallback()
        self._bf = np.where(nn, a, 0.0)
        return nn

    @property
    def typed(self) -> np.ndarray:
        """Numbers by position, 0 where NULL (kinds "f" and "i" only)."""
        if self._typed is None:
            pl = self.plan
            if self.kind == "f":
                out = np.zeros(pl.total, np.float64)
                if self.batch is not None and len(self.batch):
                    self.nonnull
                    out[pl.bq] = self._bf[pl.perm]
                dt = np.float64
            else:
                out = np.zeros(pl.total, np.int64)
                if self.batch is not None and len(self.batch):
                    out[pl.bq] = np.array([0 if v is None else v for v in self.batch], np.int64)[pl.perm]
                dt = np.int64
            if len(self.ret):
                out[pl.ret_pos] = np.array([0 if v is None else v for v in self.ret], dt)
            self._typed = out
        return self._typed

    @property
    def objects(self) -> np.ndarray:
        if self._objects is None:
            pl = self.plan
            out = np.empty(pl.total, object)
            if len(self.ret):
                out[pl.ret_pos] = self.ret
            if self.batch is not None and len(self.batch):
                b = np.empty(len(self.batch), object)
                b[:] = self.batch
                out[pl.bq] = b[pl.perm]
            self._objects = out
        return self._objects

    def pick(self, pos) -> list:
        """The values at positions ``pos`` (as the rows carried them)."""
        pos = np.asarray(pos, np.int64)
        if self.kind in "fi" and self.batch is not None:
            out = self.typed[pos].tolist()
            for j in np.flatnonzero(~self.nonnull[pos]).tolist():
                out[j] = None
            return out
        return self.objects[pos].tolist()

    def one(self, q: int):
        return self.pick([q])[0]


class _GroupPlan:
    """Everything one window specification computes over the batch, before any state changes."""

    def __init__(self, op, gi: int, batch: RowBatch, ev: _Evaluated):
        self.op, self.gi = op, gi
        g = self.g = op.groups[gi]
        s = g.spec
        self.kind = "cascade" if g.cascade else ("expiring" if s.mode == "RANGE" and s.lower is not None else "plain")
        self.sliding = s.lower is not None
        P, C = batch.points, batch.clocks
        self.nP = nP = len(P)
        N = len(batch)
        S = batch.steps

        # partitions: the batch's (first appearance order), then kept ones the clock expires
        keys = ev.parts[gi]
        uniq = dict.fromkeys(keys)
        ids = {k: i for i, k in enumerate(uniq)}
        pid_rows = np.array([ids[k] for k in keys], np.int64) if N else np.zeros(0, np.int64)
        if ev.single[gi]:
            ids = {(k,): i for k, i in ids.items()}
        parts = list(ids)
        wmap = {serial: when for when, serial, _p in g.expiry}
        if self.kind != "plain" and nP:
            last_clock = int(C[-1])
            for part, run in g.runs.items():
                if part not in ids and wmap.get(run.serial, INF) <= last_clock:
                    ids[part] = len(parts)
                    parts.append(part)
        self.parts = parts
        npart = len(parts)
        runs = [g.runs.get(p) for p in parts]
        self.runs = runs
        self.wmap = wmap
        R = np.array([len(r.o) if r is not None else 0 for r in runs], np.int64)
        nb = np.bincount(pid_rows, minlength=npart).astype(np.int64)
        size = R + nb
        seg_start = np.concatenate(([0], np.cumsum(size)[:-1])).astype(np.int64)
        seg_end = seg_start + size
        total = int(size.sum())
        self.seg_start, self.seg_end, self.total = seg_start, seg_end, total

        # batch rows in position order (grouped by partition, arrival order within)
        perm = np.argsort(pid_rows, kind="stable")
        bpid = pid_rows[perm]
        first = np.searchsorted(bpid, bpid, "left")
        bq = seg_start[bpid] + R[bpid] + (np.arange(N) - first)
        self.perm, self.bpid, self.bq = perm, bpid, bq
        Sb = S[perm]
        self.Sb = Sb
        self.Sb_global = S
        self.has_run = np.array([r is not None for r in runs], bool)

        # the combined sequence: kept rows, then batch rows, partition after partition
        comb_pid = np.repeat(np.arange(npart, dtype=np.int64), size)
        ret_pos = np.concatenate([np.arange(seg_start[p], seg_start[p] + R[p]) for p in range(npart) if R[p]]
                                 or [np.zeros(0, np.int64)]).astype(np.int64)
        comb_o = np.zeros(total, np.int64)
        if len(ret_pos):
            comb_o[ret_pos] = np.fromiter((o for r in runs if r is not None for o in r.o), np.int64, len(ret_pos))
        o_rows = batch.rowtimes if g.order_key is None else g.order_key.value_array(batch.rowtimes)
        comb_o[bq] = np.asarray(o_rows, np.int64)[perm]
        self.comb_pid, self.comb_o = comb_pid, comb_o
        # argument values per call of this window, by position
        ret_vals = [[t[k] for r in runs if r is not None for t in r.vals] for k in range(len(g.calls))]
        self.ret_pos = ret_pos
        self.vals = [_Vals(self, ev.args[c], ret_vals[k], op.node.calls[c].agg.arg) for k, c in enumerate(g.calls)]

        # frames of the batch rows, as positions [lo, hi]
        if s.mode == "ROWS":
            hi = np.maximum(bq - s.upper, seg_start[bpid] - 1)
            lo = seg_start[bpid] if s.lower is None else np.maximum(bq - s.lower, seg_start[bpid])
        else:
            gs = GroupedSearch(comb_pid, comb_o)
            ob = comb_o[bq]
            hi = np.minimum(gs.search(bpid, ob - s.upper, "right") - 1, bq)
            lo = seg_start[bpid] if s.lower is None else gs.search(bpid, ob - s.lower, "left")
        self.lo, self.hi = np.asarray(lo, np.int64), np.asarray(hi, np.int64)

        # expiry times, lives (a partition deleted when all its rows expired, re-created later)
        if self.kind == "expiring":
            lim = comb_o + s.lower
            ex = lim + 1 if g.order_key is None else g.order_key.period_end_array(lim)
            self.ex = np.asarray(ex, np.int64)
            self.X = np.searchsorted(C, self.ex, "left")
        else:
            self.ex = None
            self.X = np.full(total, nP, np.int64)
        self.Xstep = np.where(self.X < nP, P[np.minimum(self.X, max(nP - 1, 0))] if nP else 0, _NEVER)
        has_run = self.has_run
        first_pos = bq == seg_start[bpid]
        newlife = first_pos & ~has_run[bpid]
        if self.kind == "expiring":
            prev = np.maximum(bq - 1, 0)
            newlife |= ~first_pos & (self.Xstep[prev] < Sb)
        self.newlife = newlife
        mark = np.zeros(total, bool)
        mark[seg_start[size > 0]] = True
        mark[bq[newlife]] = True
        life_start = np.maximum.accumulate(np.where(mark, np.arange(total), 0)) if total else np.zeros(0, np.int64)
        last = seg_end - 1
        self.fls = np.where(size > 0, life_start[np.maximum(last, 0)] if total else 0, seg_start)
        self.continuing = has_run & (self.fls == seg_start)
        if self.kind == "expiring":
            self.deleted = self.X[np.maximum(last, 0)] < nP
        elif self.kind == "cascade":
            W = np.array([wmap[r.serial] if r is not None and self.continuing[p] else INF
                          for p, r in enumerate(runs)], np.int64)
            if N:
                # a new cascade partition ends with the period of its first row
                firsts = np.flatnonzero(first_pos & newlife)
                for j in firsts.tolist():
                    p = int(bpid[j])
                    W[p] = min(k.period_end(int(batch.rowtimes[perm[j]])) for k in g.cascade)
            self.cascade_when = W
            self.deleted = np.searchsorted(C, W, "left") < nP
            # no row may reach a partition after its deletion (its period is over)
            if N:
                dstep = np.where(self.deleted, P[np.minimum(np.searchsorted(C, W, "left"), nP - 1)], _NEVER)
                if np.any(Sb > dstep[bpid]):
                    raise _Fallback()
        else:
            self.deleted = np.zeros(npart, bool)

        # state positions of continuing runs
        base = np.array([r.base if r is not None else 0 for r in runs], np.int64)
        self.idx0 = base
        self.lo_state = seg_start + np.array([r.lo - r.base if r is not None else 0 for r in runs], np.int64)
        self.hi_state = seg_start + np.array([r.hi - r.base if r is not None else -1 for r in runs], np.int64)
        self._final_positions(batch)
        # the surviving partitions, and how their positions map to the indices their run counts
        A = self.A = np.flatnonzero(self.alive)
        self.fa_lo, self.fa_hi = self.flo[A], self.hi_f[A]
        self.fa_off = (np.where(self.continuing, self.idx0, 0) - self.fls)[A]
        self._chain(batch)
        self.results = [self._call(k, batch) for k in range(len(g.calls))]

    # ------------------------------------------------------------------ positions -> state

    def _final_positions(self, batch):
        """Per partition: last batch row of the final life, and the final base/lo/hi."""
        npart = len(self.parts)
        bpid = self.bpid
        lastj = np.searchsorted(bpid, np.arange(npart), "right") - 1
        has = (lastj >= 0) & (bpid[np.maximum(lastj, 0)] == np.arange(npart)) if len(bpid) else np.zeros(npart, bool)
        has &= np.where(has, self.bq[np.maximum(lastj, 0)] >= self.fls, False) if len(bpid) else has
        lo_last = np.where(has, self.lo[np.maximum(lastj, 0)] if len(bpid) else 0,
                           np.where(self.continuing, self.lo_state, self.fls))
        hi_last = np.where(has, self.hi[np.maximum(lastj, 0)] if len(bpid) else 0,
                           np.where(self.continuing, self.hi_state, self.fls - 1))
        if not self.sliding:
            # a cumulative frame's start never moves: the run's own lo stays
            lo_last = np.where(self.continuing, self.lo_state, self.fls)
            trim = hi_last + 1
        else:
            trim = lo_last
        if self.kind == "expiring" and self.nP:
            gs = GroupedSearch(self.comb_pid, self.ex)
            ef = gs.search(np.arange(npart), np.full(npart, int(batch.clocks[-1])), "right")
            base_f = np.maximum(trim, ef)
            lo_f = np.maximum(lo_last, base_f)
            hi_f = np.maximum(hi_last, base_f - 1)
        else:
            base_f, lo_f, hi_f = trim, lo_last, hi_last
        self.base_f, self.lo_f, self.hi_f = base_f, lo_f, hi_f
        # where the final frame's rows start among positions (a cumulative frame's earlier rows
        # are folded into the carried accumulator)
        self.flo = lo_f if self.sliding else self.seg_start.copy()
        self.alive = ~self.deleted & (self.seg_end > self.seg_start)

    def _base_after(self, pids: np.ndarray, t: np.ndarray, batch) -> np.ndarray:
        """The first kept position of each partition after ``on_clocks`` at point ``t``: past
        the frame start of its last row so far, and past every row the clock expired."""
        P, C = batch.points, batch.clocks
        if self._steps_search is None:
            self._steps_search = GroupedSearch(self.bpid, self.Sb)
            self._ex_search = GroupedSearch(self.comb_pid, self.ex)
        trim = self.seg_start[pids]
        if len(self.bpid):
            j = self._steps_search.search(pids, P[t], "right") - 1
            jj = np.maximum(j, 0)
            ok = (j >= 0) & (self.bpid[jj] == pids)
            trim = np.where(ok, self.lo[jj], trim)
        e = self._ex_search.search(pids, C[t], "right")
        return np.maximum(trim, e)

    def _chain(self, batch):
        """The expiry heap entry each surviving partition ends with. The row path arms it at the
        expiry time of the partition's first row, fires it at the first step where the clock
        reaches it, and re-arms it at the expiry time of the first row kept after that firing
        (which trimming may since have passed). Followed for all partitions at once by pointer
        doubling over "the row whose expiry time the entry holds"."""
        npart = len(self.parts)
        self.when = np.full(npart, INF, np.int64)
        self._steps_search = None
        if self.kind == "cascade":
            self.when = self.cascade_when
            return
        if self.kind != "expiring":
            return
        total, nP = self.total, self.nP
        q = np.arange(total, dtype=np.int64)
        nxt = q.copy()
        fire = self.X < nP
        if fire.any():
            b = self._base_after(self.comb_pid[fire], self.X[fire], batch)
            nxt[fire] = np.where(b < self.seg_end[self.comb_pid[fire]], b, q[fire])
        for _ in range(70):
            n2 = nxt[nxt]
            if np.array_equal(n2, nxt):
                break
            nxt = n2
        alive = np.flatnonzero(self.alive)
        start = self.fls[alive].copy()
        cont = self.continuing[alive]
        w0 = np.array([self.wmap.get(self.runs[p].serial, INF) if self.runs[p] is not None else INF
                       for p in alive.tolist()], np.int64)
        t1 = np.searchsorted(batch.clocks, w0, "left")
        refire = cont & (t1 < nP)
        if refire.any():
            start[refire] = self._base_after(alive[refire], t1[refire], batch)
        w = self.ex[nxt[start]] if len(start) else np.zeros(0, np.int64)
        self.when[alive] = np.where(cont & (t1 >= nP), w0, w)

    # ------------------------------------------------------------------ aggregates

    def _call(self, k: int, batch) -> dict:
        """Per batch row (batch order) the call's value, and, aligned with the surviving
        partitions (``self.A``), its accumulator's final fields as lists."""
        op, g = self.op, self.g
        c = g.calls[k]
        call = op.node.calls[c]
        fn = call.agg.fn
        vals = self.vals[k]
        N = len(self.bq)
        nonnull = vals.nonnull
        Pnn = np.concatenate(([0], np.cumsum(nonnull))).astype(np.int64)
        lo, hi, bpid = self.lo, self.hi, self.bpid
        cum = not self.sliding
        carried = [r.acc[k] if r is not None else None for r in self.runs]
        # carried (folded) counts of cumulative frames, per partition
        c_n = np.array([a.n if (cum and a is not None) else 0 for a in carried], np.int64)
        c_nn = np.array([a.nn if (cum and a is not None) else 0 for a in carried], np.int64)
        empty = hi < lo
        n_rows = np.where(empty, 0, hi - lo + 1) + c_n[bpid]
        nn = np.where(empty, 0, Pnn[hi + 1] - Pnn[np.minimum(lo, hi + 1)]) + c_nn[bpid]
        out = np.empty(N, object)
        A, lf, hf = self.A, self.fa_lo, self.fa_hi
        ef = hf < lf
        nnA = np.where(ef, 0, Pnn[hf + 1] - Pnn[np.minimum(lf, hf + 1)]) + c_nn[A]
        fin = {"n": (np.where(ef, 0, hf - lf + 1) + c_n[A]).tolist(), "nn": nnA.tolist(), "nn_arr": nnA}
        if fn == "COUNT":
            out[:] = (n_rows if call.agg.arg is None else nn).tolist()
        elif fn in ("SUM", "AVG"):
            self._sums(k, call, vals, nonnull, nn, carried, fin, out)
        elif fn in ("MIN", "MAX"):
            self._minmax(fn, vals, nonnull, carried, fin, out)
        elif fn == "FIRST_VALUE":
            self._first(vals, nonnull, carried, fin, out)
        elif fn != "LAST_VALUE":
            raise _Fallback()
        self._last(vals, nonnull, carried, fin, out if fn == "LAST_VALUE" else None)
        res = np.empty(N, object)
        res[self.perm] = out
        return {"values": res, "final": fin}

    def _nonnull_index(self, nonnull):
        total = self.total
        pos = np.arange(total, dtype=np.int64)
        prevnn = np.maximum.accumulate(np.where(nonnull, pos, -1)) if total else pos
        nextnn = np.minimum.accumulate(np.where(nonnull, pos, _NEVER)[::-1])[::-1] if total else pos
        return prevnn, nextnn

    def _pairs(self, pos: np.ndarray, seg: np.ndarray, vals: "_Vals") -> list:
        """``(row index, value)`` of positions ``pos`` (of surviving partitions ``seg``)."""
        return list(zip((pos + self.fa_off[seg]).tolist(), vals.pick(pos)))

    def _per_partition(self, items: list, seg: np.ndarray) -> list[list]:
        """``items`` (ordered by surviving partition ``seg``) as one list per partition."""
        ends = np.cumsum(np.bincount(seg, minlength=len(self.A))).tolist()
        starts = [0] + ends[:-1]
        return [items[a:b] for a, b in zip(starts, ends)]

    def _first(self, vals, nonnull, carried, fin, out):
        lo, hi, bpid = self.lo, self.hi, self.bpid
        _prev, nextnn = self._nonnull_index(nonnull)
        cum = not self.sliding
        top = max(self.total - 1, 0)
        f = nextnn[np.minimum(lo, top)] if self.total else lo
        ok = (hi >= lo) & (f <= hi)
        cf = [a.firstq[0] if (cum and a is not None and a.firstq) else None for a in carried]
        has_c = np.array([x is not None for x in cf], bool)
        out[:] = None
        sel = ok & ~has_c[bpid]
        out[sel] = vals.pick(f[sel])
        for j in np.flatnonzero(has_c[bpid]).tolist():
            out[j] = cf[int(bpid[j])][1]
        A, lf, hf = self.A, self.fa_lo, self.fa_hi
        if cum:
            j = nextnn[np.minimum(lf, top)] if self.total else lf
            hasc = np.array([cf[p] is not None for p in A.tolist()], bool)
            mine = (hf >= lf) & (j <= hf) & ~hasc          # a carried first value stays first
            pairs = iter(self._pairs(j[mine], np.flatnonzero(mine), vals))
            fin["firstq"] = [[cf[p]] if c else ([next(pairs)] if m else [])
                             for p, c, m in zip(A.tolist(), hasc.tolist(), mine.tolist())]
        else:
            pos, seg = _ranges(lf, hf)
            keep = nonnull[pos]
            fin["firstq"] = self._per_partition(self._pairs(pos[keep], seg[keep], vals), seg[keep])

    def _last(self, vals, nonnull, carried, fin, out):
        lo, hi, bpid = self.lo, self.hi, self.bpid
        prevnn, _next = self._nonnull_index(nonnull)
        cum = not self.sliding
        floor = self.seg_start[bpid] if cum else lo
        l = prevnn[np.maximum(hi, 0)] if self.total else hi
        ok = (hi >= lo) & (hi >= 0) & (l >= floor)
        if out is not None:
            out[:] = None
            out[ok] = vals.pick(l[ok])
            if cum:
                cl = [a.last if a is not None else None for a in carried]
                for j in np.flatnonzero(~ok).tolist():
                    x = cl[int(bpid[j])]
                    out[j] = None if x is None else x[1]
        A, lf, hf = self.A, self.fa_lo, self.fa_hi
        flo = self.seg_start[A] if cum else lf
        j = prevnn[np.maximum(hf, 0)] if self.total else hf
        okA = (hf >= flo) & (hf >= 0) & (j >= np.maximum(flo, self.fls[A]))
        pairs = iter(self._pairs(j[okA], np.flatnonzero(okA), vals))
        fin["last"] = [next(pairs) if o else (carried[p].last if cum and carried[p] is not None else None)
                       for p, o in zip(A.tolist(), okA.tolist())]

    def _minmax(self, fn, vals, nonnull, carried, fin, out):
        lo, hi, bpid = self.lo, self.hi, self.bpid
        cum = not self.sliding
        q = "minq" if fn == "MIN" else "maxq"
        A, lf, hf = self.A, self.fa_lo, self.fa_hi
        cbest = [getattr(a, q)[0] if (cum and a is not None and getattr(a, q)) else None for a in carried]
        nn_pos = np.flatnonzero(nonnull)
        extra = [x[1] for x in cbest if x is not None]
        if not len(nn_pos) and not extra:
            out[:] = None
            fin[q] = [[] for _ in A.tolist()]
            return
        ranks = _ranks(vals, nn_pos, extra)
        nr = int(ranks.max()) + 1
        M = self.total + 1
        if nr * M >= (1 << 62) or (len(self.parts) + 1) * (nr + 2) >= (1 << 62):
            raise _Fallback()
        rr = ranks if fn == "MIN" else (nr - 1 - ranks)
        keys = np.full(self.total, I64_MAX, np.int64)
        keys[nn_pos] = rr[:len(nn_pos)] * M + nn_pos
        crank = np.full(len(self.parts), I64_MAX, np.int64)
        ci = len(nn_pos)
        for p, x in enumerate(cbest):
            if x is not None:
                crank[p] = rr[ci] * M - 1          # a carried value is earlier than any position
                ci += 1
        best = range_min(keys, lo, hi)
        if cum:
            best = np.minimum(best, crank[bpid])
        out[:] = None
        got = best != I64_MAX
        fromc = got & (best % M == M - 1)
        sel = got & ~fromc
        out[sel] = vals.pick(best[sel] % M)
        for j in np.flatnonzero(fromc).tolist():
            out[j] = cbest[int(bpid[j])][1]
        if cum:
            b = np.minimum(range_min(keys, lf, hf), crank[A])
            mine = (b != I64_MAX) & (b % M != M - 1)
            pairs = iter(self._pairs(b[mine] % M, np.flatnonzero(mine), vals))
            fin[q] = [[next(pairs)] if m else ([cbest[p]] if bb != I64_MAX else [])
                      for p, m, bb in zip(A.tolist(), mine.tolist(), b.tolist())]
        else:
            # kept in the queue: the frame's non-null rows that no later row of it beats (ties
            # stay); a suffix minimum per frame, frames kept apart by an offset per frame
            pos, seg = _ranges(lf, hf)
            kk = np.where(keys[pos] == I64_MAX, nr + 1, keys[pos] // M)
            big = nr + 2
            v = seg * big + kk
            incl = np.minimum.accumulate(v[::-1])[::-1] if len(v) else v
            after = np.full(len(v), I64_MAX, np.int64)
            if len(v) > 1:
                same = seg[1:] == seg[:-1]
                after[:-1] = np.where(same, incl[1:], I64_MAX)
            keep = (kk <= nr) & (v <= after)
            fin[q] = self._per_partition(self._pairs(pos[keep], seg[keep], vals), seg[keep])

    def _sums(self, k, call, vals, nonnull, nn, carried, fin, out):
        at = call.agg.arg.type if call.agg.arg is not None else None
        if at is None:
            raise _Fallback()
        if at.is_approx:
            self._float_sums(k, call, vals, nonnull, nn, carried, fin, out)
        elif at.is_integer or at.name == "DECIMAL":
            self._exact_sums(call, at, vals, nonnull, nn, carried, fin, out)
        else:
            raise _Fallback()

    def _exact_sums(self, call, at, vals, nonnull, nn, carried, fin, out):
        """Integers and decimals: exact prefix sums of int64 (decimals scaled to their widest
        scale), used only where no frame's magnitude comes near 2**63."""
        lo, hi, bpid = self.lo, self.hi, self.bpid
        cum = not self.sliding
        dec = at.name == "DECIMAL"
        csum = [a.sum if (cum and a is not None) else None for a in carried]
        scale = 0
        if dec:
            for v in vals.objects[nonnull].tolist() + [x for x in csum if x is not None]:
                if not isinstance(v, decimal.Decimal) or not v.is_finite():
                    raise _Fallback()
                scale = max(scale, -v.as_tuple().exponent)

            def conv(v):
                return int(v.scaleb(scale, _CTX))
        else:
            def conv(v):
                return v
        if dec:
            iv = np.zeros(self.total, np.int64)
            if nonnull.any():
                iv[nonnull] = np.array([conv(v) for v in vals.objects[nonnull].tolist()], dtype=np.int64)
        else:
            iv = vals.typed
        cs = np.array([conv(x) if x is not None else 0 for x in csum], dtype=np.int64)
        with np.errstate(over="ignore"):
            Ps = np.concatenate(([0], np.cumsum(iv))).astype(np.int64)   # may wrap (see below)
        Pa = np.concatenate(([0.0], np.cumsum(np.abs(iv.astype(np.float64)))))
        e = hi < lo
        l2 = np.minimum(lo, hi + 1)
        mag = np.where(e, 0.0, Pa[hi + 1] - Pa[l2]) + np.abs(cs[bpid].astype(np.float64))
        if np.any(mag >= _SAFE):
            raise _Fallback()
        with np.errstate(over="ignore"):
            s = np.where(e, 0, Ps[hi + 1] - Ps[l2]) + cs[bpid]
        ok = nn > 0
        out[:] = None
        t = call.agg.type
        if dec:
            for j in np.flatnonzero(ok).tolist():
                sv = decimal.Decimal(int(s[j])).scaleb(-scale, _CTX)
                out[j] = _fit(sv, t) if call.agg.fn == "SUM" else _avg(sv, int(nn[j]), t)
        elif call.agg.fn == "SUM":
            out[ok] = fit_int_array(s[ok], t).tolist()
        else:
            out[ok] = avg_int_array(s[ok], nn[ok], t).tolist()
        A, lf, hf = self.A, self.fa_lo, self.fa_hi
        ef = hf < lf
        l2 = np.minimum(lf, hf + 1)
        m = np.where(ef, 0.0, Pa[hf + 1] - Pa[l2]) + np.abs(cs[A].astype(np.float64))
        if np.any(m >= _SAFE):
            raise _Fallback()
        with np.errstate(over="ignore"):
            # prefix sums may wrap; their difference is exact when the frame's sum fits
            tot = (np.where(ef, 0, Ps[hf + 1] - Ps[l2]) + cs[A]).tolist()
        if dec:
            tot = [decimal.Decimal(x).scaleb(-scale, _CTX) for x in tot]
        fin["sum"] = [None if n == 0 else x for n, x in zip(fin["nn"], tot)]

    def _float_sums(self, k, call, vals, nonnull, nn, carried, fin, out):
        """Replay the row path's running float sum: per partition, the additions (a row entering
        the frame) and subtractions (leaving it) in the order the row path makes them, restarted
        whenever the frame holds no value, accumulated sequentially."""
        total, nP = self.total, self.nP
        lo, hi, bpid, bq, Sb, perm = self.lo, self.hi, self.bpid, self.bq, self.Sb, self.perm
        N = len(bq)
        fv = vals.typed
        if not np.isfinite(fv).all():
            raise _Fallback()
        q = np.flatnonzero(nonnull).astype(np.int64)
        pq = self.comb_pid[q]
        # rows already in the frame when the batch starts (sliding frames only)
        before = np.zeros(len(q), bool)
        if self.sliding:
            before = self.has_run[pq] & (q >= self.lo_state[pq]) & (q <= self.hi_state[pq])
        # the batch row whose frame first reaches each row
        jA = np.searchsorted(hi, q, "left") if N else np.zeros(len(q), np.int64)
        jAc = np.minimum(jA, max(N - 1, 0))
        hasA = (~before) & (jA < N) & (bpid[jAc] == pq) if N else np.zeros(len(q), bool)
        prev_lo = np.empty(N, np.int64)
        if N:
            prev_lo[1:] = lo[:-1]
            samep = np.zeros(N, bool)
            samep[1:] = bpid[1:] == bpid[:-1]
            prev_lo = np.where(samep, prev_lo, self.lo_state[bpid])
            if not self.sliding:
                prev_lo = np.full(N, -1, np.int64)
        skip = hasA & ((self.Xstep[q] < Sb[jAc]) | (prev_lo[jAc] > q)) if N else hasA
        added = before | (hasA & ~skip)
        # the batch row whose frame start first passes each row, or the expiry firing
        if self.sliding and N:
            jR = np.searchsorted(lo, q, "right")
            jRc = np.minimum(jR, N - 1)
            hasR = (jR < N) & (bpid[jRc] == pq)
        else:
            jRc = np.zeros(len(q), np.int64)
            hasR = np.zeros(len(q), bool)
        onrow = added & hasR & (Sb[jRc] <= self.Xstep[q]) if N else np.zeros(len(q), bool)
        fired = added & ~onrow & (self.X[q] < nP)
        L = np.searchsorted(np.asarray(self.Sb_global, np.int64), self.Xstep[q], "right") - 1
        # events: (partition, time key, position, value, count change)
        rows_of = perm
        ev_pid, ev_key, ev_val, ev_d = [], [], [], []
        a_sel = hasA & ~skip
        for sel, key, sign in ((a_sel, 4 * rows_of[jAc[a_sel]], 1), (onrow, 4 * rows_of[jRc[onrow]] + 1, -1),
                               (fired, 4 * L[fired] + 3, -1)):
            ev_pid.append(pq[sel])
            ev_key.append(key)
            ev_val.append(fv[q[sel]] if sign > 0 else -fv[q[sel]])
            ev_d.append(np.full(int(sel.sum()), sign, np.int64))
        s0 = np.zeros(len(self.parts), np.float64)
        nn0 = np.zeros(len(self.parts), np.int64)
        cps = []
        for p, a in enumerate(carried):
            if a is not None and a.nn > 0:
                if a.sum is None or not np.isfinite(a.sum):
                    raise _Fallback()
                s0[p], nn0[p] = a.sum, a.nn
                cps.append(p)
        cps = np.array(cps, np.int64)
        ev_pid.insert(0, cps)
        ev_key.insert(0, np.full(len(cps), -4, np.int64))
        ev_val.insert(0, s0[cps])
        ev_d.insert(0, np.zeros(len(cps), np.int64))
        E_pid = np.concatenate(ev_pid).astype(np.int64)
        E_key = np.concatenate(ev_key).astype(np.int64)
        E_val = np.concatenate(ev_val).astype(np.float64)
        E_d = np.concatenate(ev_d).astype(np.int64)
        # each kind of event is already in (partition, time, position) order: a stable sort of
        # (partition, time) merges them and keeps positions in order within a time
        KS = 4 * (len(self.Sb_global) + 4)
        if (len(self.parts) + 1) * KS >= (1 << 62):
            raise _Fallback()
        ck = E_pid * KS + (E_key + 8)
        order = np.argsort(ck, kind="stable")
        E_pid, E_key, E_val, E_d, ck = E_pid[order], E_key[order], E_val[order], E_d[order], ck[order]
        m = len(E_pid)
        if m:
            newp = np.ones(m, bool)
            newp[1:] = E_pid[1:] != E_pid[:-1]
            cs = np.cumsum(E_d)
            first_of_block = np.maximum.accumulate(np.where(newp, np.arange(m), 0))
            block_base = (cs - E_d)[first_of_block]
            nn_after = nn0[E_pid] + cs - block_base
            nn_before = nn_after - E_d
            starts = (E_key == -4) | ((E_d == 1) & (nn_before == 0))
            if not starts[newp].all():
                raise _Inconsistent("window batch: running sum does not start at a partition's start")
            with np.errstate(over="ignore", invalid="ignore"):
                sums = segmented_accumulate(E_val, starts)     # an overflow is sent row by row below
        else:
            nn_after = np.zeros(0, np.int64)
            sums = np.zeros(0, np.float64)
        rq = bpid * KS + (4 * perm + 2 + 8)
        i = np.searchsorted(ck, rq, "right") - 1
        ic = np.maximum(i, 0)
        valid = (i >= 0) & (E_pid[ic] == bpid) if m else np.zeros(N, bool)
        r_nn = np.where(valid, nn_after[ic] if m else 0, 0)
        r_sum = np.where(valid, sums[ic] if m else 0.0, 0.0)
        if not np.array_equal(r_nn, nn):
            raise _Inconsistent("window batch: the replayed sums disagree with the frames' counts")
        ok = r_nn > 0
        if not np.isfinite(r_sum[ok]).all():
            raise _Fallback()
        out[:] = None
        if call.agg.fn == "SUM":
            out[ok] = r_sum[ok].tolist()
        else:
            out[ok] = (r_sum[ok] / r_nn[ok]).tolist()
        # final running sum per surviving partition: after its last event
        A = self.A
        if m:
            lastev = np.searchsorted(E_pid, A, "right") - 1
            has = (lastev >= 0) & (E_pid[np.maximum(lastev, 0)] == A)
            f_nn = np.where(has, nn_after[np.maximum(lastev, 0)], nn0[A])
            f_sum = np.where(has, sums[np.maximum(lastev, 0)], s0[A])
        else:
            f_nn, f_sum = nn0[A], s0[A]
        if not np.array_equal(f_nn, fin["nn_arr"]):
            raise _Inconsistent("window batch: the replayed sum's count disagrees with the final frame")
        fin["sum"] = [None if n == 0 else x for n, x in zip(f_nn.tolist(), f_sum.tolist())]


def _ranges(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All positions of the ranges ``[lo[i], hi[i]]`` (empty where ``hi < lo``), in order, and
    the range ``i`` each belongs to."""
    n = np.maximum(np.asarray(hi, np.int64) - np.asarray(lo, np.int64) + 1, 0)
    seg = np.repeat(np.arange(len(n), dtype=np.int64), n)
    if not len(seg):
        return np.zeros(0, np.int64), seg
    starts = np.cumsum(n) - n
    return np.arange(len(seg), dtype=np.int64) - starts[seg] + np.asarray(lo, np.int64)[seg], seg


def _ranks(vals: _Vals, pos: np.ndarray, extra: list) -> np.ndarray:
    """Dense ranks (equal values share one) of the values at ``pos``, then of ``extra``."""
    if vals.kind in "fi" and vals.batch is not None:
        arr = np.concatenate((vals.typed[pos], np.array(extra, vals.typed.dtype)))
        if arr.dtype.kind == "f" and np.isnan(arr).any():
            raise _Fallback()
        _u, inv = np.unique(arr, return_inverse=True)
        return inv.astype(np.int64).ravel()
    values = vals.objects[pos].tolist() + list(extra)
    if any(isinstance(v, float) and v != v for v in values):
        raise _Fallback()
    try:
        uniq = sorted(set(values))
    except TypeError:
        raise _Fallback() from None
    rank = {v: i for i, v in enumerate(uniq)}
    return np.fromiter((rank[v] for v in values), np.int64, len(values))


# --------------------------------------------------------------------------- commit

def _commit(op, plans: list[_GroupPlan]) -> list[list]:
    # serial numbers: runs are created in row order, windows in order within a row
    created = sorted((int(pl.perm[j]), pl.gi, int(pl.bpid[j])) for pl in plans
                     for j in np.flatnonzero(pl.newlife).tolist())
    serial_of = {(gi, p, r): op.serial + 1 + i for i, (r, gi, p) in enumerate(created)}
    op.serial += len(created)
    last_life = {}
    for r, gi, p in created:
        last_life[(gi, p)] = r
    for pl in plans:
        g = pl.g
        touched = {part: p for p, part in enumerate(pl.parts)}
        nth = {p: i for i, p in enumerate(pl.A.tolist())}
        kept = pl.kept_rows()
        new_runs: dict = {}
        heap: list = []
        for part, run in g.runs.items():
            p = touched.get(part)
            if p is None:
                new_runs[part] = run
                continue
            if pl.continuing[p] and pl.alive[p]:
                new_runs[part] = pl.build(nth[p], run, kept)
        fresh = sorted((last_life[(pl.gi, p)], p) for p in np.flatnonzero(pl.alive & ~pl.continuing).tolist())
        for r, p in fresh:
            run = _Run(len(g.calls), serial_of[(pl.gi, p, r)])
            new_runs[pl.parts[p]] = pl.build(nth[p], run, kept)
        keep = {id(run) for part, run in new_runs.items() if part not in touched}
        for when, serial, part in g.expiry:
            run = g.runs.get(part)
            if run is not None and run.serial == serial and id(run) in keep:
                heap.append((when, serial, part))
        if pl.kind != "plain":
            for p, w in zip(pl.A.tolist(), pl.when[pl.A].tolist()):
                part = pl.parts[p]
                heap.append((w, new_runs[part].serial, part))
        heapq.heapify(heap)
        g.runs = new_runs
        g.expiry = heap
    op.next_wake = min((g.expiry[0][0] for g in op.groups if g.expiry), default=INF)
    # the values, per call in row order
    res = [None] * len(op.node.calls)
    for pl in plans:
        for k, c in enumerate(pl.g.calls):
            res[c] = pl.results[k]["values"].tolist()
    return res


def _build(self: _GroupPlan, i: int, run, kept):
    """Fill ``run`` (kept or new) with the final state of the ``i``-th surviving partition;
    ``kept`` holds the order values and argument tuples of the rows all surviving partitions
    keep, one partition after another, where each begins, and their frames' indices."""
    o_all, v_all, starts, base, lo, hi = kept
    a, b = starts[i], starts[i + 1]
    run.o = deque(o_all[a:b])
    run.vals = deque(v_all[a:b])
    run.base, run.lo, run.hi = base[i], lo[i], hi[i]
    accs = []
    for res in self.results:
        st = res["final"]
        acc = _SlidingAcc.__new__(_SlidingAcc)
        acc.n, acc.nn = st["n"][i], st["nn"][i]
        acc.sum = st["sum"][i] if "sum" in st else None
        acc.minq = deque(st["minq"][i]) if "minq" in st else deque()
        acc.maxq = deque(st["maxq"][i]) if "maxq" in st else deque()
        acc.firstq = deque(st["firstq"][i]) if "firstq" in st else deque()
        acc.last = st["last"][i]
        accs.append(acc)
    run.acc = accs
    return run


def _kept_rows(self: _GroupPlan):
    """The rows the surviving partitions keep (order values, argument tuples: all partitions in
    one list each, and where each partition's begin), and their runs' base, lo and hi."""
    A = self.A
    pos, seg = _ranges(self.base_f[A], self.seg_end[A] - 1)
    o_all = self.comb_o[pos].tolist()
    cols = [v.pick(pos) for v in self.vals]
    v_all = list(zip(*cols)) if cols else [()] * len(pos)
    starts = [0] + np.cumsum(np.bincount(seg, minlength=len(A))).tolist()
    off = self.fa_off
    if self.sliding:
        lo = (self.lo_f[A] + off).tolist()
    else:   # a cumulative frame's start stays where the run had it (0 for a new one)
        lo = np.where(self.continuing, self.lo_state - self.seg_start + self.idx0, 0)[A].tolist()
    return o_all, v_all, starts, (self.base_f[A] + off).tolist(), lo, (self.hi_f[A] + off).tolist()


_GroupPlan.build = _build
_GroupPlan.kept_rows = _kept_rows
