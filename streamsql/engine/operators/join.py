"""Window joins of two streams, and stream-table lookups (the semantics, section 3.5).

Side ``i`` has a window ``[T - p_i, T + f_i]`` around the base time T; its row at ``r`` is in its
window for base times ``[r - f_i, r + p_i]``. Two rows match when the condition holds and those
intervals overlap; the pair is stamped ``max(r_0 - f_0, r_1 - f_1)``. A row of an outer side
that never matched is unmatched once the other side's clock minus its ``f`` passes ``r + p_i``;
it is stamped ``r + p_i``. A row is kept only while some future row of the other side could
still overlap it, which (rows arriving in rowtime order) makes each side's memory a queue.

A row whose join keys, or whose condition with one of the partners it meets, cannot be computed
is refused (the semantics, section 1): it joins nothing, is not kept and is never released unmatched.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from .. import time as sqltime
from ..errors import SqlError
from ..expr import compile_expr
from ..functions import CalcError
from ..plan import Join, JoinWindow
from .base import INF, Candidate, Operator, Refusing, calc_error, encode_ints
from .describe import (STATE_LIMIT, JoinSide, JoinState, KeptRowCouldMatch, LaterRowCouldBeUnmatched,
                       LaterRowsCouldMatch, UnmatchedRowReleased, least, merged_items)


class _Refusing(Refusing):
    """Rows refused for calculator errors, with the fields of the side they came on."""

    def _refuse(self, err: CalcError, step: int, rowtime: int, ch: int, row: tuple) -> list:
        node = self.node
        left = ch == 0 if getattr(self, "side", None) is None else self.side == 0
        return self.refuse(calc_error(err, step, rowtime, node.left.fields if left else node.right.fields, row, ch))


class _Kept:
    __slots__ = ("r", "arrival", "row", "key", "matched")

    def __init__(self, r, arrival, row, key):
        self.r, self.arrival, self.row, self.key, self.matched = r, arrival, row, key, False


class JoinOp(_Refusing, Operator):
    """Stream-stream window join. Inputs: 0 = left, 1 = right."""

    n_inputs = 2
    n_params = 4          # A0, A1 (earliest r - f of kept rows), U0, U1 (earliest r + p unmatched)
    _transient = ("key_fns", "residual_fn")

    def __init__(self, node: Join):
        self.node = node
        lw = node.left_window or JoinWindow()
        rw = node.right_window or JoinWindow()
        self.p = (lw.preceding, rw.preceding)
        self.f = (lw.following, rw.following)
        self.outer = (node.kind in ("LEFT", "FULL"), node.kind in ("RIGHT", "FULL"))
        self.width = (len(node.left.fields), len(node.right.fields))
        self.kept = (deque(), deque())                 # per side, in rowtime order: rows that can match
        self.by_key = ({}, {})                         # per side: key -> deque of _Kept
        self.unmatched = (deque(), deque())            # outer sides: kept rows not matched yet
        self.nulls = (deque(), deque())                # outer sides: rows with a NULL key (never match)
        self._compile()

    def _compile(self):
        self.key_fns = ([compile_expr(l) for l, _ in self.node.equi], [compile_expr(r) for _, r in self.node.equi])
        self.residual_fn = compile_expr(self.node.residual) if self.node.residual is not None else None

    def __setstate__(self, d):
        d.setdefault("nulls", (deque(), deque()))
        super().__setstate__(d)

    # ------------------------------------------------------------------ rows

    def on_row(self, ch, step, rowtime, row, clocks, arrival):
        i, j = ch, 1 - ch
        try:
            key = tuple(f(row, (rowtime,)) for f in self.key_fns[i])
        except CalcError as err:
            return self._refuse(err, step, rowtime, ch, row)
        out = []
        me = _Kept(rowtime, arrival, row, key)
        if None in key:
            # a NULL key never matches: an inner side forgets the row at once, an outer side keeps
            # it only until it is released unmatched
            if self.outer[i]:
                self.nulls[i].append(me)
                self.unmatched[i].append(me)
            return out
        partners = []
        for other in self.by_key[j].get(key, ()):
            if not self._overlap(i, rowtime, j, other.r):
                continue
            l, r = (me, other) if i == 0 else (other, me)
            if self.residual_fn is not None:
                try:
                    ok = self.residual_fn(tuple(l.row) + tuple(r.row), (l.r, r.r))
                except CalcError as err:      # with any partner: the row joins nothing
                    return self._refuse(err, step, rowtime, ch, row)
                if ok is not True:
                    continue
            partners.append((other, l, r))
        for other, l, r in partners:
            me.matched = True
            other.matched = True
            stamp = max(l.r - self.f[0], r.r - self.f[1])
            out.append(Candidate(stamp, encode_ints(step, 0) + me.arrival + other.arrival,
                                 tuple(l.row) + tuple(r.row)))
        # Keep the row while a future row of the other side could overlap it. Whether one still can
        # is decided by on_clocks, which the runtimes call after all rows of the event: rows of the
        # other input that arrive in the same event (a self-join, a join of a stream with an
        # aggregate of it) are not in ``clocks``'s past, and must still find this row.
        self.kept[i].append(me)
        self.by_key[i].setdefault(key, deque()).append(me)
        if self.outer[i] and not me.matched:
            self.unmatched[i].append(me)
        return out

    def _overlap(self, i, ri, j, rj) -> bool:
        return ri - self.f[i] <= rj + self.p[j] and rj - self.f[j] <= ri + self.p[i]

    def _unmatched(self, i: int, k: _Kept, step: int) -> Candidate:
        nulls = (None,) * self.width[1 - i]
        row = tuple(k.row) + nulls if i == 0 else nulls + tuple(k.row)
        return Candidate(k.r + self.p[i], encode_ints(step, 1) + k.arrival, row)

    # ------------------------------------------------------------------ clocks

    def on_clocks(self, step, clocks):
        out = []
        for i in (0, 1):
            j = 1 - i
            limit = clocks[j] - self.f[j]
            q = self.kept[i]
            while q and limit > q[0].r + self.p[i]:
                k = q.popleft()
                lst = self.by_key[i][k.key]
                lst.popleft()
                if not lst:
                    del self.by_key[i][k.key]
                if self.outer[i] and not k.matched:
                    out.append(self._unmatched(i, k, step))
            n = self.nulls[i]
            while n and limit > n[0].r + self.p[i]:
                out.append(self._unmatched(i, n.popleft(), step))
            u = self.unmatched[i]
            while u and (u[0].matched or limit > u[0].r + self.p[i]):
                u.popleft()
        return out

    def wakeups(self):
        w = [INF, INF]
        for i in (0, 1):
            j = 1 - i
            for q in (self.kept[i], self.nulls[i]):
                if q:
                    w[j] = min(w[j], q[0].r + self.p[i] + self.f[j] + 1)
        return tuple(w)

    # ------------------------------------------------------------------ bound

    def bound_params(self):
        a = tuple(self.kept[i][0].r - self.f[i] if self.kept[i] else INF for i in (0, 1))
        u = []
        for i in (0, 1):
            q = self.unmatched[i]
            while q and q[0].matched:
                q.popleft()
            u.append(q[0].r + self.p[i] if q else INF)
        return a + tuple(u)

    def bound_eval(self, params, clocks):
        def shift(c, d):
            # a clock that is still "no time" (or already the end of time) stays so when shifted
            return np.where(c <= sqltime.NO_TIME, sqltime.NO_TIME, np.where(c >= sqltime.END_OF_TIME, sqltime.END_OF_TIME, c + d))
        c0 = shift(clocks[:, 0], -self.f[0])
        c1 = shift(clocks[:, 1], -self.f[1])
        terms = [np.maximum(params[:, 0], c1), np.maximum(params[:, 1], c0), np.maximum(c0, c1),
                 params[:, 2], params[:, 3]]
        if self.outer[0]:
            terms.append(shift(clocks[:, 0], self.p[0]))
        if self.outer[1]:
            terms.append(shift(clocks[:, 1], self.p[1]))
        return np.minimum.reduce(terms).astype(np.int64)

    def state_view(self):
        items = {}
        for i in (0, 1):
            for kind, q in ((0, self.kept[i]), (1, self.nulls[i])):
                for n, k in enumerate(q):
                    if n >= STATE_LIMIT:
                        break
                    items[(kind, i, k.arrival)] = k.r
        totals = {}
        for i in (0, 1):
            k = next((k for k in self.unmatched[i] if not k.matched), None)
            totals[f"unmatched{i}"] = None if k is None else (k.arrival, k.r)
        return items, totals

    def trace_state(self, views):
        its = merged_items(views)
        sides = []
        for i in (0, 1):
            kept = [r for (kind, side, _a), r in its if kind == 0 and side == i][:STATE_LIMIT]
            nulls = [r for (kind, side, _a), r in its if kind == 1 and side == i][:STATE_LIMIT]
            sides.append(JoinSide(self.p[i], self.f[i], tuple(kept), tuple(nulls), least(views, f"unmatched{i}")))
        return JoinState(tuple(sides))

    def frontier_reason(self, state, clocks, names):
        def shift(t, d):
            return t if t <= sqltime.NO_TIME or t >= sqltime.END_OF_TIME else t + d
        c = [shift(clocks[0], -self.f[0]), shift(clocks[1], -self.f[1])]
        terms = []
        for i in (0, 1):
            j = 1 - i
            if state.sides[i].kept:
                r = state.sides[i].kept[0]
                terms.append((max(r - self.f[i], c[j]),
                              lambda v, i=i, j=j, r=r: KeptRowCouldMatch(names[i], names[j], r,
                                                                         r + self.p[i] + self.f[j], v)))
        terms.append((max(c[0], c[1]), lambda v: LaterRowsCouldMatch(names[0], names[1], v)))
        for i in (0, 1):
            r = state.sides[i].first_unmatched
            if r is not None:
                terms.append((r + self.p[i], lambda v, i=i, r=r: UnmatchedRowReleased(
                    names[i], names[1 - i], r, r + self.p[i] + self.f[1 - i], v)))
            if self.outer[i]:
                terms.append((shift(clocks[i], self.p[i]), lambda v, i=i: LaterRowCouldBeUnmatched(names[i], v)))
        v, make = min(terms, key=lambda t: t[0])
        return make(v)

    def state_size(self) -> int:
        return sum(len(self.kept[i]) + len(self.nulls[i]) for i in (0, 1))


class LookupJoinOp(_Refusing, Operator):
    """A stream joined with a table: each stream row looks the table up when it arrives and is
    released at once, stamped with its own rowtime (LEFT: unmatched rows too, with NULLs)."""

    n_inputs = 1
    _transient = ("stream_key", "residual_fn", "index")

    def __init__(self, node: Join, table_rows: list[tuple], stream_side: int):
        self.node = node
        self.side = stream_side
        self.rows = list(table_rows)
        self.preserve = (node.kind in ("LEFT", "FULL")) if stream_side == 0 else (node.kind in ("RIGHT", "FULL"))
        self.width_table = len((node.right if stream_side == 0 else node.left).fields)
        self._compile()

    def _compile(self):
        s = self.side
        self.stream_key = [compile_expr(p[s]) for p in self.node.equi]
        table_key = [compile_expr(p[1 - s]) for p in self.node.equi]
        self.residual_fn = compile_expr(self.node.residual) if self.node.residual is not None else None
        self.index = {}
        for r in self.rows:
            try:
                k = tuple(f(r, (0,)) for f in table_key)
            except CalcError as err:
                table = (self.node.right if self.side == 0 else self.node.left)
                raise SqlError(f"The join key of table {getattr(table, 'table', '')} row {r!r} cannot be "
                               f"computed: {err.describe()}") from None
            if None not in k:
                self.index.setdefault(k, []).append(r)

    def on_row(self, ch, step, rowtime, row, clocks, arrival):
        try:
            return self._lookup(step, rowtime, row, arrival)
        except CalcError as err:
            return self._refuse(err, step, rowtime, ch, row)

    def _lookup(self, step, rowtime, row, arrival):
        key = tuple(f(row, (rowtime,)) for f in self.stream_key)
        out = []
        n = 0
        if None not in key:
            for t in self.index.get(key, ()):
                combined = tuple(row) + tuple(t) if self.side == 0 else tuple(t) + tuple(row)
                if self.residual_fn is not None and self.residual_fn(combined, (rowtime, rowtime)) is not True:
                    continue
                out.append(Candidate(rowtime, arrival + encode_ints(n), combined))
                n += 1
        if not out and self.preserve:
            nulls = (None,) * self.width_table
            out.append(Candidate(rowtime, arrival, tuple(row) + nulls if self.side == 0 else nulls + tuple(row)))
        return out
