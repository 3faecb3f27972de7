"""The ordered sink: the last stage of every query, run by ``foreachBatch`` (in the driver; on a
Spark Connect server, in the server's Python process, and the client reads its files).

It resolves its input like any stage (:mod:`inputs`): rows of its leaves become final at the
step where their leaf allows it and, for a UNION ALL, where every leaf's clock has reached them;
they leave in (step, stamp, input, arrival) order. The input's clock is the query's output bound.
Rows stay in Arrow from Spark to the query's result. State (rows still held, clocks, upstream
frontiers) and output are written to the query's folder per batch id, so a batch that Spark
replays after a crash is recognised and not delivered twice. Operator errors (``ev`` 4) that
reach the sink go to the query with the step that refused the row, a step's errors in the plan's
post-order (their ``order``); rows its leaves could not compute wait like rows and fail where the
local runtime refuses them (``failures.py``).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ... import time as sqltime
from ...log import atomic_write, step_named, step_value
from ...plan import Field
from ...types import arrow_type
from .framecode import FrameCode
from .frames import error_order, origins, read_error, value_col
from .host import FrontierState
from .input_rows import failing, merged_of, raw_of
from .inputs import InputSpec, InputState, resolve_input
from .trace_assembly import input_trace, sink_trace, tl_of
from .statecodec import StateFileError, dumps as dump_state, loads as load_state


_STATE_FILE = re.compile(r"state-\d{12}\.json")
_HELD_FILE = re.compile(r"held-\d+\.arrow")


def write_arrow(path: Path, t: pa.Table, durable: bool) -> None:
    """``t`` as an Arrow IPC file, written aside and moved into place (a reader never sees half)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, t.schema) as w:
        w.write_table(t)
    atomic_write(path, sink.getvalue().to_pybytes(), durable)


def read_arrow(path: Path) -> pa.Table:
    return pa.ipc.open_file(pa.memory_map(str(path))).read_all()


@dataclass
class SinkBatch:
    """What the sink hands the query per micro-batch."""
    rows: pa.Table            # step, rowtime, v0..
    bounds: tuple             # (steps, output bound after each) where it changed
    errors: list = field(default_factory=list)   # (input stream, OperatorError), in step order
    trace: object = None      # the trace window's step records (trace_assembly.TraceSegment), or None
    batch_id: int = -1        # Spark's micro-batch id


class Sink:
    def __init__(self, folder: Path, fields: list[Field], spec: InputSpec, upstream: dict, durable: bool = True,
                 assembler=None, index: int = 0, upstream_fields: dict | None = None,
                 merged_fields: list | None = None, failures=None):
        """``upstream`` maps a stage index to ``(operator, number of buckets)``; ``assembler``
        (trace_assembly.TraceAssembler) turns what the stages report into the trace (None: no trace)."""
        self.assembler = assembler
        self.failures = failures
        self.index = index
        self.upstream_fields = upstream_fields or {}
        self.spec_fields = merged_fields if merged_fields is not None else fields   # the merge's rows
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.fields = fields
        self.spec = spec
        self.upstream = upstream
        self.durable = durable
        self.nv = len(fields)
        self.out_schema = pa.schema([pa.field("step", pa.int64()), pa.field("rowtime", pa.int64())] +
                                    [pa.field(f"v{i}", arrow_type(f.type)) for i, f in enumerate(fields)])
        self.batch_id = -1
        self.processed_step = 0
        self.input_state = InputState()
        self.frontiers = {y: FrontierState() for y in upstream}
        self.held: pa.Table | None = None
        self.last_bound = None
        #: write each batch's trace to a file for :meth:`read_batch` (the sink runs in a Connect server)
        self.persist_trace = False
        self._load()

    # ------------------------------------------------------------------ persistence

    def _load(self) -> None:
        p = self.folder / "state.json"
        if not p.exists():
            return
        try:
            s = json.loads(p.read_text())
            self.batch_id = int(s["batch_id"])
            # a version-1 workspace's sink (the step was called seq) wrote processed_seq
            self.processed_step = int(step_value(s, "processed_step"))
            self.last_bound = s.get("last_bound")
            if not _STATE_FILE.fullmatch(s["state"]) or not _HELD_FILE.fullmatch(s.get("held") or "held-0.arrow"):
                raise ValueError(f"names files that are not this query's ({s['state']!r}, {s.get('held')!r})")
        except (ValueError, TypeError, KeyError, UnicodeDecodeError) as e:
            raise StateFileError(f"{p}: not a streamsql sink state ({type(e).__name__}: {e})") from None
        state = self.folder / s["state"]
        self.input_state, self.frontiers = load_state(state.read_bytes(), state)
        if s.get("held"):
            self.held = step_named(read_arrow(self.folder / s["held"]))   # version 1: a column seq
        for f in (list(self.folder.glob("out-*.arrow")) + list(self.folder.glob("bounds-*.arrow"))
                  + list(self.folder.glob("errors-*.json")) + list(self.folder.glob("trace-*.json"))):
            if int(f.stem.split("-")[1]) > self.batch_id:
                f.unlink()

    def history(self) -> list[SinkBatch]:
        """Everything this sink released before (for a query resumed in a new process)."""
        ids = sorted({int(f.stem.split("-")[1]) for pat in ("out-*.arrow", "errors-*.json")
                      for f in self.folder.glob(pat)})
        return [self.read_batch(i) for i in ids]

    def read_batch(self, i: int, trace: bool = False) -> SinkBatch:
        """What batch ``i`` released, from its files (a sink in another process wrote them: a Spark
        Connect server's ``foreachBatch``); ``trace``: with its trace segment, whose file is then
        removed (it was written for this reader alone)."""
        f = self.folder / f"out-{i:012d}.arrow"
        b = self.folder / f"bounds-{i:012d}.arrow"
        e = self.folder / f"errors-{i:012d}.json"
        bt = read_arrow(b) if b.exists() else None
        bounds = ((bt.column("step").to_pylist(), bt.column("bound").to_pylist()) if bt is not None
                  else ([], []))
        errors = [read_error(json.dumps(x).encode()) for x in json.loads(e.read_text())] if e.exists() else []
        segment = None
        t = self.folder / f"trace-{i:012d}.json"
        if trace and self.assembler is not None and t.exists():
            segment = self.assembler.segment(*_segment_args_from_json(t.read_bytes()))
            t.unlink()
        return SinkBatch(read_arrow(f) if f.exists() else self.out_schema.empty_table(), bounds, errors, segment,
                         batch_id=i)

    def committed_batch(self) -> int:
        """The last batch id whose files are complete (``state.json``, the commit point), -1 before any."""
        try:
            return int(json.loads((self.folder / "state.json").read_text())["batch_id"])
        except (OSError, ValueError, KeyError):
            return -1

    def _commit(self, batch_id: int, out: pa.Table, bounds: tuple, errors: list, trace: bytes | None = None) -> None:
        if trace is not None:
            atomic_write(self.folder / f"trace-{batch_id:012d}.json", trace, False)
            for f in self.folder.glob("trace-*.json"):      # unread for long: nobody follows this query
                if int(f.stem.split("-")[1]) < batch_id - 100:
                    f.unlink(missing_ok=True)
        if errors:
            atomic_write(self.folder / f"errors-{batch_id:012d}.json",
                         json.dumps([json.loads(b) for b in errors]).encode(), self.durable)
        if out.num_rows or len(bounds[0]):
            write_arrow(self.folder / f"bounds-{batch_id:012d}.arrow",
                         pa.table({"step": pa.array(bounds[0], pa.int64()), "bound": pa.array(bounds[1], pa.int64())}),
                         self.durable)
            write_arrow(self.folder / f"out-{batch_id:012d}.arrow", out, self.durable)
        name = f"state-{batch_id:012d}.json"
        atomic_write(self.folder / name, dump_state((self.input_state, self.frontiers)), self.durable)
        held = None
        if self.held is not None and self.held.num_rows:
            held = f"held-{batch_id:012d}.arrow"
            write_arrow(self.folder / held, self.held, self.durable)
        atomic_write(self.folder / "state.json",
                     json.dumps({"batch_id": batch_id, "processed_step": self.processed_step, "state": name,
                                 "held": held, "last_bound": self.last_bound}).encode(), self.durable)
        for f in list(self.folder.glob("state-*.json")) + list(self.folder.glob("held-*.arrow")):
            if f.name not in (name, held):
                f.unlink()

    # ------------------------------------------------------------------ a micro-batch

    def process(self, batch_id: int, t: pa.Table) -> "SinkBatch | None":
        """Release what this batch allows; None when Spark replays a batch already done."""
        if batch_id <= self.batch_id:
            return None
        ev = t.column("ev").to_numpy(zero_copy_only=False)
        other = np.nonzero(ev != FrameCode.ROW)[0]
        tls, metas, errs = [], [], []
        leaf_fail = False
        if len(other):
            sel = t.take(pa.array(other))
            for e, b, u, q in zip(sel.column("ev").to_pylist(), sel.column("blob").to_pylist(),
                                  sel.column("up").to_pylist(), sel.column("step").to_pylist()):
                if e == FrameCode.TIMELINE:
                    tls.append(b)
                elif e == FrameCode.REPORT:
                    metas.append((u, b))
                elif e == FrameCode.ERROR and u == -1:
                    leaf_fail = True      # a row a leaf could not compute: it waits like a row
                elif e == FrameCode.ERROR:
                    errs.append((q, bytes(b)))
        orig, info = origins(tls, metas, self.upstream, self.frontiers, self.assembler is not None)
        end = info.end
        tracing = self.assembler is not None and info.steps is not None and len(info.steps) > 0
        if leaf_fail:
            up = t.column("up")
            rows = t.filter(pc.or_(pc.equal(t.column("ev"), FrameCode.ROW),
                                   pc.and_(pc.equal(t.column("ev"), FrameCode.ERROR), pc.equal(up, -1))))
        else:
            rows = t.filter(pc.equal(t.column("ev"), FrameCode.ROW)) if len(other) else t
        if self.held is not None and self.held.num_rows:
            rows = pa.concat_tables([self.held, rows.cast(self.held.schema)])
        rows, fails = failing(self.failures, rows)
        keys = {k: rows.column(k).to_numpy(zero_copy_only=False) for k in ("leaf", "step", "sub", "T", "Tup")}
        keys["tie"] = rows.column("tie").to_pylist() if not self.spec.all_streams or tracing else None
        if "drop" in rows.column_names:
            keys["drop"] = rows.column("drop").fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        if fails is not None:
            keys["fail"] = fails.codes
            if "drop" in keys:
                keys["drop"] = np.where(fails.codes != 0, fails.codes, keys["drop"])
        r = resolve_input(self.spec, keys, orig, self.input_state)
        if fails is not None:
            errs += fails.errors(r, keys)
        # a step's errors in the plan's post-order (stable: each node's in the order it refused them)
        errs = [b for _q, _o, b in sorted(((q, error_order(b), b) for q, b in errs), key=lambda x: x[:2])]
        part = None
        if tracing:
            part = input_trace(self.spec, keys, r, info.trace_from, raw_of(rows, self.upstream_fields),
                               merged_of(rows, 0, self.spec_fields, fails), True)
        taken = rows.take(pa.array(r.order, type=pa.int64()))
        cols = [pa.array(r.rel, pa.int64()), taken.column("ort").cast(pa.int64())]
        for j in range(self.nv):
            cols.append(taken.column(value_col(0, j)).cast(self.out_schema.field(2 + j).type))
        out = pa.Table.from_arrays(cols, schema=self.out_schema)
        self.held = rows.take(pa.array(r.held, type=pa.int64())) if len(r.held) else None
        bound_steps, vals = r.clock.steps, r.clock.vals
        if len(vals):   # only the steps where the output bound changed
            prev = np.concatenate([[self.last_bound if self.last_bound is not None else sqltime.NO_TIME - 1], vals[:-1]])
            ch = vals != prev
            bound_steps, vals = bound_steps[ch], vals[ch]
            if len(vals):
                self.last_bound = int(vals[-1])
        bounds = (bound_steps.tolist(), vals.tolist())
        self.processed_step = max(self.processed_step, end)
        self.batch_id = batch_id
        seg_args = None
        if tracing:
            steps, counts = np.unique(r.rel, return_counts=True)
            reports = info.traces + [sink_trace(self.index, info.trace_from, [part], info.futures)]
            seg_args = (info.steps, reports, dict(zip(steps.tolist(), counts.tolist())), r.clock)
        self._commit(batch_id, out, bounds, errs,
                     _segment_args_to_json(seg_args) if seg_args is not None and self.persist_trace else None)
        segment = self.assembler.segment(*seg_args) if seg_args is not None and not self.persist_trace else None
        return SinkBatch(out, bounds, [read_error(b) for b in errs], segment, batch_id)


def _segment_args_to_json(args: tuple) -> bytes:
    """A batch's trace segment for the follower in another process (JSON: a workspace holds no pickle)."""
    steps, reports, released, bound = args
    return json.dumps({"steps": np.asarray(steps).tolist(), "reports": [r.decode() for r in reports],
                       "released": [[int(k), int(v)] for k, v in released.items()],
                       "bound": [int(bound.initial), bound.steps.tolist(), bound.vals.tolist()]}).encode()


def _segment_args_from_json(b: bytes) -> tuple:
    d = json.loads(b)
    return (np.array(d["steps"], np.int64), [r.encode() for r in d["reports"]],
            {k: v for k, v in d["released"]}, tl_of(d["bound"]))
