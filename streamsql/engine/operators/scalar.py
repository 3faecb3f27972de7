"""Row-by-row operators (WHERE, projections, AS ROWTIME): compiled once, applied per row.

They release at once and pass every bound on, mapped through the rowtime expression when the
projection sets ``AS ROWTIME`` (SEMANTICS.md 3.1).
"""
from __future__ import annotations

from ..expr import apply_rowtime_map, compile_expr
from ..plan import Filter, Project


class RowFunction:
    """``apply(rowtime, row)`` gives ``(rowtime, row)`` or None (filtered out);
    ``map_bound(t)`` the bound that follows."""

    def __init__(self, node: Filter | Project):
        self.node = node
        if isinstance(node, Filter):
            cond = compile_expr(node.cond)
            self.apply = lambda rt, row: (rt, row) if cond(row, (rt,)) is True else None
            self.map_bound = lambda t: t
        else:
            fns = [compile_expr(e) for e in node.exprs]
            if node.rowtime is None:
                self.apply = lambda rt, row: (rt, tuple(f(row, (rt,)) for f in fns))
                self.map_bound = lambda t: t
            else:
                rtf = compile_expr(node.rowtime)
                rtexpr = node.rowtime
                self.apply = lambda rt, row: (int(rtf(row, (rt,))), tuple(f(row, (rt,)) for f in fns))
                self.map_bound = lambda t: apply_rowtime_map(rtexpr, t)
