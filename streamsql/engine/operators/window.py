"""Windowed aggregation (OVER): one output row per input row, stamped with its rowtime and
released on arrival (the semantics, section 3.4).

For each window and partition the rows are a sequence in arrival order whose order values
(ROWTIME, or the hopping key) never decrease, so every frame is a contiguous run of that
sequence whose two ends only move forward. Aggregates are kept incrementally over that run
(sums and counts add and subtract; MIN/MAX and FIRST/LAST_VALUE keep monotonic queues), and a
row that left every frame is dropped. RANGE frames include both ends; the frame of a row holds
its peers that arrived earlier, not those arriving later.

A row is refused (the semantics, section 1) when its partition keys or arguments cannot be computed, or
when a SUM or AVG over its frame would leave the result type's range: it produces no output and
enters no frame. Everything is evaluated, and the new frames' sums checked, before any state
changes.
"""
from __future__ import annotations

import heapq
import math


from ..expr import compile_expr
from ..functions import CalcError
from ..functions.errors import operand_name, show_value
from ..plan import Window, WindowSpec
from ..functions.spec import out_of_range
from .aggregate import Acc, avg_of, fit_sum
from .base import INF, Candidate, Operator, Refusing, calc_error, encode_key
from .describe import PARTITION_LIMIT, OverPartition, WindowState, merged_items
from .timekey import TimeKey, try_time_key
from .window_runs import Run, minus, plus

_NEEDS = {"COUNT": set(), "SUM": {"sum"}, "AVG": {"sum"}, "MIN": {"min"}, "MAX": {"max"},
          "FIRST_VALUE": {"first"}, "LAST_VALUE": set()}


class _Group:
    """Calls sharing one window specification."""

    def __init__(self, spec: WindowSpec, calls: list[int], input_node=None):
        self.spec = spec
        self.calls = calls
        self.order_key = None
        if spec.order_by is not None:
            self.order_key = try_time_key(spec.order_by, input_node) or TimeKey(spec.order_by)
        # cascading windows: a monotonic partition key (also one computed by a sub-query's
        # projection) starts a new partition when it takes its next value
        self.cascade = [k for e in spec.partition_by for k in [try_time_key(e, input_node)] if k is not None]
        self.runs: dict[tuple, Run] = {}
        self.expiry: list = []          # heap of (clock at which to look again, serial, partition)

    def order_of(self, t: int) -> int:
        return t if self.order_key is None else self.order_key.value(t)

    def expires(self, order) -> int:
        """The first clock at which a row with order value ``order`` is out of every future frame
        (RANGE frames with a start): future rows' order values are at least the clock's."""
        lim = order + self.spec.lower
        return lim + 1 if self.order_key is None else self.order_key.period_end(lim)


def window_groups(node: Window) -> list[tuple[WindowSpec, list[int]]]:
    """The query's distinct window specifications, in order of first use, each with the indexes
    of the calls over it (the operator keeps one set of frames per specification; the trace's
    ``OverPartition.window`` is an index into this list)."""
    groups: dict[str, list[int]] = {}
    specs: dict[str, WindowSpec] = {}
    for i, c in enumerate(node.calls):
        key = repr((c.spec.partition_by, c.spec.mode, c.spec.lower, c.spec.upper, c.spec.order_by))
        groups.setdefault(key, []).append(i)
        specs[key] = c.spec
    return [(specs[k], v) for k, v in groups.items()]


class WindowOp(Refusing, Operator):
    n_inputs = 1
    _transient = ("part_fns", "arg_fns")

    def __init__(self, node: Window):
        self.node = node
        self.n_in = len(node.input.fields)
        self.groups = [_Group(spec, calls, node.input) for spec, calls in window_groups(node)]
        self.needs = []
        for c in node.calls:
            n = set(_NEEDS[c.agg.fn])
            if c.agg.distinct:
                n = set()
            self.needs.append(n)
        self.next_wake = INF
        self.serial = 0
        # SUM/AVG calls whose frame sums are worked out (and checked) before a row is taken
        self.checked = [c.agg.fn in ("SUM", "AVG") and c.agg.arg is not None and not c.agg.distinct
                        and not (c.agg.fn == "AVG" and c.agg.arg.type.is_integer) for c in node.calls]
        self._compile()

    def _compile(self):
        self.part_fns = [[compile_expr(e) for e in g.spec.partition_by] for g in self.groups]
        self.arg_fns = [compile_expr(c.agg.arg) if c.agg.arg is not None else None for c in self.node.calls]

    # ------------------------------------------------------------------ rows

    def on_row(self, ch, step, rowtime, row, clocks, arrival):
        try:
            return self._on_row(rowtime, row, arrival)
        except CalcError as err:
            return self.refuse(calc_error(err, step, rowtime, self.node.input.fields, row, ch))

    def _on_row(self, rowtime, row, arrival):
        rts = (rowtime,)
        # partition keys, then arguments, left to right: nothing has changed if one fails
        parts = [tuple(f(row, rts) for f in fns) for fns in self.part_fns]
        argv = [None if f is None else f(row, rts) for f in self.arg_fns]
        # every frame with the row in it, its sums checked before anything is kept
        placed = []
        checked = getattr(self, "checked", None) or [False] * len(self.node.calls)
        try:
            for gi, g in enumerate(self.groups):
                run = g.runs.get(parts[gi])
                new = run is None
                if new:
                    run = Run(len(g.calls), 0)
                o = g.order_of(rowtime)
                run.o.append(o)
                run.vals.append(tuple(argv[c] for c in g.calls))
                lo, hi = self._bounds(g, run, run.end - 1, o)
                entry = [g, parts[gi], run, new, lo, hi, {}]
                placed.append(entry)
                entry[6] = {k: self._frame_sum(c, run, k, lo, hi) for k, c in enumerate(g.calls)
                            if checked[c] or self.node.calls[c].agg.distinct}
        except CalcError:
            for _g, _part, run, *_rest in placed:
                run.o.pop()
                run.vals.pop()
            raise
        results = [None] * len(self.node.calls)
        for g, part, run, new, lo, hi, sums in placed:
            if new:
                self.serial += 1
                run.serial = self.serial
                g.runs[part] = run
                self._schedule(g, part, run, rowtime)
            self._frame(g, run, lo, hi, {k: v for k, v in sums.items() if checked[g.calls[k]]})
            for k, c in enumerate(g.calls):
                results[c] = self._value(c, run, k)
            self._trim(g, run)
        return [Candidate(rowtime, arrival, tuple(row) + tuple(results))]

    def _frame_sum(self, c: int, run: Run, k: int, lo: int, hi: int):
        """The sum SUM/AVG call ``c`` will have over the frame ``[lo, hi]``, taken exactly as
        :meth:`_frame` would (so floats round the same way); raises where it cannot be computed."""
        call = self.node.calls[c]
        fn, t = call.agg.fn, call.agg.type
        if call.agg.distinct:
            vals = list(dict.fromkeys(v for g in range(max(lo, run.base), hi + 1)
                                      if (v := run.row(g)[k]) is not None))
            s, nn = None, len(vals)
            for v in vals:
                s = v if s is None else plus(s, v)
        else:
            a = run.acc[k]
            s, nn = a.sum, a.nn
            h = run.hi
            while h < hi:
                h += 1
                if h >= run.lo and (v := run.row(h)[k]) is not None:
                    nn += 1
                    s = v if s is None else plus(s, v)
            low = run.lo
            while low < lo:
                if low <= h and (v := run.row(low)[k]) is not None:
                    nn -= 1
                    s = None if nn == 0 else minus(s, v)
                low += 1
        if nn == 0 or s is None or fn not in ("SUM", "AVG"):
            return s
        bad = isinstance(s, float) and math.isinf(s)
        if not bad:
            try:
                fit_sum(s, t) if fn == "SUM" else avg_of(s, nn, t)
            except CalcError:
                bad = True
        if bad:
            err = out_of_range(t)
            err.text = Acc(call.agg).text + " OVER (...)"
            v = run.row(run.end - 1)[k]
            arg_t = call.agg.arg.type if call.agg.arg is not None else None
            err.operand_text = (f"{operand_name(call.agg.arg) or 'the value'} = {show_value(v, arg_t)}, "
                                f"the frame's sum would be {show_value(s, t)}")
            raise err
        return s

    def _bounds(self, g: _Group, run: Run, i: int, o) -> tuple[int, int]:
        """The frame ``[lo, hi]`` (global indices) of row ``i`` with order value ``o``."""
        s = g.spec
        if s.mode == "ROWS":
            hi = i - s.upper
            lo = run.lo if s.lower is None else i - s.lower
        else:
            hi = run.hi
            lim = o - s.upper
            while hi + 1 <= i and run.order(hi + 1) <= lim:
                hi += 1
            lo = run.lo
            if s.lower is not None:
                start = o - s.lower
                while lo <= i and lo < run.end and run.order(lo) < start:
                    lo += 1
        return max(lo, run.lo), hi

    def _frame(self, g: _Group, run: Run, lo: int, hi: int, sums: dict):
        """Move the frame to ``[lo, hi]``; the SUM/AVG calls in ``sums`` (by position in the
        group) take their already worked-out sums instead of adding and subtracting."""
        s = g.spec
        needs = [self.needs[c] - {"sum"} if k in sums else self.needs[c] for k, c in enumerate(g.calls)]
        # advance the frame's ends, adding rows that enter and removing rows that leave
        while run.hi < hi:
            run.hi += 1
            if run.hi >= run.lo:
                vals = run.row(run.hi)
                for k, c in enumerate(g.calls):
                    a = run.acc[k]
                    a.add(run.hi, vals[k], needs[k])
                    if s.lower is None:  # the frame never loses rows: only the best one matters
                        for q in (a.minq, a.maxq, a.firstq):
                            while len(q) > 1:
                                q.pop()
        while run.lo < lo:
            if run.lo <= run.hi:
                vals = run.row(run.lo)
                for k, c in enumerate(g.calls):
                    run.acc[k].remove(run.lo, vals[k], needs[k])
            run.lo += 1
        for k, total in sums.items():
            run.acc[k].sum = total

    def _value(self, c: int, run: Run, k: int):
        call = self.node.calls[c]
        a = run.acc[k]
        fn, t = call.agg.fn, call.agg.type
        if call.agg.distinct:
            vals = [run.row(g)[k] for g in range(max(run.lo, run.base), run.hi + 1)]
            vals = list(dict.fromkeys(v for v in vals if v is not None))
            if fn == "COUNT":
                return len(vals)
            if not vals:
                return None
            total = vals[0]
            for v in vals[1:]:
                total = plus(total, v)
            if fn == "SUM":
                return fit_sum(total, t)
            if fn == "AVG":
                return avg_of(total, len(vals), t)
            return {"MIN": min, "MAX": max}.get(fn, lambda v: v[0] if fn == "FIRST_VALUE" else v[-1])(vals)
        if fn == "COUNT":
            return a.n if call.agg.arg is None else a.nn
        if a.nn == 0:
            return None
        if fn == "SUM":
            return fit_sum(a.sum, t)
        if fn == "AVG":
            return avg_of(a.sum, a.nn, t)
        if fn == "MIN":
            return a.minq[0][1]
        if fn == "MAX":
            return a.maxq[0][1]
        if fn == "FIRST_VALUE":
            return a.firstq[0][1]
        # LAST_VALUE: the latest non-null value at or before the frame's end
        if a.last is not None:
            return a.last[1]
        for g in range(run.hi, run.lo - 1, -1):
            v = run.row(g)[k]
            if v is not None:
                return v
        return None

    def _trim(self, g: _Group, run: Run):
        """Forget rows before the frame's start: no later frame of this partition reaches back."""
        distinct = any(self.node.calls[c].agg.distinct for c in g.calls)
        keep_from = run.lo if (g.spec.lower is not None or distinct) else run.hi + 1
        while run.base < keep_from and run.o:
            run.o.popleft()
            run.vals.popleft()
            run.base += 1

    def on_rows(self, batch) -> list[Candidate]:
        """A whole :class:`~.window_batch.RowBatch` at once: the candidates and the state that
        calling :meth:`on_row` and :meth:`on_clocks` step by step would give (vectorised; see
        ``window_batch``)."""
        from .window_batch import on_rows
        return on_rows(self, batch)

    def on_rows_values(self, batch, errors: list | None = None):
        """Like :meth:`on_rows` without building candidates: ``(indices of the rows that
        produced an output, per call the values of those rows)``; with ``errors``, the records
        of refused rows go there as ``(row index, record)`` (see ``window_batch``)."""
        from .window_batch import on_rows_values
        return on_rows_values(self, batch, errors)

    # ------------------------------------------------------------------ expiry

    def _schedule(self, g: _Group, part, run: Run, t: int):
        """When to look at a partition again: a cascading window's period has ended (forget the
        partition), or its oldest retained row has left every future RANGE frame (forget it)."""
        when = INF
        if g.cascade:
            when = min(k.period_end(t) for k in g.cascade)
        elif g.spec.mode == "RANGE" and g.spec.lower is not None:
            when = g.expires(g.order_of(t))
        if when < INF:
            heapq.heappush(g.expiry, (when, run.serial, part))
            self.next_wake = min(self.next_wake, when)

    def on_clocks(self, step, clocks):
        c = clocks[0]
        if c < self.next_wake:
            return []
        for g in self.groups:
            while g.expiry and g.expiry[0][0] <= c:
                _when, rid, part = heapq.heappop(g.expiry)
                run = g.runs.get(part)
                if run is None or run.serial != rid:
                    continue
                if g.cascade:
                    del g.runs[part]
                    continue
                self._expire(g, run, g.order_of(c) - g.spec.lower)
                if not run.o:
                    del g.runs[part]
                else:
                    heapq.heappush(g.expiry, (max(c + 1, g.expires(run.o[0])), rid, part))
        self.next_wake = min((g.expiry[0][0] for g in self.groups if g.expiry), default=INF)
        return []

    def _expire(self, g: _Group, run: Run, start) -> None:
        """Forget the rows whose order value is below ``start``: no future frame reaches them.
        Rows still in the last frame leave its running aggregates (the next frame would drop
        them anyway); rows the frame had not reached yet are skipped by it."""
        while run.o and run.o[0] < start:
            i = run.base
            if run.lo <= i <= run.hi:
                vals = run.vals[0]
                for k, c in enumerate(g.calls):
                    run.acc[k].remove(i, vals[k], self.needs[c])
            run.o.popleft()
            run.vals.popleft()
            run.base += 1
            run.lo = max(run.lo, i + 1)
            run.hi = max(run.hi, i)

    def wakeups(self):
        return (self.next_wake,)

    def state_size(self) -> int:
        return sum(len(r.o) + 1 for g in self.groups for r in g.runs.values())

    def state_view(self):
        items = {}
        for gi, g in enumerate(self.groups):
            runs = g.runs
            keys = ((encode_key(part), part) for part in runs)
            first = (heapq.nsmallest(PARTITION_LIMIT, keys, key=lambda kp: kp[0]) if len(runs) > PARTITION_LIMIT
                     else sorted(keys, key=lambda kp: kp[0]))
            for enc, part in first:
                r = runs[part]
                items[(gi, enc)] = (gi, part, len(r.o), r.order(r.base) if r.o else None)
        return items, {}

    def trace_state(self, views):
        out, per = [], {}
        for _key, (gi, part, rows, first) in merged_items(views):
            per[gi] = per.get(gi, 0) + 1
            if per[gi] <= PARTITION_LIMIT:
                out.append(OverPartition(gi, tuple(part), rows, first))
        return WindowState(tuple(out))
