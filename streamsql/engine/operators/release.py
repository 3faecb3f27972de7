"""The release rule (the semantics, section 3), the one place both runtimes take it from.

A candidate an operator produced, stamped ``T``, leaves it when (1) ``T <= present``, the minimum
of its input clocks, and (2) ``T <= F``, the earliest stamp the operator can still produce
(:meth:`~.base.Operator.bound_eval`). Rows released at one step leave in ``(T, tie)`` order, and
the operator's output bound is ``min(F, the stamps still held)``.

The in-process host applies both rules after every event (:func:`split_due` with
:func:`limit`). The Spark host steps one key bucket over a whole micro-batch: there it applies
rule 1 alone (``limit = present``), since rule 2 needs every bucket's ``F``; the consumer takes
their minimum as the stage's output bound and releases each row at :func:`first_reach` of it.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .base import Candidate, encode_ints


def limit(present: int, future: int) -> int:
    """The largest stamp both rules let go now."""
    return min(present, future)


def split_due(held: Sequence[Candidate], upto: int, born: Sequence[int] | None = None):
    """``(due, kept)``: the candidates stamped at most ``upto``, and the others in their order.
    With ``born`` (a step per candidate), each list holds ``(born, candidate)`` pairs."""
    items = list(zip(born, held)) if born is not None else list(held)
    stamp = (lambda x: x[1].stamp) if born is not None else (lambda c: c.stamp)
    due, kept = [], []
    for x in items:
        (due if stamp(x) <= upto else kept).append(x)
    return due, kept


def release_order(c: Candidate) -> tuple:
    """Rows released at the same step leave by stamp, then tie."""
    return (c.stamp, c.tie)


def output_bound(future: int, kept: Sequence[Candidate], end: int) -> int:
    """What the operator's output can still carry: ``min(F, the stamps it holds)``."""
    return min(future, min((c.stamp for c in kept), default=end))


def release_arrival(release_step: int, stamp: int, tie: bytes) -> bytes:
    """The arrival key of a row an operator released: by step, then stamp, then tie."""
    return encode_ints(release_step, stamp) + tie


def stream_arrival(step: int, sub: int) -> bytes:
    """The arrival key of the ``sub``-th row that left a named stream at step ``step``."""
    return encode_ints(step, sub)


def first_reach(pts: np.ndarray, frontier: np.ndarray, initial: int, stamps: np.ndarray,
                avail: np.ndarray) -> np.ndarray:
    """The vector form over a micro-batch: per row, the first point ``>= avail`` where the
    (non-decreasing) ``frontier`` reaches its stamp (-1: not in this batch). A row available
    before the batch's first point whose stamp the initial value already reaches is usable at
    ``avail`` itself."""
    out = np.full(len(stamps), -1, dtype=np.int64)
    if len(pts):
        pos = np.maximum(np.searchsorted(frontier, stamps, side="left"), np.searchsorted(pts, avail, side="left"))
        ok = pos < len(pts)
        out[ok] = pts[pos[ok]]
        early = ~ok & (initial >= stamps) & (avail < pts[0])
        out[early] = avail[early]
    else:
        ok = initial >= stamps
        out[ok] = avail[ok]
    return out
