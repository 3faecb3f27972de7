"""Calculator errors (the semantics, sections 1 and 5): per error kind and per clause, the row that
cannot be computed produces nothing at its operator, counts as a bound, goes to ERRORS with its
message, and the query goes on. Expected outcomes are worked out from the rules in comments.

Streams: S(a INTEGER, b INTEGER, s VARCHAR(20), x BIGINT, d DOUBLE); rows on 2006-10-10.
"""
from __future__ import annotations

import json
import logging

import pytest

import streamsql
from streamsql.engine.errors import SqlError
from test_aggregate_support import bound, row, run

DDL = "CREATE STREAM S (a INTEGER, b INTEGER, s VARCHAR(20), x BIGINT, d DOUBLE);"
ENGINES = ["local", "spark"]


@pytest.fixture(autouse=True)
def _spark_session(request):
    """Spark tests run on the test session (conftest's ``spark``)."""
    params = getattr(getattr(request.node, "callspec", None), "params", {})
    if params.get("engine") == "spark":
        request.getfixturevalue("spark")


def errs(r) -> list[tuple]:
    """``(step, rowtime, ERROR_NAME, stream)`` of the query's calculator errors."""
    from test_aggregate_support import hm
    first = r.q.start_step
    return [(e.step - first, hm(e.data_rowtime), e.name, e.stream) for e in r.q.errors if e.is_calc]


def S(t, **v):
    base = {"a": 1, "b": 1, "s": "1", "x": 1, "d": 1.0}
    base.update(v)
    return row("S", t, **base)


# --------------------------------------------------------------------------- kinds

@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("expr, values, name, good", [
    ("a / b", {"a": 7, "b": 0}, "DIVISION_BY_ZERO", {}),
    ("MOD(a, b)", {"a": 7, "b": 0}, "DIVISION_BY_ZERO", {}),
    ("CAST(a AS DECIMAL(5,2)) / b", {"a": 7, "b": 0}, "DIVISION_BY_ZERO", {}),
    ("d / b", {"d": 1.5, "b": 0}, "DIVISION_BY_ZERO", {}),                    # DOUBLE too: not infinity
    ("a * 2000000000", {"a": 7}, "NUMERIC_OUT_OF_RANGE", {}),         # INTEGER: no wrap-around
    ("x + x", {"x": 2**62}, "NUMERIC_OUT_OF_RANGE", {}),               # BIGINT
    ("-a", {"a": -2**31}, "NUMERIC_OUT_OF_RANGE", {}),                 # unary minus of the smallest INTEGER
    ("CAST(a AS TINYINT)", {"a": 300}, "NUMERIC_OUT_OF_RANGE", {}),
    ("d * d", {"d": 1e200}, "NUMERIC_OUT_OF_RANGE", {}),               # DOUBLE overflow
    ("CAST(s AS INTEGER)", {"s": "x"}, "INVALID_CAST", {}),
    ("CAST(s AS TIMESTAMP)", {"s": "2006-13-45"}, "INVALID_CAST", {"s": "2006-10-10 09:00:00"}),
    ("CAST(s AS BOOLEAN)", {"s": "maybe"}, "INVALID_CAST", {}),
    ("CAST(s AS INTEGER)", {"s": "99999999999"}, "NUMERIC_OUT_OF_RANGE", {}),
    ("CAST(s AS DOUBLE)", {"s": "NaN"}, "INVALID_CAST", {}),
    ("SUBSTRING(s FROM 1 FOR b)", {"s": "abc", "b": -1}, "SUBSTRING_ERROR", {}),
    ("LN(CAST(a AS DOUBLE))", {"a": 0}, "INVALID_ARGUMENT_FOR_LOGARITHM", {}),
    ("SQRT(a)", {"a": -4}, "INVALID_ARGUMENT_FOR_POWER_FUNCTION", {}),
])
def test_each_kind_refuses_the_row_and_the_query_goes_on(engine, expr, values, name, good):
    # step 1 fails, step 2 (a = b = 1, s = '1', x = 1, d = 1.0 unless said otherwise) computes
    r = run(DDL, f"SELECT STREAM ROWTIME, {expr} AS v FROM S", [S("10:00", **values), S("10:01", **good)],
            engine=engine)
    assert errs(r) == [(1, "10:00:00", name, "S")]
    assert [(s, t) for s, t, _v in r.rows] == [(2, "10:01:00")]
    e = r.q.errors[0]
    assert e.level == "ERROR" and e.sqlstate and e.sqlstate in e.message and f"Query {r.q.name}:" in e.message


@pytest.mark.parametrize("engine", ENGINES)
def test_message_names_the_expression_as_written_and_its_operands(engine):
    r = run(DDL, "SELECT STREAM a  *  1000 AS big FROM S", [S("10:00", a=3_000_000)], engine=engine)
    (e,) = r.q.errors
    assert e.message == (f'Query {r.q.name}: numeric value out of range for INTEGER in "a * 1000" with '
                         f'a = 3000000 (SQLSTATE 22003)')
    assert json.loads(e.data_row) == {"A": 3000000, "B": 1, "S": "1", "X": 1, "D": 1.0}
    assert e.data_rowtime == e.bound


@pytest.mark.parametrize("engine", ENGINES)
def test_a_timestamp_beyond_year_9999_is_a_datetime_overflow(engine):
    r = run(DDL, "SELECT STREAM a, CEIL(ROWTIME TO YEAR) AS y FROM S",
            [row("S", "9999-06-01 00:00:00", a=1), row("S", "9999-12-31 23:59:59", a=2)], engine=engine)
    assert [e[2] for e in errs(r)] == ["DATETIME_FIELD_OVERFLOW", "DATETIME_FIELD_OVERFLOW"]


# --------------------------------------------------------------------------- clauses

@pytest.mark.parametrize("engine", ENGINES)
def test_where_comes_first_and_stops_early(engine):
    # step 1: a = -1, b = 0: WHERE a > 0 drops it, the select list's a / b is never computed
    # step 2: b = 0 but b <> 0 AND a / b > 1 stops at b <> 0 (AND evaluates left to right)
    # step 3: the WHERE itself divides by zero: refused there
    r = run(DDL, "SELECT STREAM a / b AS q FROM S WHERE a > 0 AND (b <> 0 AND a / b >= 1 OR b = 0)",
            [S("10:00", a=-1, b=0), S("10:01", a=5, b=0), S("10:02", a=4, b=2)], engine=engine)
    assert errs(r) == [(2, "10:01:00", "DIVISION_BY_ZERO", "S")]
    assert r.table("q") == [(3, "10:02:00", 2)]
    r = run(DDL, "SELECT STREAM a FROM S WHERE a / b > 1", [S("10:00", a=5, b=0), S("10:01", a=5, b=1)],
            engine=engine)
    assert errs(r) == [(1, "10:00:00", "DIVISION_BY_ZERO", "S")] and r.table("a") == [(2, "10:01:00", 5)]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_first_failing_select_item_left_to_right_is_reported(engine):
    # both items fail on the row (a / b divides by zero, a * 2000000000 overflows)
    r = run(DDL, "SELECT STREAM a / b AS q, a * 2000000000 AS m FROM S", [S("10:00", a=7, b=0)], engine=engine)
    assert [e[2] for e in errs(r)] == ["DIVISION_BY_ZERO"]
    r = run(DDL, "SELECT STREAM a * 2000000000 AS m, a / b AS q FROM S", [S("10:00", a=7, b=0)], engine=engine)
    assert [e[2] for e in errs(r)] == ["NUMERIC_OUT_OF_RANGE"]


@pytest.mark.parametrize("engine", ENGINES)
def test_as_rowtime_is_evaluated_in_its_place_in_the_select_list(engine):
    # CEIL(ROWTIME TO YEAR) of a rowtime in 9999 overflows; a / b divides by zero
    ev = [row("S", "9999-06-01 00:00:00", a=7, b=0, s="", x=1, d=1.0)]
    r = run(DDL, "SELECT STREAM a / b AS q, CEIL(ROWTIME TO YEAR) AS ROWTIME FROM S", ev, engine=engine)
    assert [e[2] for e in errs(r)] == ["DIVISION_BY_ZERO"]
    r = run(DDL, "SELECT STREAM CEIL(ROWTIME TO YEAR) AS ROWTIME, a / b AS q FROM S", ev, engine=engine)
    assert [e[2] for e in errs(r)] == ["DATETIME_FIELD_OVERFLOW"]


@pytest.mark.parametrize("engine", ENGINES)
def test_t_sort_rowtime_expression(engine):
    # ORDER BY ts WITHIN: ts = CAST(s AS TIMESTAMP); 'x' is no timestamp: refused at the sort
    q = ("SELECT STREAM CAST(s AS TIMESTAMP) AS ROWTIME, a FROM S "
         "ORDER BY CAST(s AS TIMESTAMP) WITHIN INTERVAL '1' MINUTE")
    r = run(DDL, q, [S("10:00", a=1, s="2006-10-10 09:00:00"), S("10:01", a=2, s="x"),
                     S("10:02", a=3, s="2006-10-10 09:05:00")], engine=engine)
    assert errs(r) == [(2, "10:01:00", "INVALID_CAST", "S")]
    # step 3: the highest ts is 09:05, so the sort's bound is 09:04: the 09:00 row leaves
    assert [(s, v["A"]) for s, _t, v in r.rows] == [(3, 1)]


@pytest.mark.parametrize("engine", ENGINES)
def test_aggregate_argument_refuses_the_row_from_every_aggregate(engine):
    # hour 10:00: rows a/b = 4/2, 3/0 (refused: not aggregated, not counted), 9/3; closed at 11:00
    q = ("SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS h, COUNT(*) AS n, SUM(a / b) AS q FROM S "
         "GROUP BY FLOOR(S.ROWTIME TO HOUR)")
    r = run(DDL, q, [S("10:00", a=4, b=2), S("10:10", a=3, b=0), S("10:20", a=9, b=3), bound("S", "11:00")],
            engine=engine)
    assert errs(r) == [(2, "10:10:00", "DIVISION_BY_ZERO", "S")]
    assert r.table("n", "q") == [(4, "11:00:00", 2, 5)]


@pytest.mark.parametrize("engine", ENGINES)
def test_sum_accumulator_overflow(engine):
    # SUM of INTEGER is a BIGINT: 2147483647 + 2147483647 fits. SUM(x) of BIGINT: 2**62 + 2**62
    # leaves BIGINT at the second row, which is refused (its COUNT(*) too); the third row's
    # -2**62 then gives 0
    q = ("SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS h, COUNT(*) AS n, SUM(a) AS sa, SUM(x) AS sx FROM S "
         "GROUP BY FLOOR(S.ROWTIME TO HOUR)")
    r = run(DDL, q, [S("10:00", a=2**31 - 1, x=2**62), S("10:10", a=2**31 - 1, x=2**62),
                     S("10:20", a=1, x=-2**62), bound("S", "11:00")], engine=engine)
    assert errs(r) == [(2, "10:10:00", "NUMERIC_OUT_OF_RANGE", "S")]
    assert r.table("n", "sa", "sx") == [(4, "11:00:00", 2, 2**31, 0)]
    assert "SUM(x)" in r.q.errors[0].message


@pytest.mark.parametrize("engine", ENGINES)
def test_having_fails_when_the_group_is_released(engine):
    # hour 10:00 has SUM(b) = 0: HAVING 10 / SUM(b) > 1 divides by zero when the group is
    # evaluated, at the step that closes the hour (step 3, the 11:00 bound); the error's row is
    # the group's, stamped 11:00
    q = ("SELECT STREAM FLOOR(S.ROWTIME TO HOUR) AS h, SUM(b) AS sb FROM S GROUP BY FLOOR(S.ROWTIME TO HOUR) "
         "HAVING 10 / SUM(b) > 1")
    r = run(DDL, q, [S("10:00", b=0), S("10:30", b=0), bound("S", "11:00"), S("11:10", b=2), bound("S", "12:00")],
            engine=engine)
    assert errs(r) == [(3, "11:00:00", "DIVISION_BY_ZERO", "S")]
    assert r.table("sb") == [(5, "12:00:00", 2)]


@pytest.mark.parametrize("engine", ENGINES)
def test_over_frame_sum_overflow(engine):
    # SUM(x) OVER (ROWS 1 PRECEDING): 2**62, then 2**62 (frame sum 2**63: refused, no output,
    # not in later frames), then 5 (frame: 2**62 and 5)
    q = "SELECT STREAM x, SUM(x) OVER (ROWS 1 PRECEDING) AS s FROM S"
    r = run(DDL, q, [S("10:00", x=2**62), S("10:01", x=2**62), S("10:02", x=5)], engine=engine)
    assert errs(r) == [(2, "10:01:00", "NUMERIC_OUT_OF_RANGE", "S")]
    assert r.table("x", "s") == [(1, "10:00:00", 2**62, 2**62), (3, "10:02:00", 5, 2**62 + 5)]


JDDL = DDL + "CREATE STREAM T (a INTEGER, b INTEGER);"


@pytest.mark.parametrize("engine", ENGINES)
def test_join_condition_refuses_the_arriving_row(engine):
    # step 1: T row (a=1, b=0) at 10:00
    # step 2: S row (a=1, b=4) at 10:01 meets it: 4 / 0 fails, so the S row joins nothing and is
    #         not kept
    q = ("SELECT STREAM s.a, s.b AS sb, t.b AS tb FROM S OVER (RANGE INTERVAL '5' MINUTE PRECEDING) AS s "
         "JOIN T OVER (RANGE INTERVAL '5' MINUTE PRECEDING) AS t ON s.a = t.a AND s.b / t.b >= 1")
    r = run(JDDL, q, [row("T", "10:00", a=1, b=0), S("10:01", a=1, b=4), row("T", "10:02", a=1, b=2),
                      S("10:03", a=1, b=8)], engine=engine)
    # step 3: the T row (b=2) meets no kept S row (the 10:01 one was refused) -> nothing
    # step 4: S (b=8) meets T b=0 (fails) -> refused, even though 8 / 2 would match
    assert errs(r) == [(2, "10:01:00", "DIVISION_BY_ZERO", "S"), (4, "10:03:00", "DIVISION_BY_ZERO", "S")]
    assert r.rows == []


@pytest.mark.parametrize("engine", ENGINES)
def test_join_key_expression(engine):
    q = ("SELECT STREAM s.a, t.b FROM S AS s JOIN T OVER (RANGE INTERVAL '5' MINUTE PRECEDING) AS t "
         "ON s.a * 1000000 = t.a")
    # the 10:01 pair is stamped 10:01 and waits for T's clock (the 10:05 bound, step 4); the
    # 10:02 row's key 3000 * 1000000 leaves INTEGER
    r = run(JDDL, q, [row("T", "10:00", a=1000000, b=7), S("10:01", a=1), S("10:02", a=3000), bound("T", "10:05")],
            engine=engine)
    assert errs(r) == [(3, "10:02:00", "NUMERIC_OUT_OF_RANGE", "S")]
    assert r.table("a", "b") == [(4, "10:01:00", 1, 7)]


UDDL = "CREATE STREAM X (a INTEGER, b INTEGER); CREATE STREAM Y (a INTEGER, b INTEGER);"


@pytest.mark.parametrize("engine", ENGINES)
def test_projection_above_union_all_fails_when_the_merge_releases_the_row(engine):
    # X row (7, 0) at 10:00 arrives at step 1; the merge holds it until Y's clock reaches 10:00
    # (step 2, Y's row at 10:05): the projection above the UNION ALL divides by zero then, even
    # though the plan evaluates it below the merge. Y's row itself is released at step 3 (X's
    # bound at 10:10).
    q = ("SELECT STREAM ROWTIME, a / b AS q FROM (SELECT STREAM ROWTIME, a, b FROM X "
         "UNION ALL SELECT STREAM ROWTIME, a, b FROM Y)")
    r = run(UDDL, q, [row("X", "10:00", a=7, b=0), row("Y", "10:05", a=6, b=3), bound("X", "10:10")],
            engine=engine)
    assert errs(r) == [(2, "10:00:00", "DIVISION_BY_ZERO", "X")]
    assert r.table("q") == [(3, "10:05:00", 2)]


@pytest.mark.parametrize("engine", ENGINES)
def test_where_above_union_all_fails_when_the_merge_releases_the_row(engine):
    q = ("SELECT STREAM ROWTIME, a FROM (SELECT STREAM ROWTIME, a, b FROM X "
         "UNION ALL SELECT STREAM ROWTIME, a, b FROM Y) WHERE a / b > 0")
    r = run(UDDL, q, [row("Y", "10:00", a=1, b=0), row("X", "10:01", a=1, b=1), bound("Y", "10:02")],
            engine=engine)
    # Y's row waits for X's clock (step 2); X's row for Y's clock (step 3)
    assert errs(r) == [(2, "10:00:00", "DIVISION_BY_ZERO", "Y")]
    assert r.table("a") == [(3, "10:01:00", 1)]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_refused_row_still_counts_as_a_bound(engine):
    # the failing row at 10:00 moves the output bound to 10:00 at step 1, as a filtered row would
    r = run(DDL, "SELECT STREAM ROWTIME, a / b AS q FROM S", [S("10:00", b=0)], engine=engine)
    assert r.bounds == {1: "10:00:00"} and r.rows == []


# --------------------------------------------------------------------------- reporting

@pytest.mark.parametrize("engine", ENGINES)
def test_errors_stream_rows_and_replay_lines(engine, tmp_path):
    wb = streamsql.Workbench(tmp_path / "ws", engine=engine)
    try:
        wb.execute(DDL)
        eq = wb.query("SELECT STREAM * FROM ERRORS", name="errs")
        q = wb.query("SELECT STREAM ROWTIME, a / b AS q FROM S", name="ratio")
        wb.inject([S("10:00", a=7, b=0), S("10:01", a=8, b=2)])
        q.wait()
        eq.wait()
        if engine == "local":
            (er,) = [dict(zip(eq.columns, r.values)) for r in eq.rows]
        else:
            # on Spark the row reaches ERRORS after its step was committed (an error-only commit,
            # PLAN decision 2), which a streaming reader already past that step does not see; the
            # error stream's history has it at its step
            wb.set_history("ERRORS")
            res = wb.execute("SELECT * FROM ERRORS")[0]
            (er,) = [dict(zip(res.columns, r)) for r in res.rows]
        assert er["ERROR_LEVEL"] == "ERROR" and er["ERROR_NAME"] == "DIVISION_BY_ZERO"
        assert er["MESSAGE"] == 'Query ratio: division by zero in "a / b" with a = 7, b = 0 (SQLSTATE 22012)'
        assert er["STREAM_NAME"] == "S" and er["PRODUCER"] == "ratio" and er["STEP"] == q.start_step + 1
        assert json.loads(er["DATA_ROW"])["A"] == 7
    finally:
        wb.close()


def test_the_log_samples_powers_of_ten(tmp_path, caplog):
    wb = streamsql.Workbench(tmp_path / "ws", engine="local")
    try:
        wb.execute(DDL)
        wb.query("SELECT STREAM a / b AS q FROM S", name="ratio")
        with caplog.at_level(logging.WARNING, logger="streamsql"):
            wb.inject([S(f"10:{i:02d}", b=0) for i in range(12)])
        logged = [r.getMessage() for r in caplog.records if "division by zero" in r.getMessage()]
        assert len(logged) == 2 and "calculator error #1 (step" in logged[0] and "#10 (step" in logged[1]
    finally:
        wb.close()


def test_replay_prints_calc_error_lines_before_the_rows_of_their_step(tmp_path):
    import io
    from streamsql.engine.cli import read_events, replay
    sql = UDDL + (" SELECT STREAM ROWTIME, a / b AS q FROM "
                  "(SELECT STREAM ROWTIME, a, b FROM X UNION ALL SELECT STREAM ROWTIME, a, b FROM Y)")
    (tmp_path / "e.jsonl").write_text(
        '{"stream": "X", "rowtime": "2006-10-10 10:00:00", "values": {"a": 7, "b": 0}}\n'
        '{"stream": "X", "rowtime": "2006-10-10 10:01:00", "values": {"a": 8, "b": 4}}\n'
        '{"stream": "Y", "rowtime": "2006-10-10 10:05:00", "values": {"a": 6, "b": 3}}\n')
    out = io.StringIO()
    assert replay(sql, read_events(tmp_path / "e.jsonl"), engine="local", out=out) == 0
    lines = [json.loads(x) for x in out.getvalue().splitlines()]
    # step 3 (Y's clock reaches 10:05) releases both X rows: the 10:00 one fails, the 10:01 one is 2
    assert [(x["step"], "calc_error" in x) for x in lines] == [(3, True), (3, False)]
    assert lines[0]["calc_error"]["stream"] == "X" and lines[1]["values"] == {"Q": 2}


# --------------------------------------------------------------------------- statements

@pytest.mark.parametrize("engine", ["local", "spark"])
def test_relational_select_fails_with_the_message(engine, tmp_path, request):
    if engine == "spark":
        request.getfixturevalue("spark")
    wb = streamsql.Workbench(tmp_path / "ws", engine=engine)
    try:
        wb.execute("CREATE TABLE P (a INTEGER, b INTEGER); INSERT INTO P VALUES (4, 2), (7, 0), (9, 0)")
        with pytest.raises(SqlError) as e:
            wb.execute("SELECT a / b FROM P")
        assert e.value.message == ('The query cannot be computed: division by zero in "a / b" with a = 7, b = 0 '
                                   '(SQLSTATE 22012)')
        assert wb.execute("SELECT a / b AS q FROM P WHERE b <> 0")[0].rows == [(2,)]
        with pytest.raises(SqlError, match="numeric value out of range for BIGINT in \"SUM"):
            wb.execute("CREATE TABLE Q (x BIGINT); INSERT INTO Q VALUES (4611686018427387904), (4611686018427387904);"
                       "SELECT SUM(x) FROM Q")
    finally:
        wb.close()


def test_insert_values_with_a_calculator_error_is_a_statement_error(wb_local):
    wb_local.execute(DDL)
    with pytest.raises(SqlError) as e:
        wb_local.execute("INSERT INTO S (ROWTIME, a) VALUES (TIMESTAMP '2006-10-10 10:00:00', 1 / 0)")
    assert e.value.message.startswith("Division by zero in \"1 / 0\"") and e.value.line == 1


# --------------------------------------------------------------------------- views

def test_live_view_and_timeline_mark_the_refused_row(wb_local):
    from streamsql.widgets.live import QueryView
    from streamsql.widgets.timeline_spec import timeline_chart
    from streamsql.widgets.timeline_data import timeline_records
    wb_local.execute(DDL)
    q = wb_local.query("SELECT STREAM ROWTIME, a / b AS q FROM S", name="ratio")
    wb_local.inject([S("10:00", a=7, b=0), S("10:01", a=8, b=2)])
    v = QueryView(q)
    text = v.text()
    msg = 'Query ratio: division by zero in "a / b" with a = 7, b = 0 (SQLSTATE 22012)'
    assert f"x DIVISION_BY_ZERO: {msg}" in text
    html = v.table.value
    assert 'class="calc-error"' in html and "title=\"Query ratio: division by zero in &quot;a / b&quot;" in html
    lanes, recs = timeline_records(q)
    (mark,) = [r for r in recs if r["what"] == "calc error"]
    assert mark["lane"] == "S" and mark["time"] == "2006-10-10 10:00:00" and mark["step"] == q.start_step + 1
    assert mark["detail"] == f"DIVISION_BY_ZERO: {msg}"
    spec = timeline_chart(q).to_dict()
    assert "calc error" in spec["vconcat"][0]["layer"][0]["encoding"]["color"]["scale"]["domain"]


def test_a_timeline_without_errors_keeps_its_legend(wb_local):
    from streamsql.widgets.timeline_spec import timeline_chart
    wb_local.execute(DDL)
    q = wb_local.query("SELECT STREAM ROWTIME, a FROM S", name="plain")
    wb_local.inject([S("10:00")])
    assert "calc error" not in str(timeline_chart(q).to_dict())


def test_a_query_rebuilt_after_an_undone_append_keeps_its_name_and_trace(tmp_path, monkeypatch):
    # an append that fails before its commit is undone and the local queries are rebuilt from the
    # log: the rebuilt query still names itself in its messages, and its trace ends at the commit
    wb = streamsql.Workbench(tmp_path / "ws", engine="local")
    try:
        wb.execute(DDL)
        q = wb.query("SELECT STREAM ROWTIME, a / b AS q FROM S", name="ratio")
        wb.inject([S("10:00", a=7, b=0)])                               # step 1: refused
        committed = wb.last_step
        assert [t.step for t in q.trace] == [committed]

        def full(*_a, **_k):
            raise OSError(28, "No space left on device")
        monkeypatch.setattr(wb.log, "write_segments", full)
        with pytest.raises(streamsql.StreamSqlError):
            wb.inject([S("10:01", a=8, b=0)])
        monkeypatch.undo()
        assert wb.last_step == committed and [t.step for t in q.trace] == [committed]
        wb.inject([S("10:02", a=9, b=0)])
        assert [e.message for e in q.errors] == [
            'Query ratio: division by zero in "a / b" with a = 7, b = 0 (SQLSTATE 22012)',
            'Query ratio: division by zero in "a / b" with a = 9, b = 0 (SQLSTATE 22012)']
        assert [t.step for t in q.trace] == [committed, committed + 1]
    finally:
        wb.close()


def test_vectorised_rowtime_maps_agree_with_the_scalar_one_beyond_the_timestamp_range():
    # the Spark runtime maps whole timelines with rowtime_map_array; a time whose mapping leaves
    # years 0001-9999 (CEIL of 9999-06-01 TO YEAR, + 1 month from 9999-12-15) maps to the end of
    # time there, as apply_rowtime_map makes it for the local runtime
    import numpy as np
    from streamsql.engine import time as T
    from streamsql.engine.expr import apply_rowtime_map, rowtime_map_array
    from streamsql.engine.sql import analyze
    wb = streamsql.Workbench(None, engine="local")
    try:
        wb.execute(DDL)
        times = [T.parse_timestamp(t) for t in ("2006-10-10 10:00:00", "9999-06-01 00:00:00", "9999-12-15 00:00:00")]
        for expr in ("CEIL(ROWTIME TO YEAR)", "ROWTIME + INTERVAL '1' MONTH", "FLOOR(ROWTIME TO DAY)"):
            e = analyze(f"SELECT STREAM {expr} AS ROWTIME, a FROM S", wb.catalog).query.root.rowtime
            want = [apply_rowtime_map(e, t) for t in times]
            assert rowtime_map_array(e, np.array(times, dtype=np.int64)).tolist() == want, expr
        assert want[1] < T.END_OF_TIME
        e = analyze("SELECT STREAM CEIL(ROWTIME TO YEAR) AS ROWTIME, a FROM S", wb.catalog).query.root.rowtime
        assert rowtime_map_array(e, np.array(times[1:2], dtype=np.int64)).tolist() == [T.END_OF_TIME]
    finally:
        wb.close()
