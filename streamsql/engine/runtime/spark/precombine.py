"""Pre-combining a streaming GROUP BY before the state store.

A group only ever accumulates rows until an input clock passes its period's end, and a row of a
period can never arrive after that (it would be late). So the rows of one micro-batch can be
summed up per (bucket, period end, key) before they reach ``transformWithStateInPandas``, whose
cost is per input row: one partial per group instead of one row per event. The partial enters
the operator at the step of its group's first row, which changes nothing (the group completes
later, and a GROUP BY's frontier does not depend on what its groups hold).

The combining is Arrow's hash aggregation (``mapInArrow``: no pandas, no Python per row). It is
used when the aggregate reads one stream directly and every aggregate combines exactly in any
order (COUNT, MIN, MAX, FIRST/LAST_VALUE, and SUM/AVG of exact numbers); float sums would depend
on how rows were grouped into batches, so those queries take the row-by-row path. So do those
where a row could be refused for a calculator error (SEMANTICS.md 1), which only the operator
decides row by row: keys or arguments that can fail, and sums that can leave their type (of
BIGINT, or of DECIMALs wider than 28 digits: a sum of narrower values needs 2**32 or 10**10 rows
in one group to overflow, more than any batch and any stream here).

When the query is just that GROUP BY over one stream as it is (keys: columns and functions of
ROWTIME; arguments: columns), the log source, which reads the log in Python anyway, combines
the rows itself (:class:`ScanCombiner`): no row crosses from Spark to Python and back, only
partials and the timeline.
"""
from __future__ import annotations

import zlib

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ... import time as T
from ...expr import NOT_MONOTONIC, Call, Col, Lit, Rowtime, monotonicity, rowtime_map_array
from ...functions import can_fail
from ...operators.aggregate import AggregateOp
from ...operators.base import encode_ints
from ...plan import Aggregate
from .statecodec import dumps as dump_state, loads as load_state
from .timeline import EV_TIMELINE, NO_TRACE, unpack_timeline
from .wire import pack


def eligible(node: Aggregate, stage) -> bool:
    if node.distinct_rows or len(stage.inputs) != 1 or len(stage.inputs[0].leaves) != 1:
        return False
    if stage.inputs[0].leaves[0].stream is None:
        return False
    for a in node.aggs:
        if a.distinct:
            return False
        if a.fn in ("SUM", "AVG") and a.arg is not None and not _sums_safely(a.arg.type):
            return False
    exprs = [k for k in node.keys if not _time_key(k)] + [a.arg for a in node.aggs if a.arg is not None]
    return not any(can_fail(e) for e in exprs)


def _sums_safely(t) -> bool:
    """Exact, and no sum of fewer than 2**32 values of it leaves the SUM's type."""
    if t.is_approx or t.name == "BIGINT":
        return False
    return t.name != "DECIMAL" or t.precision <= 28


# the stage-input columns the combiner needs, and the others restored after it (a pre-combined
# stage reads one stream through one leaf, and has no upstream stage)
COLUMNS = ["ev", "bucket", "seq", "sub", "T", "ort", "blob"]
RESTORED = ["0 AS inp", "0 AS leaf", "T AS Tup", "CAST(NULL AS BINARY) AS tie", "-1 AS up"]


class Partial:
    """What a pre-combined row means to the operator: add these partials to this group."""
    __slots__ = ("end", "keys", "states")

    def __init__(self, end, keys, states):
        self.end, self.keys, self.states = end, keys, states


class PrecombinedAggregate:
    """Adapter the bucket host steps instead of the operator when its rows are partials."""

    def __init__(self, op):
        self.op = op

    def __getattr__(self, name):
        return getattr(self.op, name)

    def on_row(self, ch, seq, rowtime, row, clocks, arrival):
        if isinstance(row, Partial):
            self.op.add_partial(row.end, row.keys, row.states)
            return []
        return self.op.on_row(ch, seq, rowtime, row, clocks, arrival)


def partials(node: Aggregate, op: AggregateOp, rows: pa.Table, solo_from: int = NO_TRACE) -> tuple[pa.Table, list[tuple]]:
    """One partial per (bucket, period end, keys) of ``rows`` (columns ``bucket``, ``seq``,
    ``sub``, ``T``, ``ort``, ``pk<m>`` key values, ``pa<c>`` aggregate arguments): a table of
    ``bucket``, ``seq``/``T``/``ort`` (of the group's first row) and ``part``; and the groups' keys.
    Rows at or after step ``solo_from`` (the trace window) each make a partial of their own."""
    nk = len(node.keys)
    keys = ["bucket", "_end"] + [f"pk{m}" for m in range(nk)] + ["_solo"]
    rows = rows.sort_by([("seq", "ascending"), ("sub", "ascending")])
    end = op.period_end_array(rows.column("ort").to_numpy(zero_copy_only=False).astype(np.int64))
    rows = rows.append_column("_end", pa.array(end, pa.int64()))
    seq = rows.column("seq").to_numpy(zero_copy_only=False).astype(np.int64)
    rows = rows.append_column("_solo", pa.array(np.where(seq >= solo_from, np.arange(len(seq)), -1), pa.int64()))
    aggs = [("seq", "min"), ("T", "min"), ("ort", "min")]
    for c, a in enumerate(node.aggs):
        col = f"pa{c}"
        if a.fn == "COUNT":
            aggs.append(([], "count_all") if a.arg is None else (col, "count"))
        elif a.fn in ("SUM", "AVG"):
            aggs += [(col, "sum", pc.ScalarAggregateOptions(min_count=1)), (col, "count")]
        elif a.fn in ("MIN", "MAX"):
            aggs.append((col, a.fn.lower()))
    g = rows.group_by(keys, use_threads=False).aggregate(aggs)
    cols = {name: g.column(name).to_pylist() for name in g.column_names}
    ordered: dict = {}
    for c, a in enumerate(node.aggs):   # first/last non-null value, in arrival order
        if a.fn in ("FIRST_VALUE", "LAST_VALUE"):
            nn = rows.filter(pc.is_valid(rows.column(f"pa{c}")))
            how = "first" if a.fn == "FIRST_VALUE" else "last"
            h = nn.group_by(keys, use_threads=False).aggregate([("seq", how), ("sub", how), (f"pa{c}", how)])
            hk = [h.column(k).to_pylist() for k in keys]
            ordered[c] = {tuple(k): (s, b, v) for k, s, b, v in
                          zip(zip(*hk), h.column(f"seq_{how}").to_pylist(), h.column(f"sub_{how}").to_pylist(),
                              h.column(f"pa{c}_{how}").to_pylist())}
    parts, gks = [], []
    for i in range(g.num_rows):
        gk = tuple(cols[k][i] for k in keys)
        states = []
        for c, a in enumerate(node.aggs):
            col = f"pa{c}"
            if a.fn == "COUNT":
                states.append(cols["count_all" if a.arg is None else f"{col}_count"][i])
            elif a.fn == "SUM":
                states.append(cols[f"{col}_sum"][i])
            elif a.fn == "AVG":
                states.append([cols[f"{col}_sum"][i], cols[f"{col}_count"][i]])
            elif a.fn in ("MIN", "MAX"):
                states.append(cols[f"{col}_{a.fn.lower()}"][i])
            else:
                hit = ordered[c].get(gk)
                states.append([None, None] if hit is None else [encode_ints(hit[0], hit[1]), hit[2]])
        parts.append(pack((gk[1], gk[2:-1], states)))
        gks.append(gk[2:-1])
    out = pa.table({"bucket": g.column("bucket").cast(pa.int32()), "seq": g.column("seq_min"),
                    "T": g.column("T_min"), "ort": g.column("ort_min"), "part": pa.array(parts, pa.binary())})
    return out, gks


def combiner(node: Aggregate, schema: pa.Schema):
    """The ``mapInArrow`` function: rows -> one partial per (bucket, period end, keys)."""
    op = AggregateOp(node)          # its period ends (several monotonic keys, sub-query columns)

    def fn(batches):
        t = pa.Table.from_batches(list(batches))
        if not t.num_rows:
            return
        ev = t.column("ev")
        rest = t.filter(pc.not_equal(ev, 0))
        rows = t.filter(pc.equal(ev, 0))
        if rest.num_rows:
            yield from rest.append_column("part", pa.nulls(rest.num_rows, pa.binary())).cast(schema).to_batches()
        if rows.num_rows:
            # the trace window, from the timeline records of this partition (each carries it)
            tls = rest.filter(pc.equal(rest.column("ev"), EV_TIMELINE)).column("blob").to_pylist()
            solo = min((unpack_timeline(b)[3] for b in tls), default=NO_TRACE)
            g, _keys = partials(node, op, rows, solo)
            n = g.num_rows
            out = {}
            for f in schema:
                if f.name in g.column_names:
                    out[f.name] = g.column(f.name).cast(f.type)
                elif f.name in ("ev", "sub"):
                    out[f.name] = pa.array(np.zeros(n, dtype=np.int64)).cast(f.type)
                else:
                    out[f.name] = pa.nulls(n, f.type)
            yield from pa.table(out, schema=schema).to_batches()
    return fn


# --------------------------------------------------------------------------- in the scan

def scan_eligible(node: Aggregate, stage, n_stages: int, n_streams: int) -> bool:
    """Whether the log source itself can pre-combine: the query is this one aggregate over one
    stream as it is (no filter or projection in between), grouped by functions of ROWTIME and
    plain columns, aggregating plain columns. Then no row crosses from Spark to Python at all
    (the source reads the log in Python already): only partials and the timeline do."""
    if n_stages != 2 or n_streams != 1 or not eligible(node, stage):
        return False
    inp = stage.inputs[0]
    if inp.leaves[0].chain or inp.post:
        return False
    if not all(isinstance(k, Col) or _time_key(k) for k in node.keys):
        return False
    return all(a.arg is None or isinstance(a.arg, Col) for a in node.aggs)


def _time_key(e) -> bool:
    """A TIMESTAMP key made of ROWTIME, FLOOR/CEIL/STEP and interval shifts (what
    :func:`rowtime_map_array` computes exactly)."""
    def pure(x) -> bool:
        if isinstance(x, Rowtime):
            return True
        if isinstance(x, Call) and x.fn in ("FLOOR_TO", "CEIL_TO", "STEP"):
            return pure(x.args[0])
        if isinstance(x, Call) and x.fn in ("+", "-") and len(x.args) == 2:
            a, b = x.args
            return pure(a) and isinstance(b, Lit) and isinstance(b.value, T.Interval)
        return False
    return e.type.name == "TIMESTAMP" and pure(e)


def scan_spec(node: Aggregate, buckets: int) -> dict:
    return {"node": dump_state(node).decode(), "buckets": buckets}


class ScanCombiner:
    """Pre-combines one stream's rows as the log source reads them (see :func:`scan_eligible`)."""

    def __init__(self, spec: dict):
        self.node: Aggregate = load_state(spec["node"].encode(), "the pre-combined scan's plan")
        self.buckets = int(spec["buckets"])
        self.op = AggregateOp(self.node)
        # the keys that pick a bucket (the others are functions of ROWTIME)
        self.hashed = [m for m, k in enumerate(self.node.keys) if monotonicity(k) == NOT_MONOTONIC]

    def combine(self, seq: np.ndarray, sub: np.ndarray, rowtime: np.ndarray, values: pa.Table,
                solo_from: int = NO_TRACE) -> pa.Table:
        """``values``: the stream's columns ``c<i>`` of these rows; ``solo_from``: the trace window."""
        cols = {"bucket": pa.array(np.zeros(len(seq), np.int32)), "seq": pa.array(seq, pa.int64()),
                "sub": pa.array(sub, pa.int32()), "T": pa.array(rowtime, pa.int64()),
                "ort": pa.array(rowtime, pa.int64())}
        for m, k in enumerate(self.node.keys):
            cols[f"pk{m}"] = (values.column(f"c{k.index}") if isinstance(k, Col)
                              else pa.array(rowtime_map_array(k, rowtime), pa.int64()))
        for c, a in enumerate(self.node.aggs):
            cols[f"pa{c}"] = values.column(f"c{a.arg.index}") if a.arg is not None else pa.nulls(len(seq), pa.int32())
        g, keys = partials(self.node, self.op, pa.table(cols), solo_from)
        if self.buckets > 1:
            b = [zlib.crc32(repr(tuple(k[m] for m in self.hashed)).encode()) % self.buckets for k in keys]
            g = g.set_column(0, "bucket", pa.array(b, pa.int32()))
        return g
