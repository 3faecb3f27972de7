"""Pre-combining a streaming GROUP BY before the state store.

A group only ever accumulates rows until an input clock passes its period's end, and a row of a
period can never arrive after that (it would be late). So the rows of one micro-batch can be
summed up per (bucket, period end, key) before they reach ``transformWithStateInPandas``, whose
cost is per input row: one partial per group instead of one row per event. The partial enters
the operator at the step of its group's first row, which changes nothing (the group completes
later, and a GROUP BY's frontier does not depend on what its groups hold).

Used when the aggregate reads one stream directly and every aggregate combines exactly in any
order (COUNT, MIN, MAX, FIRST/LAST_VALUE, and SUM/AVG of exact numbers); float sums would depend
on how rows were grouped into batches, so those queries take the row-by-row path.
"""
from __future__ import annotations

import pickle

import numpy as np
import pandas as pd

from ...plan import Aggregate
from ..spark.frames import _restore
from ...operators.aggregate import AggregateOp


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


def combiner(node: Aggregate, n_keys: int, fields_out: list[str]):
    """The ``mapInPandas`` function: rows -> one partial per (bucket, period end, keys)."""
    op = AggregateOp(node)          # its period ends (several monotonic keys, sub-query columns)
    key_types = [k.type for k in node.keys]
    arg_types = [a.arg.type if a.arg is not None else None for a in node.aggs]

    def fn(frames):
        for pdf in frames:
            ev = pdf["ev"].to_numpy()
            rows = pdf[ev == 0]
            rest = pdf[ev != 0]
            if not len(rows):
                yield pdf.assign(part=None)[fields_out]
                continue
            rows = rows.sort_values(["seq", "sub"], kind="stable").reset_index(drop=True)
            end = op.period_end_array(rows["ort"].to_numpy(dtype=np.int64))
            keys = [[_restore(v, t) for v in rows[f"pk{m}"].tolist()] for m, t in enumerate(key_types)]
            args = [None if t is None else [_restore(v, t) for v in rows[f"pa{c}"].tolist()]
                    for c, t in enumerate(arg_types)]
            groups: dict = {}
            buckets = rows["bucket"].tolist()
            seqs = rows["seq"].tolist()
            subs = rows["sub"].tolist()
            from ...operators.aggregate import Acc
            from ...operators.base import encode_ints
            accs = [Acc(a) for a in node.aggs]
            for i in range(len(rows)):
                g = (buckets[i], int(end[i]), tuple(k[i] for k in keys))
                cur = groups.get(g)
                if cur is None:
                    cur = groups[g] = [i, [acc.init() for acc in accs]]
                arrival = encode_ints(seqs[i], subs[i])
                cur[1] = [acc.add(s, None if a is None else a[i], arrival)
                          for acc, s, a in zip(accs, cur[1], args)]
            first = [v[0] for v in groups.values()]
            out = rows.iloc[first].copy()
            out["part"] = [pickle.dumps((e, k, v[1])) for (b, e, k), v in groups.items()]
            yield pd.concat([rest.assign(part=None), out], ignore_index=True)[fields_out]
    return fn
