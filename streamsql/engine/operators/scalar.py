"""Row-by-row operators (WHERE, projections, AS ROWTIME): compiled once, applied per row.

They release at once and pass every bound on, mapped through the rowtime expression when the
projection sets ``AS ROWTIME`` (the semantics, section 3.1). A row whose condition or select list cannot be
computed raises :class:`~streamsql.engine.functions.CalcError`; the runtime turns it into an
error-stream record (the row produces nothing, its bound still counts).
"""
from __future__ import annotations

from ..expr import apply_rowtime_map, compile_expr
from ..functions import CalcError
from ..plan import Filter, Project


class RowFunction:
    """``apply(rowtime, row)`` gives ``(rowtime, row)`` or None (filtered out), or raises
    ``CalcError``; ``map_bound(t)`` the bound that follows. A projection evaluates its items
    left to right, the ROWTIME item in its place among them."""

    def __init__(self, node: Filter | Project):
        self.node = node
        self.fields = list(node.input.fields)
        if isinstance(node, Filter):
            cond = compile_expr(node.cond)
            self.apply = lambda rt, row: (rt, row) if cond(row, (rt,)) is True else None
            self.map_bound = lambda t: t
            return
        fns = [compile_expr(e) for e in node.exprs]
        if node.rowtime is None:
            self.apply = lambda rt, row: (rt, tuple(f(row, (rt,)) for f in fns))
            self.map_bound = lambda t: t
            return
        rtf = compile_expr(node.rowtime)
        before, after = fns[:node.rowtime_at], fns[node.rowtime_at:]
        rtexpr = node.rowtime

        def apply(rt, row):
            rts = (rt,)
            head = tuple(f(row, rts) for f in before)
            new = int(rtf(row, rts))
            return new, head + tuple(f(row, rts) for f in after)
        self.apply = apply
        self.map_bound = lambda t: apply_rowtime_map(rtexpr, t)


def chain_failure(fns: list[RowFunction], rowtime: int, row: tuple):
    """Apply a chain of row functions (innermost first) to one row: ``(position, CalcError, the
    row and rowtime the failing one received)``, or None when the row passes or is filtered out.
    The Spark runtime flags failing rows in SQL and asks this for their error."""
    for k, fn in enumerate(fns):
        try:
            r = fn.apply(rowtime, row)
        except CalcError as err:
            return k, err, row, rowtime
        if r is None:
            return None
        rowtime, row = r
    return None
