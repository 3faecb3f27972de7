"""Streaming ORDER BY and T-sort (the semantics, section 3.6).

**Streaming ORDER BY** (leading key a non-decreasing function of the rowtime). Rows arrive in
rowtime order, so they already come in leading-key order; only rows sharing one leading-key value
need reordering. They are buffered per value and released, sorted by the remaining keys, when the
value is complete: when the input clock reaches the end of its period (the earliest rowtime at
which the key takes its next value, :class:`~.timekey.TimeKey`), from a row or from a bound.

*Output stamps.* A released row keeps its own rowtime, raised to the highest rowtime of the rows
sorted before it in its group (the running maximum in ORDER BY order). So stamps never decrease
along the output, rows released together come out in ORDER BY order (the tie key is the sort
key), and rows whose ORDER BY order agrees with their rowtimes keep them unchanged: a leading key
given ``AS ROWTIME`` (Calcite's ``FLOOR(rowtime TO hour) AS rowtime ... ORDER BY FLOOR(rowtime TO
hour), units DESC``), ``ORDER BY ROWTIME, ...``, or rows already in order. A stamp is never later
than the group's last row, which the input clock has passed when the group completes, so the
group leaves at the step that completes it. With no key after the leading one nothing needs
reordering: each row is passed on at once, stamped with its rowtime (``ORDER BY ROWTIME`` on a
UNION ALL changes nothing). The earliest stamp still producible is the earliest rowtime buffered,
or the input clock.

**T-sort** ``ORDER BY ts WITHIN n``: the stamp is ``ts`` (the select list's ``AS ROWTIME``). The
operator's bound ``W`` is the highest ``ts`` seen minus ``n`` (no bound before the first row;
input bounds are ignored, as in SQLstream). A row whose ``ts`` is below ``W`` is late: every
released row is at or below ``W`` and ``W`` was already promised downstream, so such a row could
not be emitted without breaking either. It is refused and reported on the operator's side channel
(:meth:`TSortOp.take_errors`), which the runtime writes to the error stream. A row with a NULL
``ts`` is dropped. Every other row is a candidate at once; the release rule (``ts <= W``, and
``ts <=`` the input clock) holds it until ``W`` passes it. Ties (equal ``ts``) go by the
remaining keys, then arrival.
"""
from __future__ import annotations

import numpy as np

from .. import time as sqltime
from ..expr import compile_expr
from ..functions import CalcError
from ..plan import Sort, SortKey
from ..types import dumps_row, to_json_value
from .base import (INF, MAX_PENDING_ERRORS, Candidate, Operator, OperatorError, Refusing, calc_error, encode_ints,
                   encode_value)
from .describe import (PARTITION_LIMIT, STATE_LIMIT, OrderByHolds, SortGroup, SortState, TSortNoRowYet, TSortState,
                       TSortWithin, least, merged_items, total)
from .timekey import try_time_key


# --------------------------------------------------------------------------- sort keys

def sort_nulls_first(k: SortKey) -> bool:
    """SQL's default: NULLS LAST for ASC, NULLS FIRST for DESC (NULL is the largest value)."""
    return k.descending if k.nulls_first is None else k.nulls_first


def encode_sort_value(v, k: SortKey) -> bytes:
    """Bytes that sort like ``v`` under ``k`` (direction and NULLS placement)."""
    # encode_value places NULL before inverting for DESC, so ask for the opposite placement there
    return encode_value(v, descending=k.descending, nulls_first=sort_nulls_first(k) != k.descending)


# --------------------------------------------------------------------------- leading key periods

# --------------------------------------------------------------------------- ORDER BY

class SortOp(Refusing, Operator):
    """Streaming ORDER BY. State: buffered rows per leading-key period, ``[(rowtime, sort key,
    row)]``; groups are keyed by their period's end (or by the encoded leading value when the
    periods are unknown)."""

    n_inputs = 1
    n_params = 1          # the earliest rowtime buffered (INF when nothing is)
    _transient = ("key_fns", "lead_fn")

    def __init__(self, node: Sort):
        self.node = node
        self.rest = list(node.keys[1:])
        self.time_key = try_time_key(node.keys[0].expr, node.input)
        self.groups: dict = {}           # group id -> [(rowtime, sortkey bytes, row)]
        self.group_min: dict = {}        # group id -> earliest rowtime in it
        self.min_end = INF               # earliest period end among buffered groups
        self.open_min = INF
        self._compile()

    def _compile(self):
        self.key_fns = [compile_expr(k.expr) for k in self.rest]
        self.lead_fn = compile_expr(self.node.keys[0].expr)

    # ------------------------------------------------------------------ rows

    def on_row(self, ch, step, rowtime, row, clocks, arrival):
        if not self.rest:
            # rows arrive in leading-key order already; equal values keep arrival order
            return [Candidate(rowtime, arrival, row)]
        rts = (rowtime,)
        try:
            key = b"".join(encode_sort_value(f(row, rts), k) for f, k in zip(self.key_fns, self.rest)) + arrival
            lead = None if self.time_key is not None else self.lead_fn(row, rts)
        except CalcError as err:
            return self.refuse(calc_error(err, step, rowtime, self.node.input.fields, row, ch))
        out: list[Candidate] = []
        if self.time_key is not None:
            gid = self.time_key.period_end(rowtime)
            self.min_end = min(self.min_end, gid)
        else:
            gid = encode_value(lead)
            # a later leading value completes every earlier one
            for g in sorted(x for x in self.groups if x < gid):
                out += self._release(g)
        self.groups.setdefault(gid, []).append((rowtime, key, row))
        self.group_min[gid] = min(self.group_min.get(gid, INF), rowtime)
        self.open_min = min(self.group_min.values())
        return out

    def on_clocks(self, step, clocks):
        c = clocks[0]
        if self.time_key is None or c < self.min_end:
            return []
        out: list[Candidate] = []
        for g in sorted(x for x in self.groups if x <= c):
            out += self._release(g)
        self.min_end = min(self.groups, default=INF)
        return out

    def _release(self, gid) -> list[Candidate]:
        rows = self.groups.pop(gid)
        self.group_min.pop(gid, None)
        self.open_min = min(self.group_min.values(), default=INF)
        rows.sort(key=lambda r: r[1])
        prefix = encode_ints(gid) if isinstance(gid, int) else gid
        out, stamp = [], sqltime.NO_TIME
        for rowtime, key, row in rows:
            stamp = max(stamp, rowtime)
            out.append(Candidate(stamp, prefix + key, row))
        return out

    def wakeups(self):
        return (self.min_end if self.time_key is not None else INF,)


    # ------------------------------------------------------------------ bound

    def bound_params(self):
        return (self.open_min,)

    def bound_eval(self, params, clocks):
        return np.minimum(params[:, 0], clocks[:, 0])

    def state_view(self):
        # the rows waiting for their ORDER BY value to complete (the host's trace only shows rows
        # already produced), each group with the clock that completes it; one bucket only
        gs = sorted(self.groups.items(), key=lambda kv: kv[0] if isinstance(kv[0], int) else 0)
        items = {n: (g if isinstance(g, int) else None, len(v),
                     tuple((rt, tuple(row)) for rt, _k, row in v[:PARTITION_LIMIT]))
                 for n, (g, v) in enumerate(gs[:STATE_LIMIT])}
        first = min(self.groups) if self.time_key is not None and self.groups else None
        return items, {"rows": sum(len(v) for v in self.groups.values()),
                       "earliest": None if self.open_min >= INF else (self.open_min, self.open_min),
                       "next_complete": None if first is None else (first, first)}

    def trace_state(self, views):
        groups = tuple(SortGroup(c, n, tuple((rt, tuple(vals)) for rt, vals in held))
                       for _k, (c, n, held) in merged_items(views))
        return SortState(groups, total(views, "rows"), least(views, "earliest"), least(views, "next_complete"))

    def frontier_reason(self, state, clocks, names):
        if state.earliest is None:
            return None
        return OrderByHolds(state.rows, state.earliest, state.next_complete if self.time_key is not None else None)

    def state_size(self) -> int:
        return sum(len(v) for v in self.groups.values())


# --------------------------------------------------------------------------- T-sort

class TSortOp(Operator):
    """``ORDER BY ts WITHIN n``: reorders rows by ``ts`` within ``n`` of the highest ``ts`` seen."""

    n_inputs = 1
    n_params = 1          # W: highest ts seen minus n (NO_TIME before the first row)
    _transient = ("ts_fn", "key_fns")

    def __init__(self, node: Sort):
        if node.within is None or node.rowtime is None:
            raise ValueError("TSortOp needs a Sort with WITHIN and a ts expression")
        self.node = node
        self.within = int(node.within)
        self.rest = list(node.keys[1:])
        self.names = [f.name for f in node.input.fields]
        self.types = [f.type for f in node.input.fields]
        self.bound = sqltime.NO_TIME
        self.max_ts: int | None = None
        self.late_count = 0
        self.null_count = 0
        self.errors: list[OperatorError] = []
        self._compile()

    def _compile(self):
        self.ts_fn = compile_expr(self.node.rowtime)
        self.key_fns = [compile_expr(k.expr) for k in self.rest]

    def on_row(self, ch, step, rowtime, row, clocks, arrival):
        rts = (rowtime,)
        try:
            ts = self.ts_fn(row, rts)
        except CalcError as err:
            return self._refuse(err, step, rowtime, row, ch)
        if ts is None:
            self.null_count += 1
            return []
        ts = int(ts)
        if ts < self.bound:
            self._late(step, ts, row)
            return []
        try:
            keys = [f(row, rts) for f in self.key_fns]
        except CalcError as err:
            return self._refuse(err, step, rowtime, row, ch)
        if self.max_ts is None or ts > self.max_ts:
            self.max_ts = ts
            self.bound = max(self.bound, ts - self.within)
        tie = b"".join(encode_sort_value(v, k) for v, k in zip(keys, self.rest)) + arrival
        return [Candidate(ts, tie, row)]

    def _refuse(self, err: CalcError, step: int, rowtime: int, row: tuple, ch: int) -> list:
        self.errors.append(calc_error(err, step, rowtime, self.node.input.fields, row, ch))
        if len(self.errors) > MAX_PENDING_ERRORS:
            del self.errors[0]
        return []

    def _late(self, step: int, ts: int, row: tuple) -> None:
        self.late_count += 1
        data = {n: to_json_value(v, t) for n, v, t in zip(self.names, row, self.types)}
        msg = (f"Late row in T-sort (ORDER BY ... WITHIN {self.within} ms): ts {sqltime.format_timestamp(ts)} is "
               f"before the sort's bound {sqltime.format_timestamp(self.bound)} (highest ts "
               f"{sqltime.format_timestamp(self.max_ts)} minus the WITHIN interval)")
        self.errors.append(OperatorError(step, "LATE_ROW", msg, self.bound, ts, dumps_row(data)))
        if len(self.errors) > MAX_PENDING_ERRORS:
            del self.errors[0]

    def take_errors(self) -> list[OperatorError]:
        """Rows refused since the last call (the side channel for the error stream)."""
        out, self.errors = self.errors, []
        return out

    # ------------------------------------------------------------------ bound

    def bound_params(self):
        return (self.bound,)

    def bound_eval(self, params, clocks):
        return params[:, 0].copy()

    def state_view(self):
        return {}, {"max_ts": self.max_ts, "bound": self.bound, "late": self.late_count, "null_ts": self.null_count}

    def trace_state(self, views):
        t = views[0][1] if views else self.state_view()[1]
        return TSortState(t["max_ts"], t["bound"], self.within, t["late"], t["null_ts"])

    def frontier_reason(self, state, clocks, names):
        if state.max_ts is None:
            return TSortNoRowYet()
        return TSortWithin(state.max_ts, state.within, state.bound)


def make_sort_operator(node: Sort) -> Operator:
    return TSortOp(node) if node.within is not None else SortOp(node)
