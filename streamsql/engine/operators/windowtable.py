"""Window table functions in FROM (the semantics, section 3.7): ``TUMBLE``, ``HOP``, ``CUMULATE``
and ``SESSION`` over a stream, a view or a sub-query.

Each input row comes out once per window it falls in, with ``WINDOW_START``, ``WINDOW_END`` and
``WINDOW_TIME`` (the end minus 1 ms) appended, stamped with the window's end: it leaves when the
input clock reaches that end (a row or a bound; equal rowtimes never close a window), which the
release rule says by itself, since nothing can be stamped earlier than the next window end. Rows
of one window leave by window start, session keys, then arrival.

A tumbling, hopping or cumulating window is known when its row arrives, so each copy is produced
at once and the host holds it until the present reaches its end (the trace then says, per held
row, which window it waits for). A session is not: its rows stay here until the session is
complete (the input clock at its last row plus the gap), then leave with its start and end.
"""
from __future__ import annotations

import heapq

import numpy as np

from ..expr import compile_expr
from ..plan import WindowTable
from .base import INF, Candidate, Operator, encode_key
from .describe import STATE_LIMIT, OpenWindow, WindowsState, merged_items, total, window_still_open
from .windowshape import describe, next_end_array, normalized, windows_of

END_OF_TIME = 2 ** 62


def close_sessions(op, clock: int) -> list:
    """Close the sessions of a session operator (window table or aggregation) that end at or
    before ``clock``: each key's heap entry is its session's end when pushed; a session that grew
    since (its last row + gap moved on) is left open."""
    out = []
    while op.ends and op.ends[0][0] <= clock:
        end, _order, part = heapq.heappop(op.ends)
        sess = op.sessions.get(part)
        if sess is not None and sess[1] + op.gap == end:
            out += op._close(part)
    op._settle()
    return out


class WindowTableOp(Operator):
    """State: the open windows with their row counts (``{(end, start): rows}``, for the trace);
    for sessions, per session key the open session ``[start, last row, [(arrival, row)]]``."""

    n_inputs = 1
    n_params = 1          # sessions: the earliest open session's end (INF otherwise)
    _transient = ("part_fns",)

    def __init__(self, node: WindowTable):
        self.node = node
        self.shape = normalized(node.shape)
        self.session = self.shape.is_session
        self.gap = self.shape.gap
        self.open: dict[tuple, int] = {}         # (end, start) -> rows (tumble, hop, cumulate)
        self.sessions: dict[tuple, list] = {}    # session keys -> [start, last, [(arrival, row)]]
        self.ends: list = []                     # sessions: heap of (end, keys), some stale
        self.min_end = INF
        self._compile()

    def _compile(self):
        self.part_fns = [compile_expr(p) for p in self.node.partition]

    def on_row(self, ch, step, rowtime, row, clocks, arrival):
        if self.session:
            return self._session_row(rowtime, row, arrival)
        out = []
        for s, e in windows_of(self.shape, rowtime):
            out.append(Candidate(e, encode_key((s,)) + arrival, tuple(row) + (s, e, e - 1)))
            self.open[(e, s)] = self.open.get((e, s), 0) + 1
            self.min_end = min(self.min_end, e)
        return out

    def _session_row(self, rowtime, row, arrival):
        rts = (rowtime,)
        part = tuple(f(row, rts) for f in self.part_fns)
        out = []
        sess = self.sessions.get(part)
        if sess is not None and rowtime >= sess[1] + self.gap:
            out = self._close(part)
            sess = None
        if sess is None:
            sess = self.sessions[part] = [rowtime, rowtime, []]
        sess[1] = max(sess[1], rowtime)
        sess[2].append((arrival, tuple(row)))
        heapq.heappush(self.ends, (sess[1] + self.gap, encode_key(part), part))
        self._settle()
        return out

    def _close(self, part) -> list[Candidate]:
        start, last, rows = self.sessions.pop(part)
        end = last + self.gap
        prefix = encode_key((start,) + part)
        return [Candidate(end, prefix + arrival, row + (start, end, end - 1)) for arrival, row in rows]

    def _settle(self) -> None:
        while self.ends:
            end, _order, part = self.ends[0]
            sess = self.sessions.get(part)
            if sess is not None and sess[1] + self.gap == end:
                break
            heapq.heappop(self.ends)
        self.min_end = self.ends[0][0] if self.ends else INF

    def on_clocks(self, step, clocks):
        c = clocks[0]
        if c < self.min_end:
            return []
        if not self.session:
            for k in [k for k in self.open if k[0] <= c]:
                del self.open[k]
            self.min_end = min((k[0] for k in self.open), default=INF)
            return []
        return close_sessions(self, c)

    def wakeups(self):
        return (self.min_end,)

    def bound_params(self):
        return (self.min_end if self.session else INF,)

    def bound_eval(self, params, clocks):
        c = clocks[:, 0]
        if self.session:
            return np.minimum(np.minimum(params[:, 0], c + self.gap), END_OF_TIME)
        return next_end_array(self.shape, c)

    # --- trace --------------------------------------------------------------------------

    def held_window(self, row: tuple) -> tuple[int, int] | None:
        n = len(self.node.input.fields)
        return (row[n], row[n + 1]) if len(row) > n + 1 else None

    def state_view(self):
        if self.session:
            entries = [(s[1] + self.gap, s[0], part, len(s[2])) for part, s in self.sessions.items()]
        else:
            entries = [(e, s, (), n) for (e, s), n in self.open.items()]
        if len(entries) > STATE_LIMIT:
            entries = heapq.nsmallest(STATE_LIMIT, entries, key=lambda x: (x[0], x[1], encode_key(x[2])))
        items = {(e, s, encode_key(part)): (s, e, part, n) for e, s, part, n in entries}
        return items, {"windows": len(self.sessions) if self.session else len(self.open)}

    def trace_state(self, views):
        # sessions are spread over key buckets by their keys; other windows are kept in one bucket
        # (``runtime.spark.pipeline.partition_exprs``), so no window is listed by two views
        from ..types import format_value
        types = [p.type for p in self.node.partition]
        wins = [OpenWindow(s, e, tuple(part), tuple(format_value(v, t) for v, t in zip(part, types)), (), n)
                for _k, (s, e, part, n) in merged_items(views)[:STATE_LIMIT]]
        return WindowsState(describe(self.shape), tuple(wins), total(views, "windows"))

    def frontier_reason(self, state, clocks, names):
        return window_still_open(state, names, self.future_bound(clocks))

    def state_size(self) -> int:
        return len(self.open) + sum(len(s[2]) for s in self.sessions.values())
