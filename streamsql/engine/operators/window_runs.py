"""The rows an OVER window keeps per partition and the frame's running aggregates: shared by
the row path (``window``) and the batch path (``window_batch``), so neither imports the other's
internals."""

from __future__ import annotations

import decimal
from collections import deque

_CTX = decimal.Context(prec=80)


def plus(a, b):
    return _CTX.add(a, b) if isinstance(a, decimal.Decimal) or isinstance(b, decimal.Decimal) else a + b


def minus(a, b):
    return _CTX.subtract(a, b) if isinstance(a, decimal.Decimal) or isinstance(b, decimal.Decimal) else a - b


class Run:
    """The rows of one partition of one window, and the frame's running aggregates."""

    __slots__ = ("o", "vals", "base", "lo", "hi", "acc", "serial")

    def __init__(self, n_calls: int, serial: int):
        self.serial = serial
        self.o: deque = deque()          # order values of retained rows
        self.vals: deque = deque()       # per row: tuple of argument values
        self.base = 0                    # global index of self.o[0]
        self.lo = 0                      # frame: global indices [lo, hi]
        self.hi = -1
        self.acc = [SlidingAcc() for _ in range(n_calls)]

    def row(self, g: int):
        return self.vals[g - self.base]

    def order(self, g: int):
        return self.o[g - self.base]

    @property
    def end(self) -> int:
        return self.base + len(self.o)


class SlidingAcc:
    """Aggregates over a run whose ends only advance."""

    __slots__ = ("n", "nn", "sum", "minq", "maxq", "firstq", "last")

    def __init__(self):
        self.n = 0          # rows in frame
        self.nn = 0         # non-null values in frame
        self.sum = None
        self.minq: deque = deque()   # (index, value), values increasing
        self.maxq: deque = deque()   # (index, value), values decreasing
        self.firstq: deque = deque()  # (index, value) of non-null values
        self.last = None    # (index, value) of the latest non-null value added

    def add(self, g: int, v, need: set):
        self.n += 1
        if v is None:
            return
        self.nn += 1
        if "sum" in need:
            self.sum = v if self.sum is None else plus(self.sum, v)
        if "min" in need:
            while self.minq and self.minq[-1][1] > v:
                self.minq.pop()
            self.minq.append((g, v))
        if "max" in need:
            while self.maxq and self.maxq[-1][1] < v:
                self.maxq.pop()
            self.maxq.append((g, v))
        if "first" in need:
            self.firstq.append((g, v))
        self.last = (g, v)

    def remove(self, g: int, v, need: set):
        self.n -= 1
        if v is None:
            return
        self.nn -= 1
        if "sum" in need:
            self.sum = None if self.nn == 0 else minus(self.sum, v)
        if self.minq and self.minq[0][0] == g:
            self.minq.popleft()
        if self.maxq and self.maxq[0][0] == g:
            self.maxq.popleft()
        if self.firstq and self.firstq[0][0] == g:
            self.firstq.popleft()
        if self.last is not None and self.last[0] == g:
            self.last = None


# the names these classes had in the Spark state written before they were public
# (``runtime/spark/statecodec.py`` names a state object's class by module and name)
_Run = Run
_SlidingAcc = SlidingAcc
