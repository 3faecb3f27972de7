"""The operators of the window shapes (the semantics, section 3.7), by plan node: window table
functions (:mod:`.windowtable`), window aggregation (:mod:`.windowagg`) and window Top-N
(:mod:`.rank`). Both runtimes make them here (through ``runtime.plans.make_operator``)."""
from __future__ import annotations

from ..plan import Rank, WindowAggregate, WindowTable
from .base import Operator


def window_operator(node) -> Operator | None:
    """The operator of a window plan node (None for any other node)."""
    if isinstance(node, WindowTable):
        from .windowtable import WindowTableOp
        return WindowTableOp(node)
    if isinstance(node, WindowAggregate):
        from .windowagg import WindowAggOp
        return WindowAggOp(node)
    if isinstance(node, Rank):
        from .rank import RankOp
        return RankOp(node)
    return None
