"""Writing a running query's released rows to files (Parquet or CSV) as they are released.

Each chunk of released rows becomes one file named by its first and last step, so a chunk
delivered twice (a resumed query replays what it released) rewrites the same file; the sink
also remembers the last step it wrote and skips anything at or before it. Each runtime writes
the files its own way (``Runtime.file_sink``): Spark one directory per chunk
(:mod:`~streamsql.engine.runtime.spark.sinks`), the local runtime one file with pyarrow
(:mod:`~streamsql.engine.runtime.local.sinks`).
"""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from .errors import StreamSqlError, WorkspaceError

FORMATS = ("parquet", "csv")


class FileSink:
    """Appends a query's released rows to files in ``path``, skipping steps already written."""

    def __init__(self, query, path: Path, format: str):
        if format not in FORMATS:
            raise StreamSqlError(f"unknown sink format {format!r}; use one of {', '.join(FORMATS)}")
        self.q = query
        self.path = Path(path)
        self.format = format
        self.path.mkdir(parents=True, exist_ok=True)
        self._mark = self.path / "_streamsql_sink.json"
        self.last_step = _last_step(self._mark) if self._mark.exists() else -1

    def _columns(self, t: pa.Table) -> pa.Table:
        fields = self.q.fields
        cols = [t.column("step"), pc.cast(t.column("rowtime"), pa.timestamp("ms"))]
        names = ["STEP", "ROWTIME"]
        for j, f in enumerate(fields):
            c = t.column(f"v{j}")
            if f.type.name == "TIMESTAMP":
                c = pc.cast(c, pa.timestamp("ms"))
            cols.append(c)
            names.append(f.name)
        return pa.Table.from_arrays(cols, names=names)

    def write(self, chunks: list[pa.Table]) -> None:
        for t in chunks:
            if t is None or not t.num_rows:
                continue
            t = t.filter(pc.greater(t.column("step"), self.last_step))
            if not t.num_rows:
                continue
            first, last = t.column("step")[0].as_py(), t.column("step")[-1].as_py()
            name = f"steps-{first:012d}-{last:012d}"
            self.write_files(self._columns(t), name)
            self.last_step = last
            self._mark.write_text(json.dumps({"last_step": last}))

    def write_files(self, table: pa.Table, name: str) -> None:
        """Write one chunk (``STEP, ROWTIME`` and the select list) as ``name`` (the runtime's
        subclass: rewriting the same name replaces it)."""
        raise NotImplementedError


def _last_step(mark: Path) -> int:
    try:
        step = json.loads(mark.read_bytes())["last_step"]
    except (ValueError, TypeError, KeyError) as e:
        raise WorkspaceError(f"{mark} is not a streamsql sink mark ({type(e).__name__}); remove it to "
                             f"write every released row again") from None
    if not isinstance(step, int):
        raise WorkspaceError(f"{mark} is not a streamsql sink mark (last_step {step!r:.40})")
    return step
