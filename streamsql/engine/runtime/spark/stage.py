"""A stateful operator as a ``transformWithStateInPandas`` stage, one group per key bucket.

Each bucket keeps its whole host state (the operator, rows its merge still holds, what it knows
of upstream frontiers, candidates waiting for the present) in the RocksDB state store, and per
micro-batch outputs its emitted candidates plus one report (its frontier changes; bucket 0 also
its input clocks) for the consumer downstream.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...plan import Field, Node
from .failures import Failures
from .framecode import FrameCode
from .frames import error_blob, frame_values, origins_of
from .host import BucketState, FrontierState, run_bucket
from .input_rows import failing, merged_of, raw_of
from .inputs import InputSpec, InputState, resolve_input
from .precombine import Partial, precombined
from .statecodec import dumps as dump_state, loads as load_state
from .trace_assembly import bucket_trace, input_trace
from .wire import pack, unpack


@dataclass
class StageSpec:
    index: int
    node: Node
    inputs: list[InputSpec]
    input_fields: list[list[Field]]    # per input, its rows as the operator reads them (after ``post``)
    out_fields: list[Field]
    buckets: int
    upstream: dict            # stage index -> (plan node, buckets)
    tables: dict
    precombined: bool = False  # rows are GROUP BY partials (see precombine.py)
    channel_streams: list = None  # per operator input, the STREAM_NAME of rows it refuses there
    leaf_streams: list = None  # per input and leaf, the stream its rows come from (their STREAM_NAME)
    position: int = 0          # the operator's place in the plan's post-order (its errors' order)
    failures: Failures = None  # resolves rows a leaf's WHERE/projections cannot compute
    query_name: str = ""       # what calculator error messages start with
    trace: bool = False        # report what the trace needs (trace_assembly.py)
    upstream_fields: dict = None  # stage index -> its output fields (values rows of it carry)
    merged_fields: list = None  # per input, its merge's rows (before ``post``)


class HostState:
    def __init__(self, spec: StageSpec):
        from ..plans import make_operator
        self.op = make_operator(spec.node, spec.tables)
        self.inputs = [InputState() for _ in spec.inputs]
        self.held: list[pd.DataFrame | None] = [None for _ in spec.inputs]
        self.frontiers = {y: FrontierState() for y in spec.upstream}
        self.bucket = BucketState()


def process_bucket(spec: StageSpec, bucket: int, pdf: pd.DataFrame, st: HostState,
                   upstream_ops: dict) -> pd.DataFrame:
    """One micro-batch of one bucket; returns the output frame (candidates + one report)."""
    origins, info = origins_of(pdf, upstream_ops, st.frontiers, spec.trace)
    tracing = spec.trace and info.steps is not None and len(info.steps) > 0
    ev = pdf["ev"].to_numpy()
    leaf_fail = (ev == FrameCode.ERROR) & (pdf["up"].to_numpy() == -1)    # rows a leaf could not compute
    resolved, values, held_tr, errs = [], [], [], []
    for i, ispec in enumerate(spec.inputs):
        rows = pdf[((ev == FrameCode.ROW) | leaf_fail) & (pdf["inp"].to_numpy() == i)]
        if st.held[i] is not None and len(st.held[i]):
            rows = pd.concat([st.held[i], rows], ignore_index=True)
        rows = rows.reset_index(drop=True)
        rows, fails = failing(spec.failures, rows)
        keys = {k: rows[k].to_numpy() for k in ("leaf", "step", "sub", "T", "Tup")}
        keys["tie"] = rows["tie"].tolist()
        if "drop" in rows.columns:
            keys["drop"] = rows["drop"].fillna(0).to_numpy().astype(np.int64)
        if fails is not None:
            keys["fail"] = fails.codes
            if "drop" in keys:
                keys["drop"] = np.where(fails.codes != 0, fails.codes, keys["drop"])
        r = resolve_input(ispec, keys, origins, st.inputs[i], need_arrival=True)
        if fails is not None:
            errs += fails.errors(r, keys)
        if tracing:
            held_tr.append(input_trace(ispec, keys, r, info.trace_from, raw_of(rows, spec.upstream_fields),
                                       merged_of(rows, i, spec.merged_fields[i], fails), bucket == 0))
        st.held[i] = rows.iloc[r.held].reset_index(drop=True) if len(r.held) else None
        usable = rows.iloc[r.order].reset_index(drop=True)
        usable["rel"] = r.rel
        usable["arrival"] = r.arrival
        resolved.append((usable, r.clock))
        if spec.precombined:
            values.append([Partial(*unpack(p)) for p in usable["part"]])
        else:
            values.append(frame_values(usable, i, spec.input_fields[i]))
    op = precombined(st.op) if spec.precombined else st.op
    leaves = [rows["leaf"].to_numpy() for rows, _tl in resolved]
    streams = spec.leaf_streams or []
    before = st.bucket.last
    run = run_bucket(op, st.bucket, resolved, lambda i, idx: values[i][idx],
                     info.trace_from if tracing else None,
                     stream_of=(lambda i, idx: streams[i][int(leaves[i][idx])]) if streams else None,
                     values=values)
    emitted, tls = run.emitted, run.clocks
    exact = getattr(op, "exact_changes", None) if spec.precombined else None
    if exact is not None:       # a session aggregation's frontier inside its pre-combined runs
        run.changes = exact(run.changes, before, tls[0])
    # operator errors: the leaves' failures, this operator's, then those received from upstream
    # (bucket 0 gets those); the sink orders a step's errors by their ``order``
    for e in run.errors:
        if e.stream is None and spec.channel_streams:
            e.stream = spec.channel_streams[min(e.channel, len(spec.channel_streams) - 1)]
        if e.is_calc and spec.query_name:
            e.message = f"Query {spec.query_name}: {e.message}"
        errs.append((e.step, error_blob(None, e, spec.position)))
    sel = (ev == FrameCode.ERROR) & ~leaf_fail
    if sel.any():
        errs += [(int(q), bytes(b)) for q, b in zip(pdf["step"][sel], pdf["blob"][sel])]
    n, m = len(emitted), len(errs)
    out = {"ev": [FrameCode.ROW] * n + [FrameCode.ERROR] * m + [FrameCode.REPORT],
           "bucket": [bucket] * (n + m + 1),
           "step": [e.step for e in emitted] + [q for q, _b in errs] + [0],
           "T": [e.cand.stamp for e in emitted] + [0] * (m + 1),
           "tie": [e.cand.tie for e in emitted] + [None] * (m + 1)}
    for j, f in enumerate(spec.out_fields):
        # object dtype: a column of ints with a None would become float64 and round BIGINTs past 2**53
        out[f"o{j}"] = pd.Series([e.cand.row[j] for e in emitted] + [None] * (m + 1), dtype=object)
    report = {"bucket": bucket, "changes": run.changes,
              # the operator's input clocks, for the consumer to evaluate its frontier (raw int64 bytes:
              # a replay's timeline has an entry per event)
              "inputs": [(np.ascontiguousarray(tl.steps, np.int64).tobytes(), np.ascontiguousarray(tl.vals, np.int64).tobytes(),
                          int(tl.initial)) for tl in tls] if bucket == 0 else None}
    if tracing:
        # this bucket's part of the trace; bucket 0 passes on the stages' before it, and the window
        own = bucket_trace(spec.index, bucket, run.trace, held_tr, tls if bucket == 0 else None, info.futures)
        report["trace"] = [own] + (info.traces if bucket == 0 else [])
        if bucket == 0:
            report["tw"] = int(info.trace_from)
            report["steps"] = np.ascontiguousarray(info.steps, np.int64).tobytes()
    out["blob"] = [None] * n + [b for _q, b in errs] + [pack(report)]
    return pd.DataFrame(out)


def make_processor(spec: StageSpec):
    from pyspark.sql.streaming import StatefulProcessor
    from pyspark.sql.types import BinaryType, StructField, StructType

    class StageProcessor(StatefulProcessor):
        def init(self, handle):
            self.state = handle.getValueState("host", StructType([StructField("blob", BinaryType())]))
            from ..plans import make_operator
            self.upstream = {y: (make_operator(node, spec.tables), nb) for y, (node, nb) in spec.upstream.items()}

        def handleInputRows(self, key, rows, timerValues):
            frames = [f for f in rows]
            pdf = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
            st = load_state(self.state.get()[0], "the query's state store") if self.state.exists() else HostState(spec)
            out = process_bucket(spec, int(key[0]), pdf, st, self.upstream)
            self.state.update((dump_state(st),))
            yield out

        def close(self):
            pass

    return StageProcessor()
