"""The command line as a user runs it (a real process, a real Spark for the demo)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCEN = Path(__file__).resolve().parent.parent / "streamsql" / "scenarios"
CLI = [sys.executable, "-m", "streamsql.engine.cli"]


def cli(*args, timeout=300, env=None):
    return subprocess.run(CLI + [str(a) for a in args], capture_output=True, text=True, timeout=timeout, env=env)


def test_replay_prints_section_5_lines_local():
    r = cli("replay", SCEN / "filter_trains.sql", SCEN / "filter_trains.events.jsonl", "--engine", "local", "--bounds")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(l) for l in r.stdout.splitlines()]
    assert lines[0] == {"step": 1, "rowtime": "2006-10-10 10:00:00", "values": {"TICKER": "ORCL"}}
    assert [l["step"] for l in lines if "bound" in l] == [2, 3, 5]


def test_demo_prints_the_step_table_computed_by_spark(engine):
    from engine_support import env_for
    r = cli("demo", timeout=600, env=env_for(engine))       # Spark: the test session's shared engine
    assert r.returncode == 0, r.stderr
    table = r.stdout.split("\n\n")[-1]
    rows = [[c.strip() for c in l.split("|")] for l in table.strip().splitlines()]
    assert rows[0] == ["Step", "P", "Q", "Output"]
    by_step = {r[0]: r for r in rows[2:]}
    assert by_step["3"][2] == "01:02 q1" and by_step["3"][3] == "01:00 p1; 01:02 q1"
    assert by_step["5"][2] == "01:10 bound" and by_step["5"][3] == "01:06 p2"
    assert by_step["2"][3] == ""        # p2 waits for Q's clock
    assert "Spark" not in r.stdout and "WARN" not in r.stdout   # quiet logs


def test_sql_error_goes_to_stderr_with_position(tmp_path):
    sql = tmp_path / "bad.sql"
    sql.write_text("CREATE STREAM S (a INTEGER);\nSELECT STREAM b FROM S;\n")
    ev = tmp_path / "e.jsonl"
    ev.write_text("")
    r = cli("replay", sql, ev, "--engine", "local")
    assert r.returncode == 1 and r.stdout == ""
    assert "line 2:15" in r.stderr and "Column 'B' not found" in r.stderr
    assert "^" in r.stderr and "Traceback" not in r.stderr


def test_malformed_events_file(tmp_path):
    sql = tmp_path / "q.sql"
    sql.write_text("CREATE STREAM S (a INTEGER);\nSELECT STREAM * FROM S;\n")
    ev = tmp_path / "e.jsonl"
    ev.write_text('{"stream": "S", "rowtime": "2006-10-10 10:00:00", "values": {"a": 1}}\n\n{"stream": "S", "rowtime": "10:00"\n')
    r = cli("replay", sql, ev, "--engine", "local")
    assert r.returncode == 2 and f"{ev}:3" in r.stderr and "Traceback" not in r.stderr


def test_refused_events_print_error_lines_and_change_nothing(tmp_path):
    sql = tmp_path / "q.sql"
    sql.write_text("CREATE STREAM S (a INTEGER);\nSELECT STREAM ROWTIME, a FROM S;\n")
    ev = tmp_path / "e.jsonl"
    ev.write_text("\n".join(json.dumps(e) for e in [
        {"stream": "S", "bound": "2006-10-10 10:05:00"},
        {"stream": "S", "bound": "2006-10-10 10:00:00"},                 # backwards
        {"stream": "S", "rowtime": "2006-10-10 10:06:00", "values": {"a": "x"}},   # does not fit
        {"stream": "S", "rowtime": "2006-10-10 10:01:00", "values": {"a": 1}},     # late
        {"stream": "S", "rowtime": "2006-10-10 10:06:00", "values": {"a": 2}},
    ]))
    r = cli("replay", sql, ev, "--engine", "local")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(l) for l in r.stdout.splitlines()]
    assert lines[0]["step"] == 2 and "cannot move backwards" in lines[0]["error"]
    assert lines[1]["step"] == 3 and "INTEGER" in lines[1]["error"]
    assert lines[2] == {"step": 4, "late": {"stream": "S", "rowtime": "2006-10-10 10:01:00",
                                             "clock": "2006-10-10 10:05:00"}}
    assert lines[3] == {"step": 5, "rowtime": "2006-10-10 10:06:00", "values": {"A": 2}}
