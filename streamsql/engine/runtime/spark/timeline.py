"""Clocks over a micro-batch as piecewise-constant functions of the step, and the vectorised
release rule that turns them into steps.

A :class:`Timeline` holds a clock's value after each event where it was reported; between
reports the value holds. Every release decision in the Spark runtime is a search in a
non-decreasing timeline ("the first step at or after the row's arrival where the frontier
reaches the row's stamp"), which is why a whole micro-batch gets the same steps as one event
at a time.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from ... import time as sqltime
from ...expr import rowtime_map_array


@dataclass
class Timeline:
    steps: np.ndarray          # sorted, unique int64
    vals: np.ndarray          # value after each of ``steps``
    initial: int = sqltime.NO_TIME  # value before the first of ``steps``

    def at(self, points: np.ndarray) -> np.ndarray:
        idx = np.searchsorted(self.steps, points, side="right") - 1
        out = np.where(idx >= 0, self.vals[np.maximum(idx, 0)] if len(self.vals) else self.initial, self.initial)
        return out.astype(np.int64)

    @property
    def last(self) -> int:
        return int(self.vals[-1]) if len(self.vals) else int(self.initial)

    def mapped(self, exprs: list) -> "Timeline":
        """The clock seen through row-by-row ROWTIME expressions (bounds map like rows)."""
        vals, init = self.vals, np.array([self.initial], dtype=np.int64)
        for e in exprs:
            vals = rowtime_map_array(e, vals)
            init = rowtime_map_array(e, init)
        return Timeline(self.steps, vals, int(init[0]))

    @staticmethod
    def constant(v: int) -> "Timeline":
        return Timeline(np.zeros(0, np.int64), np.zeros(0, np.int64), v)


def union_points(*arrays: np.ndarray) -> np.ndarray:
    """The sorted distinct steps of several step arrays (each usually sorted already, and a
    replay's are a million long: a sort that runs on sorted input beats ``np.unique``'s hashing)."""
    parts = [np.asarray(a, np.int64) for a in arrays if len(a)]
    if not parts:
        return np.zeros(0, np.int64)
    if len(parts) == 1 and (len(parts[0]) < 2 or bool((parts[0][1:] > parts[0][:-1]).all())):
        return parts[0]
    a = np.sort(np.concatenate(parts), kind="stable")
    keep = np.empty(len(a), dtype=bool)
    keep[0] = True
    np.not_equal(a[1:], a[:-1], out=keep[1:])
    return a[keep]


# --------------------------------------------------------------------------- a source batch's timeline record

#: trace window start meaning "no trace"
NO_TRACE = 2 ** 62


def trace_start(steps: list[np.ndarray], n: int) -> int:
    """The first of the last ``n`` distinct steps in ``steps`` (the steps that fed the query in a
    batch, per stream); ``NO_TRACE`` when ``n`` is 0 or there is none."""
    if n <= 0:
        return NO_TRACE
    parts = [np.asarray(a, np.int64) for a in steps if len(a)]
    if not parts:
        return NO_TRACE
    u = np.unique(np.concatenate(parts))
    return int(u[-n]) if len(u) >= n else int(u[0])


def pack_timeline(start: int, end: int, per_stream: list[tuple[np.ndarray, np.ndarray]],
                  trace_from: int = NO_TRACE) -> bytes:
    """``per_stream[k] = (steps, clocks)``: stream k's bound after each of its events in
    ``(start, end]``; ``trace_from``: the batch's trace window."""
    head = struct.pack("<qqqi", start, end, trace_from, len(per_stream)) + b"".join(
        struct.pack("<i", len(s)) for s, _ in per_stream)
    body = b"".join(np.ascontiguousarray(s, dtype="<i8").tobytes() + np.ascontiguousarray(c, dtype="<i8").tobytes()
                    for s, c in per_stream)
    return head + body


def unpack_timeline(b: bytes) -> tuple[int, int, list[tuple[np.ndarray, np.ndarray]], int]:
    """``(start, end, per_stream, trace_from)``."""
    start, end, trace_from, n = struct.unpack_from("<qqqi", b, 0)
    off = 28
    counts = struct.unpack_from(f"<{n}i", b, off)
    off += 4 * n
    out = []
    for c in counts:
        s = np.frombuffer(b, dtype="<i8", count=c, offset=off)
        off += 8 * c
        v = np.frombuffer(b, dtype="<i8", count=c, offset=off)
        off += 8 * c
        out.append((s.astype(np.int64), v.astype(np.int64)))
    return start, end, out, trace_from
