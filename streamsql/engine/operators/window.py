"""Windowed aggregation (OVER): one output row per input row, stamped with its rowtime and
released on arrival (SEMANTICS.md 3.4).

For each window and partition the rows are a sequence in arrival order whose order values
(ROWTIME, or the hopping key) never decrease, so every frame is a contiguous run of that
sequence whose two ends only move forward. Aggregates are kept incrementally over that run
(sums and counts add and subtract; MIN/MAX and FIRST/LAST_VALUE keep monotonic queues), and a
row that left every frame is dropped. RANGE frames include both ends; the frame of a row holds
its peers that arrived earlier, not those arriving later.
"""
from __future__ import annotations

import heapq
from collections import deque


from ..expr import compile_expr
from ..plan import Window, WindowSpec
from .aggregate import _avg, _fit
from .base import INF, Candidate, Operator
from .timekey import TimeKey, try_time_key


class _Run:
    """The rows of one partition of one window, and the frame's running aggregates."""

    __slots__ = ("o", "vals", "base", "lo", "hi", "acc", "serial")

    def __init__(self, n_calls: int, serial: int):
        self.serial = serial
        self.o: deque = deque()          # order values of retained rows
        self.vals: deque = deque()       # per row: tuple of argument values
        self.base = 0                    # global index of self.o[0]
        self.lo = 0                      # frame: global indices [lo, hi]
        self.hi = -1
        self.acc = [_SlidingAcc() for _ in range(n_calls)]

    def row(self, g: int):
        return self.vals[g - self.base]

    def order(self, g: int):
        return self.o[g - self.base]

    @property
    def end(self) -> int:
        return self.base + len(self.o)


class _SlidingAcc:
    """Aggregates over a run whose ends only advance."""

    __slots__ = ("n", "nn", "sum", "minq", "maxq", "firstq", "last")

    def __init__(self):
        self.n = 0          # rows in frame
        self.nn = 0         # non-null values in frame
        self.sum = None
        self.minq: deque = deque()   # (index, value), values increasing
        self.maxq: deque = deque()   # (index, value), values decreasing
        self.firstq: deque = deque()  # (index, value) of non-null values
        self.last = None    # (index, value) of the latest non-null value added

    def add(self, g: int, v, need: set):
        self.n += 1
        if v is None:
            return
        self.nn += 1
        if "sum" in need:
            self.sum = v if self.sum is None else self.sum + v
        if "min" in need:
            while self.minq and self.minq[-1][1] > v:
                self.minq.pop()
            self.minq.append((g, v))
        if "max" in need:
            while self.maxq and self.maxq[-1][1] < v:
                self.maxq.pop()
            self.maxq.append((g, v))
        if "first" in need:
            self.firstq.append((g, v))
        self.last = (g, v)

    def remove(self, g: int, v, need: set):
        self.n -= 1
        if v is None:
            return
        self.nn -= 1
        if "sum" in need:
            self.sum = None if self.nn == 0 else self.sum - v
        if self.minq and self.minq[0][0] == g:
            self.minq.popleft()
        if self.maxq and self.maxq[0][0] == g:
            self.maxq.popleft()
        if self.firstq and self.firstq[0][0] == g:
            self.firstq.popleft()
        if self.last is not None and self.last[0] == g:
            self.last = None


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
        self.runs: dict[tuple, _Run] = {}
        self.expiry: list = []          # heap of (clock at which to look again, serial, partition)

    def order_of(self, t: int) -> int:
        return t if self.order_key is None else self.order_key.value(t)

    def expires(self, order) -> int:
        """The first clock at which a row with order value ``order`` is out of every future frame
        (RANGE frames with a start): future rows' order values are at least the clock's."""
        lim = order + self.spec.lower
        return lim + 1 if self.order_key is None else self.order_key.period_end(lim)


class WindowOp(Operator):
    n_inputs = 1
    _transient = ("part_fns", "arg_fns")

    def __init__(self, node: Window):
        self.node = node
        self.n_in = len(node.input.fields)
        groups: dict[str, list[int]] = {}
        specs: dict[str, WindowSpec] = {}
        for i, c in enumerate(node.calls):
            key = repr((c.spec.partition_by, c.spec.mode, c.spec.lower, c.spec.upper, c.spec.order_by))
            groups.setdefault(key, []).append(i)
            specs[key] = c.spec
        self.groups = [_Group(specs[k], v, node.input) for k, v in groups.items()]
        self.needs = []
        for c in node.calls:
            n = set(_NEEDS[c.agg.fn])
            if c.agg.distinct:
                n = set()
            self.needs.append(n)
        self.next_wake = INF
        self.serial = 0
        self._compile()

    def _compile(self):
        self.part_fns = [[compile_expr(e) for e in g.spec.partition_by] for g in self.groups]
        self.arg_fns = [compile_expr(c.agg.arg) if c.agg.arg is not None else None for c in self.node.calls]

    # ------------------------------------------------------------------ rows

    def on_row(self, ch, seq, rowtime, row, clocks, arrival):
        rts = (rowtime,)
        results = [None] * len(self.node.calls)
        for gi, g in enumerate(self.groups):
            part = tuple(f(row, rts) for f in self.part_fns[gi])
            run = g.runs.get(part)
            if run is None:
                self.serial += 1
                run = g.runs[part] = _Run(len(g.calls), self.serial)
                self._schedule(g, part, run, rowtime)
            o = g.order_of(rowtime)
            args = tuple(None if self.arg_fns[c] is None else self.arg_fns[c](row, rts) for c in g.calls)
            run.o.append(o)
            run.vals.append(args)
            i = run.end - 1
            self._frame(g, run, i, o)
            for k, c in enumerate(g.calls):
                results[c] = self._value(c, run, k)
            self._trim(g, run)
        return [Candidate(rowtime, arrival, tuple(row) + tuple(results))]

    def _frame(self, g: _Group, run: _Run, i: int, o):
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
        lo = max(lo, run.lo)
        # advance the frame's ends, adding rows that enter and removing rows that leave
        while run.hi < hi:
            run.hi += 1
            if run.hi >= run.lo:
                vals = run.row(run.hi)
                for k, c in enumerate(g.calls):
                    a = run.acc[k]
                    a.add(run.hi, vals[k], self.needs[c])
                    if s.lower is None:  # the frame never loses rows: only the best one matters
                        for q in (a.minq, a.maxq, a.firstq):
                            while len(q) > 1:
                                q.pop()
        while run.lo < lo:
            if run.lo <= run.hi:
                vals = run.row(run.lo)
                for k, c in enumerate(g.calls):
                    run.acc[k].remove(run.lo, vals[k], self.needs[c])
            run.lo += 1

    def _value(self, c: int, run: _Run, k: int):
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
            if fn == "SUM":
                return _fit(sum(vals[1:], vals[0]), t)
            if fn == "AVG":
                return _avg(sum(vals[1:], vals[0]), len(vals), t)
            return {"MIN": min, "MAX": max}.get(fn, lambda v: v[0] if fn == "FIRST_VALUE" else v[-1])(vals)
        if fn == "COUNT":
            return a.n if call.agg.arg is None else a.nn
        if a.nn == 0:
            return None
        if fn == "SUM":
            return _fit(a.sum, t)
        if fn == "AVG":
            return _avg(a.sum, a.nn, t)
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

    def _trim(self, g: _Group, run: _Run):
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

    def on_rows_values(self, batch):
        """Like :meth:`on_rows` without building candidates: ``(indices of the rows that
        produced an output, per call the values of those rows)`` (see ``window_batch``)."""
        from .window_batch import on_rows_values
        return on_rows_values(self, batch)

    # ------------------------------------------------------------------ expiry

    def _schedule(self, g: _Group, part, run: _Run, t: int):
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

    def on_clocks(self, seq, clocks):
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

    def _expire(self, g: _Group, run: _Run, start) -> None:
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

    def describe_state(self) -> dict:
        out = []
        for g in self.groups:
            for part, r in list(g.runs.items())[:20]:
                out.append({"partition": list(part), "rows": len(r.o),
                            "from": r.order(r.base) if r.o else None})
        return {"partitions": out}
