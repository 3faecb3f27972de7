"""Everything injected survives the process: a reopened workspace has its streams, producers and
clocks, still rejects late rows, and a running query resumes from its checkpoint without losing or
repeating output. The first half runs in a separate process that is killed (SIGKILL)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from streamsql import LateRowError, Workbench
from streamsql.engine import time as T

import pytest

FIRST = textwrap.dedent("""
    import os, signal, sys
    from streamsql import Workbench
    wb = Workbench(sys.argv[1], engine=sys.argv[2])
    wb.execute("CREATE STREAM P (name VARCHAR(10)); CREATE STREAM Q (name VARCHAR(10))")
    q = wb.query("SELECT STREAM ROWTIME, name FROM P UNION ALL SELECT STREAM ROWTIME, name FROM Q", name="u")
    wb.insert("P", {"name": "p1"}, rowtime="2006-10-10 01:00:00")
    wb.insert("P", {"name": "p2"}, rowtime="2006-10-10 01:06:00")
    wb.insert("Q", {"name": "q1"}, rowtime="2006-10-10 01:02:00")
    q.wait()
    assert [r.values[0] for r in q.rows] == ["p1", "q1"], q.rows
    wb.insert("Q", {"name": "q2"}, rowtime="2006-10-10 01:04:00")   # step 4: may or may not be processed
    print("ready", flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_reopened_workspace_resumes_exactly(tmp_path, engine, request):
    if engine == "spark":
        request.getfixturevalue("spark")
    ws = tmp_path / "ws"
    r = subprocess.run([sys.executable, "-c", FIRST, str(ws), engine], capture_output=True, text=True, timeout=600)
    assert "ready" in r.stdout, r.stderr[-3000:]
    assert r.returncode == -9

    wb = Workbench(ws, engine=engine)
    try:
        # clocks and the log are back
        assert wb.clock("P") == T.parse_timestamp("2006-10-10 01:06:00")
        assert wb.clock("Q") == T.parse_timestamp("2006-10-10 01:04:00")
        assert wb.last_step == 4
        with pytest.raises(LateRowError):
            wb.insert("P", {"name": "late"}, rowtime="2006-10-10 01:05:00")      # step 5
        q = wb.queries["u"]
        assert q.running
        wb.punctuate("Q", "2006-10-10 01:10:00")                                   # step 6
        q.wait()
        assert [(r.step, r.values[0]) for r in q.rows] == [(3, "p1"), (3, "q1"), (4, "q2"), (6, "p2")]
    finally:
        wb.close()


def test_producers_and_pending_rows_survive(tmp_path):
    ws = tmp_path / "ws"
    wb = Workbench(ws, engine="local")
    wb.execute("CREATE STREAM S (v INTEGER)")
    wb.punctuate("S", "2006-10-10 10:00:00", producer="P1")
    wb.insert("S", {"v": 1}, rowtime="2006-10-10 10:05:00", producer="P2")   # held by P1
    wb.close()
    wb = Workbench(ws, engine="local")
    assert wb.catalog.producer_clocks("S") == {"P1": T.parse_timestamp("2006-10-10 10:00:00"),
                                                "P2": T.parse_timestamp("2006-10-10 10:05:00")}
    q = wb.query("SELECT STREAM ROWTIME, v FROM S")
    wb.detach("S", "P1")
    assert [(r.step, r.values) for r in q.rows] == [(3, (1,))]
    wb.close()


class _Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


def test_spark_query_state_is_json_and_a_pickle_in_its_place_runs_nothing(tmp_path, spark):
    """The Spark sink keeps its state as JSON; a pickle put in its place is a
    clear error naming the file when the workspace reopens (the query stops, the workspace and
    its streams stay usable), and unpickling never happens."""
    ws, marker = tmp_path / "ws", tmp_path / "ran"
    wb = Workbench(ws, engine="spark")
    try:
        wb.execute("CREATE STREAM P (name VARCHAR(10))")
        q = wb.query("SELECT STREAM FLOOR(P.ROWTIME TO HOUR) AS ROWTIME, COUNT(*) AS n FROM P "
                     "GROUP BY FLOOR(P.ROWTIME TO HOUR)", name="u")
        wb.insert("P", {"name": "p1"}, rowtime="2006-10-10 01:00:00")
        wb.insert("P", {"name": "p2"}, rowtime="2006-10-10 02:06:00")
        assert [r.values for r in q.wait().rows] == [(1,)]
    finally:
        wb.close()
    states = sorted((ws / "queries" / "u" / "sink").glob("state-*"))
    assert [p.suffix for p in states] == [".json"] and not list(ws.rglob("*.pickle"))
    assert states[0].read_bytes().startswith(b'{"format":"streamsql-state/2"')
    states[0].write_bytes(__import__("pickle").dumps(_Evil(marker)))

    wb = Workbench(ws, engine="spark")
    try:
        q = wb.queries["u"]
        assert not q.running and str(states[0]) in q.error and "not a streamsql state file" in q.error
        assert any(str(states[0]) in w for w in wb.open_warnings)
        wb.insert("P", {"name": "p3"}, rowtime="2006-10-10 03:06:00")     # the workspace goes on
        assert wb.clock("P") == T.parse_timestamp("2006-10-10 03:06:00")
    finally:
        wb.close()
    assert not marker.exists()
