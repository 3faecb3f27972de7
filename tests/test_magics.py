"""The magics in IPython's InteractiveShell (the shell a kernel wraps): every option,
multi-statement cells, sub-commands, interpolation, output binding, and errors that print one
clean line and leave the session usable. tests/test_magics_kernel.py repeats the essentials in
a real kernel, with Spark starting in it."""
from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

from streamsql.engine import time as T
from streamsql.magics import current_workbench, sql_literal
from streamsql.magics.literals import InterpolationError, interpolate

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "streamsql" / "scenarios"         # the seeds' scenarios (tests/conftest.py: SCENARIOS)


@dataclass
class Cell:
    ok: bool
    error: BaseException | None
    out: str
    err: str
    shown: list[str]          # text/plain of what the cell displayed (display() and its result)
    objects: list
    statics: list[str]        # the static snapshots shown beside live views (text/html)

    @property
    def all_text(self) -> str:
        return self.out + self.err + "".join(self.shown)


@pytest.fixture(scope="module")
def ip():
    shell = start_ipython() or get_ipython()      # started once per process (other test files too)
    shell.run_line_magic("load_ext", "streamsql")
    yield shell


@pytest.fixture
def run(ip):
    """Run a cell on a fresh, empty workbench (local engine unless a test switches)."""
    ip.run_line_magic("config", "StreamSql.engine = 'local'")
    ip.run_line_magic("config", "StreamSql.displaylimit = 20")
    ip.run_line_magic("config", "StreamSql.stop_on_error = False")
    with capture_output():
        ip.run_line_magic("streamsql", "reset")

    def run_cell(src: str) -> Cell:
        with capture_output() as c:
            r = ip.run_cell(src, store_history=True)
        objects = [o.data for o in c.outputs if "text/plain" in o.data]
        statics = [o.data["text/html"] for o in c.outputs if "text/plain" not in o.data]
        out = c.stdout
        if r.result is not None:         # the cell's value: the terminal shell prints it as Out[n]
            objects.append(ip.display_formatter.format(r.result)[0])
            out = out.split("Out[")[0]
        shown = [d.get("text/plain", "") for d in objects]
        return Cell(r.success, r.error_in_exec or r.error_before_exec, out, c.stderr, shown, objects, statics)
    return run_cell


def assert_clean(cell: Cell) -> None:
    assert cell.ok, cell.error
    assert "Traceback" not in cell.all_text and "File \"" not in cell.all_text


DDL = """%%streamsql
CREATE STREAM P (name VARCHAR(10));
CREATE STREAM Q (name VARCHAR(10))"""
UNION = "SELECT STREAM ROWTIME, name FROM P UNION ALL SELECT STREAM ROWTIME, name FROM Q"


def test_load_ext_and_config(ip, run):
    import altair as alt
    assert "streamsql" in ip.magics_manager.magics["cell"] and "streamsql" in ip.magics_manager.magics["line"]
    # Altair charts render through JupyterLab's own Vega-Lite 5 renderer (deterministic, offline)
    chart = alt.Chart(alt.Data(values=[{"a": 1}])).mark_point().encode(x="a:Q")
    bundle = ip.display_formatter.format(chart)[0]
    assert bundle["application/vnd.vegalite.v5+json"]["data"] == {"values": [{"a": 1}]}
    c = run("%config StreamSql")
    for name in ("workspace", "engine", "master", "buckets", "displaylimit", "feedback", "stop_on_error"):
        assert f"StreamSql.{name}=" in c.out
    run("%config StreamSql.displaylimit = 1")
    run(DDL)
    c = run(f"%%streamsql -o m\n{UNION}")
    ip.user_ns["m"].wb.insert("P", {"name": "a"}, rowtime="2006-10-10 01:00:00")
    ip.user_ns["m"].wb.insert("Q", {"name": "b"}, rowtime="2006-10-10 01:00:00")
    c = run("%streamsql show")
    assert c.shown[0].endswith("(last 1 of 2)")
    run("%config StreamSql.feedback = False")
    c = run("%streamsql CREATE STREAM R (x INTEGER)")
    assert c.out == ""
    run("%config StreamSql.feedback = True")
    c = run("%config StreamSql.buckets = 2")          # the open workbench keeps its settings
    assert "applies after %streamsql reset" in c.out
    run("%config StreamSql.buckets = 1")


def test_multi_statement_cell_runs_every_statement_and_prints_one_line_each(ip, run):
    c = run("""%%streamsql
CREATE STREAM S (x INTEGER, s VARCHAR(8));
INSERT INTO S (ROWTIME, x, s) VALUES (TIMESTAMP '2006-10-10 10:00:00', 1, 'a');
INSERT INTO S (ROWTIME, x, s) VALUES (TIMESTAMP '2006-10-10 10:01:00', 2, 'b'), (TIMESTAMP '2006-10-10 10:02:00', 3, 'c');
CREATE TABLE T (k INTEGER)""")
    assert_clean(c)
    assert c.out.splitlines() == ["Stream S created", "1 row inserted into S", "2 rows inserted into S",
                                  "Table T created"]
    wb = current_workbench()
    assert wb.clock("S") == T.parse_timestamp("2006-10-10 10:02:00")


def test_select_stream_starts_a_named_query_and_shows_it_live(ip, run):
    run(DDL)
    c = run(f"%%streamsql --name merged -o mq\n{UNION}")
    assert_clean(c)
    assert c.out == "Query merged started\n"
    assert c.shown == ["Query merged (running): 0 rows released, output bound none\nClocks: P none, Q none\n"
                       "(no rows released yet)"]
    q = ip.user_ns["mq"]
    assert q.name == "merged" and q.running
    view = c.objects[0]
    run("%streamsql INSERT INTO P (ROWTIME, name) VALUES (TIMESTAMP '2006-10-10 01:00:00', 'p1')")
    run("%streamsql INSERT INTO Q (ROWTIME, name) VALUES (TIMESTAMP '2006-10-10 01:02:00', 'q1')")
    df = q.to_pandas()
    assert df.to_dict("records") == [{"STEP": 2, "ROWTIME": "2006-10-10 01:00:00", "NAME": "p1"}]
    assert "application/vnd.jupyter.widget-view+json" in view       # a live widget in a frontend
    # JupySQL's `VAR <<` binds the same way; --name of a running query replaces it
    c = run(f"%%streamsql other <<\n{UNION}")
    assert ip.user_ns["other"].name == "q1" and ip.user_ns["other"].running
    c = run(f"%%streamsql --name merged -o mq\n{UNION}")
    assert (c.out, c.err) == ("Query merged replaced: the one running before was stopped\n", "")
    assert not q.running and ip.user_ns["mq"] is not q and ip.user_ns["mq"].running
    assert [n for n, x in current_workbench().queries.items() if x.running] == ["merged", "q1"]


def test_rerunning_a_cell_replaces_its_queries_and_failures_keep_the_variable(ip, run):
    """The same input again (a terminal's notion of "the same cell"; JupyterLab sends a cell id,
    tests/test_kernel_control.py) replaces the query it started; a failing cell leaves -o alone."""
    run(DDL)
    cell = f"%%streamsql -o u\n{UNION}"
    assert_clean(run(cell))
    first = ip.user_ns["u"]
    c2 = run(cell)
    assert_clean(c2)
    assert c2.out == f"Query {first.name} replaced: the one running before was stopped\n"
    wb = current_workbench()
    assert not first.running and ip.user_ns["u"] is not first and ip.user_ns["u"].name == first.name
    assert [n for n, x in wb.queries.items() if x.running] == [first.name]       # one query runs
    c3 = run("%%streamsql -o u\nSELECT STREAM ROWTIME, nope FROM P")         # fails: u stays
    assert c3.err.startswith("SQL error:") and ip.user_ns["u"].running and ip.user_ns["u"].name == first.name
    # a name in use through the API is a name clash, said as such (not an SQL error)
    from streamsql.engine.errors import NameInUseError
    wb.query("SELECT STREAM ROWTIME, name FROM P", name="taken")
    with pytest.raises(NameInUseError, match="a query named taken is already running; stop it"):
        wb.query("SELECT STREAM ROWTIME, name FROM Q", name="taken")
    c5 = run("%streamsql stop --all")
    assert sorted(c5.out.splitlines()) == [f"Query {first.name} stopped (0 rows released)",
                                           "Query taken stopped (0 rows released)"]
    assert not any(x.running for x in wb.queries.values())
    assert run("%streamsql stop --all").out == "No query is running\n"
    c6 = run("%streamsql stop taken")
    assert c6.out == "Query taken was already stopped (0 rows released)\n"


def test_limit_and_bounds_options(ip, run):
    run("%streamsql CREATE STREAM S (x INTEGER)")
    c = run("%%streamsql -n s -o s_q --limit 2 --bounds\nSELECT STREAM ROWTIME, x FROM S")
    assert_clean(c)
    wb = ip.user_ns["s_q"].wb
    for i, t in enumerate(["10:00", "10:01", "10:02"]):
        wb.insert("S", {"x": i}, rowtime=f"2006-10-10 {t}:00")
    wb.punctuate("S", "10:05")
    c = run("%streamsql show s --limit 2 --bounds")
    lines = c.shown[0].splitlines()
    assert lines[-3:] == ["3    | 2006-10-10 10:02:00       | 2", "4    | bound 2006-10-10 10:05:00 |",
                          "(last 2 of 4)"]
    c = run("%streamsql -l 1 show s")
    assert c.shown[0].splitlines()[-2:] == ["3    | 2006-10-10 10:02:00 | 2", "(last 1 of 3)"]


def test_explain_prints_the_logical_plan(ip, run):
    run(DDL)
    c = run(f"%%streamsql --explain -n e\n{UNION}")
    assert_clean(c)
    assert "Logical plan:\nQuery e: columns ROWTIME, NAME\n  Union ALL (2 inputs, ordered merge)\n" \
           "    Project [NAME=$0:NAME]\n      StreamScan P AS P" in c.out
    assert "Spark plan:\n(query e runs on the local engine: there is no Spark plan)" in c.out
    c = run("%streamsql explain e")
    assert "StreamScan Q AS Q" in c.out


def test_workbench_option_composes_the_full_view(ip, run):
    from streamsql.widgets import WorkbenchView
    run(DDL)
    c = run(f"%%streamsql --workbench -o w\n{UNION}")
    assert_clean(c)
    view = c.objects[0]
    assert "application/vnd.vegalite.v5+json" in view
    assert "Timeline of query q1 (lanes: P, Q, output): nothing yet" in c.shown[0]
    assert c.shown[0].splitlines()[-2:] == ["Step | P | Q | Output", "-----+---+---+-------"]
    c = run("%streamsql workbench")
    assert isinstance(ip.user_ns["_"], WorkbenchView)


def test_interpolation_renders_python_values_as_sql_literals(ip, run):
    run("%streamsql CREATE STREAM S (s VARCHAR(20), n INTEGER, d DOUBLE, b BOOLEAN, t TIMESTAMP)")
    ip.user_ns.update(text="it's", n=2, d=np.float64(2.5), flag=True, none=None,
                      when=dt.datetime(2006, 10, 10, 10, 0, 0, 250000), mins=5, allowed=[1, 2, 3])
    c = run("%streamsql -o s_q SELECT STREAM ROWTIME, * FROM S WHERE n IN {{allowed}}")
    assert_clean(c)
    c = run("""%%streamsql
INSERT INTO S (ROWTIME, s, n, d, b, t) VALUES ({{when}}, {{text}}, {{n}}, {{d}}, {{flag}}, {{none}});
INSERT INTO S (ROWTIME, s, n) VALUES ({{when}} + INTERVAL '{{mins}}' MINUTE, 'x', {{ allowed[0] }})""")
    assert_clean(c)
    assert c.out.splitlines() == ["1 row inserted into S", "1 row inserted into S"]
    rows = ip.user_ns["s_q"].rows
    assert [r.values for r in rows] == [("it's", 2, 2.5, True, None), ("x", 1, None, None, None)]
    assert [r.rowtime for r in rows] == [T.parse_timestamp("2006-10-10 10:00:00.250"),
                                         T.parse_timestamp("2006-10-10 10:05:00.250")]
    c = run("%streamsql INSERT INTO S (ROWTIME, n) VALUES ({{when}}, {{missing}})")
    assert_clean(c)
    assert c.err == "error: {{missing}}: name 'missing' is not defined\n"
    c = run("%streamsql INSERT INTO S (ROWTIME, n) VALUES ({{when}}, {{object()}})")
    assert c.err == "error: {{object()}}: a object has no SQL literal\n"


def test_sql_literals():
    assert sql_literal(None) == "NULL"
    assert sql_literal(True) == "TRUE" and sql_literal(np.bool_(False)) == "FALSE"
    assert sql_literal(42) == "42" and sql_literal(np.int64(-3)) == "-3"
    assert sql_literal(1.5) == "1.5" and sql_literal(decimal.Decimal("12.30")) == "12.30"
    assert sql_literal("it's") == "'it''s'"
    assert sql_literal(dt.datetime(2006, 10, 10, 10, 0)) == "TIMESTAMP '2006-10-10 10:00:00'"
    assert sql_literal(dt.datetime(2006, 10, 10, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))) == \
        "TIMESTAMP '2006-10-10 10:00:00'"
    assert sql_literal(dt.date(2006, 10, 10)) == "TIMESTAMP '2006-10-10 00:00:00'"
    assert sql_literal(dt.timedelta(minutes=1, milliseconds=500)) == "INTERVAL '60.500' SECOND"
    assert sql_literal(("a", 1)) == "('a', 1)" and sql_literal({3, 1}) == "(1, 3)"
    for bad in (float("nan"), [], object()):
        with pytest.raises(InterpolationError):
            sql_literal(bad)
    # inside quotes the text is spliced in, quotes doubled
    assert interpolate("SELECT '{{x}}', \"{{c}}\", {{x}}", {"x": "o'k", "c": 'a"b'}) == \
        "SELECT 'o''k', \"a\"\"b\", 'o''k'"
    assert interpolate("-- {{x}}\nSELECT 1", {"x": 5}) == "-- 5\nSELECT 1"


def test_sql_errors_print_one_line_with_a_caret_and_the_session_goes_on(ip, run):
    c = run("""%%streamsql
CREATE STREAM E (a INTEGER);
SELECT STREAM ROWTIME,
       nope FROM E""")
    assert_clean(c)
    assert c.out == "Stream E created\n"                   # the statement before the error stays done
    assert c.err.splitlines() == ["SQL error: line 3:8: Column 'NOPE' not found", "         nope FROM E",
                                  "         ^"]
    c = run("%streamsql CREATE STREAM A (x INTEGER); SELECT STREAM y FROM A")
    assert c.err.splitlines()[0] == "SQL error: line 1:44: Column 'Y' not found"
    assert c.err.splitlines()[2].index("^") == c.err.splitlines()[1].index("y FROM")
    c = run("%%streamsql\nSELEC STREAM x FROM E")
    assert len(c.err.splitlines()) == 3 and c.err.startswith("SQL error: line 1:1:")
    c = run("%streamsql INSERT INTO Nowhere VALUES (1)")
    assert c.err.startswith("SQL error: ") and "NOWHERE" in c.err.upper()
    # late rows and refused events: one line
    run("%streamsql INSERT INTO E (ROWTIME, a) VALUES (TIMESTAMP '2006-10-10 10:00:00', 1)")
    c = run("%streamsql INSERT INTO E (ROWTIME, a) VALUES (TIMESTAMP '2006-10-10 09:00:00', 2)")
    assert_clean(c)
    assert c.err.splitlines() == ["error: late row in stream E: rowtime 2006-10-10 09:00:00 is before the stream "
                                  "clock 2006-10-10 10:00:00; the row was rejected (see the error stream)"]
    c = run("%streamsql stop nosuch")
    assert not c.ok and c.err == "UsageError: no continuous query yet: run a SELECT STREAM first\n"
    c = run("%streamsql INSERT INTO E (ROWTIME, a) VALUES (TIMESTAMP '2006-10-10 10:01:00', 3)")
    assert c.out == "1 row inserted into E\n" and c.err == ""


def test_stop_on_error_raises_a_short_error(ip, run):
    run("%config StreamSql.stop_on_error = True")
    c = run("%streamsql SELECT STREAM x FROM Missing")
    assert not c.ok and type(c.error).__name__ == "CellError"
    assert c.error._render_traceback_()[0].startswith("SQL error: line 1:")
    assert "Traceback" not in c.out + c.err


def test_sub_commands(ip, run, tmp_path):
    run(DDL)
    c = run(f"%%streamsql -n merged -o mq\n{UNION}")
    wb = ip.user_ns["mq"].wb
    wb.insert("P", {"name": "p1"}, rowtime="2006-10-10 01:00:00")
    wb.attach("Q", "slow")
    wb.insert("Q", {"name": "q1"}, rowtime="2006-10-10 01:02:00")     # pending: waits for producer slow
    c = run("%streamsql streams")
    assert_clean(c)
    text = c.shown[0]
    assert "P               | NAME VARCHAR(10)             | 2006-10-10 01:00:00 | default 2006-10-10 01:00:00" in text
    q_line = next(l for l in text.splitlines() if l.startswith("Q "))
    assert "default 2006-10-10 01:02:00, slow none" in q_line and q_line.split("|")[4].strip() == "1"
    c = run("%streamsql queries")
    assert c.shown[0].splitlines()[-1].split("|")[0:5] == ["merged ", " running ", " local  ", " P, Q    ", " 0    "]
    c = run("%streamsql steps merged")
    assert c.shown[0].splitlines()[2].startswith("1    | 01:00 p1")
    assert "union    | 2006-10-10 01:00:00 | p1  | Q clock must reach 2006-10-10 01:00:00 (now none)" in c.shown[0]
    c = run("%streamsql steps merged")
    st = ip.user_ns["_"]                      # the view the cell displayed
    st.scrubber.slider.value = 1              # the scrubber under the step table marks its step
    from streamsql.widgets.hooks import REDRAWER
    assert REDRAWER.idle(30)                  # views redraw on their own thread
    assert st.highlight == 1 and st.steps_html.value.count('class="at-step"') == 1
    assert st.scrubber.state().rows == [] and st.scrubber.text().startswith("step 1 of 3 · held at step 1\nAfter step 1: P 01:00 p1")
    c = run("%streamsql timeline")
    assert c.shown[0] == ("Timeline of query merged (lanes: P, Q, union input P, union input Q, output): row 1, "
                          "pending row 1, clock 2, held row 1, waits for 1")
    c = run("%streamsql help")
    assert "%streamsql stop NAME" in c.out
    c = run("%streamsql")
    assert "%streamsql reset" in c.out
    c = run("%streamsql stop merged")
    assert c.out == "Query merged stopped (0 rows released)\n" and not ip.user_ns["mq"].running
    c = run("%streamsql load " + str(SCENARIOS / "union_merge") + " -o scen")
    assert_clean(c)
    view = ip.user_ns["scen"]
    view.goto(5)
    assert "✓ matches union_merge.expected.jsonl up to step 5" in view.status_text()
    view.player.close()
    c = run(f"%streamsql load {tmp_path / 'nothing'}")
    assert c.err.startswith("error: scenario ") and "not found" in c.err
    c = run("%streamsql reset")
    assert c.out == "Workbench reset: new empty workspace in a temporary directory\n"
    c = run("%streamsql queries")
    assert c.shown[0] == "Queries\n(none)"
    c = run("%streamsql show")
    assert "no continuous query yet" in str(c.error)


def test_configured_workspace_persists_and_reset_empties_it(ip, run, tmp_path):
    ws = tmp_path / "ws"
    run(f"%config StreamSql.workspace = {str(ws)!r}")
    try:
        run("%streamsql reset")
        run("%streamsql CREATE STREAM Kept (x INTEGER)")
        assert (ws / "catalog.json").exists() and "KEPT" in (ws / "catalog.json").read_text()
        c = run("%streamsql reset")
        assert c.out == f"Workbench reset: new empty workspace in {ws.resolve()}\n"
        assert "KEPT" not in (ws / "catalog.json").read_text()
    finally:
        run("%config StreamSql.workspace = None")
        run("%streamsql reset")


def test_spark_engine_query_explains_its_spark_plan(ip, run, spark):
    """Spark in this process is already up (the session fixture), so no "starting Spark" here:
    tests/test_magics_kernel.py checks that line in a fresh kernel."""
    run("%config StreamSql.engine = 'spark'")
    run("%streamsql reset")
    run(DDL)
    c = run(f"%%streamsql --explain -o sq -n on_spark\n{UNION}")
    assert_clean(c)
    assert "Spark plan:\n== Physical Plan ==" in c.out and "Union" in c.out
    assert "#" not in c.out.split("Spark plan:")[1]            # no expression ids: stable text
    q = ip.user_ns["sq"]
    assert q.engine == "spark"
    c = run("""%%streamsql
INSERT INTO P (ROWTIME, name) VALUES (TIMESTAMP '2006-10-10 01:00:00', 'p1');
INSERT INTO Q (ROWTIME, name) VALUES (TIMESTAMP '2006-10-10 01:00:00', 'q1')""")
    assert (c.out, c.err) == ("1 row inserted into P\n1 row inserted into Q\n", "")
    c = run("%streamsql show on_spark")                     # waits for Spark before showing
    assert c.shown[0].splitlines()[-2:] == ["2    | 2006-10-10 01:00:00 | p1", "2    | 2006-10-10 01:00:00 | q1"]
    assert q.to_pandas()["NAME"].tolist() == ["p1", "q1"]
    run("%streamsql reset")


def test_relational_select_shows_its_rows(ip, run):
    c = run("""%%streamsql -o prices --limit 2
CREATE TABLE Prices (ticker VARCHAR(10), price INTEGER);
INSERT INTO Prices VALUES ('ORCL', 10), ('IBM', 20), ('YHOO', 30);
SELECT ticker, price FROM Prices WHERE price > 10""")
    assert_clean(c)
    assert c.out.splitlines() == ["Table PRICES created", "3 rows inserted into PRICES", "2 rows"]
    assert c.shown[0].split() == ["TICKER", "PRICE", "0", "IBM", "20", "1", "YHOO", "30"]
    assert ip.user_ns["prices"].to_pandas()["PRICE"].tolist() == [20, 30]
    c = run("%streamsql --limit 1 SELECT ticker FROM Prices")
    assert c.out.splitlines() == ["3 rows", "(first 1 of 3 rows)"]


def test_workbench_takes_a_query_name_of_the_session(ip, run):
    import streamsql
    from streamsql.widgets import WorkbenchView
    run(DDL)
    run(f"%%streamsql --name merged\n{UNION}")
    view = streamsql.workbench("merged")
    assert isinstance(view, WorkbenchView) and view.q is current_workbench().queries["merged"]
    assert streamsql.workbench("MERGED").q is view.q                # names match like SQL names
    with pytest.raises(ValueError, match=r"no query named 'nope' in this session; queries: merged"):
        streamsql.workbench("nope")
    with pytest.raises(TypeError, match="workbench\\(\\) takes a ContinuousQuery or a query name, not int 3"):
        streamsql.workbench(3)
    with pytest.raises(TypeError, match="needs a query"):
        streamsql.workbench()


def test_small_mistakes_get_one_line_each(ip, run):
    """An unknown query name for workbench(), an unknown sub-command, an unknown scenario: one
    line each, naming what is wrong and what there is, never a traceback through the library."""
    run(DDL)
    run(f"%%streamsql --name merged\n{UNION}")
    c = run("import streamsql\nstreamsql.workbench('nope')")
    assert not c.ok and "Traceback" not in c.all_text and "File \"" not in c.all_text
    assert "UnknownQueryError: no query named 'nope' in this session; queries: merged" in c.all_text
    c = run("%streamsql frobnicate")
    assert not c.ok and "Traceback" not in c.all_text
    assert "unknown sub-command frobnicate; see %streamsql help" in c.all_text
    assert "Unsupported statement" not in c.all_text
    c = run("%streamsql FROBNICATE NOW")
    assert "unknown sub-command FROBNICATE" in c.all_text
    c = run("%streamsql SELECT STREAM nonsense FROM nowhere")     # SQL still goes to the engine
    assert "unknown sub-command" not in c.all_text and "SQL error" in c.all_text
    c = run("%streamsql load no_such")
    assert "no_such.sql not found" in c.all_text
    assert "scenarios shipped with streamsql: filter_trains, group_by_hours" in c.all_text
    assert "union_merge" in c.all_text and "Traceback" not in c.all_text


def test_native_twin_errors_are_one_line_and_the_session_goes_on(run):
    """``%streamsql native NAME [--delay ...]``: where no twin can run (the local engine, a delay
    that is no time) one clean line; the session goes on. On Spark: tests/test_native.py."""
    assert_clean(run(DDL))
    assert_clean(run(f"%%streamsql --name merged\n{UNION}"))
    cell = run("%streamsql native merged --delay soon")
    assert cell.ok and cell.err.strip() == ("error: a watermark delay is a time like '0 seconds' or '10 minutes', "
                                            "not 'soon'")
    cell = run("%streamsql native merged --delay 5min")
    assert cell.ok and cell.err.strip() == "error: no native Spark twin on the local engine: it runs on the Spark engine"
    assert "native [NAME] [--delay TIME]" in run("%streamsql help").out
    assert_clean(run("%streamsql queries"))


def test_a_qualified_rowtime_keeps_its_name_in_the_output(ip, run):
    # the stream side's o.ROWTIME is the joined rows' ROWTIME: the table shows it as ROWTIME (once),
    # never EXPR$0; a relational query over the history shows it where the select list has it
    c = run("""%%streamsql
CREATE STREAM Orders (productId INTEGER, orderId INTEGER);
CREATE TABLE Products (productId INTEGER, name VARCHAR(10));
INSERT INTO Products VALUES (10, 'Beer')""")
    assert_clean(c)
    c = run("%%streamsql -o q\nSELECT STREAM o.ROWTIME, o.orderId, p.name FROM Orders AS o "
            "JOIN Products AS p ON o.productId = p.productId")
    assert_clean(c)
    run("%streamsql INSERT INTO Orders (ROWTIME, productId, orderId) VALUES (TIMESTAMP '2006-10-10 10:00:00', 10, 1)")
    assert ip.user_ns["q"].to_pandas().to_dict("records") == [
        {"STEP": 1, "ROWTIME": "2006-10-10 10:00:00", "ORDERID": 1, "NAME": "Beer"}]
    current_workbench().set_history("Orders")
    c = run("%streamsql SELECT o.orderId, o.ROWTIME, p.name FROM Orders AS o JOIN Products AS p "
            "ON o.productId = p.productId")
    assert_clean(c)
    assert c.shown[0].split()[:3] == ["ORDERID", "ROWTIME", "NAME"], c.shown
