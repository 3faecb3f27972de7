"""Relational (non-STREAM) SELECT: a query evaluated once over what exists now, with ordinary SQL
semantics (seed 004, "Converting between streams and relations"; the semantics, sections 2 and 4).

Its relations are tables (``CREATE TABLE`` + ``INSERT``), ``VALUES`` and a stream's *retained
history*: the rows its stream log holds, within the stream's history window of its clock
(``Workbench.set_history``). A stream without history is refused at analysis (``Cannot convert
stream 'S' to a table``).

Each runtime evaluates the plan (``Runtime.relational``): the local one with Python closures
(:mod:`~streamsql.engine.runtime.local.relational`), the Spark one as a Spark batch query
(:mod:`~streamsql.engine.runtime.spark.relational`); this module holds what they share: the
leaves, the result, and the order rules. Both give the same rows in the same order: without ORDER BY, the order is defined anyway, so that the two agree and
FIRST_VALUE/LAST_VALUE mean something: a table in insertion order, history in log order, UNION
ALL inputs one after the other, a join left row by left row (its matches in right order, then the
unmatched right rows), groups in order of first appearance. Each row carries a rowtime (NULL when
the relation has none: tables, VALUES) so that ``ROWTIME`` in a select list, ``AS ROWTIME`` and
GROUP BY on a time key work as in a streaming query.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from .continuous_query import Result
from .errors import SqlError
from .operators.timekey import TimeKey, resolve_time_expr, try_time_key
from .plan import Aggregate, Field, HistoryScan, Join, Node, Query, SelectStatement, TableScan, Values, WindowSpec
from .types import ROWTIME_TYPE, to_json_value

Row = tuple  # (rowtime or None, values tuple)


@dataclass
class RelationResult(Result):
    """A relational SELECT's answer: ``columns`` (with ``ROWTIME`` where the select list shows
    it) and ``rows`` (tuples of engine values: timestamps in epoch ms)."""
    columns: list[str] = field(default_factory=list)
    fields: list[Field] = field(default_factory=list)

    def dicts(self) -> list[dict]:
        """Rows as JSON-friendly dicts (timestamps as text)."""
        return [{f.name: to_json_value(v, f.type) for f, v in zip(self.fields, r)} for r in self.rows]

    def to_pandas(self):
        import pandas as pd
        return pd.DataFrame(self.dicts(), columns=self.columns)


def relation_result(stmt: SelectStatement, rows: list[Row]) -> RelationResult:
    """The answer of a relational query from the rows a runtime evaluated for its plan
    (``Runtime.relational``): ``ROWTIME`` goes where the select list shows it."""
    q: Query = stmt.query
    fields = list(q.columns)
    out = [tuple(vals) for _rt, vals in rows]
    if q.rowtime_column is not None:
        k = q.rowtime_column
        fields.insert(k, Field("ROWTIME", ROWTIME_TYPE))
        out = [vals[:k] + (rt,) + vals[k:] for (rt, _), vals in zip(rows, out)]
    n = len(out)
    return RelationResult(stmt, f"{n} row{'s' if n != 1 else ''}", rows=out,
                          columns=[f.name for f in fields], fields=fields)


# --------------------------------------------------------------------------- leaves

def history_rows(wb, stream: str) -> list[Row]:
    """A stream's retained history: the rows that left it (its stream log), oldest first, within
    its history window of its clock."""
    from .log import ROW
    d = wb.catalog.streams.get(stream)
    if d is None or not d.history:
        raise SqlError(f"Cannot convert stream '{stream}' to a table")
    rows = [(e.rowtime, tuple(e.values)) for _step, feed in wb.commits.feeds([stream], 0, wb.last_step)
            for e in feed.get(stream, []) if e.kind == ROW]
    if d.history_window is not None:
        lo = wb.catalog.state[stream].bound - d.history_window
        rows = [r for r in rows if r[0] >= lo]
    return rows


def leaf_rows(wb, node: Node) -> list[Row]:
    if isinstance(node, TableScan):
        t = wb.catalog.tables.get(node.table)
        if t is None:
            raise SqlError(f"Table '{node.table}' not found")
        return [(None, tuple(r)) for r in t.rows]
    if isinstance(node, Values):
        return [(None, tuple(r)) for r in node.rows]
    if isinstance(node, HistoryScan):
        return history_rows(wb, node.stream)
    raise TypeError(node)


def unsupported(node: Node) -> SqlError:
    what = {"StreamScan": "a stream"}.get(type(node).__name__, type(node).__name__)
    return SqlError(f"{what} is not supported in a relational query yet")


def frame_bounds(spec: WindowSpec, orders: list, pos: int) -> tuple[int, int]:
    """The frame of row ``pos`` of a partition sorted by its order values ``orders`` (NULLs
    first, then position), as a slice ``[lo, hi)``: ROWS counts rows; RANGE takes the rows whose
    order value is within ``[o - lower, o - upper]``, all peers included when ``upper`` is 0
    (standard SQL). A NULL order value's peers are the other NULLs."""
    if spec.mode == "ROWS":
        lo = 0 if spec.lower is None else max(0, pos - spec.lower)
        return lo, max(lo, pos - spec.upper + 1)
    o = orders[pos]
    nulls = bisect.bisect_left(orders, True, key=lambda v: v is not None)      # NULLs sort first
    if o is None:
        return (0, nulls) if spec.upper == 0 else (0, 0)
    lo = nulls if spec.lower is None else bisect.bisect_left(orders, o - spec.lower, lo=nulls)
    hi = bisect.bisect_right(orders, o - spec.upper, lo=nulls)
    return lo, max(lo, hi)


def period_keys(node: Aggregate) -> list[TimeKey] | None:
    """The monotonic keys whose periods end a group (as in the streaming GROUP BY), or None."""
    e = resolve_time_expr(node.keys[node.time_key], node.input)
    tk = try_time_key(e if e is not None else node.keys[node.time_key])
    if tk is None:
        return None
    return [tk] + [k for i, x in enumerate(node.keys) if i != node.time_key
                   for k in [try_time_key(x, node.input)] if k is not None]


def later(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)


#: a pair of rows whose join windows do not overlap
NO_MATCH = object()


@dataclass(frozen=True)
class WindowStamps:
    """A relational window join (``S OVER (...) JOIN T OVER (...)`` over histories): the rows
    the streaming join would pair, with its stamps (the semantics, section 3.5)."""
    p: tuple[int, int]
    f: tuple[int, int]

    def pair(self, lrt, rrt):
        """The pair's stamp, ``max(r_0 - f_0, r_1 - f_1)``, or NO_MATCH when the windows do not
        overlap (or a rowtime is NULL)."""
        if lrt is None or rrt is None:
            return NO_MATCH
        start = max(lrt - self.f[0], rrt - self.f[1])
        return start if start <= min(lrt + self.p[0], rrt + self.p[1]) else NO_MATCH

    def left_alone(self, lrt):
        return None if lrt is None else lrt + self.p[0]

    def right_alone(self, rrt):
        return None if rrt is None else rrt + self.p[1]


def window_stamps(node: Join) -> WindowStamps | None:
    """The windows of a relational window join, or None for a plain join."""
    if node.left_window is None or node.right_window is None:
        return None
    lw, rw = node.left_window, node.right_window
    return WindowStamps((lw.preceding, rw.preceding), (lw.following, rw.following))
