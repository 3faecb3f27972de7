"""A batch of rows for one operator input (:class:`RowBatch`), and the row-by-row reference path
over it (:func:`step_rows`): what a host would feed the operator one call at a time. A
vectorised path (OVER windows: :mod:`.window_batch`) must leave the operator exactly as
:func:`step_rows` leaves it; :data:`STATS` counts the rows each path took."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from .base import Candidate


@dataclass
class RowBatch:
    """Rows for one operator input, and that input's clock. Equivalent to: for every step in
    ``points`` (increasing), ``on_row`` for the rows whose step it is (in order), then
    ``on_clocks`` with the clock after that step. ``points`` must hold every row's step and
    every step where the clock changes."""
    steps: np.ndarray        # int64 per row, non-decreasing
    rowtimes: np.ndarray     # int64 per row
    rows: Sequence[tuple]
    arrivals: Sequence[bytes]
    points: np.ndarray       # int64, increasing
    clocks: np.ndarray       # int64 clock after each point, non-decreasing

    def __post_init__(self):
        self.steps = np.asarray(self.steps, np.int64)
        self.rowtimes = np.asarray(self.rowtimes, np.int64)
        self.points = np.asarray(self.points, np.int64)
        self.clocks = np.asarray(self.clocks, np.int64)
        n = len(self.steps)
        if not (len(self.rowtimes) == len(self.rows) == len(self.arrivals) == n):
            raise ValueError("RowBatch: steps, rowtimes, rows and arrivals differ in length")
        if len(self.points) != len(self.clocks):
            raise ValueError("RowBatch: points and clocks differ in length")
        if n and (np.any(np.diff(self.steps) < 0) or not np.isin(self.steps, self.points).all()):
            raise ValueError("RowBatch: row steps must be non-decreasing and listed in points")

    def __len__(self):
        return len(self.steps)

    def cut(self, step: int) -> tuple["RowBatch", "RowBatch"]:
        """(the steps before ``step``, the steps from ``step`` on)."""
        r = int(np.searchsorted(self.steps, step, "left"))
        p = int(np.searchsorted(self.points, step, "left"))
        a = RowBatch(self.steps[:r], self.rowtimes[:r], self.rows[:r], self.arrivals[:r],
                     self.points[:p], self.clocks[:p])
        b = RowBatch(self.steps[r:], self.rowtimes[r:], self.rows[r:], self.arrivals[r:],
                     self.points[p:], self.clocks[p:])
        return a, b


#: rows taken by each path since start-up (diagnostics: tests check the vectorised path ran)
STATS = {"vectorised": 0, "stepped": 0}


def step_rows(op, batch: RowBatch, errors: list | None = None, at: int = 0) -> list[Candidate]:
    """The batch through the row-by-row path (the reference the vectorised path must equal).
    With ``errors``, the records of rows the operator refuses are taken after each row, as a
    host stepping row by row takes them, and appended as ``(at + row index, record)``."""
    STATS["stepped"] += len(batch)
    out: list[Candidate] = []
    steps, rts = batch.steps.tolist(), batch.rowtimes.tolist()
    take = getattr(op, "take_errors", None) if errors is not None else None
    j, n = 0, len(steps)
    for p, c in zip(batch.points.tolist(), batch.clocks.tolist()):
        clocks = (c,)
        while j < n and steps[j] == p:
            out += op.on_row(0, p, rts[j], batch.rows[j], clocks, batch.arrivals[j])
            if take is not None:
                errors += [(at + j, e) for e in take()]
            j += 1
        out += op.on_clocks(p, clocks)
    return out



class Fallback(Exception):
    """A vectorised path declines the batch (a value it does not compute exactly, a sum that
    could leave 62 bits, ...): the row-by-row path takes it, and decides."""


class Inconsistent(RuntimeError):
    """A vectorised path's own cross-checks failed: a bug, never hidden by a fallback."""
