"""Which columns of a window operator's output are functions of its rowtime (the semantics,
section 3.7): a window table function's rows are stamped with their window's end, so its
``WINDOW_END`` is the rowtime and ``WINDOW_TIME`` the rowtime minus 1 ms; a window aggregation's
window key that it stamps with (end, start or time) is its rowtime. What follows a window operator
(a GROUP BY, a Top-N's period, a streaming ORDER BY) finds its periods through these."""
from __future__ import annotations

from ..expr import Expr, columns_used, remap


def rowtime_columns(node) -> dict[int, Expr]:
    """``{column: its value as an expression of the node's output rowtime}`` (window nodes only)."""
    f = getattr(node, "rowtime_columns", None)
    return f() if f is not None else {}


def window_time_expr(e: Expr, node) -> Expr | None:
    """``e`` (over ``node``'s output) as an expression of its rowtime, when ``node`` is a window
    operator and ``e`` reads only such columns (None otherwise)."""
    cols = rowtime_columns(node)
    if not cols or not columns_used(e) <= set(cols):
        return None
    return remap(e, cols=lambda c: cols[c.index])

