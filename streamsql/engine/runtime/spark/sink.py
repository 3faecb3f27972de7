"""The ordered sink: the last stage of every query, run in the driver by ``foreachBatch``.

It merges the rows of its input leaves (UNION ALL), releases each one at the first step where
the merge's present (the minimum of the leaves' clocks) reaches its stamp, orders rows released
together by (stamp, input, arrival), and records the output bound after every step. Its state
(rows still held, the clocks) and its output are written to the query's folder per batch id, so
a batch Spark replays after a crash is recognised and not delivered twice.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from ... import time as T
from ...log import atomic_write
from ...expr import rowtime_map_array
from ...plan import Field
from ...types import arrow_type
from ..output import OutputRow, ReleasedBatch
from .source import EV_TIMELINE, unpack_timeline
from .timeline import Timeline, release_positions, union_points

ROW_KEYS = ["seq", "ch", "sub", "T"]


@dataclass
class LeafClock:
    stream_index: int          # which stream of the source spec feeds this leaf
    maps: list                 # ROWTIME expressions between the stream and the merge
    initial: int               # the leaf's clock when the query started


class MergeSink:
    def __init__(self, folder: Path, fields: list[Field], leaves: list[LeafClock], post_maps: list,
                 durable: bool = True):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.fields = fields
        self.leaves = leaves
        self.post_maps = post_maps
        self.durable = durable
        self.nv = len(fields)
        self.out_schema = pa.schema([pa.field("step", pa.int64()), pa.field("rowtime", pa.int64())] +
                                    [pa.field(f"v{i}", arrow_type(f.type)) for i, f in enumerate(fields)])
        self.held_schema = pa.schema([pa.field(k, pa.int64()) for k in ROW_KEYS] +
                                     [pa.field("ort", pa.int64())] + list(self.out_schema)[2:])
        self.batch_id = -1
        self.clocks = [lc.initial for lc in leaves]     # raw stream clocks, per leaf
        self.held = self.held_schema.empty_table()
        self.processed_seq = 0
        self._load()

    # ------------------------------------------------------------------ persistence

    def _load(self) -> None:
        p = self.folder / "state.json"
        if not p.exists():
            return
        s = json.loads(p.read_text())
        self.batch_id = s["batch_id"]
        self.clocks = s["clocks"]
        self.processed_seq = s["processed_seq"]
        hp = self.folder / s["held"] if s.get("held") else None
        if hp and hp.exists():
            self.held = pa.ipc.open_file(pa.memory_map(str(hp))).read_all()
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
        bounds = json.loads(t.schema.metadata[b"bounds"])
        rows: dict[int, list[OutputRow]] = {}
        cols = t.to_pydict()
        for i in range(t.num_rows):
            rows.setdefault(cols["step"][i], []).append(
                OutputRow(cols["step"][i], cols["rowtime"][i], tuple(cols[f"v{j}"][i] for j in range(self.nv))))
        seqs = sorted(set(rows) | {int(k) for k in bounds})
        return [ReleasedBatch(s, rows.get(s, []), bounds.get(str(s))) for s in seqs]

    def _commit(self, batch_id: int, out: pa.Table, bounds: dict[int, int]) -> None:
        meta = {b"bounds": json.dumps({str(k): v for k, v in bounds.items()}).encode()}
        t = out.replace_schema_metadata(meta)
        if out.num_rows or bounds:
            self._write_table(self.folder / f"out-{batch_id:012d}.arrow", t)
        held_name = f"held-{batch_id:012d}.arrow"
        self._write_table(self.folder / held_name, self.held)
        atomic_write(self.folder / "state.json",
                     json.dumps({"batch_id": batch_id, "clocks": self.clocks, "processed_seq": self.processed_seq,
                                 "held": held_name}).encode(), self.durable)
        for f in self.folder.glob("held-*.arrow"):
            if f.name != held_name:
                f.unlink()

    def _write_table(self, path: Path, t: pa.Table) -> None:
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, t.schema) as w:
            w.write_table(t)
        atomic_write(path, sink.getvalue().to_pybytes(), self.durable)

    # ------------------------------------------------------------------ a micro-batch

    def process(self, batch_id: int, t: pa.Table) -> list[ReleasedBatch] | None:
        """Release what this batch allows; None when Spark replays a batch already done."""
        if batch_id <= self.batch_id:
            return None
        ev = t.column("ev").to_numpy(zero_copy_only=False)
        tl_rows = np.nonzero(ev == EV_TIMELINE)[0]
        per_stream: dict[int, list] = {}
        end = self.processed_seq
        for i in tl_rows:
            start, e, streams = unpack_timeline(t.column("tl")[int(i)].as_py())
            end = max(end, e)
            for k, (s, v) in enumerate(streams):
                per_stream.setdefault(k, []).append((s, v))
        stream_tl = {}
        for k, parts in per_stream.items():
            s = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
            v = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0, np.int64)
            order = np.argsort(s, kind="stable")
            stream_tl[k] = (s[order], v[order])
        leaf_tl = []
        for j, lc in enumerate(self.leaves):
            s, v = stream_tl.get(lc.stream_index, (np.zeros(0, np.int64), np.zeros(0, np.int64)))
            raw = Timeline(s, np.maximum.accumulate(np.maximum(v, self.clocks[j])) if len(v) else v,
                           self.clocks[j])
            leaf_tl.append(raw)
        points = union_points(*[x.seqs for x in leaf_tl])
        mapped = [x.mapped(lc.maps) for x, lc in zip(leaf_tl, self.leaves)]
        if len(points):
            present = np.min(np.stack([m.at(points) for m in mapped]), axis=0)
        else:
            present = np.zeros(0, np.int64)

        rows = t.filter(pa.compute.equal(t.column("ev"), 0)).drop_columns(["ev", "tl"])
        rows = rows.select(self.held_schema.names).cast(self.held_schema) if rows.num_rows else self.held_schema.empty_table()
        held_n = self.held.num_rows
        allrows = pa.concat_tables([self.held, rows]) if held_n else rows
        n = allrows.num_rows
        released_tables = []
        bounds: dict[int, int] = {}
        out_rows = self.out_schema.empty_table()
        if n and len(points):
            seq = allrows.column("seq").to_numpy()
            stamp = allrows.column("T").to_numpy()
            avail = np.searchsorted(points, seq, side="left")
            avail[:held_n] = 0
            pos = release_positions(present, stamp, avail)
            rel = pos < len(points)
            idx = np.nonzero(rel)[0]
            rel_seq = points[pos[idx]]
            keys = (allrows.column("sub").to_numpy()[idx], seq[idx], allrows.column("ch").to_numpy()[idx],
                    stamp[idx], rel_seq)
            order = idx[np.lexsort(keys)]
            rel_sorted = points[pos[order]]
            taken = allrows.take(pa.array(order))
            cols = [pa.array(rel_sorted, pa.int64()), taken.column("ort")] + \
                   [taken.column(f"v{i}") for i in range(self.nv)]
            out_rows = pa.Table.from_arrays(cols, schema=self.out_schema) if len(order) else out_rows
            keep = np.nonzero(~rel)[0]
            self.held = allrows.take(pa.array(keep)) if len(keep) < n else allrows
        elif n:
            self.held = allrows
        else:
            self.held = self.held_schema.empty_table()
        if len(points):
            out_bound = present
            for e in self.post_maps:
                out_bound = rowtime_map_array(e, out_bound)
            prev = None
            for p, b in zip(points.tolist(), out_bound.tolist()):
                if b != prev:
                    bounds[p] = b
                    prev = b
        for j, x in enumerate(leaf_tl):
            self.clocks[j] = x.last
        self.processed_seq = end
        self.batch_id = batch_id
        self._commit(batch_id, out_rows, bounds)
        return self._batches(out_rows, bounds)

    def _batches(self, out: pa.Table, bounds: dict[int, int]) -> list[ReleasedBatch]:
        by: dict[int, list[OutputRow]] = {}
        if out.num_rows:
            cols = out.to_pydict()
            vals = list(zip(*[cols[f"v{j}"] for j in range(self.nv)])) if self.nv else [()] * out.num_rows
            for s, rt, v in zip(cols["step"], cols["rowtime"], vals):
                by.setdefault(s, []).append(OutputRow(s, rt, v))
        return [ReleasedBatch(s, by.get(s, []), bounds.get(s)) for s in sorted(set(by) | set(bounds))]
