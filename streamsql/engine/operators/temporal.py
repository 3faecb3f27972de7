"""Temporal joins, ``JOIN v FOR SYSTEM_TIME AS OF s.ROWTIME`` (the semantics, section 3.5.1).

The right side ``v`` is read as *versions*: a row of it is valid over ``[start, end)``. A left
(probe) row at ``t`` meets the versions valid at ``t`` that satisfy the join condition, and the
joined row is stamped ``t`` (LEFT: a probe row that meets none is released with NULLs).

- A table with two TIMESTAMP columns states each row's validity: ``[start, end)``, a NULL start
  being "always", a NULL end "for ever".
- A table with one TIMESTAMP column, or a stream (by its ROWTIME), holds *keyed versions*: a row
  is valid from its start until the next row with the same join key starts (equal starts: the
  later row, in table or arrival order, wins), so exactly one version per key is valid at ``t``.
  The rest of the ON condition then filters the pair; it does not pick another version.

A table is read when the query starts (:class:`VersionLookupOp`: a lookup, released at once).
A version stream is unbounded, so a probe row at ``t`` waits until the version side's clock
passes ``t`` (no version valid at ``t`` can still come), then meets the version valid at ``t``
(:class:`TemporalJoinOp`). Its output bound is ``min(left clock, earliest waiting probe row)``.
"""
from __future__ import annotations

import bisect
from collections import deque

import numpy as np

from .. import time as sqltime
from ..expr import compile_expr
from ..functions import CalcError
from ..plan import Join
from .base import INF, Candidate, Operator, encode_ints
from .describe import STATE_LIMIT, ProbeRowWaits, TemporalState, merged_items, total
from .join import LookupJoinOp, _Refusing

#: a missing start or end: valid since always, or for ever
_ALWAYS, _EVER = sqltime.NO_TIME - 1, sqltime.END_OF_TIME + 1


def validity(rows: list, times: list, keys: list | None, ends: list | None) -> list[tuple[int, int]]:
    """``[lo, hi)`` of each of ``rows`` (given in table or arrival order), from its start in
    ``times`` (None: always) and its end in ``ends`` (None: for ever); without ``ends``, a row is
    valid until the next row with the same key in ``keys`` starts (equal starts: the later row)."""
    lo = [_ALWAYS if t is None else int(t) for t in times]
    if ends is not None:
        return [(a, _EVER if e is None else int(e)) for a, e in zip(lo, ends)]
    hi = [_EVER] * len(rows)
    by_key: dict = {}
    for i, k in enumerate(keys):
        by_key.setdefault(k, []).append(i)
    for idx in by_key.values():
        idx.sort(key=lambda i: (lo[i], i))
        for a, b in zip(idx, idx[1:]):
            hi[a] = lo[b]
    return list(zip(lo, hi))


class VersionLookupOp(LookupJoinOp):
    """A stream joined with a versioned table: the lookup of :class:`LookupJoinOp`, meeting the
    table rows valid at the stream row's rowtime."""

    def _compile(self):
        super()._compile()
        node = self.node
        table_key = [compile_expr(r) for _l, r in node.equi]
        start = compile_expr(node.versions.start)
        end = compile_expr(node.versions.end) if node.versions.end is not None else None
        rows = self.rows
        keys = [tuple(f(r, (0,)) for f in table_key) for r in rows]   # computable: the lookup's index has them
        spans = validity(rows, [start(r, (0,)) for r in rows], keys,
                         [end(r, (0,)) for r in rows] if end is not None else None)
        self.index = {}
        for r, k, (lo, hi) in zip(rows, keys, spans):
            if None not in k and lo < hi:
                self.index.setdefault(k, []).append((r, lo, hi))

    def _lookup(self, step, rowtime, row, arrival):
        key = tuple(f(row, (rowtime,)) for f in self.stream_key)
        out = []
        n = 0
        if None not in key:
            for t, lo, hi in self.index.get(key, ()):
                if not lo <= rowtime < hi:
                    continue
                combined = tuple(row) + tuple(t)
                if self.residual_fn is not None and self.residual_fn(combined, (rowtime, rowtime)) is not True:
                    continue
                out.append(Candidate(rowtime, arrival + encode_ints(n), combined))
                n += 1
        if not out and self.preserve:
            out.append(Candidate(rowtime, arrival, tuple(row) + (None,) * self.width_table))
        return out


class _Probe:
    __slots__ = ("t", "arrival", "row", "key")

    def __init__(self, t, arrival, row, key):
        self.t, self.arrival, self.row, self.key = t, arrival, row, key


class TemporalJoinOp(_Refusing, Operator):
    """A stream joined with a stream of keyed versions. Inputs: 0 = probe rows, 1 = versions.

    State: the probe rows waiting for the version side's clock to pass their rowtime (in
    rowtime order, and per key), and per key the versions (rowtime, row) a waiting or future
    probe row could still meet: the last one at or before ``min(left clock, earliest waiting
    probe row of that key)`` and those after it."""

    n_inputs = 2
    n_params = 1          # the earliest rowtime of a waiting probe row
    _transient = ("probe_key", "version_key", "residual_fn")

    def __init__(self, node: Join):
        self.node = node
        self.preserve = node.kind == "LEFT"
        self.width = len(node.right.fields)
        self.waiting: deque = deque()          # _Probe, in rowtime order
        self.waiting_by_key: dict = {}         # key -> deque of _Probe
        self.times: dict = {}                  # key -> [version rowtime], non-decreasing
        self.rows: dict = {}                   # key -> [version row], in step with ``times``
        self._compile()

    def _compile(self):
        self.probe_key = [compile_expr(l) for l, _r in self.node.equi]
        self.version_key = [compile_expr(r) for _l, r in self.node.equi]
        self.residual_fn = compile_expr(self.node.residual) if self.node.residual is not None else None

    # ------------------------------------------------------------------ rows

    def on_row(self, ch, step, rowtime, row, clocks, arrival):
        fns = self.probe_key if ch == 0 else self.version_key
        try:
            key = tuple(f(row, (rowtime,)) for f in fns)
        except CalcError as err:
            return self._refuse(err, step, rowtime, ch, row)
        if ch == 0:
            p = _Probe(rowtime, arrival, row, key)
            self.waiting.append(p)
            self.waiting_by_key.setdefault(key, deque()).append(p)
            return []
        if None in key:
            return []                          # a version no probe row can ever meet
        times = self.times.setdefault(key, [])
        rows = self.rows.setdefault(key, [])
        i = bisect.bisect_right(times, rowtime)     # equal rowtimes: the later arrival wins
        times.insert(i, rowtime)
        rows.insert(i, row)
        self._prune(key, clocks[0])
        return []

    def _prune(self, key, left_clock: int) -> None:
        """Drop the versions of ``key`` no waiting or future probe row can meet."""
        times = self.times.get(key)
        if not times:
            return
        w = self.waiting_by_key.get(key)
        safe = min(left_clock, w[0].t) if w else left_clock
        i = bisect.bisect_right(times, safe) - 1      # the version valid at ``safe``
        if i > 0:
            del times[:i]
            del self.rows[key][:i]

    # ------------------------------------------------------------------ clocks

    def on_clocks(self, step, clocks):
        out = []
        q = self.waiting
        touched = set()
        while q and q[0].t < clocks[1]:        # the version side's clock has passed t
            p = q.popleft()
            w = self.waiting_by_key[p.key]
            w.popleft()
            if not w:
                del self.waiting_by_key[p.key]
            touched.add(p.key)
            c = self._meet(p, step)
            if c is not None:
                out.append(c)
        for key in touched:
            self._prune(key, clocks[0])
        return out

    def _meet(self, p: _Probe, step: int) -> Candidate | None:
        version = None
        if None not in p.key:
            times = self.times.get(p.key)
            i = bisect.bisect_right(times, p.t) - 1 if times else -1
            if i >= 0:
                version = (times[i], self.rows[p.key][i])
        if version is not None:
            combined = tuple(p.row) + tuple(version[1])
            if self.residual_fn is not None:
                try:
                    ok = self.residual_fn(combined, (p.t, version[0]))
                except CalcError as err:
                    self._refuse(err, step, p.t, 0, p.row)
                    return None
                if ok is not True:
                    version = None
            if version is not None:
                return Candidate(p.t, p.arrival, combined)
        if self.preserve:
            return Candidate(p.t, p.arrival, tuple(p.row) + (None,) * self.width)
        return None

    def wakeups(self):
        return (INF, self.waiting[0].t + 1 if self.waiting else INF)

    # ------------------------------------------------------------------ bound

    def bound_params(self):
        return (self.waiting[0].t if self.waiting else INF,)

    def bound_eval(self, params, clocks):
        return np.minimum(params[:, 0], clocks[:, 0]).astype(np.int64)

    def state_view(self):
        items = {(p.t, p.arrival): p.t for p in list(self.waiting)[:STATE_LIMIT]}
        return items, {"versions": sum(len(t) for t in self.times.values())}

    def trace_state(self, views):
        waiting = tuple(t for _k, t in merged_items(views))[:STATE_LIMIT]
        return TemporalState(waiting, total(views, "versions"))

    def frontier_reason(self, state, clocks, names):
        if state.waiting and state.waiting[0] <= clocks[0]:
            t = state.waiting[0]
            return ProbeRowWaits(names[0], names[1], t, t, t)
        return None

    def state_size(self) -> int:
        return len(self.waiting) + sum(len(t) for t in self.times.values())
