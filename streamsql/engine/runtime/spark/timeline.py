"""The timeline record of a source batch (its steps, each stream's clock after each of its events,
the batch's trace window) and the event kinds of a source row: shared by the source, which writes
them, and the pre-combining of GROUP BYs and the stages, which read them."""
from __future__ import annotations

import struct

import numpy as np

EV_ROW, EV_TIMELINE = 0, 2


#: trace window start meaning "no trace"
NO_TRACE = 2 ** 62


def trace_start(seqs: list[np.ndarray], n: int) -> int:
    """The first of the last ``n`` distinct steps in ``seqs`` (the steps that fed the query in a
    batch, per stream); ``NO_TRACE`` when ``n`` is 0 or there is none."""
    if n <= 0:
        return NO_TRACE
    parts = [np.asarray(a, np.int64) for a in seqs if len(a)]
    if not parts:
        return NO_TRACE
    u = np.unique(np.concatenate(parts))
    return int(u[-n]) if len(u) >= n else int(u[0])


def pack_timeline(start: int, end: int, per_stream: list[tuple[np.ndarray, np.ndarray]],
                  trace_from: int = NO_TRACE) -> bytes:
    """``per_stream[k] = (seqs, clocks)``: stream k's bound after each of its events in
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
