"""Aggregation per window (the semantics, section 3.7): Calcite's group windows (``GROUP BY
TUMBLE/HOP/SESSION(...)``) and a window table function's ``GROUP BY window_start, window_end, ...``.

Each input row joins a group per window it falls in (a hop or a cumulating window: several), keyed
by the window and the other grouping keys. A window is complete when the input clock reaches its
end (from a row or a bound; equal rowtimes never close it): its groups are then produced, stamped
with the window's end (or its start, or its ``window_time``, when the query says so), ordered by
their grouping key values. A window with no row is never produced. A session (per value of the
session keys) holds rows each less than the gap after the previous one; a row at the last one
plus the gap or later opens the next session, and the previous is complete from that clock on.

The accumulators are GROUP BY's (``aggregate.Acc``: exact, refusing a row that would take a SUM out
of its type); a row refused in one of its windows joins none of them. Rows only add to partials,
so a batch of rows can be pre-combined per window and merged here (``add_partial``).
"""
from __future__ import annotations

import heapq

import numpy as np

from ..expr import compile_expr
from ..functions import CalcError
from ..plan import WindowAggregate
from .aggregate import Acc
from .base import INF, Candidate, Operator, Refusing, calc_error, encode_key
from .describe import STATE_LIMIT, OpenWindow, WindowsState, merged_items, total, window_still_open
from .windowtable import close_sessions
from .windowshape import describe, next_end_array, next_start_array, normalized, windows_of

END_OF_TIME = 2 ** 62


def stamp_of(which: str, start: int, end: int) -> int:
    """A window's output stamp: its end, its start, or its ``window_time`` (end minus 1 ms)."""
    return end if which == "end" else start if which == "start" else end - 1


class WindowAggOp(Refusing, Operator):
    """State: open groups ``{(end, start, key values): partials}``; for sessions, per session key
    the open session ``[start, last row, {key values: partials}]``."""

    n_inputs = 1
    n_params = 1          # sessions: the earliest stamp an open session can still give (INF otherwise)
    _transient = ("key_fns", "arg_fns", "part_fns")

    def __init__(self, node: WindowAggregate):
        self.node = node
        self.shape = normalized(node.shape)
        self.session = self.shape.is_session
        self.gap = self.shape.gap
        self.row_keys = [i for i in range(len(node.keys)) if i not in node.window_keys]
        self.accs = [Acc(a) for a in node.aggs]
        self.groups: dict[tuple, list] = {}      # (end, start, row key values) -> partials
        self.sessions: dict[tuple, list] = {}    # session keys -> [start, last, {row keys: partials}]
        self.ends: list = []                     # sessions: heap of (end, session keys), some stale
        self.min_end = INF
        self._compile()

    def _compile(self):
        node = self.node
        self.key_fns = [compile_expr(node.keys[i]) for i in self.row_keys]
        self.arg_fns = [compile_expr(a.arg) if a.arg is not None else None for a in node.aggs]
        self.part_fns = [compile_expr(p) for p in node.partition]

    # --- rows ---------------------------------------------------------------------------

    def _values(self, rowtime, row):
        rts = (rowtime,)
        keys = tuple(f(row, rts) for f in self.key_fns)
        vals = [None if f is None else f(row, rts) for f in self.arg_fns]
        return keys, vals

    def on_row(self, ch, step, rowtime, row, clocks, arrival):
        try:
            if self.session:
                return self._session_row(rowtime, row, arrival)
            keys, vals = self._values(rowtime, row)
            new = {}
            for s, e in windows_of(self.shape, rowtime):
                k = (e, s, keys)
                cur = self.groups.get(k)
                base = cur if cur is not None else [acc.init() for acc in self.accs]
                new[k] = [acc.add(st, v, arrival) for acc, st, v in zip(self.accs, base, vals)]
        except CalcError as err:
            return self.refuse(calc_error(err, step, rowtime, self.node.input.fields, row, ch))
        if new:
            self.groups.update(new)
            self.min_end = min(self.min_end, min(k[0] for k in new))
        return []

    def _session_row(self, rowtime, row, arrival):
        rts = (rowtime,)
        part = tuple(f(row, rts) for f in self.part_fns)
        keys, vals = self._values(rowtime, row)
        sess = self.sessions.get(part)
        closing = sess is not None and rowtime >= sess[1] + self.gap     # the row opens the next session
        groups = sess[2] if sess is not None and not closing else {}
        cur = groups.get(keys)
        base = cur if cur is not None else [acc.init() for acc in self.accs]
        states = [acc.add(st, v, arrival) for acc, st, v in zip(self.accs, base, vals)]   # may refuse the row
        out = self._close(part) if closing else []
        if sess is None or closing:
            sess = self.sessions[part] = [rowtime, rowtime, groups]
        sess[1] = max(sess[1], rowtime)
        groups[keys] = states
        heapq.heappush(self.ends, (sess[1] + self.gap, encode_key(part), part))
        self._settle()
        return out

    def add_partial(self, start: int, end: int, part: tuple, keys: tuple, states: list) -> list[Candidate]:
        """Merge a pre-combined partial: the rows of one window and key values; of a session, the
        rows of some key values within a *run* of one session key (rows each less than the gap
        after the one before, ``start`` the run's first rowtime, ``end`` its last). A run that
        starts at or after the open session's last row + the gap closes it, as its first row
        would (the session's rows; a run never spans a closing, so the rest only extend)."""
        if self.session:
            sess = self.sessions.get(part)
            out = []
            if sess is not None and start >= sess[1] + self.gap:
                out = self._close(part)
                sess = None
            if sess is None:
                sess = self.sessions[part] = [start, end, {}]
            sess[1] = max(sess[1], end)
            groups = sess[2]
            cur = groups.get(keys)
            groups[keys] = list(states) if cur is None else [a.merge(x, y) for a, x, y in zip(self.accs, cur, states)]
            heapq.heappush(self.ends, (sess[1] + self.gap, encode_key(part), part))
            self._settle()
            return out
        k = (end, start, keys)
        cur = self.groups.get(k)
        self.groups[k] = list(states) if cur is None else [a.merge(x, y) for a, x, y in zip(self.accs, cur, states)]
        self.min_end = min(self.min_end, end)
        return []

    # --- clocks -------------------------------------------------------------------------

    def on_clocks(self, step, clocks):
        c = clocks[0]
        if c < self.min_end:
            return []
        if self.session:
            return close_sessions(self, c)
        out = []
        done = sorted((k for k in self.groups if k[0] <= c), key=lambda k: (k[0], k[1], encode_key(k[2])))
        for k in done:
            out.append(self._candidate(k[1], k[0], k[2], self.groups.pop(k)))
        self.min_end = min((k[0] for k in self.groups), default=INF)
        return out

    def _close(self, part) -> list[Candidate]:
        start, last, groups = self.sessions.pop(part)
        end = last + self.gap
        return [self._candidate(start, end, keys, states) for keys, states in groups.items()]

    def _settle(self) -> None:
        """Drop the heap's stale entries (sessions closed or grown since); ``min_end`` is then the
        earliest open session's end."""
        while self.ends:
            end, _order, part = self.ends[0]
            sess = self.sessions.get(part)
            if sess is not None and sess[1] + self.gap == end:
                break
            heapq.heappop(self.ends)
        self.min_end = self.ends[0][0] if self.ends else INF

    def output_keys(self, start: int, end: int, keys: tuple) -> tuple:
        """The grouping key values of a group, in the query's order (window columns filled in)."""
        node = self.node
        win = (start, end, end - 1)
        it = iter(keys)
        return tuple(win[node.window_keys[i]] if i in node.window_keys else next(it) for i in range(len(node.keys)))

    def _candidate(self, start, end, keys, states) -> Candidate:
        out_keys = self.output_keys(start, end, keys)
        row = out_keys + tuple(acc.final(s) for acc, s in zip(self.accs, states))
        return Candidate(stamp_of(self.node.stamp, start, end), encode_key(out_keys), row)

    def wakeups(self):
        return (self.min_end,)

    # --- bound --------------------------------------------------------------------------

    def bound_params(self):
        if not self.session:
            return (INF,)
        if self.node.stamp == "start":
            return (min((s[0] for s in self.sessions.values()), default=INF),)
        return (self.min_end,)

    def bound_eval(self, params, clocks):
        c = clocks[:, 0]
        p = params[:, 0]
        which = self.node.stamp
        if self.session:
            if which == "start":
                return np.minimum(p, c)
            f = np.minimum(np.minimum(p, c + self.gap), END_OF_TIME)
            return np.where((which == "time") & (f < END_OF_TIME), f - 1, f)
        if which == "start":
            return next_start_array(self.shape, c)
        f = next_end_array(self.shape, c)
        return np.where((which == "time") & (f < END_OF_TIME) & (f > -END_OF_TIME), f - 1, f)

    # --- trace --------------------------------------------------------------------------

    def held_window(self, row: tuple) -> tuple[int, int] | None:
        """The window an output row belongs to, ``(start, end)``, for the trace's words."""
        wk = {v: i for i, v in self.node.window_keys.items()}
        if 0 in wk and 1 in wk:
            return row[wk[0]], row[wk[1]]
        return None

    def _open(self):
        """``(end, start, keys, partials)`` of every open group."""
        if not self.session:
            for (e, s, keys), states in self.groups.items():
                yield e, s, keys, states
            return
        for part, (s, last, groups) in self.sessions.items():
            for keys, states in groups.items():
                yield last + self.gap, s, keys, states

    def state_view(self):
        items = {}
        entries = list(self._open())
        if len(entries) > STATE_LIMIT:
            entries = heapq.nsmallest(STATE_LIMIT, entries, key=lambda x: (x[0], x[1], encode_key(x[2])))
        for e, s, keys, states in entries:
            out_keys = self.output_keys(s, e, keys)
            items[(e, s, encode_key(keys))] = (s, e, out_keys, tuple(acc.final(st) for acc, st in zip(self.accs, states)))
        return items, {"windows": len(self.groups) if not self.session else sum(len(x[2]) for x in self.sessions.values())}

    def trace_state(self, views):
        from ..types import format_value
        node = self.node
        types = [k.type for k in node.keys]
        names = [acc.text for acc in self.accs]          # COUNT(*), SUM(UNITS): as the query wrote them
        wins = []
        for _k, (s, e, keys, finals) in merged_items(views)[:STATE_LIMIT]:
            keys = tuple(keys)
            shown = tuple(format_value(v, t) for i, (v, t) in enumerate(zip(keys, types)) if i not in node.window_keys)
            wins.append(OpenWindow(s, e, keys, shown, tuple(zip(names, finals))))
        return WindowsState(describe(self.shape), tuple(wins), total(views, "windows"))

    def frontier_reason(self, state, clocks, names):
        return window_still_open(state, names, self.future_bound(clocks),
                                 lambda w: stamp_of(self.node.stamp, w.start, w.end))

    def state_size(self) -> int:
        return len(self.groups) + sum(len(x[2]) for x in self.sessions.values())

