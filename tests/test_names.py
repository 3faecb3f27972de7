"""Names never become paths unchecked: a query name becomes the query's folder,
so it must be a plain identifier; a bad one (``..``, empty, absolute, nested, NUL, too long) is
refused with a message naming it and saying what a valid one looks like, before anything runs,
and the workspace is byte for byte what it was. SQL object and producer names may be what a
quoted identifier holds, but never empty, too long or with control characters."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from IPython.testing import globalipapp
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

from streamsql.engine.errors import BadNameError, EventError, SqlError, StreamSqlError
from streamsql.engine.paths import check_path_name, check_sql_name, under
from streamsql.engine.workbench import Workbench

BAD_QUERY_NAMES = ["..", ".", "", "/tmp", "a/b", "../..", "a\x00b", "x" * 129, "q 1", "a\\b", "é", "1abc", "a.b",
                   "~", "queries/../..", "\n"]


def snapshot(root: Path) -> dict[str, str]:
    """Every file and folder under ``root`` with a hash of its content."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root) + "/"] = "dir"
        for f in filenames:
            p = os.path.join(dirpath, f)
            out[os.path.relpath(p, root)] = hashlib.sha256(Path(p).read_bytes()).hexdigest()
    return out


@pytest.fixture
def filled(tmp_path):
    """A workspace with a stream, rows in its log and a running query named ``good``."""
    ws = tmp_path / "ws"
    wb = Workbench(ws, engine="local")
    wb.execute("CREATE STREAM S (a INTEGER)")
    q = wb.query("SELECT STREAM ROWTIME, a FROM S", name="good")
    wb.insert("S", {"a": 1}, rowtime="2020-01-01 10:00:00")
    wb.insert("S", {"a": 2}, rowtime="2020-01-01 10:01:00")
    yield wb, ws, q
    wb.close()


@pytest.mark.parametrize("name", BAD_QUERY_NAMES)
def test_bad_query_name_is_refused_and_the_workspace_is_intact(filled, name, tmp_path):
    wb, ws, q = filled
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("precious")
    before, before_out = snapshot(ws), snapshot(outside)
    for call in (lambda: wb.query("SELECT STREAM ROWTIME, a FROM S", name=name),
                 lambda: wb.execute("CREATE STREAM T (b INTEGER); SELECT STREAM ROWTIME, a FROM S", name=name)):
        with pytest.raises(BadNameError) as e:
            call()
        msg = str(e.value)
        assert repr(name)[:20] in msg and "plain identifier" in msg and "\n" not in msg
    assert snapshot(ws) == before and snapshot(outside) == before_out
    assert "T" not in wb.catalog.streams           # the statement before the query did not run either
    wb.insert("S", {"a": 3}, rowtime="2020-01-01 10:02:00")   # the session goes on
    assert [r.values for r in q.rows] == [(1,), (2,), (3,)]


def test_absolute_name_pointing_at_a_real_folder(filled, tmp_path):
    wb, ws, _q = filled
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "data").write_text("x")
    with pytest.raises(BadNameError):
        wb.query("SELECT STREAM ROWTIME, a FROM S", name=str(victim))
    assert (victim / "data").read_text() == "x"


def test_good_names_still_work(filled):
    wb, _ws, _q = filled
    for name in ("q2", "_x", "Hourly_Totals_2", "a" * 128):
        assert wb.query("SELECT STREAM ROWTIME, a FROM S", name=name).name == name


def test_under_is_the_only_way_and_refuses_anything_but_a_plain_component(tmp_path):
    assert under(tmp_path, "queries", "q1") == tmp_path / "queries" / "q1"
    assert under(tmp_path, "log", "0001_ERRORS") == tmp_path / "log" / "0001_ERRORS"
    for bad in ["..", ".", "", "/etc", "a/b", "a\x00", "a b", "é", None, 3]:
        with pytest.raises(BadNameError, match="path component"):
            under(tmp_path, "queries", bad)
    check_path_name("ok_1")
    with pytest.raises(BadNameError, match="e.g. hourly_totals"):
        check_path_name("not ok")


def test_sql_names_may_be_quoted_identifiers_but_not_empty_long_or_with_control_characters(wb_local):
    wb_local.execute('CREATE STREAM "my stream/1" (a INTEGER)')   # a legal quoted identifier: its log uses a uid
    d = wb_local.catalog.streams["my stream/1"]
    assert d.uid.endswith("_my_stream_1")
    wb_local.insert("my stream/1", {"a": 1}, rowtime="2020-01-01 00:00:00")
    assert [p.parent.name for p in (wb_local.path / "log").glob("*/*.arrow")] == [d.uid]
    for sql, what in [('CREATE STREAM "" (a INTEGER)', "stream name ''"),
                      ('CREATE TABLE "' + "t" * 129 + '" (a INTEGER)', "at most 128"),
                      ('CREATE STREAM "a\x00b" (a INTEGER)', "U+0000"),
                      ('CREATE VIEW "v\x07" AS SELECT STREAM * FROM "my stream/1"', "U+0007"),
                      ('CREATE STREAM Z ("" INTEGER)', "column name ''")]:
        with pytest.raises(SqlError) as e:
            wb_local.execute("-- comment\n" + sql)
        assert what in e.value.message and e.value.line == 2 and e.value.col >= 1, e.value
    assert set(wb_local.catalog.streams) == {"ERRORS", "my stream/1"}


def test_unicode_stream_names_get_an_ascii_uid(wb_local):
    wb_local.execute('CREATE STREAM "café" (a INTEGER)')
    uid = wb_local.catalog.streams["café"].uid
    assert uid.isascii() and uid.endswith("_caf_")
    wb_local.insert("café", {"a": 1}, rowtime="2020-01-01 00:00:00")
    assert (wb_local.path / "log" / uid).is_dir()


@pytest.mark.parametrize("producer", ["", "a\x00b", "p" * 129, 7])
def test_bad_producer_names_are_refused(wb_local, producer):
    wb_local.execute("CREATE STREAM S (a INTEGER)")
    with pytest.raises(EventError, match="producer"):
        wb_local.insert("S", {"a": 1}, rowtime="2020-01-01 00:00:00", producer=producer)
    with pytest.raises(EventError, match="producer"):
        wb_local.punctuate("S", "2020-01-01 00:00:00", producer=producer)
    assert wb_local.clock("S") is None and wb_local.streams()[1]["producers"] == {}
    wb_local.insert("S", {"a": 1}, rowtime="2020-01-01 00:00:00", producer="feed/1")   # a quoted-identifier name
    assert "feed/1" in wb_local.streams()[1]["producers"]


def test_check_sql_name_messages():
    assert check_sql_name("Ünïcode ok") == "Ünïcode ok"
    with pytest.raises(StreamSqlError, match=r"invalid pump name 'a\\nb': it contains the control character U\+000A"):
        check_sql_name("a\nb", "pump")


def test_a_stream_name_that_is_not_a_string_is_a_clear_event_error(wb_local):
    from streamsql.engine.catalog import Event
    wb_local.execute("CREATE STREAM S (a INTEGER)")
    o = wb_local.inject([Event(5, "row", 0, {"a": 1}), Event(["S"], "bound", 0)])
    assert [x.status for x in o] == ["error", "error"]
    assert "must be a string" in o[0].message


# --------------------------------------------------------------------------- the magic in a real shell

@pytest.fixture(scope="module")
def ip():
    shell = start_ipython() or globalipapp.get_ipython()   # None when another module started it
    shell.run_line_magic("load_ext", "streamsql")
    yield shell


@pytest.mark.parametrize("name", ["..", '""', "/tmp", "a/b", "x" * 200])
def test_magic_name_dotdot_is_refused_and_the_workspace_is_intact(ip, tmp_path, name):
    ws = tmp_path / "ws"
    ip.run_line_magic("config", f"StreamSql.workspace = {str(ws)!r}")
    ip.run_line_magic("config", "StreamSql.engine = 'local'")
    ip.run_line_magic("config", "StreamSql.stop_on_error = False")
    try:
        with capture_output():
            ip.run_line_magic("streamsql", "reset")
            ip.run_cell("%%streamsql\nCREATE STREAM S (a INTEGER)")
            ip.run_cell("%%streamsql --name good\nSELECT STREAM ROWTIME, a FROM S")
            ip.run_cell("%streamsql INSERT INTO S (ROWTIME, a) VALUES (TIMESTAMP '2020-01-01 10:00:00', 1)")
        before = snapshot(ws)
        assert any(k.startswith("log/") for k in before) and "catalog.json" in before
        with capture_output() as c:
            r = ip.run_cell(f"%%streamsql --name {name}\nCREATE STREAM T (b INTEGER);\nSELECT STREAM ROWTIME, a FROM S")
        assert r.success           # one printed line, no traceback
        err = c.stderr.strip()
        assert "invalid query name" in err and "plain identifier" in err and len(err.splitlines()) == 1, err
        assert "Traceback" not in c.stdout + c.stderr
        assert snapshot(ws) == before
        with capture_output() as c:   # the session goes on
            ip.run_cell("%streamsql INSERT INTO S (ROWTIME, a) VALUES (TIMESTAMP '2020-01-01 10:01:00', 2)")
        assert "1 row inserted into S" in c.stdout
        from streamsql.magics import current_workbench
        assert [r.values for r in current_workbench().queries["good"].rows] == [(1,), (2,)]
    finally:
        with capture_output():
            ip.run_line_magic("streamsql", "reset")
        ip.run_line_magic("config", "StreamSql.workspace = ''")


def test_spark_query_folders_are_safe(tmp_path, spark):
    """On Spark a query's folder (checkpoint, sink state) is ``queries/<name>``, and a new query
    clears its folder: a bad name must never get there."""
    ws = tmp_path / "ws"
    with Workbench(ws, engine="spark") as wb:
        wb.execute("CREATE STREAM S (a INTEGER)")
        q = wb.query("SELECT STREAM ROWTIME, a FROM S", name="good")
        wb.insert("S", {"a": 1}, rowtime="2020-01-01 10:00:00")
        q.wait()
        assert (ws / "queries" / "good").is_dir()
        before = snapshot(ws)
        for name in ("..", "", str(ws), "queries/good", "."):
            with pytest.raises(BadNameError):
                wb.query("SELECT STREAM ROWTIME, a FROM S", name=name)
        assert snapshot(ws) == before
        wb.insert("S", {"a": 2}, rowtime="2020-01-01 10:01:00")
        q.wait()
        assert [r.values for r in q.rows] == [(1,), (2,)]
