"""The operator-error channel (PLAN decision 2): rows an operator refuses reach ``q.errors`` with
the step that refused them and the error stream, on both runtimes; on Spark they travel from
the stage that refused them through every later stage to the sink, and are appended to the
error stream as late log segments (an error-only commit: no new step)."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from streamsql.engine import time as T
from streamsql.engine.catalog import ERROR_FIELDS, ERROR_STREAM, Event
from streamsql.engine.log import EventLog, entry_schema
from streamsql.engine.operators.base import OperatorError
from streamsql.engine.plan import Field
from streamsql.engine.types import parse_type_name
from streamsql.engine.workbench import Workbench

DAY = "2021-03-01 "


def ts(hms: str) -> int:
    return T.parse_timestamp(DAY + hms)


# readings arrive out of order; the T-sort (WITHIN 1 minute) refuses ts 10:00:12 at step 5 and
# ts 10:01:00 at step 7 (W is 10:01:15 then); an hourly GROUP BY counts what the T-sort lets through
READINGS = [("10:00:30", "10:00:10", "A"), ("10:00:40", "10:00:05", "B"), ("10:01:00", "10:00:50", "A"),
            ("10:01:20", "10:02:15", "B"), ("10:01:30", "10:00:12", "C"), ("10:01:40", "10:01:30", "C"),
            ("10:01:50", "10:01:00", "D"), ("10:05:00", "10:04:00", "A")]
COUNTED = """SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, sensor, COUNT(*) AS n
FROM (SELECT STREAM ts AS ROWTIME, sensor FROM Readings ORDER BY ts WITHIN INTERVAL '1' MINUTE)
GROUP BY FLOOR(ROWTIME TO HOUR), sensor"""


def error_rows(wb) -> list[dict]:
    d = wb.catalog.streams[ERROR_STREAM]
    t = wb.log.read(d.uid, entry_schema(d.fields), 0, wb.last_step).to_pylist()
    return [dict({f.name: r[f"c{i}"] for i, f in enumerate(d.fields)}, step=r["step"]) for r in t]


def run(tmp_path, engine: str, **kw):
    wb = Workbench(tmp_path / "ws", engine=engine, **kw)
    wb.execute("CREATE STREAM Readings (ts TIMESTAMP, sensor VARCHAR(5))")
    q = wb.query(COUNTED)
    wb.inject([Event("Readings", "row", ts(rt), {"ts": ts(t), "sensor": s}) for rt, t, s in READINGS])
    q.wait()
    return wb, q


def test_operator_error_json_round_trip():
    e = OperatorError(7, "LATE_ROW", "late", ts("10:01:15"), ts("10:01:00"), '{"S":"D"}', "WARNING", None)
    assert OperatorError.from_json(e.to_json()) == e
    e2 = OperatorError(3, "DIVISION_BY_ZERO", "x / 0", 5, 4, "{}", "ERROR", "22012")
    assert OperatorError.from_json(e2.to_json()) == e2


def test_late_segments_keep_the_log_in_step_order(tmp_path):
    fields = [Field("a", parse_type_name("INTEGER"))]
    schema = entry_schema(fields)

    def table(steps):
        return pa.table({"step": steps, "kind": [0] * len(steps), "rowtime": steps, "clock": steps,
                         "c0": [s * 10 for s in steps]}, schema=schema)
    log = EventLog(tmp_path)
    log.write_segments({"u": table([1, 3, 5])})
    log.write_segments({"u": table([6])})
    # late segments carry the workspace's late commit number (a reopened workspace checks it)
    log.write_segments({"u": table([3])}, late=1)
    log.write_segments({"u": table([1, 3, 5])}, late=2)
    for reader in (log, EventLog(tmp_path)):              # this process's listing, and a fresh one
        assert reader.read("u", schema, 0, 6).column("step").to_pylist() == [1, 1, 3, 3, 3, 5, 5, 6]
        assert reader.read("u", schema, 2, 5).column("step").to_pylist() == [3, 3, 3, 5, 5]
    assert sorted(p.name for p in (tmp_path / "log" / "u").iterdir()) == [
        "00000000000000000001-00000000000000000005.2.arrow", "00000000000000000001-00000000000000000005.arrow",
        "00000000000000000003-00000000000000000003.1.arrow", "00000000000000000006-00000000000000000006.arrow"]
    # a reopened workspace keeps late segments (their steps are committed)
    assert EventLog(tmp_path).truncate_after(6) == 0


def test_errors_of_a_stage_pass_through_later_stages_once(tmp_path, spark):
    # local: the oracle
    wbl, ql = run(tmp_path / "local", "local")
    want = [(e.step, e.name, e.data_rowtime, e.bound) for e in ql.errors]
    assert want == [(5, "LATE_ROW", ts("10:00:12"), ts("10:01:15")), (7, "LATE_ROW", ts("10:01:00"), ts("10:01:15"))]
    local_rows = error_rows(wbl)
    wbl.close()
    for kw in ({"buckets": 2}, {"buckets": 3, "batch_events": 1}):
        wbs, qs = run(tmp_path / f"spark{kw['buckets']}", "spark", **kw)
        try:
            assert [(e.step, e.name, e.data_rowtime, e.bound) for e in qs.errors] == want
            assert qs.errors == ql.errors
            rows = error_rows(wbs)
            # the same rows in ERRORS (ERROR_TIME aside), each once, at the steps that refused them
            strip = [{k: v for k, v in r.items() if k != "ERROR_TIME"} for r in rows]
            assert strip == [{k: v for k, v in r.items() if k != "ERROR_TIME"} for r in local_rows]
            assert [r["step"] for r in rows] == [r["STEP"] for r in rows] == [5, 7]
            assert [r["STREAM_NAME"] for r in rows] == ["READINGS", "READINGS"]
            assert [(r.step, r.values) for r in qs.rows] == [(r.step, r.values) for r in ql.rows]
        finally:
            wbs.close()


def test_errors_are_restored_not_rewritten_when_a_workspace_reopens(tmp_path, spark):
    wb, q = run(tmp_path, "spark")
    n = len(error_rows(wb))
    errors = list(q.errors)
    wb.close()
    wb2 = Workbench(tmp_path / "ws", engine="spark")
    try:
        q2 = wb2.queries[q.name]
        q2.wait()
        assert q2.errors == errors and len(error_rows(wb2)) == n == 2
        assert ERROR_FIELDS[-1].name == "STEP"
    finally:
        wb2.close()


def test_a_late_error_commit_cut_by_a_crash_is_torn_and_committed_again_once(tmp_path, spark):
    """The Spark sink writes a batch's refused rows to the query's folder, then the workbench
    appends them to ERRORS as a late segment and lists it in the catalog. A process killed between
    the two (the segment written, the catalog not) leaves a segment the catalog does not list: it
    is moved to torn/ with a warning, and the resumed query commits those rows again, once."""
    import json
    wb, q = run(tmp_path, "spark", buckets=2)
    want = [{k: v for k, v in r.items() if k != "ERROR_TIME"} for r in error_rows(wb)]
    assert [r["STEP"] for r in want] == [5, 7]
    wb.close()
    cat_path = tmp_path / "ws" / "catalog.json"
    j = json.loads(cat_path.read_text())
    assert j["catalog"]["late_commits"] >= 1
    d = wb.catalog.streams[ERROR_STREAM].uid
    late = sorted(f"{d}/{p.name}" for p in (tmp_path / "ws" / "log" / d).glob("*.*.arrow"))
    assert len(late) == j["catalog"]["late_commits"], late
    # the crash: neither the late commits nor the deliveries are in the catalog snapshot
    j["catalog"]["late_commits"] = 0
    j["queries"][q.name]["errors_batch"] = -1
    cat_path.write_text(json.dumps(j))
    wb2 = Workbench(tmp_path / "ws", engine="spark")
    try:
        torn = [w for w in wb2.open_warnings if "late error segment whose commit did not finish" in w]
        assert len(torn) == len(late), wb2.open_warnings
        assert all((tmp_path / "ws" / "torn" / n).exists() for n in late)
        q2 = wb2.queries[q.name]
        q2.wait()
        got = [{k: v for k, v in r.items() if k != "ERROR_TIME"} for r in error_rows(wb2)]
        assert got == want                      # each refused row once, at its step
        assert [(e.step, e.name) for e in q2.errors] == [(5, "LATE_ROW"), (7, "LATE_ROW")]
    finally:
        wb2.close()
    # and the commit made on reopening holds: a third open finds nothing torn, the same rows
    wb3 = Workbench(tmp_path / "ws", engine="spark")
    try:
        assert not wb3.open_warnings, wb3.open_warnings
        assert [{k: v for k, v in r.items() if k != "ERROR_TIME"} for r in error_rows(wb3)] == want
    finally:
        wb3.close()


def test_a_late_segment_of_an_older_workspace_is_kept(tmp_path):
    """A catalog written before late segments were listed: its late segments are committed."""
    import json
    wb = Workbench(tmp_path / "ws", engine="local")
    wb.execute("CREATE STREAM S (a INTEGER)")
    wb.insert("S", {"a": 1}, rowtime="2021-03-01 10:00:00")
    d = wb.catalog.streams[ERROR_STREAM]
    fields = d.fields
    wb.close()
    log = EventLog(tmp_path / "ws")
    row = {"step": [1], "kind": [0], "rowtime": [ts("10:00:00")], "clock": [ts("10:00:00")]}
    schema = entry_schema(fields)
    row.update({f"c{i}": [None] for i in range(len(fields))})
    log.write_segments({d.uid: pa.table(row, schema=schema)}, late=3)
    name = f"{d.uid}/00000000000000000001-00000000000000000001.3.arrow"
    cat = tmp_path / "ws" / "catalog.json"
    j = json.loads(cat.read_text())
    del j["catalog"]["late_commits"]
    cat.write_text(json.dumps(j))
    wb = Workbench(tmp_path / "ws", engine="local")
    try:
        assert not wb.open_warnings and (tmp_path / "ws" / "log" / name).exists()
        assert wb.catalog.late_commits == 3       # the next late commit is numbered 4
    finally:
        wb.close()
