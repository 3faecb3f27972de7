"""Streaming GROUP BY (tumbling windows) and SELECT STREAM DISTINCT (the semantics, section 3.3).

A group is a key combination within one period of the monotonic time key. It is complete when
an input clock reaches the end of its period (from a row or a bound; equal rowtimes never close
it), and is then produced stamped with its period's end (or the query's monotonic ``AS
ROWTIME``). Rows only ever *add* to a group's partial aggregates, so a batch of rows can be
pre-combined anywhere (the Spark runtime does it before the state store) and merged here.

A row whose keys or aggregate arguments cannot be computed, or that would take a SUM (or a
DECIMAL AVG's mean) out of its type's range, is refused (the semantics, section 1): it joins no group, and
the accumulators keep the value they had. Accumulators are exact (Python ints, 80-digit decimals,
and sums of doubles kept exactly as scaled ints, exactsum.py, rounded once at the end), so only
the result's type limits them, and a result does not depend on the order of the rows or on how
they were pre-combined. (The mean of doubles is always in DOUBLE's range, so a float AVG never
refuses a row.)
"""
from __future__ import annotations

import decimal
import heapq
import math

import numpy as np

from ..expr import compile_expr, remap, rowtime_map_array
from ..functions import CalcError
from ..functions.errors import operand_name, show_value
from ..functions.spec import fit, out_of_range
from ..plan import AggCall, Aggregate
from ..types import INT_BITS, SqlType
from . import exactsum
from .base import INF, Candidate, Operator, Refusing, calc_error, encode_key
from .describe import STATE_LIMIT, AggregateState, OpenGroup, merged_items, total

_CTX = decimal.Context(prec=80)
_BIG_LO, _BIG_HI = -(1 << 63), (1 << 63) - 1
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
        self.summing = call.fn in ("SUM", "AVG")
        self.kind = sum_kind(call)

    def __setstate__(self, d):
        # an accumulator saved before it had (this) ``kind`` gets it from its call
        self.__dict__.update(d)
        self.kind = sum_kind(self.call)

    @property
    def text(self) -> str:
        arg = self.call.arg
        inner = "*" if arg is None else (operand_name(arg) or "...")
        return f"{self.fn}({'DISTINCT ' if self.distinct else ''}{inner})"

    def _overflow(self, so_far, v) -> CalcError:
        """The accumulator cannot take ``v``: its result would leave the type's range."""
        err = out_of_range(self.type)
        err.text = self.text
        arg_t = self.call.arg.type if self.call.arg is not None else None
        err.operand_text = (f"the {'sum' if self.fn == 'SUM' else 'mean'} so far = {show_value(so_far, self.type)}, "
                            f"{operand_name(self.call.arg) or 'the value'} = {show_value(v, arg_t)}")
        return err

    def _total(self, a, b):
        """``a + b`` exactly; raises when the SUM (or the AVG's sum, for floats) leaves the range."""
        if isinstance(a, decimal.Decimal) or isinstance(b, decimal.Decimal):
            return _CTX.add(decimal.Decimal(a), decimal.Decimal(b))
        r = a + b
        if isinstance(r, float) and math.isinf(r) and not (math.isinf(a) or math.isinf(b)):
            raise self._overflow(a, b)
        return r

    def _check(self, total, n: int, so_far, v) -> None:
        try:
            if self.fn == "SUM":
                fit(total, self.type)
            elif self.type.name == "DECIMAL":
                fit(_CTX.divide(decimal.Decimal(total), decimal.Decimal(n)), self.type)
        except CalcError:
            raise self._overflow(so_far, v) from None

    def init(self):
        if self.distinct:
            return []
        return {"COUNT": 0, "SUM": None, "AVG": [None, 0], "MIN": None, "MAX": None,
                "FIRST_VALUE": [None, None], "LAST_VALUE": [None, None]}[self.fn]

    def add(self, st, v, arrival: bytes):
        """The state with ``v`` added (a new state: a refused row leaves the old one as it was);
        raises :class:`CalcError` where a SUM or AVG cannot take it."""
        if self.distinct:
            if v is not None and v not in st:
                if self.summing and st:
                    if self.kind != "float":
                        total = st[0]
                        for x in st[1:]:
                            total = self._total(total, x)
                        self._check(self._total(total, v), len(st) + 1, total, v)
                    elif self.fn == "SUM":       # (a mean of doubles is always in range)
                        before = exactsum.total(st)
                        if exactsum.add(before, v)[1]:
                            raise self._overflow(exactsum.value(before), v)
                st = st + [v]
            return st
        fn = self.fn
        if fn == "COUNT":
            return st + (1 if (self.call.arg is None or v is not None) else 0)
        if v is None:
            return st
        if fn == "SUM":
            kind = self.kind
            if kind == "float":                 # exact (exactsum.py)
                r, over = exactsum.add(st, v)
                if over:
                    raise self._overflow(exactsum.value(st), v)
                return r
            if st is None:
                return v
            if kind == "int":                   # a BIGINT total
                r = st + v
                if _BIG_LO <= r <= _BIG_HI:
                    return r
                raise self._overflow(st, v)
            total = self._total(st, v)
            self._check(total, 1, st, v)
            return total
        if fn == "AVG":
            kind = self.kind
            if kind == "float":                 # exact; the mean of doubles always fits
                return [exactsum.add(st[0], v)[0], st[1] + 1]
            if st[0] is None:
                return [v, 1]
            if kind == "mean":                  # exact integers: the mean always fits
                return [st[0] + v, st[1] + 1]
            total = self._total(st[0], v)
            self._check(total, st[1] + 1, st[0], v)
            return [total, st[1] + 1]
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
        if self.kind == "float":
            if fn == "SUM":
                return exactsum.merge(a, b)
            return [exactsum.merge(a[0], b[0]), a[1] + b[1]]
        if fn == "SUM":
            return b if a is None else a if b is None else self._total(a, b)
        if fn == "AVG":
            s = b[0] if a[0] is None else a[0] if b[0] is None else self._total(a[0], b[0])
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
            if self.fn in ("SUM", "AVG") and self.kind == "float":
                return exactsum.value(exactsum.total(vals), 1 if self.fn == "SUM" else len(vals))
            if self.fn in ("SUM", "AVG"):
                s = vals[0]
                for v in vals[1:]:
                    s = self._total(s, v)
                return fit_sum(s, t) if self.fn == "SUM" else avg_of(s, len(vals), t)
            if self.fn == "MIN":
                return min(vals)
            if self.fn == "MAX":
                return max(vals)
            return vals[0] if self.fn == "FIRST_VALUE" else vals[-1]
        fn = self.fn
        if fn == "COUNT":
            return st
        if self.kind == "float":
            if fn == "SUM":
                return exactsum.value(st)
            return None if st[1] == 0 else exactsum.value(st[0], st[1])
        if fn == "SUM":
            return None if st is None else fit_sum(st, t)
        if fn == "AVG":
            return None if st[1] == 0 else avg_of(st[0], st[1], t)
        if fn in ("FIRST_VALUE", "LAST_VALUE"):
            return st[1]
        return st


def sum_kind(call: AggCall) -> str:
    """How a SUM/AVG adds a value (the common cases inline in ``Acc.add``)."""
    t, arg = call.type, (call.arg.type if call.arg is not None else None)
    return ("int" if call.fn == "SUM" and t.is_integer else
            "mean" if call.fn == "AVG" and arg is not None and arg.is_integer else
            "float" if call.fn in ("SUM", "AVG") and t.is_approx else "exact")


def fit_sum(v, t: SqlType):
    """A SUM's exact total as a value of its type (raises when it does not fit)."""
    if t.is_approx:
        return float(v)
    return fit(v, t)


def avg_of(s, n: int, t: SqlType):
    """The mean of ``n`` values summing to ``s``: integers truncated toward zero (it always fits),
    decimals rounded to the type's scale."""
    if t.is_integer:
        q = abs(int(s)) // n
        return q if s >= 0 else -q
    if t.name == "DECIMAL":
        return fit(_CTX.divide(decimal.Decimal(s), decimal.Decimal(n)), t)
    return float(s) / n


def fit_int_array(s: np.ndarray, t: SqlType) -> np.ndarray:
    """:func:`fit_sum` of exact int64 sums, all at once (the same rule; other types one by one). A
    sum that does not fit its type raises, as :func:`fit_sum` does: the caller's batch then goes row
    by row, where the row path decides (a calculator error)."""
    if t.is_integer:
        bits = INT_BITS[t.name]
        s = s.astype(np.int64)
        if bits < 64:
            half = 1 << (bits - 1)
            if len(s) and (int(s.min()) < -half or int(s.max()) >= half):
                raise out_of_range(t)
        return s
    return np.array([fit_sum(int(v), t) for v in s.tolist()], dtype=object)


def avg_int_array(s: np.ndarray, n: np.ndarray, t: SqlType) -> np.ndarray:
    """:func:`avg_of` of exact int64 sums over ``n`` values, all at once: integers truncated
    toward zero (the same rule; other types one by one)."""
    if t.is_integer:
        q = np.abs(s) // n
        return fit_int_array(np.where(s >= 0, q, -q), t)
    return np.array([avg_of(int(v), int(k), t) for v, k in zip(s.tolist(), n.tolist())], dtype=object)


# --------------------------------------------------------------------------- the operator

class AggregateOp(Refusing, Operator):
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

    def on_row(self, ch, step, rowtime, row, clocks, arrival):
        try:
            if self.distinct_rows:
                return self._distinct(rowtime, row, arrival)
            self._add_row(rowtime, row, arrival)
        except CalcError as err:
            self.refuse(calc_error(err, step, rowtime, self.node.input.fields, row, ch))
        return []

    def _add_row(self, rowtime, row, arrival) -> None:
        """Keys, then arguments (left to right), then accumulators: the first that fails refuses
        the row before anything changes."""
        rts = (rowtime,)
        keys = tuple(f(row, rts) for f in self.key_fns)
        vals = [None if f is None else f(row, rts) for f in self.arg_fns]
        end = self.period_end(rowtime)
        k = (end, keys)
        cur = self.groups.get(k)
        base = cur if cur is not None else [acc.init() for acc in self.accs]
        states = [acc.add(s, v, arrival) for acc, s, v in zip(self.accs, base, vals)]
        if cur is None:
            if self.stamp_fn is not None:
                self.open_stamps[k] = self._stamp(end, keys, states)
            self.min_end = min(self.min_end, end)
        self.groups[k] = states

    def add_partial(self, end: int, keys: tuple, states: list) -> None:
        """Merge a pre-combined partial into its group."""
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

    def on_clocks(self, step, clocks):
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

    def state_view(self):
        groups = self.groups
        if len(groups) > STATE_LIMIT:
            keys = heapq.nsmallest(STATE_LIMIT, groups, key=lambda g: (g[0], encode_key(g[1])))
        else:
            keys = list(groups)
        items = {(e, encode_key(k)): (e, k, tuple(acc.final(s) for acc, s in zip(self.accs, groups[(e, k)])))
                 for e, k in keys}
        return items, {"groups": len(groups)}

    def trace_state(self, views):
        from ..types import format_value
        node = self.node
        tk = node.time_key
        types = [k.type for k in node.keys]
        names = [f.name for f in node.fields[len(node.keys):]]
        groups = []
        for _key, (end, keys, finals) in merged_items(views)[:STATE_LIMIT]:
            keys = tuple(keys)
            groups.append(OpenGroup(keys, tuple(format_value(v, t) for v, t in zip(keys, types)),
                                    keys[tk] if tk is not None and isinstance(keys[tk], int) else None,
                                    end, tuple(zip(names, finals))))
        return AggregateState(tuple(groups), total(views, "groups"))

    def state_size(self) -> int:
        return len(self.groups) + len(self.seen)
