"""Sessions recorded as scenarios (docs/howto/record.md): the event journal, ``Workbench.save_scenario`` and
``%streamsql save``. The acceptance round trip: every scenario (streamsql/scenarios, tests/scenarios) replayed in a
workbench, saved, and the saved files replayed by ``streamsql replay`` give the scenario's own
expected lines."""
from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from streamsql import Event, Workbench
from streamsql.engine import time as T
from streamsql.engine.cli import read_events, replay
from streamsql.engine.recording import SaveError

from conftest import ALL_SCENARIOS, PROJECT_SCENARIOS
from conftest import SCENARIOS as SEED_SCENARIOS
from scenario_compare import load, mismatch

SCENARIOS = ALL_SCENARIOS
D = "2006-10-10 "


def t(hhmm: str) -> int:
    return T.parse_timestamp(D + hhmm)


def replay_cli(stem: Path, engine: str = "local", bounds: bool = True) -> list[dict]:
    """``streamsql replay STEM.sql STEM.events.jsonl --bounds --engine ENGINE``: local in a real
    process; Spark in this one (the session's Spark), through the same function."""
    if engine == "spark":
        out = io.StringIO()
        replay(Path(f"{stem}.sql").read_text(), read_events(f"{stem}.events.jsonl"), engine="spark",
               bounds=bounds, out=out)
        return [json.loads(x) for x in out.getvalue().splitlines()]
    args = ["replay", f"{stem}.sql", f"{stem}.events.jsonl", "--engine", engine] + (["--bounds"] if bounds else [])
    r = subprocess.run([sys.executable, "-m", "streamsql.engine.cli", *args], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return [json.loads(x) for x in r.stdout.splitlines()]


def lines_of(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def play(wb: Workbench, base: Path):
    """Run a scenario's statements and events in ``wb`` as a session would; its query."""
    sql, events, _ = load(base)
    q = [r.query for r in wb.execute(sql) if r.query is not None][-1]
    wb.inject(read_events(events))
    return q.wait()


# --------------------------------------------------------------------------- the round trip

@pytest.mark.parametrize("base", SCENARIOS, ids=lambda p: p.name)
def test_round_trip_local(base, tmp_path):
    _, _, expected = load(base)
    with Workbench(tmp_path / "ws", engine="local") as wb:
        play(wb, base)
        saved = wb.save_scenario(tmp_path / base.name)
    stem = tmp_path / base.name
    assert saved.prefix == 0 and saved.event_count == len(read_events(f"{base}.events.jsonl"))
    assert mismatch(lines_of(saved.expected), expected) is None       # what the query released
    replayed = replay_cli(stem)
    assert mismatch(replayed, expected) is None, mismatch(replayed, expected)
    assert replayed == lines_of(saved.expected)                        # the saved file, line for line


def test_round_trip_spark(tmp_path, spark):
    base = SEED_SCENARIOS / "join3_full_outer"
    _, _, expected = load(base)
    with Workbench(tmp_path / "ws", engine="spark") as wb:
        play(wb, base)
        saved = wb.save_scenario(tmp_path / "j3")
    assert mismatch(lines_of(saved.expected), expected) is None
    assert replay_cli(tmp_path / "j3", engine="spark") == lines_of(saved.expected)


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_a_session_with_calculator_errors_replays_identically(engine, tmp_path, request):
    """The rows a query refused are ``calc_error`` lines of the saved expected output, at their
    events' lines, named as the replay names them (the replay's query is q1, the stream as the
    events file spells it), so the saved files replay line for line."""
    if engine == "spark":
        request.getfixturevalue("spark")
    with Workbench(tmp_path / "ws", engine=engine) as wb:
        wb.execute("CREATE STREAM Readings (a INTEGER, b INTEGER, s VARCHAR(5))")
        q = wb.query("SELECT STREAM ROWTIME, a / b AS q, CAST(s AS INTEGER) AS n FROM Readings WHERE a > 0",
                     name="ratio")
        wb.insert("Readings", {"a": 7, "b": 0, "s": "1"}, rowtime=D + "10:00")    # 7 / 0
        wb.insert("Readings", {"a": 8, "b": 2, "s": "x"}, rowtime=D + "10:01")    # 'x' is no INTEGER
        wb.insert("Readings", {"a": -1, "b": 0, "s": "x"}, rowtime=D + "10:02")   # the WHERE drops it first
        wb.insert("Readings", {"a": 6, "b": 3, "s": "4"}, rowtime=D + "10:03")    # q 2, n 4
        assert [e.message for e in q.wait().errors][0].startswith("Query ratio: division by zero")
        saved = wb.save_scenario(tmp_path / "ratio")
    lines = lines_of(saved.expected)
    errors = [(x["step"], x["calc_error"]["name"], x["calc_error"]["sqlstate"], x["calc_error"]["stream"],
               x["calc_error"]["rowtime"]) for x in lines if "calc_error" in x]
    assert errors == [(1, "DIVISION_BY_ZERO", "22012", "Readings", D + "10:00:00"),
                      (2, "INVALID_CAST", "22018", "Readings", D + "10:01:00")]
    assert lines[0]["calc_error"]["message"] == ('Query q1: division by zero in "a / b" with a = 7, b = 0 '
                                                 '(SQLSTATE 22012)')
    assert [(x["step"], x["values"]) for x in lines if "values" in x] == [(4, {"Q": 2, "N": 4})]
    assert replay_cli(tmp_path / "ratio") == lines


def test_the_saved_sql_holds_pumps_and_what_they_read(tmp_path):
    with Workbench(tmp_path / "ws", engine="local") as wb:
        play(wb, PROJECT_SCENARIOS / "pump_chain")
        saved = wb.save_scenario(tmp_path / "chain")
    sql = saved.sql.read_text()
    order = [sql.index(x) for x in ("CREATE STREAM Raw", "CREATE STREAM Big", "CREATE STREAM Hourly",
                                    "CREATE PUMP P1", "CREATE PUMP P2", "SELECT STREAM ROWTIME, ticker, total")]
    assert order == sorted(order)
    # the pumps' own producer attachments are made by the DDL, not by events
    assert all(e["stream"] == "Raw" for e in lines_of(saved.events))


# --------------------------------------------------------------------------- a session built by hand

def session(wb: Workbench):
    """Events before the query (a held row, two producers, a strict bound), then late, refused and
    bulk-loaded events after it. Returns the query."""
    wb.execute("CREATE STREAM P (name VARCHAR(10)); CREATE STREAM Q (name VARCHAR(10)); CREATE STREAM Other (x INTEGER)")
    wb.inject([Event("P", "attach", producer="P1"), Event("P", "attach", producer="P2"),
               Event("P", "row", t("10:00"), {"name": "a"}, producer="P1"), Event("Other", "row", t("10:00"), {"x": 1}),
               Event("P", "bound", t("09:58"), producer="P2"), Event("P", "row", t("10:02"), {"name": "b"}, producer="P1"),
               Event("Q", "bound", t("10:01"), strict=True)])
    q = wb.query("SELECT STREAM ROWTIME, name FROM P UNION ALL SELECT STREAM ROWTIME, name FROM Q", name="merged")
    wb.inject([Event("P", "row", t("10:01"), {"name": "c"}, producer="P2"),
               Event("Q", "row", t("10:03"), {"name": "d"}),
               Event("Other", "row", t("09:00"), {"x": 2}),                       # not the query's
               Event("P", "detach", producer="P2"),
               Event("Q", "row", t("09:00"), {"name": "late"}),
               Event("P", "bound", t("09:00"), producer="P1"),                     # backwards: refused
               Event("Q", "row", t("10:04"), {"nme": "x"}),                        # no such column
               Event("Q", "bound", t("10:04"))])
    wb.load("Q", {"ROWTIME": [t("10:05"), t("10:06"), t("10:05"), t("10:07")], "name": ["e", "f", "g", None],
                  "BOUND": [False, False, False, True]})
    return q.wait()


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_a_late_started_query_is_saved_with_the_state_it_found(engine, tmp_path, request):
    if engine == "spark":
        request.getfixturevalue("spark")
    with Workbench(tmp_path / "ws", engine=engine) as wb:
        q = session(wb)
        wb.stop_query("merged")
        wb.insert("Q", {"name": "after"}, rowtime="2006-10-10 10:09:00")     # the stopped query saw none
        saved = wb.save_scenario(tmp_path / "s", "merged")
        live = [(r.rowtime, r.values) for r in q.rows]
    events = lines_of(saved.events)
    # the state the query found: P's bound 09:58 (P2's clock), P1 attached with its two held rows,
    # Q's clock 10:01 (strict: 10:01:00.001)
    assert saved.prefix == 5 and "started at step 7" in str(saved)
    assert events[:5] == [
        {"stream": "P", "producer": "P2", "bound": "2006-10-10 09:58:00"},
        {"stream": "P", "producer": "P1", "attach": True},
        {"stream": "P", "producer": "P1", "rowtime": "2006-10-10 10:00:00", "values": {"name": "a"}},
        {"stream": "P", "producer": "P1", "rowtime": "2006-10-10 10:02:00", "values": {"name": "b"}},
        {"stream": "Q", "bound": "2006-10-10 10:01:00.001"}]
    assert all(e["stream"] in ("P", "Q") for e in events) and len(events) == 5 + 7 + 4
    expected = lines_of(saved.expected)
    # derived from the rules: P2's row at 10:01 lets P out to 10:01 (a, c; Q is at 10:01.001);
    # P2 detaching lets b out; the late row, the backwards bound and the unknown column are
    # reported at their steps; the loaded g (10:05 after f at 10:06) is late
    assert expected == [
        {"step": 5, "bound": "2006-10-10 09:58:00"},
        {"step": 6, "rowtime": "2006-10-10 10:00:00", "values": {"NAME": "a"}},
        {"step": 6, "rowtime": "2006-10-10 10:01:00", "values": {"NAME": "c"}},
        {"step": 8, "rowtime": "2006-10-10 10:02:00", "values": {"NAME": "b"}},
        {"step": 9, "late": {"stream": "Q", "rowtime": "2006-10-10 09:00:00", "clock": "2006-10-10 10:03:00"}},
        {"step": 10, "error": "bound 2006-10-10 09:00:00 on producer P1 of stream P is before that producer's "
                              "clock 2006-10-10 10:02:00; a producer's bound cannot move backwards"},
        {"step": 11, "error": "stream Q has no column 'nme' (columns: NAME)"},
        {"step": 15, "late": {"stream": "Q", "rowtime": "2006-10-10 10:05:00", "clock": "2006-10-10 10:06:00"}}]
    assert [(T.parse_timestamp(e["rowtime"]), (e["values"]["NAME"],)) for e in expected if "rowtime" in e] == live
    assert replay_cli(tmp_path / "s") == expected


def test_from_start_saves_every_event_and_what_a_query_started_first_releases(tmp_path):
    with Workbench(tmp_path / "ws", engine="local") as wb:
        session(wb)
        saved = wb.save_scenario(tmp_path / "f", from_start=True)
    assert saved.prefix == 0 and saved.event_count == 6 + 7 + 4      # Other's events left out
    expected = lines_of(saved.expected)
    assert expected[0] == {"step": 6, "bound": "2006-10-10 09:58:00"}
    assert replay_cli(tmp_path / "f") == expected


def test_what_cannot_be_saved_says_why(tmp_path):
    with Workbench(tmp_path / "ws", engine="local") as wb:
        with pytest.raises(SaveError, match="no continuous query"):
            wb.save_scenario(tmp_path / "x")
        wb.execute("CREATE STREAM Raw (v INTEGER); CREATE STREAM Big (v INTEGER)")
        wb.insert("Raw", {"v": 20}, rowtime="2006-10-10 10:00:00")
        wb.execute("CREATE PUMP p AS INSERT INTO Big SELECT STREAM ROWTIME, v FROM Raw WHERE v > 10")
        wb.insert("Raw", {"v": 30}, rowtime="2006-10-10 10:05:00")
        wb.query("SELECT STREAM ROWTIME, v FROM Big", name="late")
        for from_start in (False, True):
            with pytest.raises(SaveError, match="pump P started at step 1, after events"):
                wb.save_scenario(tmp_path / "x", from_start=from_start)
        wb.query("SELECT STREAM * FROM ERRORS", name="errs")
        with pytest.raises(SaveError, match="error stream"):
            wb.save_scenario(tmp_path / "x", "errs")
        with pytest.raises(SaveError, match="no query named nope"):
            wb.save_scenario(tmp_path / "x", "nope")
    assert not list(tmp_path.glob("x*"))


def test_a_late_start_over_a_pump_needs_from_start(tmp_path):
    with Workbench(tmp_path / "ws", engine="local") as wb:
        play(wb, PROJECT_SCENARIOS / "pump_chain")
        wb.query("SELECT STREAM ROWTIME, ticker, total FROM Hourly", name="later")
        wb.insert("Raw", {"ticker": "C", "amount": 40}, rowtime="2006-10-10 12:30:00")
        wb.punctuate("Raw", "2006-10-10 13:00:00")
        with pytest.raises(SaveError, match="--from-start"):
            wb.save_scenario(tmp_path / "x", "later")
        saved = wb.save_scenario(tmp_path / "x", "later", from_start=True)
    expected = lines_of(saved.expected)
    assert expected[-2:] == [{"step": 7, "rowtime": "2006-10-10 13:00:00", "values": {"TICKER": "C", "TOTAL": 40}},
                             {"step": 7, "bound": "2006-10-10 14:00:00"}]
    assert replay_cli(tmp_path / "x") == expected


# --------------------------------------------------------------------------- the journal

def test_the_journal_survives_reopening_and_drops_an_interrupted_commit(tmp_path):
    ws = tmp_path / "ws"
    with Workbench(ws, engine="local") as wb:
        wb.execute("CREATE STREAM S (a INTEGER)")
        for i in range(50):                                        # past one tail: a segment file
            wb.insert("S", {"a": i}, rowtime=t("10:00") + i)
        wb.load("S", {"ROWTIME": [t("11:00"), t("11:01")], "a": [1, 2]})
        flushed = wb.journal.flushed
    # a commit that wrote its journal segment, then stopped before the catalog
    stray = ws / "journal" / f"{flushed + 1:020d}-{flushed + 1:020d}.jsonl"
    stray.write_text(json.dumps({"step": flushed + 1, "stream": "S", "kind": "row", "time": 0}) + "\n")
    with Workbench(ws, engine="local") as wb:
        assert not stray.exists()
        evs = wb.journal.events()
        assert [e.step for e in evs] == list(range(1, 53))
        assert [e.values for e in evs[-2:]] == [{"A": 1}, {"A": 2}]
        assert evs[0].values == {"a": 0} and evs[0].time == t("10:00")


def test_a_workspace_older_than_the_journal(tmp_path):
    ws = tmp_path / "ws"
    with Workbench(ws, engine="local") as wb:
        wb.execute("CREATE STREAM S (a INTEGER)")
        wb.insert("S", {"a": 1}, rowtime="2006-10-10 10:00:00")
    cat = json.loads((ws / "catalog.json").read_text())
    del cat["journal"]                                             # as written before the journal
    (ws / "catalog.json").write_text(json.dumps(cat))
    with Workbench(ws, engine="local") as wb:
        wb.query("SELECT STREAM ROWTIME, a FROM S", name="q")
        wb.insert("S", {"a": 2}, rowtime="2006-10-10 10:01:00")
        with pytest.raises(SaveError, match="before the workspace's event journal began"):
            wb.save_scenario(tmp_path / "x")


# --------------------------------------------------------------------------- the magic

def test_streamsql_save_magic(tmp_path, monkeypatch):
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython
    from IPython.utils.capture import capture_output
    monkeypatch.chdir(tmp_path)
    ip = start_ipython() or get_ipython()
    ip.run_line_magic("load_ext", "streamsql")
    ip.run_line_magic("config", "StreamSql.engine = 'local'")
    with capture_output() as c:
        ip.run_line_magic("streamsql", "reset")
        ip.run_cell("%%streamsql\nCREATE STREAM P (name VARCHAR(10));\nCREATE STREAM Q (name VARCHAR(10))")
        ip.run_cell("%%streamsql -n merged\nSELECT STREAM ROWTIME, name FROM P UNION ALL SELECT STREAM ROWTIME, name FROM Q")
        ip.run_cell("%streamsql INSERT INTO P (ROWTIME, name) VALUES (TIMESTAMP '2006-10-10 01:00:00', 'a')")
        ip.run_cell("%streamsql INSERT INTO Q (ROWTIME, name) VALUES (TIMESTAMP '2006-10-10 01:01:00', 'b')")
        r = ip.run_cell("%streamsql save lesson/one --query merged")
    assert r.success
    assert "Saved query merged as lesson/one.sql, .events.jsonl (2 events) and .expected.jsonl (1 line)" in c.stdout
    assert lines_of(tmp_path / "lesson" / "one.expected.jsonl") == [
        {"step": 2, "rowtime": "2006-10-10 01:00:00", "values": {"NAME": "a"}}]
    with capture_output() as c:
        r = ip.run_cell("%streamsql save /proc/nowhere/x")
    assert r.success and c.stderr.startswith("error: cannot write the scenario /proc/nowhere/x")
    assert "Traceback" not in c.stdout + c.stderr
    with capture_output():
        ip.run_line_magic("streamsql", "reset")
