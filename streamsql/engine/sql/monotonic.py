"""Which expressions never decrease along a stream.

:func:`streamsql.engine.expr.monotonicity` knows functions of ROWTIME. Above a projection or an
aggregation, a column can also be monotonic (``FLOOR(ROWTIME TO HOUR) AS h``, the time key of a
GROUP BY): rows leave in rowtime order, so a non-decreasing function of the input's rowtime is
non-decreasing along the output too. Such columns count as ROWTIME here.
"""
from __future__ import annotations

from ..expr import INCREASING, Col, Expr, Rowtime, monotonicity, remap
from ..plan import Aggregate, Filter, Node, Project, Sort, Window


def monotonic_columns(node: Node) -> set[int]:
    if isinstance(node, Project):
        return {i for i, e in enumerate(node.exprs) if is_increasing(e, node.input)}
    if isinstance(node, (Filter, Sort)):
        return monotonic_columns(node.input)
    if isinstance(node, Window):
        n = len(node.input.fields)
        return {i for i in monotonic_columns(node.input) if i < n}
    if isinstance(node, Aggregate) and node.time_key is not None:
        return {node.time_key}
    window_columns = getattr(node, "rowtime_columns", None)     # window operators (plan.py)
    return set(window_columns()) if window_columns is not None else set()


def is_increasing(e: Expr, node: Node | None) -> bool:
    """Whether ``e`` (over ``node``'s output) is a non-constant, non-decreasing function of the
    stream's progress."""
    mono = monotonic_columns(node) if node is not None else set()
    if mono:
        e = remap(e, cols=lambda c: Rowtime(0) if c.index in mono else c)
    return monotonicity(e) == INCREASING


def is_rowtime_only(e: Expr) -> bool:
    """An expression of ``Rowtime(0)`` and constants only (what Project.rowtime may hold)."""
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, Col) or (isinstance(x, Rowtime) and x.input != 0):
            return False
        stack.extend(x.children())
    return True

