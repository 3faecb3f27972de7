"""Pre-combining a window aggregation (the semantics, section 3.7) before the state store, as
``precombine.py`` does for a GROUP BY: a window only accumulates rows until the input clock
reaches its end, and a row of it can never come after that, so the rows of one micro-batch can
be summed per (bucket, window, key values) first. Each row is expanded into its windows
(``windowshape.windows_array``: a hop's or a cumulating window's row into several), then the
GROUP BY's combiner (``precombine.partials``) groups them by window start and end and the other
keys. A partial enters the operator at the step of its first row, which changes nothing (the
window completes later, and a window aggregation's frontier does not depend on what it holds).

Used where every row is sure to be accepted (``precombine.eligible``), without float SUM/AVG (their
big values are stepped as rows, once per row, not once per window) and without sessions (whose
windows depend on the rows before them); those are stepped row by row.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...operators.windowshape import normalized, windows_array
from ...plan import WindowAggregate


def eligible(node: WindowAggregate) -> bool:
    from .precombine import float_calls
    return not node.shape.is_session and not float_calls(node)


class _Keys:
    """The GROUP BY combiner's view of a window aggregation: its keys are the window's start and
    the keys that are not window columns, its period ends the rows' window ends."""

    def __init__(self, node: WindowAggregate):
        self.keys = [None] + [k for i, k in enumerate(node.keys) if i not in node.window_keys]
        self.aggs = node.aggs
        self.input = node.input
        self.distinct_rows = False

    @staticmethod
    def period_end_array(t):
        return np.asarray(t, dtype=np.int64)      # ``ort`` holds the window's end already


def row_keys(node: WindowAggregate) -> list:
    """The grouping keys that are not window columns (what a partial's rows must agree on)."""
    return [k for i, k in enumerate(node.keys) if i not in node.window_keys]


def window_partials(node: WindowAggregate, rows: pa.Table, solo_from: int) -> tuple[pa.Table, list[tuple]]:
    """One partial per (bucket, window, key values) of ``rows`` (``pk<m>``: the row keys' values,
    ``pa<c>`` the arguments; ``ort`` the rowtimes): ``precombine.partials`` over the rows expanded
    into their windows, each partial's keys being ``(window start,) + key values``."""
    from .precombine import partials
    t = rows.column("ort").to_numpy(zero_copy_only=False).astype(np.int64)
    idx, start, end = windows_array(normalized(node.shape), t)
    rows = rows.take(pa.array(idx))
    rows = rows.set_column(rows.column_names.index("ort"), "ort", pa.array(end, pa.int64()))
    nk = len(row_keys(node))
    cols = {name: rows.column(name) for name in rows.column_names if not name.startswith("pk")}
    cols["pk0"] = pa.array(start, pa.int64())
    for m in range(nk):
        cols[f"pk{m + 1}"] = rows.column(f"pk{m}")
    return partials(_Keys(node), _Keys(node), pa.table(cols), solo_from)


class PrecombinedWindowAggregate:
    """Adapter the bucket host steps instead of a window aggregation when its rows are partials."""

    def __init__(self, op):
        self.op = op

    def __getattr__(self, name):
        return getattr(self.op, name)

    def on_row(self, ch, step, rowtime, row, clocks, arrival):
        from .precombine import Partial
        if isinstance(row, Partial):
            if row.row is None:
                self.op.add_partial(row.keys[0], row.end, (), tuple(row.keys[1:]), row.states)
                return []
            row = row.row
        return self.op.on_row(ch, step, rowtime, row, clocks, arrival)
