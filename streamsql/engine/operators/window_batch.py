"""OVER windows over a whole micro-batch at once: the vectorised twin of ``WindowOp.on_row``.

A :class:`RowBatch` is what a host would feed the operator one call at a time: rows with their
steps, and the input clock after each step. :func:`on_rows` returns the candidates and leaves
the operator in exactly the state (rows kept, frames' running aggregates, partitions and their
order, expiry heap and wake-up) that stepping the rows one by one leaves, so a host can batch
some steps and step the others.

Why this is the same computation. Per window and partition, rows form a sequence (kept rows,
then the batch's) whose order values never decrease, so every frame is an index range found
with ``searchsorted`` (RANGE) or index arithmetic (ROWS), ends only moving forward; counts and
exact sums are prefix sums, MIN/MAX a range minimum (ties: the earliest row, as the row path's
monotonic queue keeps), FIRST/LAST_VALUE the nearest non-null index. Expiry is a function of
the clock: a kept row whose frame can no longer be reached is dropped at the first step where
the clock passes its expiry time, and a partition whose rows are all gone is deleted (and
re-created, last in order, by its next row). The one history-dependent value is a float
SUM/AVG: the row path keeps a running sum (add on entry, subtract on exit, restart when the
frame empties), so the batch path replays those additions and subtractions in the row path's
order (entries then exits per row, expiry exits after the step's rows) with a sequential
accumulate, bit for bit. Anything this path does not cover (DISTINCT, non-finite floats, sums
that could leave 62 bits, an expression that fails on a row) is stepped row by row.

The path in modules: the batch and its row-by-row reference (:mod:`.rowbatch`), the argument
values (:mod:`.window_values`), one window specification's positions, frames and lives
(:mod:`.window_plan`), the aggregate kernels (:mod:`.window_kernels`) and the commit step
(:mod:`.window_commit`). This module cuts a batch into the pieces each path takes.
"""
from __future__ import annotations

import numpy as np

from ..functions import CalcError
from .base import Candidate
from .gcpause import gc_paused
from .rowbatch import STATS, Fallback, RowBatch, step_rows
from .window_commit import commit
from .window_plan import GroupPlan
from .window_values import BadRow, BatchArguments

__all__ = ["RowBatch", "STATS", "step_rows", "on_rows", "on_rows_values"]


def _pieces(op, batch: RowBatch, errors: list | None = None, at: int = 0):
    """The batch as consecutive pieces, each ``(piece, candidates, None)`` when stepped row by
    row or ``(piece, None, values per call)`` when vectorised (every row one output). With
    ``errors``, refused rows' records go there as :func:`step_rows` puts them (``at``: the
    index of the batch's first row)."""
    while len(batch.points):
        if any(c.agg.distinct for c in op.node.calls) or not len(batch):
            yield batch, step_rows(op, batch, errors, at), None
            return
        try:
            args = BatchArguments(op, batch)
        except BadRow as bad:
            # the rows before the failing step together, that step row by row, then the rest
            head, rest = batch.cut(bad.step)
            one, rest = rest.cut(bad.step + 1)
            yield from _pieces(op, head, errors, at)
            yield one, step_rows(op, one, errors, at + len(head)), None
            batch = rest
            at += len(head) + len(one)
            continue
        with gc_paused():
            try:
                plans = [GroupPlan(op, gi, batch, args) for gi in range(len(op.groups))]
            except (Fallback, CalcError, OverflowError):
                # nothing has changed yet: what this path does not compute exactly (a value that
                # does not fit its type or int64, a calculator error) the row path decides for
                # this batch; anything else is a bug and propagates
                plans = None
            cols = commit(op, plans) if plans is not None else None
        if cols is None:
            yield batch, step_rows(op, batch, errors, at), None
            return
        STATS["vectorised"] += len(batch)
        yield batch, None, cols
        return


def on_rows(op, batch: RowBatch) -> list[Candidate]:
    """``WindowOp.on_rows``: the candidates, in the order the row path produces them."""
    out: list[Candidate] = []
    for piece, cands, cols in _pieces(op, batch):
        if cands is not None:
            out += cands
        elif cols:
            out += [Candidate(t, a, tuple(row) + vals) for t, a, row, vals in
                    zip(piece.rowtimes.tolist(), piece.arrivals, piece.rows, zip(*cols))]
        else:
            out += [Candidate(t, a, tuple(row)) for t, a, row in zip(piece.rowtimes.tolist(), piece.arrivals, piece.rows)]
    return out


def on_rows_values(op, batch: RowBatch, errors: list | None = None) -> tuple[np.ndarray, list[list]]:
    """``WindowOp.on_rows_values``: the same outputs without building candidates: the indices
    of the rows that produced one (all, unless the row path refused some), and per call its
    values for those rows. Row ``j``'s candidate is ``(rowtimes[j], arrivals[j], rows[j] +
    values)``, emitted at its own step. With ``errors``, the records of refused rows are
    appended there as ``(row index, record)`` (else they wait in the operator)."""
    n_in = op.n_in
    idx, cols = [], [[] for _ in op.node.calls]
    at = 0
    for piece, cands, vals in _pieces(op, batch, errors):
        if cands is not None:
            pos = {a: i for i, a in enumerate(piece.arrivals)}
            idx.append(np.array([at + pos[c.tie] for c in cands], np.int64))
            for i, col in enumerate(cols):
                col += [c.row[n_in + i] for c in cands]
        else:
            idx.append(np.arange(at, at + len(piece), dtype=np.int64))
            for col, v in zip(cols, vals):
                col += v
        at += len(piece)
    return (np.concatenate(idx) if idx else np.zeros(0, np.int64)), cols
