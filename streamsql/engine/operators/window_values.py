"""The argument values of an OVER operator's calls over a :class:`~.rowbatch.RowBatch`:
partition keys and arguments evaluated for every row (:class:`BatchArguments`), and one call's
values by position, kept rows first, in the forms the aggregate kernels need
(:class:`CallValues`)."""
from __future__ import annotations

import numpy as np

from ..expr import Col, Lit
from ..functions import CalcError
from .rowbatch import Fallback, RowBatch


class BadRow(Exception):
    """A row of the batch whose partition key or argument cannot be computed (a calculator
    error): the batch is cut at its step, which goes row by row."""

    def __init__(self, step: int):
        self.step = step


def _column(expr, fn, rows, rts) -> list:
    if isinstance(expr, Col):
        i = expr.index
        return [r[i] for r in rows]
    if isinstance(expr, Lit):
        return [expr.value] * len(rows)
    return [fn(r, (t,)) for r, t in zip(rows, rts)]


class BatchArguments:
    """Partition keys per window and argument values per call, for every row of the batch."""

    def __init__(self, op, batch: RowBatch):
        rows = batch.rows
        rts = batch.rowtimes.tolist()
        try:
            self.parts = []
            for gi, g in enumerate(op.groups):
                cols = [_column(e, f, rows, rts) for e, f in zip(g.spec.partition_by, op.part_fns[gi])]
                # one key: its values stand for the 1-tuples (same equality, fewer objects)
                self.parts.append(cols[0] if len(cols) == 1 else list(zip(*cols)) if cols else [()] * len(rows))
            self.single = [len(g.spec.partition_by) == 1 for g in op.groups]
            self.args = [None if c.agg.arg is None else _column(c.agg.arg, op.arg_fns[i], rows, rts)
                         for i, c in enumerate(op.node.calls)]
        except CalcError:
            raise BadRow(self._first_failure(op, batch)) from None

    @staticmethod
    def _first_failure(op, batch) -> int:
        for j, (row, t) in enumerate(zip(batch.rows, batch.rowtimes.tolist())):
            try:
                for fns in op.part_fns:
                    for f in fns:
                        f(row, (t,))
                for f in op.arg_fns:
                    if f is not None:
                        f(row, (t,))
            except CalcError:
                return int(batch.steps[j])
        return int(batch.steps[0])



class CallValues:
    """One call's argument values by position (kept rows, then the batch's), as the aggregates
    need them: a non-null mask, numbers in an array, the values themselves."""

    def __init__(self, plan, batch_vals, ret_vals: list, arg):
        self.plan = plan
        self.batch = batch_vals
        self.ret = ret_vals
        t = arg.type if arg is not None else None
        self.kind = "f" if t is not None and t.is_approx else ("i" if t is not None and t.is_integer else "o")
        self._nonnull = self._typed = self._objects = None

    @property
    def nonnull(self) -> np.ndarray:
        if self._nonnull is None:
            pl = self.plan
            m = np.zeros(pl.total, bool)
            if len(self.ret):
                m[pl.ret_pos] = [v is not None for v in self.ret]
            if self.batch is not None and len(self.batch):
                if self.kind == "f":
                    m[pl.bq] = self._batch_floats_nonnull()[pl.perm]
                else:
                    m[pl.bq] = np.fromiter((v is not None for v in self.batch), bool, len(self.batch))[pl.perm]
            self._nonnull = m
        return self._nonnull

    def _batch_floats_nonnull(self) -> np.ndarray:
        try:
            a = np.array(self.batch, dtype=np.float64)     # NULL becomes NaN
        except (TypeError, ValueError):
            raise Fallback() from None
        nn = ~np.isnan(a)
        for j in np.flatnonzero(~nn).tolist():
            if self.batch[j] is not None:              # a real NaN: not for this path
                raise Fallback()
        self._bf = np.where(nn, a, 0.0)
        return nn

    @property
    def typed(self) -> np.ndarray:
        """Numbers by position, 0 where NULL (kinds "f" and "i" only)."""
        if self._typed is None:
            pl = self.plan
            if self.kind == "f":
                out = np.zeros(pl.total, np.float64)
                if self.batch is not None and len(self.batch):
                    self.nonnull
                    out[pl.bq] = self._bf[pl.perm]
                dt = np.float64
            else:
                out = np.zeros(pl.total, np.int64)
                if self.batch is not None and len(self.batch):
                    out[pl.bq] = np.array([0 if v is None else v for v in self.batch], np.int64)[pl.perm]
                dt = np.int64
            if len(self.ret):
                out[pl.ret_pos] = np.array([0 if v is None else v for v in self.ret], dt)
            self._typed = out
        return self._typed

    @property
    def objects(self) -> np.ndarray:
        if self._objects is None:
            pl = self.plan
            out = np.empty(pl.total, object)
            if len(self.ret):
                out[pl.ret_pos] = self.ret
            if self.batch is not None and len(self.batch):
                b = np.empty(len(self.batch), object)
                b[:] = self.batch
                out[pl.bq] = b[pl.perm]
            self._objects = out
        return self._objects

    def pick(self, pos) -> list:
        """The values at positions ``pos`` (as the rows carried them)."""
        pos = np.asarray(pos, np.int64)
        if self.kind in "fi" and self.batch is not None:
            out = self.typed[pos].tolist()
            for j in np.flatnonzero(~self.nonnull[pos]).tolist():
                out[j] = None
            return out
        return self.objects[pos].tolist()

    def one(self, q: int):
        return self.pick([q])[0]
