"""Window Top-N and deduplication (the semantics, section 3.7): ``ROW_NUMBER()``, ``RANK()`` and
``DENSE_RANK()`` over a partition that a window or a monotonic period ends.

A partition is the rows of one value of the PARTITION BY keys, one of which is monotonic in the
rowtime: a window table function's ``window_end`` (its rows' rowtime *is* their window's end), or a
period such as ``FLOOR(ROWTIME TO HOUR)``. It is complete when the input clock passes its rows'
window end, or reaches its period's end; its rows are then numbered in ORDER BY order and released
stamped with that end (the window's end, the period's end), by partition key values, then number.
ROW_NUMBER breaks ORDER BY ties by arrival (earlier first); RANK gives equal values the same number
and skips after them; DENSE_RANK does not skip. With a limit (``WHERE rn <= N``) a partition keeps
only the rows that can still be numbered at most N.
"""
from __future__ import annotations

import bisect
import heapq

from ..expr import compile_expr
from ..functions import CalcError
from ..plan import Rank
from .base import INF, Candidate, Operator, Refusing, calc_error, encode_key
from .describe import STATE_LIMIT, OpenWindow, WindowsState, merged_items, total, window_still_open
from .sort import encode_sort_value
from .timekey import TimeKey, resolve_time_expr


class RankOp(Refusing, Operator):
    """State: per open partition ``(complete at, stamp, key values)`` its rows so far, sorted:
    ``[(order key, arrival, row)]``."""

    n_inputs = 1
    n_params = 0
    _transient = ("part_fns", "order_fns")

    def __init__(self, node: Rank):
        self.node = node
        self.time_key = None
        if not node.window_end:
            expr = resolve_time_expr(node.partition[node.time_key], node.input)
            self.time_key = TimeKey(expr if expr is not None else node.partition[node.time_key])
        self.parts: dict[tuple, list] = {}
        self.starts: dict[tuple, int] = {}
        self.min_end = INF
        self._compile()

    def _compile(self):
        self.part_fns = [compile_expr(p) for p in self.node.partition]
        self.order_fns = [compile_expr(k.expr) for k in self.node.order]

    def _period(self, rowtime: int) -> tuple[int, int, int]:
        """``(complete at, stamp, start)`` of the partition a row at ``rowtime`` is in."""
        if self.time_key is None:
            return rowtime + 1, rowtime, rowtime
        end = self.time_key.period_end(rowtime)
        return end, end, min(self.time_key.value(rowtime), end)

    def on_row(self, ch, step, rowtime, row, clocks, arrival):
        rts = (rowtime,)
        try:
            part = tuple(f(row, rts) for f in self.part_fns)
            key = b"".join(encode_sort_value(f(row, rts), k) for f, k in zip(self.order_fns, self.node.order))
        except CalcError as err:
            return self.refuse(calc_error(err, step, rowtime, self.node.input.fields, row, ch))
        done, stamp, start = self._period(rowtime)
        pk = (done, stamp, part)
        rows = self.parts.get(pk)
        if rows is None:
            rows = self.parts[pk] = []
            self.starts[pk] = start
            self.min_end = min(self.min_end, done)
        bisect.insort(rows, (key, arrival, tuple(row)))
        self._trim(rows)
        return []

    def _trim(self, rows: list) -> None:
        """Keep only the rows that can still be numbered at most the limit."""
        n = self.node.limit
        if n is None or len(rows) <= n:
            return
        fn = self.node.fn
        if fn == "ROW_NUMBER":
            del rows[n:]
        elif fn == "RANK":
            last = rows[n - 1][0]
            j = n
            while j < len(rows) and rows[j][0] == last:
                j += 1
            del rows[j:]
        else:
            distinct = 0
            prev = None
            for j, r in enumerate(rows):
                if r[0] != prev:
                    distinct += 1
                    prev = r[0]
                    if distinct > n:
                        del rows[j:]
                        return

    def on_clocks(self, step, clocks):
        c = clocks[0]
        if c < self.min_end:
            return []
        out = []
        for pk in sorted((k for k in self.parts if k[0] <= c), key=lambda k: (k[0], k[1], encode_key(k[2]))):
            out += self._release(pk)
        self.min_end = min((k[0] for k in self.parts), default=INF)
        return out

    def _release(self, pk) -> list[Candidate]:
        rows = self.parts.pop(pk)
        self.starts.pop(pk, None)
        _done, stamp, part = pk
        prefix = encode_key(part)
        fn, limit = self.node.fn, self.node.limit
        out = []
        number = 0
        prev = None
        for i, (key, arrival, row) in enumerate(rows):
            if fn == "ROW_NUMBER":
                number = i + 1
            elif key != prev:
                number = i + 1 if fn == "RANK" else number + 1
            prev = key
            if limit is not None and number > limit:
                break
            out.append(Candidate(stamp, prefix + key + arrival, row + (number,)))
        return out

    def wakeups(self):
        return (self.min_end,)

    def bound_eval(self, params, clocks):
        c = clocks[:, 0]
        if self.time_key is None:
            return c
        return self.time_key.period_end_array(c)

    # --- trace --------------------------------------------------------------------------

    def state_view(self):
        keys = list(self.parts)
        if len(keys) > STATE_LIMIT:
            keys = heapq.nsmallest(STATE_LIMIT, keys, key=lambda k: (k[0], encode_key(k[2])))
        items = {(k[0], encode_key(k[2])): (self.starts.get(k, k[1]), k[1], k[2], len(self.parts[k])) for k in keys}
        return items, {"windows": len(self.parts)}

    def trace_state(self, views):
        from ..types import format_value
        types = [p.type for p in self.node.partition]
        wins = [OpenWindow(s, e, tuple(part), tuple(format_value(v, t) for v, t in zip(part, types)), (), n)
                for _k, (s, e, part, n) in merged_items(views)[:STATE_LIMIT]]
        what = "the window's rows" if self.time_key is None else "a monotonic period"
        return WindowsState(f"{self.node.fn} over {what}", tuple(wins), total(views, "windows"))

    def frontier_reason(self, state, clocks, names):
        return window_still_open(state, names, self.future_bound(clocks))

    def state_size(self) -> int:
        return sum(len(r) for r in self.parts.values())

