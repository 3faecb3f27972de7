"""Output sinks: a running query's released rows written to Parquet/CSV as they are released,
through Spark on the Spark engine; a reopened workspace neither loses nor repeats rows."""
from __future__ import annotations

import pyarrow.csv as pcsv
import pyarrow.dataset as ds
import pytest

from streamsql import Workbench
from streamsql.engine.cli import read_events

from conftest import ROOT

SCEN = ROOT / "streamsql" / "scenarios"


def read(path, fmt):
    if fmt == "parquet":
        t = ds.dataset(str(path), format="parquet", exclude_invalid_files=True).to_table()
    else:
        files = sorted(p for p in path.rglob("*.csv"))
        import pyarrow as pa
        t = pa.concat_tables([pcsv.read_csv(f) for f in files])
    return sorted(zip(t.column("STEP").to_pylist(), t.column("NAME").to_pylist()))


@pytest.mark.parametrize("engine,fmt", [("local", "parquet"), ("local", "csv"), ("spark", "parquet"), ("spark", "csv")])
def test_released_rows_are_appended_to_files(tmp_path, engine, fmt, request):
    if engine == "spark":
        request.getfixturevalue("spark")
    events = read_events(SCEN / "union_merge.events.jsonl")
    ws, out = tmp_path / "ws", tmp_path / "out"
    wb = Workbench(ws, engine=engine)
    q = [r.query for r in wb.execute((SCEN / "union_merge.sql").read_text()) if r.query][0]
    wb.inject(events[:3])
    q.wait()
    q.write_to(out, fmt)                       # rows released before: written at once
    assert read(out, fmt) == [(3, "p1"), (3, "q1")]
    wb.inject(events[3:4])
    q.wait()
    assert read(out, fmt) == [(3, "p1"), (3, "q1"), (4, "q2")]
    wb.close()
    wb = Workbench(ws, engine=engine)          # reopened: the sink goes on, without repeating
    wb.inject(events[4:])
    wb.queries[q.name].wait()
    assert read(out, fmt) == [(3, "p1"), (3, "q1"), (4, "q2"), (5, "p2")]
    wb.close()
