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
on how rows were grouped into batches, so those queries take the row-by-row path.
"""
from __future__ import annotations

import pickle

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...operators.aggregate import AggregateOp
from ...operators.base import encode_ints
from ...plan import Aggregate


def eligible(node: Aggregate, stage) -> bool:
    if node.distinct_rows or len(stage.inputs) != 1 or len(stage.inputs[0].leaves) != 1:
        return False
    if stage.inputs[0].leaves[0].stream is None:
        return False
    for a in node.aggs:
        if a.distinct:
            return False
        if a.fn in ("SUM", "AVG") and a.arg is not None and a.arg.type.is_approx:
            return False
    return True


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


def combiner(node: Aggregate, schema: pa.Schema):
    """The ``mapInArrow`` function: rows -> one partial per (bucket, period end, keys)."""
    op = AggregateOp(node)          # its period ends (several monotonic keys, sub-query columns)
    nk = len(node.keys)
    keys = ["bucket", "_end"] + [f"pk{m}" for m in range(nk)]

    def partials(rows: pa.Table) -> pa.Table:
        rows = rows.sort_by([("seq", "ascending"), ("sub", "ascending")])
        end = op.period_end_array(rows.column("ort").to_numpy(zero_copy_only=False).astype(np.int64))
        rows = rows.append_column("_end", pa.array(end, pa.int64()))
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
        n = g.num_rows
        parts = []
        for i in range(n):
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
            parts.append(pickle.dumps((gk[1], gk[2:], states)))
        out = {}
        for f in schema:
            if f.name == "part":
                out[f.name] = pa.array(parts, pa.binary())
            elif f.name in ("seq", "T", "Tup", "ort"):
                src = {"seq": "seq_min", "T": "T_min", "Tup": "T_min", "ort": "ort_min"}[f.name]
                out[f.name] = g.column(src).cast(f.type)
            elif f.name == "bucket":
                out[f.name] = g.column("bucket").cast(f.type)
            elif f.name in ("ev", "inp", "leaf", "sub"):
                out[f.name] = pa.array(np.zeros(n, dtype=np.int64)).cast(f.type)
            elif f.name == "up":
                out[f.name] = pa.array(np.full(n, -1, dtype=np.int64)).cast(f.type)
            else:
                out[f.name] = pa.nulls(n, f.type)
        return pa.table(out, schema=schema)

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
            yield from partials(rows).to_batches()
    return fn
