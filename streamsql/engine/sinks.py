"""Writing a running query's released rows to files (Parquet or CSV) as they are released.

Each chunk of released rows becomes one file named by its first and last step, so a chunk
delivered twice (a resumed query replays what it released) rewrites the same file; the sink
also remembers the last step it wrote and skips anything at or before it. On the Spark engine
the files are written by Spark (one directory per chunk), on the local engine by pyarrow.
"""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from ..engine.errors import StreamSqlError, WorkspaceError

FORMATS = ("parquet", "csv")


class FileSink:
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
            out = self._columns(t)
            if self.q.engine == "spark":
                from .runtime.spark.session import get_session
                df = get_session().createDataFrame(out)
                w = df.coalesce(1).write.mode("overwrite")
                (w.option("header", "true").csv if self.format == "csv" else w.parquet)(str(self.path / name))
            else:
                if self.format == "parquet":
                    import pyarrow.parquet as pq
                    pq.write_table(out, self.path / f"{name}.parquet")
                else:
                    import pyarrow.csv as pcsv
                    pcsv.write_csv(out, self.path / f"{name}.csv")
            self.last_step = last
            self._mark.write_text(json.dumps({"last_step": last}))


def _last_step(mark: Path) -> int:
    try:
        step = json.loads(mark.read_bytes())["last_step"]
    except (ValueError, TypeError, KeyError) as e:
        raise WorkspaceError(f"{mark} is not a streamsql sink mark ({type(e).__name__}); remove it to "
                             f"write every released row again") from None
    if not isinstance(step, int):
        raise WorkspaceError(f"{mark} is not a streamsql sink mark (last_step {step!r:.40})")
    return step
