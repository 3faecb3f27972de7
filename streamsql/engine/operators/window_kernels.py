"""The aggregate kernels of an OVER window over a whole batch: per call, every batch row's value
and the final accumulator of every surviving partition, from the positions and frames a
:class:`~.window_plan.GroupPlan` laid out (it inherits these methods).

COUNT and exact sums are prefix sums over positions; MIN and MAX a range minimum over dense
ranks that keeps the earliest row on ties (as the row path's monotonic queue does);
FIRST/LAST_VALUE the nearest non-null position. A float SUM/AVG replays the row path's running
sum (add a row on entry, subtract it on exit, restart when the frame empties) in the row path's
order with a sequential accumulate, so its floats are the row path's bit for bit. Anything these
kernels do not compute exactly raises :class:`~.rowbatch.Fallback`.
"""
from __future__ import annotations

import decimal

import numpy as np

from .aggregate import avg_int_array, avg_of, fit_int_array, fit_sum
from .arrays import I64_MAX, range_min, ranges, segmented_accumulate
from .rowbatch import Fallback, Inconsistent
from .window_values import CallValues

_CTX = decimal.Context(prec=80)
#: exact sums below this magnitude fit int64 with room to spare
_SAFE = float(1 << 61)


class AggregateKernels:
    """The kernels, as methods of the plan whose attributes they read (see :mod:`.window_plan`)."""

    def call_values(self, k: int) -> dict:
        """Per batch row (batch order) the call's value, and, aligned with the surviving
        partitions (``self.alive_ids``), its accumulator's final fields as lists."""
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
        A, lf, hf = self.alive_ids, self.fa_lo, self.fa_hi
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
            raise Fallback()
        self._last(vals, nonnull, carried, fin, out if fn == "LAST_VALUE" else None)
        res = np.empty(N, object)
        res[self.perm] = out
        return {"values": res, "final": fin}

    def _nonnull_index(self, nonnull):
        total = self.total
        pos = np.arange(total, dtype=np.int64)
        prevnn = np.maximum.accumulate(np.where(nonnull, pos, -1)) if total else pos
        nextnn = np.minimum.accumulate(np.where(nonnull, pos, I64_MAX)[::-1])[::-1] if total else pos
        return prevnn, nextnn

    def _pairs(self, pos: np.ndarray, seg: np.ndarray, vals: "CallValues") -> list:
        """``(row index, value)`` of positions ``pos`` (of surviving partitions ``seg``)."""
        return list(zip((pos + self.fa_off[seg]).tolist(), vals.pick(pos)))

    def _per_partition(self, items: list, seg: np.ndarray) -> list[list]:
        """``items`` (ordered by surviving partition ``seg``) as one list per partition."""
        ends = np.cumsum(np.bincount(seg, minlength=len(self.alive_ids))).tolist()
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
        A, lf, hf = self.alive_ids, self.fa_lo, self.fa_hi
        if cum:
            j = nextnn[np.minimum(lf, top)] if self.total else lf
            hasc = np.array([cf[p] is not None for p in A.tolist()], bool)
            mine = (hf >= lf) & (j <= hf) & ~hasc          # a carried first value stays first
            pairs = iter(self._pairs(j[mine], np.flatnonzero(mine), vals))
            fin["firstq"] = [[cf[p]] if c else ([next(pairs)] if m else [])
                             for p, c, m in zip(A.tolist(), hasc.tolist(), mine.tolist())]
        else:
            pos, seg = ranges(lf, hf)
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
        A, lf, hf = self.alive_ids, self.fa_lo, self.fa_hi
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
        A, lf, hf = self.alive_ids, self.fa_lo, self.fa_hi
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
            raise Fallback()
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
            pos, seg = ranges(lf, hf)
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
            raise Fallback()
        if at.is_approx:
            self._float_sums(k, call, vals, nonnull, nn, carried, fin, out)
        elif at.is_integer or at.name == "DECIMAL":
            self._exact_sums(call, at, vals, nonnull, nn, carried, fin, out)
        else:
            raise Fallback()

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
                    raise Fallback()
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

        def frame_sums(lo_, hi_, carried):
            """The exact sums of frames ``[lo_, hi_]`` plus what each carried in; Fallback when one
            may not fit in int64."""
            empty = hi_ < lo_
            start = np.minimum(lo_, hi_ + 1)
            if np.any(np.where(empty, 0.0, Pa[hi_ + 1] - Pa[start]) + np.abs(carried.astype(np.float64)) >= _SAFE):
                raise Fallback()
            with np.errstate(over="ignore"):
                # prefix sums may wrap; their difference is exact when the frame's sum fits
                return np.where(empty, 0, Ps[hi_ + 1] - Ps[start]) + carried
        s = frame_sums(lo, hi, cs[bpid])
        ok = nn > 0
        out[:] = None
        t = call.agg.type
        if dec:
            for j in np.flatnonzero(ok).tolist():
                sv = decimal.Decimal(int(s[j])).scaleb(-scale, _CTX)
                out[j] = fit_sum(sv, t) if call.agg.fn == "SUM" else avg_of(sv, int(nn[j]), t)
        elif call.agg.fn == "SUM":
            out[ok] = fit_int_array(s[ok], t).tolist()
        else:
            out[ok] = avg_int_array(s[ok], nn[ok], t).tolist()
        A = self.alive_ids
        tot = frame_sums(self.fa_lo, self.fa_hi, cs[A]).tolist()
        if dec:
            tot = [decimal.Decimal(x).scaleb(-scale, _CTX) for x in tot]
        fin["sum"] = [None if n == 0 else x for n, x in zip(fin["nn"], tot)]

    def _float_sums(self, k, call, vals, nonnull, nn, carried, fin, out):
        """Replay the row path's running float sum: per partition, the additions (a row entering
        the frame) and subtractions (leaving it) in the order the row path makes them, restarted
        whenever the frame holds no value, accumulated sequentially."""
        nP = self.n_points
        lo, hi, bpid, bq, Sb, perm = self.lo, self.hi, self.bpid, self.bq, self.Sb, self.perm
        N = len(bq)
        fv = vals.typed
        if not np.isfinite(fv).all():
            raise Fallback()
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
                    raise Fallback()
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
            raise Fallback()
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
                raise Inconsistent("window batch: running sum does not start at a partition's start")
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
            raise Inconsistent("window batch: the replayed sums disagree with the frames' counts")
        ok = r_nn > 0
        if not np.isfinite(r_sum[ok]).all():
            raise Fallback()
        out[:] = None
        if call.agg.fn == "SUM":
            out[ok] = r_sum[ok].tolist()
        else:
            out[ok] = (r_sum[ok] / r_nn[ok]).tolist()
        # final running sum per surviving partition: after its last event
        A = self.alive_ids
        if m:
            lastev = np.searchsorted(E_pid, A, "right") - 1
            has = (lastev >= 0) & (E_pid[np.maximum(lastev, 0)] == A)
            f_nn = np.where(has, nn_after[np.maximum(lastev, 0)], nn0[A])
            f_sum = np.where(has, sums[np.maximum(lastev, 0)], s0[A])
        else:
            f_nn, f_sum = nn0[A], s0[A]
        if not np.array_equal(f_nn, fin["nn_arr"]):
            raise Inconsistent("window batch: the replayed sum's count disagrees with the final frame")
        fin["sum"] = [None if n == 0 else x for n, x in zip(f_nn.tolist(), f_sum.tolist())]


def _ranks(vals: CallValues, pos: np.ndarray, extra: list) -> np.ndarray:
    """Dense ranks (equal values share one) of the values at ``pos``, then of ``extra``."""
    if vals.kind in "fi" and vals.batch is not None:
        arr = np.concatenate((vals.typed[pos], np.array(extra, vals.typed.dtype)))
        if arr.dtype.kind == "f" and np.isnan(arr).any():
            raise Fallback()
        _u, inv = np.unique(arr, return_inverse=True)
        return inv.astype(np.int64).ravel()
    values = vals.objects[pos].tolist() + list(extra)
    if any(isinstance(v, float) and v != v for v in values):
        raise Fallback()
    try:
        uniq = sorted(set(values))
    except TypeError:
        raise Fallback() from None
    rank = {v: i for i, v in enumerate(uniq)}
    return np.fromiter((rank[v] for v in values), np.int64, len(values))
