"""The ordered sink: the last stage of every query, run in the driver by ``foreachBatch``.

It resolves its input like any stage (:mod:`inputs`): rows of its leaves become final at the
step where their leaf allows it and, for a UNION ALL, where every leaf's clock has reached them;
they leave in (step, stamp, input, arrival) order. The input's clock is the query's output bound.
State (rows still held, clocks, upstream frontiers) and output are written to the query's folder
per batch id, so a batch that Spark replays after a crash is recognised and not delivered twice.
"""
from __future__ import annotations

import json
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from ...log import atomic_write
from ...plan import Field
from ...types import arrow_type
from ..output import OutputRow, ReleasedBatch
from .frames import frame_values, origins_of
from .host import FrontierState
from .inputs import InputSpec, InputState, resolve_input


class Sink:
    def __init__(self, folder: Path, fields: list[Field], spec: InputSpec, upstream: dict, durable: bool = True):
        """``upstream`` maps a stage index to ``(operator, number of buckets)``."""
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
        self.processed_seq = 0
        self.input_state = InputState()
        self.frontiers = {y: FrontierState() for y in upstream}
        self.last_bound = None
        self._load()

    # ------------------------------------------------------------------ persistence

    def _load(self) -> None:
        p = self.folder / "state.json"
        if not p.exists():
            return
        s = json.loads(p.read_text())
        self.batch_id = s["batch_id"]
        self.processed_seq = s["processed_seq"]
        self.last_bound = s.get("last_bound")
        with open(self.folder / s["state"], "rb") as f:
            self.input_state, self.frontiers = pickle.load(f)
        for f in self.folder.glob("out-*.arrow"):
            if int(f.stem.split("-")[1]) > self.batch_id:
                f.unlink()

    def history(self) -> list[ReleasedBatch]:
        """Everything this sink released before (for a query resumed in a new process)."""
        out = []
        for f in sorted(self.folder.glob("out-*.arrow")):
            out.extend(self._read_out(f))
        return out

    def _read_out(self, f: Path) -> list[ReleasedBatch]:
        t = pa.ipc.open_file(pa.memory_map(str(f))).read_all()
        bounds = {int(k): v for k, v in json.loads(t.schema.metadata[b"bounds"]).items()}
        return self._batches(t, bounds)

    def _commit(self, batch_id: int, out: pa.Table, bounds: dict[int, int]) -> None:
        if out.num_rows or bounds:
            meta = {b"bounds": json.dumps({str(k): v for k, v in bounds.items()}).encode()}
            sink = pa.BufferOutputStream()
            t = out.replace_schema_metadata(meta)
            with pa.ipc.new_file(sink, t.schema) as w:
                w.write_table(t)
            atomic_write(self.folder / f"out-{batch_id:012d}.arrow", sink.getvalue().to_pybytes(), self.durable)
        name = f"state-{batch_id:012d}.pickle"
        atomic_write(self.folder / name, pickle.dumps((self.input_state, self.frontiers)), self.durable)
        atomic_write(self.folder / "state.json",
                     json.dumps({"batch_id": batch_id, "processed_seq": self.processed_seq, "state": name,
                                 "last_bound": self.last_bound}).encode(), self.durable)
        for f in self.folder.glob("state-*.pickle"):
            if f.name != name:
                f.unlink()

    # ------------------------------------------------------------------ a micro-batch

    def process(self, batch_id: int, pdf: pd.DataFrame) -> list[ReleasedBatch] | None:
        """Release what this batch allows; None when Spark replays a batch already done."""
        if batch_id <= self.batch_id:
            return None
        origins, end = origins_of(pdf, self.upstream, self.frontiers)
        rows = pdf[pdf["ev"] == 0]
        usable, clock = resolve_input(self.spec, rows, origins, self.input_state)
        vals = frame_values(usable, 0, self.fields)
        out = pa.Table.from_arrays(
            [pa.array(usable["rel"].to_numpy(dtype=np.int64), pa.int64()),
             pa.array(usable["ort"].to_numpy(dtype=np.int64), pa.int64())] +
            [pa.array([v[i] for v in vals], type=self.out_schema.field(2 + i).type) for i in range(self.nv)],
            schema=self.out_schema)
        bounds = {}
        for s, b in zip(clock.seqs.tolist(), clock.vals.tolist()):
            if b != self.last_bound:
                bounds[s] = b
                self.last_bound = b
        self.processed_seq = max(self.processed_seq, end)
        self.batch_id = batch_id
        self._commit(batch_id, out, bounds)
        return self._batches(out, bounds)

    def _batches(self, out: pa.Table, bounds: dict[int, int]) -> list[ReleasedBatch]:
        by: dict[int, list[OutputRow]] = {}
        if out.num_rows:
            cols = out.to_pydict()
            vals = list(zip(*[cols[f"v{j}"] for j in range(self.nv)])) if self.nv else [()] * out.num_rows
            for s, rt, v in zip(cols["step"], cols["rowtime"], vals):
                by.setdefault(s, []).append(OutputRow(s, rt, v))
        return [ReleasedBatch(s, by.get(s, []), bounds.get(s)) for s in sorted(set(by) | set(bounds))]
