"""One window specification of an OVER operator over a whole batch, before any state changes:
where every row sits, its frame, when rows expire and partitions end, and (through the kernels
it inherits, :mod:`.window_kernels`) every call's values and final accumulators.

Positions. Per partition, the rows it keeps from earlier batches come first, then the batch's
rows in arrival order; the partitions' runs are laid end to end (``seg_start``/``seg_end``), so
one array index (a *position*) names any row. Order values never decrease within a partition,
so a frame is a range of positions ``[lo, hi]`` found by ``searchsorted``.

Lives. A partition whose rows all expired is deleted and, with its next row, created again (a
new serial, last in order); ``newlife`` marks the rows that start a life and ``fls`` the first
position of each partition's final life. What survives the batch is ``alive``; ``alive_ids``
lists those partitions, and ``fa_lo``/``fa_hi``/``fa_off`` give their final frames and how
positions map to the indices their runs count.
"""
from __future__ import annotations

import numpy as np

from .arrays import GroupedSearch
from .base import INF
from .rowbatch import Fallback, RowBatch
from .window_kernels import AggregateKernels
from .window_values import BatchArguments, CallValues

#: a step that never comes (int64's maximum)
NEVER = np.iinfo(np.int64).max


class GroupPlan(AggregateKernels):
    """Everything one window specification computes over the batch, before any state changes."""

    def __init__(self, op, gi: int, batch: RowBatch, args: BatchArguments):
        self.op, self.gi = op, gi
        g = self.g = op.groups[gi]
        s = g.spec
        self.kind = "cascade" if g.cascade else ("expiring" if s.mode == "RANGE" and s.lower is not None else "plain")
        self.sliding = s.lower is not None
        self.n_points = len(batch.points)
        self._partitions(batch, args)
        self._positions(batch)
        # argument values per call of this window, by position
        kept_vals = [[t[k] for r in self.runs if r is not None for t in r.vals] for k in range(len(g.calls))]
        self.vals = [CallValues(self, args.args[c], kept_vals[k], op.node.calls[c].agg.arg)
                     for k, c in enumerate(g.calls)]
        self._frames()
        self._lives(batch)
        self._deletions(batch)
        # state positions of continuing runs
        self.idx0 = np.array([r.base if r is not None else 0 for r in self.runs], np.int64)
        self.lo_state = self.seg_start + np.array([r.lo - r.base if r is not None else 0 for r in self.runs], np.int64)
        self.hi_state = self.seg_start + np.array([r.hi - r.base if r is not None else -1 for r in self.runs], np.int64)
        self._final_positions(batch)
        # the surviving partitions, and how their positions map to the indices their run counts
        self.alive_ids = np.flatnonzero(self.alive)
        self.fa_lo, self.fa_hi = self.flo[self.alive_ids], self.hi_f[self.alive_ids]
        self.fa_off = (np.where(self.continuing, self.idx0, 0) - self.fls)[self.alive_ids]
        self._chain(batch)
        self.results = [self.call_values(k) for k in range(len(g.calls))]

    # ------------------------------------------------------------------ where rows sit

    def _partitions(self, batch: RowBatch, args: BatchArguments) -> None:
        """The partitions the batch touches (first appearance order), then kept ones the clock
        expires in it; per partition its kept and batch rows (``size``) and its segment."""
        g = self.g
        keys = args.parts[self.gi]
        ids = {k: i for i, k in enumerate(dict.fromkeys(keys))}
        self.pid_rows = np.array([ids[k] for k in keys], np.int64) if len(batch) else np.zeros(0, np.int64)
        if args.single[self.gi]:
            ids = {(k,): i for k, i in ids.items()}
        parts = list(ids)
        self.wmap = {serial: when for when, serial, _p in g.expiry}
        if self.kind != "plain" and self.n_points:
            last_clock = int(batch.clocks[-1])
            for part, run in g.runs.items():
                if part not in ids and self.wmap.get(run.serial, INF) <= last_clock:
                    ids[part] = len(parts)
                    parts.append(part)
        self.parts = parts
        self.runs = [g.runs.get(p) for p in parts]
        self.kept = np.array([len(r.o) if r is not None else 0 for r in self.runs], np.int64)
        self.size = self.kept + np.bincount(self.pid_rows, minlength=len(parts)).astype(np.int64)
        self.seg_start = np.concatenate(([0], np.cumsum(self.size)[:-1])).astype(np.int64)
        self.seg_end = self.seg_start + self.size
        self.total = int(self.size.sum())

    def _positions(self, batch: RowBatch) -> None:
        """Batch rows in position order (``perm``: grouped by partition, arrival order within),
        their partition (``bpid``), position (``bq``) and step (``Sb``); every position's
        partition (``comb_pid``) and order value (``comb_o``)."""
        n_rows = len(batch)
        self.perm = np.argsort(self.pid_rows, kind="stable")
        self.bpid = bpid = self.pid_rows[self.perm]
        first = np.searchsorted(bpid, bpid, "left")
        self.bq = self.seg_start[bpid] + self.kept[bpid] + (np.arange(n_rows) - first)
        self.Sb = batch.steps[self.perm]
        self.Sb_global = batch.steps
        self.has_run = np.array([r is not None for r in self.runs], bool)
        npart = len(self.parts)
        self.comb_pid = np.repeat(np.arange(npart, dtype=np.int64), self.size)
        self.ret_pos = np.concatenate([np.arange(self.seg_start[p], self.seg_start[p] + self.kept[p])
                                       for p in range(npart) if self.kept[p]] or [np.zeros(0, np.int64)]).astype(np.int64)
        self.comb_o = np.zeros(self.total, np.int64)
        if len(self.ret_pos):
            self.comb_o[self.ret_pos] = np.fromiter((o for r in self.runs if r is not None for o in r.o), np.int64,
                                                    len(self.ret_pos))
        order_key = self.g.order_key
        o_rows = batch.rowtimes if order_key is None else order_key.value_array(batch.rowtimes)
        self.comb_o[self.bq] = np.asarray(o_rows, np.int64)[self.perm]

    def _frames(self) -> None:
        """Each batch row's frame, as positions ``[lo, hi]`` (empty when ``hi < lo``)."""
        s, bq, bpid, seg_start = self.g.spec, self.bq, self.bpid, self.seg_start
        if s.mode == "ROWS":
            hi = np.maximum(bq - s.upper, seg_start[bpid] - 1)
            lo = seg_start[bpid] if s.lower is None else np.maximum(bq - s.lower, seg_start[bpid])
        else:
            search = GroupedSearch(self.comb_pid, self.comb_o)
            ob = self.comb_o[bq]
            hi = np.minimum(search.search(bpid, ob - s.upper, "right") - 1, bq)
            lo = seg_start[bpid] if s.lower is None else search.search(bpid, ob - s.lower, "left")
        self.lo, self.hi = np.asarray(lo, np.int64), np.asarray(hi, np.int64)

    # ------------------------------------------------------------------ expiry and lives

    def _lives(self, batch: RowBatch) -> None:
        """When each position expires (the clock's first point past its expiry time, ``X``, and
        that point's step, ``Xstep``), which batch rows start a partition's life, and where each
        partition's final life begins (``fls``; ``continuing``: a kept run goes on)."""
        points, clocks, n_points = batch.points, batch.clocks, self.n_points
        if self.kind == "expiring":
            lim = self.comb_o + self.g.spec.lower
            ex = lim + 1 if self.g.order_key is None else self.g.order_key.period_end_array(lim)
            self.ex = np.asarray(ex, np.int64)
            self.X = np.searchsorted(clocks, self.ex, "left")
        else:
            self.ex = None
            self.X = np.full(self.total, n_points, np.int64)
        self.Xstep = np.where(self.X < n_points, points[np.minimum(self.X, max(n_points - 1, 0))] if n_points else 0,
                              NEVER)
        bq, bpid, seg_start = self.bq, self.bpid, self.seg_start
        first_pos = bq == seg_start[bpid]
        newlife = first_pos & ~self.has_run[bpid]
        if self.kind == "expiring":
            prev = np.maximum(bq - 1, 0)
            newlife |= ~first_pos & (self.Xstep[prev] < self.Sb)
        self.newlife = newlife
        self._first_pos = first_pos
        total = self.total
        mark = np.zeros(total, bool)
        mark[seg_start[self.size > 0]] = True
        mark[bq[newlife]] = True
        life_start = np.maximum.accumulate(np.where(mark, np.arange(total), 0)) if total else np.zeros(0, np.int64)
        last = self.seg_end - 1
        self.fls = np.where(self.size > 0, life_start[np.maximum(last, 0)] if total else 0, seg_start)
        self.continuing = self.has_run & (self.fls == seg_start)

    def _deletions(self, batch: RowBatch) -> None:
        """Which partitions the batch deletes: an expiring one whose last row expired, a cascading
        one whose period is over (``cascade_when``: the clock that ends it)."""
        points, clocks, n_points = batch.points, batch.clocks, self.n_points
        last = self.seg_end - 1
        if self.kind == "expiring":
            self.deleted = self.X[np.maximum(last, 0)] < n_points
        elif self.kind == "cascade":
            ends = np.array([self.wmap[r.serial] if r is not None and self.continuing[p] else INF
                             for p, r in enumerate(self.runs)], np.int64)
            if len(batch):
                # a new cascade partition ends with the period of its first row
                for j in np.flatnonzero(self._first_pos & self.newlife).tolist():
                    p = int(self.bpid[j])
                    ends[p] = min(k.period_end(int(batch.rowtimes[self.perm[j]])) for k in self.g.cascade)
            self.cascade_when = ends
            self.deleted = np.searchsorted(clocks, ends, "left") < n_points
            # no row may reach a partition after its deletion (its period is over)
            if len(batch):
                dstep = np.where(self.deleted, points[np.minimum(np.searchsorted(clocks, ends, "left"), n_points - 1)],
                                 NEVER)
                if np.any(self.Sb > dstep[self.bpid]):
                    raise Fallback()
        else:
            self.deleted = np.zeros(len(self.parts), bool)

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
        if self.kind == "expiring" and self.n_points:
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
        total, nP = self.total, self.n_points
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
