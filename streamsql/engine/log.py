"""The durable, append-only event log of a workspace.

What queries read is the *stream log*: per named stream, the rows as they leave the stream and
the stream's bound changes, each entry stamped with the sequence number of the injected event
that caused it. It is stored as Arrow IPC segment files, one per stream per append, under
``log/<stream uid>/<first seq>-<last seq>.arrow``, and read memory-mapped.

Commit protocol (so that the log never changes below an offset a reader has seen):
1. segment files are written to a temporary name, fsynced and renamed into place;
2. the catalog snapshot (which records the committed sequence number) is replaced;
3. ``log/HEAD`` is replaced with the committed sequence number.
Readers only trust entries up to ``HEAD``. On open, segments past the catalog's sequence number
(a crash between 1 and 2) are deleted, and HEAD is rewritten from the catalog (crash between 2
and 3).

One exception: rows a query's operator refused after their event was committed (the Spark
runtime learns them from its stages) are appended to the error stream at the steps that refused
them, as *late segments* (``<first>-<last>.<n>.arrow``), in an error-only commit (steps 1 and 2).
Readers of the error stream that are already past those steps do not see them; everything else
(relational queries over the error stream's history, a reopened workspace) does.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .plan import Field
from .types import arrow_type

ROW, BOUND = 0, 1

_SEG_RE = re.compile(r"^(\d{20})-(\d{20})(?:\.(\d+))?\.arrow$")


def entry_schema(fields: list[Field]) -> pa.Schema:
    """Columns of a stream's log: sequence number, kind (ROW/BOUND), rowtime, the stream's
    bound after the event, then the stream's own columns (positional names ``c0, c1, ...``
    so that renaming a column never rewrites the log)."""
    cols = [pa.field("seq", pa.int64(), nullable=False), pa.field("kind", pa.int8(), nullable=False),
            pa.field("rowtime", pa.int64(), nullable=False), pa.field("clock", pa.int64(), nullable=False)]
    cols += [pa.field(f"c{i}", arrow_type(f.type)) for i, f in enumerate(fields)]
    return pa.schema(cols)


def atomic_write(path: Path, data: bytes, durable: bool = True) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)
    if durable:
        _fsync_dir(path.parent)


def _fsync_dir(d: Path) -> None:
    fd = os.open(d, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_head(root: Path) -> int:
    try:
        return int(json.loads((Path(root) / "log" / "HEAD").read_text())["seq"])
    except FileNotFoundError:
        return 0


@dataclass
class _Segment:
    first: int
    last: int
    path: Path
    late: int = 0           # 0, or the number of a late segment (appended after its steps)


class EventLog:
    """Writer (the workbench process) and reader (any process, e.g. Spark's source) of the log."""

    def __init__(self, root: str | Path, durable: bool = True):
        self.root = Path(root)
        self.dir = self.root / "log"
        self.durable = durable
        self._segments: dict[str, list[_Segment]] = {}
        self._listed_at: dict[str, int] = {}

    # ------------------------------------------------------------------ writing

    def write_segments(self, tables: dict[str, pa.Table], late: bool = False) -> None:
        """Step 1 of a commit: one segment file per stream (entries of one append). ``late``:
        entries at steps already committed (a late segment, see the module doc)."""
        for uid, table in tables.items():
            if table.num_rows == 0:
                continue
            d = self.dir / uid
            d.mkdir(parents=True, exist_ok=True)
            seqs = table.column("seq")
            first, last = pc.min(seqs).as_py(), pc.max(seqs).as_py()
            path = d / f"{first:020d}-{last:020d}.arrow"
            n = 0
            while late and path.exists():
                n += 1
                path = d / f"{first:020d}-{last:020d}.{n}.arrow"
            if path.exists():  # a retried append after a crash: same content, keep one copy
                path.unlink()
            sink = pa.BufferOutputStream()
            with pa.ipc.new_file(sink, table.schema) as w:
                w.write_table(table)
            atomic_write(path, sink.getvalue().to_pybytes(), self.durable)
            segs = self._segments.setdefault(uid, [])
            segs.append(_Segment(first, last, path, n))
            if late:
                segs.sort(key=lambda x: (x.first, x.late))

    def write_head(self, seq: int) -> None:
        """Step 3 of a commit: readers may now see entries up to ``seq``."""
        self.dir.mkdir(parents=True, exist_ok=True)
        atomic_write(self.dir / "HEAD", json.dumps({"seq": seq}).encode(), self.durable)

    def truncate_after(self, seq: int) -> int:
        """Delete segments holding entries past ``seq`` (an interrupted commit). Returns how many."""
        n = 0
        if not self.dir.exists():
            return 0
        for d in self.dir.iterdir():
            if not d.is_dir():
                continue
            for p in d.iterdir():
                m = _SEG_RE.match(p.name)
                if p.name.endswith(".tmp") or (m and int(m.group(1)) > seq):
                    p.unlink()
                    n += 1
                elif m and int(m.group(2)) > seq:  # cannot happen with one append per file
                    raise RuntimeError(f"log segment {p} straddles the committed sequence {seq}")
        self._segments.clear()
        return n

    def drop_stream(self, uid: str) -> None:
        d = self.dir / uid
        if d.exists():
            for p in d.iterdir():
                p.unlink()
            d.rmdir()
        self._segments.pop(uid, None)

    # ------------------------------------------------------------------ reading

    def head(self) -> int:
        return read_head(self.root)

    def _list(self, uid: str) -> list[_Segment]:
        d = self.dir / uid
        segs = []
        if d.exists():
            for p in d.iterdir():
                m = _SEG_RE.match(p.name)
                if m:
                    segs.append(_Segment(int(m.group(1)), int(m.group(2)), p, int(m.group(3) or 0)))
        segs.sort(key=lambda s: (s.first, s.late))
        self._segments[uid] = segs
        return segs

    def read(self, uid: str, schema: pa.Schema, start: int, end: int) -> pa.Table:
        """Entries of stream ``uid`` with ``start < seq <= end``, in sequence order."""
        segs = self._segments.get(uid)
        if segs is None or not segs or segs[-1].last < end:
            segs = self._list(uid)
        parts = []
        overlap = False
        prev_last = None
        for s in segs:
            if s.last <= start or s.first > end:
                continue
            overlap = overlap or (prev_last is not None and s.first <= prev_last)
            prev_last = s.last if prev_last is None else max(prev_last, s.last)
            t = _read_file(s.path)
            if s.first <= start or s.last > end:
                seq = t.column("seq").to_numpy()
                lo = int(np.searchsorted(seq, start, side="right"))
                hi = int(np.searchsorted(seq, end, side="right"))
                t = t.slice(lo, hi - lo)
            parts.append(t)
        if not parts:
            return schema.empty_table()
        t = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        if overlap:   # late segments: entries back in step order (stable: appends keep their order)
            t = t.take(pc.sort_indices(t, [("seq", "ascending")]))
        return t


def _read_file(path: Path) -> pa.Table:
    # the table keeps the mapping alive; closing it here would pull the pages from under it
    return pa.ipc.open_file(pa.memory_map(str(path), "r")).read_all()
