"""The columns a stage's input frame carries, and reading them back into engine values.

Every stage input (an operator's buckets, or the sink) receives one frame with:
``ev`` (a :class:`~.framecode.FrameCode`: a row, a source timeline, an upstream report, an operator error), ``inp`` (which operator input), ``leaf``
(which leaf of that input's merge), ``step``/``sub`` (arrival step and position), ``T`` (stamp
the merge orders by), ``Tup``/``tie`` (the upstream operator's stamp and tie key),
``ort`` (the row's rowtime as the operator sees it), ``x<inp>_<j>`` (the values), ``blob``
(timeline, report or error) and ``up`` (the reporting stage).

**Operator errors** (``ev`` 4) are rows an operator refused (a T-sort's late row, a calculator
error): ``step`` is the step whose processing refused the row and ``blob`` is UTF-8 JSON, the
fields of :meth:`OperatorError.to_json` (``stream`` is the error stream's ``STREAM_NAME``) plus
``order``, the refusing node's position in the plan's post-order (a step's errors are listed in
that order). A stage emits the errors of its own operator and passes on every error row it
receives (they reach bucket 0 only, so each is passed on once); the sink hands them to the
query with their step. A leaf's ``ev`` 4 row (``up`` -1) is a row its WHERE or projections
could not compute, carrying its failure (``failures.py``): the stage input reading the leaf
makes it an operator error where the row fails.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ...plan import Field
from .framecode import FrameCode
from .host import frontier
from .source import NO_TRACE, unpack_timeline
from .timeline import Timeline, union_points
from .wire import restore_value, unpack


def error_blob(stream: str | None, err, order: int = 0) -> bytes:
    """An operator error as the ``blob`` of an ``ev`` 4 row (``stream``: its STREAM_NAME when the
    record has none; ``order``: the refusing node's post-order position)."""
    d = err.to_json()
    d["stream"] = d.get("stream") or stream
    d["order"] = order
    return json.dumps(d, separators=(",", ":")).encode()


def error_order(blob: bytes) -> int:
    """The ``order`` of an error blob (where it goes among its step's errors)."""
    return int(json.loads(bytes(blob).decode()).get("order") or 0)


def read_error(blob: bytes):
    """``(stream, OperatorError)`` of an ``ev`` 4 row's blob."""
    from ...operators.base import OperatorError
    d = json.loads(bytes(blob).decode())
    return d.get("stream"), OperatorError.from_json(d)


def value_col(inp: int, j: int) -> str:
    return f"x{inp}_{j}"


def frame_values(rows: pd.DataFrame, inp: int, fields: list[Field]) -> list[tuple]:
    """The engine tuples of ``rows`` for operator input ``inp`` (NULLs as None, exact ints)."""
    return named_values(rows, [value_col(inp, j) for j in range(len(fields))], fields)


def named_values(rows, names: list[str], fields: list[Field]) -> list[tuple]:
    """The engine tuples of columns ``names`` of ``rows`` (a pandas frame or an Arrow table,
    typed as ``fields``)."""
    if not len(rows):
        return []
    cols = []
    for name, f in zip(names, fields):
        c = rows[name].tolist() if isinstance(rows, pd.DataFrame) else rows.column(name).to_pylist()
        cols.append([restore_value(v, f.type) for v in c])
    if not cols:
        return [()] * len(rows)
    return list(zip(*cols))


@dataclass
class BatchInfo:
    """What a stage input learns about a batch besides its rows."""
    end: int = 0                               # the last event the batch covers
    trace_from: int = NO_TRACE                 # the batch's trace window (source.py)
    steps: np.ndarray | None = None            # the window's steps that fed the query (None: unknown here)
    futures: dict = field(default_factory=dict)   # upstream stage -> its trace ``future`` Timeline
    traces: list = field(default_factory=list)    # trace reports of upstream stages (bytes)


def origins_of(pdf: pd.DataFrame, upstream: dict, frontiers: dict, trace: bool = False) -> tuple[dict, BatchInfo]:
    """:func:`origins` of a pandas batch."""
    ev = pdf["ev"].to_numpy()
    tls = [bytes(b) for b in pdf["blob"][ev == FrameCode.TIMELINE]]
    sel = pdf[ev == FrameCode.REPORT]
    metas = [(int(u), bytes(b)) for u, b in zip(sel["up"], sel["blob"])]
    return origins(tls, metas, upstream, frontiers, trace)


def origins(timelines: list[bytes], metas: list[tuple[int, bytes]], upstream: dict,
            frontiers: dict, trace: bool = False) -> tuple[dict, BatchInfo]:
    """Source timelines (``("s", k)``) and upstream frontiers (``("y", stage)``) of a batch, and
    the :class:`BatchInfo` (with ``trace``: the trace window, upstream futures and reports)."""
    out: dict = {}
    info = BatchInfo()
    per_stream: dict[int, list] = {}
    for b in timelines:
        _start, e, streams, tf = unpack_timeline(b)
        info.end = max(info.end, e)
        info.trace_from = min(info.trace_from, tf)
        for k, sv in enumerate(streams):
            per_stream.setdefault(k, []).append(sv)
    for k, parts in per_stream.items():
        s = np.concatenate([p[0] for p in parts])
        v = np.concatenate([p[1] for p in parts])
        o = np.argsort(s, kind="stable")
        s, v = s[o], v[o]
        out[("s", k)] = Timeline(s, np.maximum.accumulate(v) if len(v) else v)
    if trace and timelines:
        steps = union_points(*[tl.steps for key, tl in out.items()])
        info.steps = steps[steps >= info.trace_from]
    by_up: dict[int, list] = {}
    for up, b in metas:
        m = unpack(b)
        by_up.setdefault(up, []).append(m)
        if trace:
            info.traces += m.get("trace") or []
            if m.get("steps") is not None and info.steps is None:
                info.trace_from = int(m["tw"])
                info.steps = np.frombuffer(m["steps"], np.int64).copy()
    for y, (op, nb) in upstream.items():
        fut = [] if trace else None
        out[("y", y)] = frontier(op, nb, frontiers[y], by_up.get(y, []), fut)
        if trace:
            info.futures[y] = fut[0]
    return out, info
