"""Streaming GROUP BY (tumbling windows) and SELECT STREAM DISTINCT (SEMANTICS.md 3.3).

A group is a key combination within one period of the monotonic time key. It is complete when
an input clock reaches the end of its period (from a row or a bound; equal rowtimes never close
it), and is then produced stamped with its period's end (or the query's monotonic ``AS
ROWTIME``). Rows only ever *add* to a group's partial aggregates, so a batch of rows can be
pre-combined anywhere (the Spark runtime does it before the state store) and merged here.
"""
from __future__ import annotations

import decimal

import numpy as np

from ..expr import compile_expr, remap, rowtime_map_array
from ..plan import AggCall, Aggregate
from ..types import INT_BITS, SqlType, quantize, wrap_int
from .base import INF, Candidate, Operator, encode_key
from .timekey import TimeKey, resolve_time_expr, try_time_key


# --------------------------------------------------------------------------- aggregate functions

class Acc:
    """Partial state of one aggregate call: ``init``, ``add`` a value, ``merge`` two partials,
    ``final`` value. States are plain Python values (they travel through the state store)."""

    def __init__(self, call: AggCall):
        self.call = call
        self.fn = call.fn
        self.distinct = call.distinct
        self.type = call.type

    def init(self):
        if self.distinct:
            return []
        return {"COUNT": 0, "SUM": None, "AVG": [None, 0], "MIN": None, "MAX": None,
                "FIRST_VALUE": [None, None], "LAST_VALUE": [None, None]}[self.fn]

    def add(self, st, v, arrival: bytes):
        if self.distinct:
            if v is not None and v not in st:
                st = st + [v]
            return st
        fn = self.fn
        if fn == "COUNT":
            return st + (1 if (self.call.arg is None or v is not None) else 0)
        if v is None:
            return st
        if fn == "SUM":
            return v if st is None else st + v
        if fn == "AVG":
            return [v if st[0] is None else st[0] + v, st[1] + 1]
        if fn == "MIN":
            return v if st is None or v < st else st
        if fn == "MAX":
            return v if st is None or v > st else st
        if fn == "FIRST_VALUE":
            return [arrival, v] if st[0] is None or arrival < st[0] else st
        if fn == "LAST_VALUE":
            return [arrival, v] if st[0] is None or arrival > st[0] else st
        raise ValueError(fn)

    def merge(self, a, b):
        if self.distinct:
            return a + [x for x in b if x not in a]
        fn = self.fn
        if fn == "COUNT":
            return a + b
        if fn == "SUM":
            return b if a is None else a if b is None else a + b
        if fn == "AVG":
            s = b[0] if a[0] is None else a[0] if b[0] is None else a[0] + b[0]
            return [s, a[1] + b[1]]
        if fn in ("MIN", "MAX"):
            if a is None:
                return b
            if b is None:
                return a
            return (a if a <= b else b) if fn == "MIN" else (a if a >= b else b)
        if fn == "FIRST_VALUE":
            return b if a[0] is None or (b[0] is not None and b[0] < a[0]) else a
        if fn == "LAST_VALUE":
            return b if a[0] is None or (b[0] is not None and b[0] > a[0]) else a
        raise ValueError(fn)

    def final(self, st):
        t = self.type
        if self.distinct:
            vals = st
            if self.fn == "COUNT":
                return len(vals)
            if not vals:
                return None
            if self.fn in ("SUM", "AVG"):
                s = vals[0]
                for v in vals[1:]:
                    s = s + v
                return _fit(s, t) if self.fn == "SUM" else _avg(s, len(vals), t)
            if self.fn == "MIN":
                return min(vals)
            if self.fn == "MAX":
                return max(vals)
            return vals[0] if self.fn == "FIRST_VALUE" else vals[-1]
        fn = self.fn
        if fn == "COUNT":
            return st
        if fn == "SUM":
            return None if st is None else _fit(st, t)
        if fn == "AVG":
            return None if st[1] == 0 else _avg(st[0], st[1], t)
        if fn in ("FIRST_VALUE", "LAST_VALUE"):
            return st[1]
        return st


def _fit(v, t: SqlType):
    if t.is_integer:
        return wrap_int(int(v), t)
    if t.name == "DECIMAL":
        return quantize(decimal.Decimal(v), t)
    if t.is_approx:
        return float(v)
    return v


def _avg(s, n: int, t: SqlType):
    if t.is_integer:
        q = abs(int(s)) // n
        return wrap_int(q if s >= 0 else -q, t)
    if t.name == "DECIMAL":
        return quantize(decimal.Decimal(s) / decimal.Decimal(n), t)
    return float(s) / n


def fit_int_array(s: np.ndarray, t: SqlType) -> np.ndarray:
    """:func:`_fit` of exact int64 sums, all at once (the same rule; other types one by one)."""
    if t.is_integer:
        bits = INT_BITS[t.name]
        if bits == 64:
            return s.astype(np.int64)
        half = 1 << (bits - 1)
        return ((s.astype(np.int64) + half) & ((1 << bits) - 1)) - half
    return np.array([_fit(int(v), t) for v in s.tolist()], dtype=object)


def avg_int_array(s: np.ndarray, n: np.ndarray, t: SqlType) -> np.ndarray:
    """:func:`_avg` of exact int64 sums over ``n`` values, all at once: integers truncated
    toward zero (the same rule; other types one by one)."""
    if t.is_integer:
        q = np.abs(s) // n
        return fit_int_array(np.where(s >= 0, q, -q), t)
    return np.array([_avg(int(v), int(k), t) for v, k in zip(s.tolist(), n.tolist())], dtype=object)


# --------------------------------------------------------------------------- the operator

class AggregateOp(Operator):
    """GROUP BY over one input. State: open groups ``{(period end, key values): partials}``."""

    n_inputs = 1
    n_params = 1
    _transient = ("key_fns", "arg_fns", "stamp_fn")

    def __init__(self, node: Aggregate):
        self.node = node
        # the monotonic key's periods; a key the analyzer found monotonic through a projection (a
        # sub-query's FLOOR(ROWTIME TO HOUR) AS h) is resolved to its expression of the rowtime
        tk_expr = resolve_time_expr(node.keys[node.time_key], node.input)
        self.time_key = TimeKey(tk_expr if tk_expr is not None else node.keys[node.time_key])
        # every monotonic key ends a group: with FLOOR(.. TO HOUR) and FLOOR(.. TO MINUTE) a group
        # can get no more rows once the minute is over, so it is complete then
        self.period_keys = [self.time_key] + [
            k for i, e in enumerate(node.keys) if i != node.time_key
            for k in [try_time_key(e, node.input)] if k is not None]
        self.accs = [Acc(a) for a in node.aggs]
        self.distinct_rows = node.distinct_rows
        self._compile()
        # the stamp of the group a future row at time t would join: the stamp expression with the
        # time key's value put in, as a function of t (for the bound)
        self.stamp_of_time = None
        if node.stamp is not None:
            tk = self.time_key.expr
            self.stamp_of_time = remap(node.stamp, cols=lambda c: tk if c.index == node.time_key else c)
        self.groups: dict[tuple, list] = {}      # (end, keys) -> [partials]
        self.open_stamps: dict[tuple, int] = {}  # (end, keys) -> stamp (only with AS ROWTIME)
        self.seen: dict[tuple, int] = {}         # DISTINCT: keys -> period end
        self.min_end = INF

    def _compile(self):
        node = self.node
        self.key_fns = [compile_expr(k) for k in node.keys]
        self.arg_fns = [compile_expr(a.arg) if a.arg is not None else None for a in node.aggs]
        self.stamp_fn = compile_expr(node.stamp) if node.stamp is not None else None

    # --- rows ---------------------------------------------------------------------------

    def period_end(self, t: int) -> int:
        """When a group that a row at ``t`` joins is complete: the first time one of the
        monotonic keys takes its next value."""
        return min(k.period_end(t) for k in self.period_keys)

    def period_end_array(self, t):
        return np.minimum.reduce([k.period_end_array(t) for k in self.period_keys])

    def partial(self, rowtime: int, row: tuple, arrival: bytes) -> tuple[int, tuple, list]:
        """One row as a partial: (period end, key values, partial states)."""
        rts = (rowtime,)
        keys = tuple(f(row, rts) for f in self.key_fns)
        end = self.period_end(rowtime)
        states = [acc.add(acc.init(), None if f is None else f(row, rts), arrival)
                  for acc, f in zip(self.accs, self.arg_fns)]
        return end, keys, states

    def on_row(self, ch, seq, rowtime, row, clocks, arrival):
        if self.distinct_rows:
            return self._distinct(rowtime, row, arrival)
        end, keys, states = self.partial(rowtime, row, arrival)
        self.add_partial(end, keys, states)
        return []

    def add_partial(self, end: int, keys: tuple, states: list) -> None:
        k = (end, keys)
        cur = self.groups.get(k)
        if cur is None:
            self.groups[k] = list(states)
            if self.stamp_fn is not None:
                self.open_stamps[k] = self._stamp(end, keys, states)
            self.min_end = min(self.min_end, end)
        else:
            self.groups[k] = [acc.merge(a, b) for acc, a, b in zip(self.accs, cur, states)]

    def _stamp(self, end, keys, states) -> int:
        if self.stamp_fn is None:
            return end
        row = keys + tuple(acc.final(s) for acc, s in zip(self.accs, states))
        return int(self.stamp_fn(row, ()))

    def _distinct(self, rowtime, row, arrival):
        rts = (rowtime,)
        keys = tuple(f(row, rts) for f in self.key_fns)
        end = self.period_end(rowtime)
        if self.seen.get(keys) == end:
            return []
        self.seen[keys] = end
        return [Candidate(rowtime, arrival, keys)]

    # --- clocks -------------------------------------------------------------------------

    def on_clocks(self, seq, clocks):
        c = clocks[0]
        if self.distinct_rows:
            if self.seen and c >= self.min_end:
                self.seen = {k: e for k, e in self.seen.items() if e > c}
            self.min_end = min(self.seen.values(), default=INF)
            return []
        if c < self.min_end:
            return []
        done = [k for k in self.groups if k[0] <= c]
        out = []
        for k in done:
            states = self.groups.pop(k)
            end, keys = k
            row = keys + tuple(acc.final(s) for acc, s in zip(self.accs, states))
            stamp = self.open_stamps.pop(k) if self.stamp_fn is not None else end
            out.append(Candidate(stamp, encode_key(keys), row))
        self.min_end = min((k[0] for k in self.groups), default=INF)
        return out

    def wakeups(self):
        return (self.min_end,)

    # --- bound --------------------------------------------------------------------------

    def bound_params(self):
        if self.stamp_fn is None:
            return (INF,)
        return (min(self.open_stamps.values(), default=INF),)

    def bound_eval(self, params, clocks):
        c = clocks[:, 0]
        if self.distinct_rows:
            return c
        if self.stamp_of_time is None:
            f = self.period_end_array(c)
        else:
            f = rowtime_map_array(self.stamp_of_time, c)
        return np.minimum(params[:, 0], f)

    def describe_state(self) -> dict:
        from ..types import format_value
        tk = self.node.time_key
        types = [k.type for k in self.node.keys]
        return {"open_groups": [{"end": e, "keys": list(k), "labels": [format_value(v, t) for v, t in zip(k, types)],
                                 "start": k[tk] if tk is not None and isinstance(k[tk], int) else None}
                                for (e, k) in sorted(self.groups, key=lambda x: x[0])[:50]],
                "groups": len(self.groups)}

    def state_size(self) -> int:
        return len(self.groups) + len(self.seen)
