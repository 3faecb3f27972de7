"""Malformed event files and values (docs/reliability.md), through ``streamsql replay`` (its main(),
and a real process for the exit status) and through the API. A file that is not one event per
line stops before anything runs, with one line naming file and line (status 2); an event whose
values do not fit is refused at its step with a message naming stream and column, nothing of it
inserted, and the events around it go on. The wording belongs to the typed-value parser (issue
18): these tests check what is named, not the exact sentences."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from streamsql.engine.catalog import Event
from streamsql.engine.cli import EventsFileError, event_from_json, main
from streamsql.engine.errors import EventError
from streamsql.engine.workbench import Workbench

SQL = """CREATE STREAM S (a INTEGER, b VARCHAR(10), c DOUBLE, d TIMESTAMP, e BOOLEAN, f DECIMAL(5, 2), g VARCHAR);
SELECT STREAM ROWTIME, a, b, c, g FROM S"""
GOOD1 = '{"stream": "S", "rowtime": "2020-01-01 10:00:00", "values": {"a": 1}}'
GOOD3 = '{"stream": "S", "rowtime": "2020-01-01 10:00:02", "values": {"a": 3}}'
TEN_MB = 10_000_000


def row(values: str, rowtime='"2020-01-01 10:00:01"', extra="") -> str:
    return f'{{"stream": "S", "rowtime": {rowtime}, "values": {values}{extra}}}'


#: lines that are not an event: (name, line, what the message names)
FILE_ERRORS = [
    ("truncated JSON", '{"stream": "S", "rowtime": ', "not a JSON object"),
    ("a list", "[1, 2]", '"stream"'),
    ("a string", '"S"', '"stream"'),
    ("null", "null", '"stream"'),
    ("a number stream", '{"stream": 5, "rowtime": "2020-01-01 10:00:01"}', '"stream"'),
    ("no kind", '{"stream": "S"}', '"rowtime"'),
    ("values a list", row("[1]"), '"values"'),
    ("rowtime text", row("{}", '"yesterday"'), '"rowtime"'),
    ("rowtime NaN", row("{}", "NaN"), '"rowtime"'),
    ("rowtime Infinity", row("{}", "Infinity"), '"rowtime"'),
    ("rowtime float", row("{}", "1e300"), '"rowtime"'),
    ("rowtime bool", row("{}", "true"), '"rowtime"'),
    ("rowtime null", row("{}", "null"), '"rowtime"'),
    ("rowtime month 13", row("{}", '"2020-13-45 10:00:00"'), '"rowtime"'),
    ("bound an object", '{"stream": "S", "bound": {"x": 1}}', '"bound"'),
    ("strict a text", '{"stream": "S", "bound": "2020-01-01 10:00:01", "strict": "no"}', '"strict"'),
    ("attach a number", '{"stream": "S", "attach": 1, "producer": "p"}', '"attach"'),
    ("deeply nested list", row("{\"a\": " + "[" * 100_000 + "]" * 100_000 + "}"), "nested too deeply"),
    ("deeply nested object", '{"stream": "S", "x": ' + '{"a":' * 100_000 + "1" + "}" * 100_000 + "}",
     "nested too deeply"),
    ("10 MB of garbage", "x" * TEN_MB, "not a JSON object"),
    ("a BOM mid-file", "\ufeff" + GOOD1, "not a JSON object"),
]

#: events whose values are refused at their step: (name, line, words the message must contain)
VALUE_ERRORS = [
    ("unknown stream", '{"stream": "Nope", "rowtime": "2020-01-01 10:00:01", "values": {"a": 1}}', ["Nope"]),
    ("unknown column", row('{"zz": 1}'), ["S", "zz"]),
    ("text into INTEGER", row('{"a": "abc"}'), ["S", "A", "abc", "INTEGER"]),
    ("1.5 into INTEGER", row('{"a": 1.5}'), ["S", "A", "1.5", "INTEGER"]),
    ("true into INTEGER", row('{"a": true}'), ["S", "A", "INTEGER"]),
    ("a list into INTEGER", row('{"a": [1]}'), ["S", "A", "INTEGER"]),
    ("an object into INTEGER", row('{"a": {"x": 1}}'), ["S", "A", "INTEGER"]),
    ("10**30 into INTEGER", row('{"a": 1000000000000000000000000000000}'), ["S", "A", "INTEGER"]),
    ("NaN into INTEGER", row('{"a": NaN}'), ["S", "A", "INTEGER"]),
    ("-Infinity into INTEGER", row('{"a": -Infinity}'), ["S", "A", "INTEGER"]),
    ("NaN into DECIMAL", row('{"f": NaN}'), ["S", "F", "DECIMAL"]),
    ("a number into VARCHAR", row('{"b": 123}'), ["S", "B", "123", "VARCHAR"]),
    ("10 MB into VARCHAR(10)", row('{"b": "' + "x" * TEN_MB + '"}'), ["S", "B", "VARCHAR(10)"]),
    ("a word into TIMESTAMP", row('{"d": "yesterday"}'), ["S", "D", "yesterday"]),
    ("a word into BOOLEAN", row('{"e": "maybe"}'), ["S", "E", "maybe", "BOOLEAN"]),
    ("a lone surrogate", row('{"g": "ok\\ud800"}'), ["S", "G", "Unicode"]),
    ("a 10**23 rowtime", row("{}", "99999999999999999999999"), ["S", "rowtime"]),
    ("a rowtime before year 1", row("{}", "-99999999999999"), ["S", "rowtime"]),
    ("a producer number", row('{"a": 2}', extra=', "producer": 5'), ["S", "producer"]),
    ("an empty producer", row('{"a": 2}', extra=', "producer": ""'), ["S", "producer"]),
    ("a producer with NUL", row('{"a": 2}', extra=', "producer": "p\\u0000"'), ["S", "producer"]),
    ("detach a stranger", '{"stream": "S", "detach": true, "producer": "zzz"}', ["S", "zzz"]),
]

#: accepted as they are
ACCEPTED = [
    ("emoji, RTL and combining marks", row('{"b": "😀\u202eab\u0301", "g": "日本語\\u0000"}'), ("😀\u202eab\u0301", "日本語\x00")),
    ("10 MB into VARCHAR", row('{"g": "' + "é" * (TEN_MB // 2) + '"}'), (None, "é" * (TEN_MB // 2))),
]


def _replay(tmp_path: Path, lines: list[str], capfd) -> tuple[int, list[dict], str]:
    sql = tmp_path / "q.sql"
    sql.write_text(SQL)
    ev = tmp_path / "e.jsonl"
    ev.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    capfd.readouterr()
    rc = main(["replay", str(sql), str(ev), "--engine", "local"])
    out, err = capfd.readouterr()
    return rc, [json.loads(x) for x in out.splitlines()], err


@pytest.mark.parametrize("name,line,named", FILE_ERRORS, ids=[c[0] for c in FILE_ERRORS])
def test_a_line_that_is_not_an_event_stops_the_replay_with_one_line(tmp_path, capfd, name, line, named):
    rc, out, err = _replay(tmp_path, [GOOD1, line, GOOD3], capfd)
    assert rc == 2 and out == []
    assert err.count("\n") == 1 and err.startswith(f"error: {tmp_path / 'e.jsonl'}:2: ") and named in err, err
    assert len(err) < 400


@pytest.mark.parametrize("name,line,named", VALUE_ERRORS, ids=[c[0] for c in VALUE_ERRORS])
def test_an_event_with_bad_values_is_refused_at_its_step(tmp_path, capfd, name, line, named):
    rc, out, err = _replay(tmp_path, [GOOD1, line, GOOD3], capfd)
    assert rc == 0 and err == "", err
    errors = [o for o in out if "error" in o]
    assert [o["step"] for o in errors] == [2], out
    msg = errors[0]["error"]
    assert all(w in msg for w in named) and len(msg) < 500 and "\n" not in msg, msg
    # nothing of it inserted; the events around it went on
    assert [(o["step"], o["values"]["A"]) for o in out if "values" in o] == [(1, 1), (3, 3)]


@pytest.mark.parametrize("name,line,values", ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_unusual_but_valid_values_are_kept_exactly(tmp_path, capfd, name, line, values):
    rc, out, err = _replay(tmp_path, [GOOD1, line, GOOD3], capfd)
    assert rc == 0 and err == ""
    got = [o for o in out if o.get("step") == 2]
    assert len(got) == 1 and (got[0]["values"]["B"], got[0]["values"]["G"]) == values


def test_a_bom_at_the_start_and_crlf_line_ends(tmp_path, capfd):
    sql = tmp_path / "q.sql"
    sql.write_text(SQL)
    ev = tmp_path / "e.jsonl"
    ev.write_bytes(b"\xef\xbb\xbf" + (GOOD1 + "\r\n\r\n" + GOOD3 + "\r\n").encode())
    assert main(["replay", str(sql), str(ev), "--engine", "local"]) == 0
    assert [json.loads(x)["step"] for x in capfd.readouterr().out.splitlines()] == [1, 2]


def test_nan_and_infinity_in_a_double_column(tmp_path, capfd):
    """The one typed-value parser (engine/values.py) takes finite numbers only: NaN and infinities
    in an event file are refused at their step with the column named, and the replay goes on."""
    rc, out, _err = _replay(tmp_path, [GOOD1, row('{"c": NaN}'), row('{"c": -Infinity}', '"2020-01-01 10:00:01.5"'),
                                       GOOD3], capfd)
    assert rc == 0
    assert [o.get("error") for o in out] == [None, "column C of stream S (DOUBLE): nan is not a finite number",
                                             "column C of stream S (DOUBLE): -inf is not a finite number", None]
    assert [o["values"]["A"] for o in out if "values" in o] == [1, 3]


@pytest.mark.parametrize("data", [b"\xff\xfe\x00garbage", b'{"stream": "S", "values": {"b": "caf\xe9"}}',
                                  bytes(range(128, 256))])
def test_bytes_that_are_not_utf8(tmp_path, capfd, data):
    sql = tmp_path / "q.sql"
    sql.write_text(SQL)
    ev = tmp_path / "e.jsonl"
    ev.write_bytes(GOOD1.encode() + b"\n" + data + b"\n")
    assert main(["replay", str(sql), str(ev), "--engine", "local"]) == 2
    err = capfd.readouterr().err
    assert err.count("\n") == 1 and ":2: not UTF-8 text" in err


def test_a_real_process_exits_with_one_line_and_no_traceback(tmp_path):
    sql = tmp_path / "q.sql"
    sql.write_text(SQL)
    cases = {"deep": (row("{\"a\": " + "[" * 100_000 + "]" * 100_000 + "}"), 2),
             "binary": ("\udcff\udcfe", 2), "values": (row('{"a": "abc"}'), 0), "missing": (None, 1)}
    for name, (line, status) in cases.items():
        ev = tmp_path / f"{name}.jsonl"
        if line is not None:
            ev.write_text(GOOD1 + "\n" + line + "\n", encoding="utf-8", errors="surrogateescape")
        r = subprocess.run([sys.executable, "-m", "streamsql.engine.cli", "replay", str(sql), str(ev), "--engine",
                            "local"], capture_output=True, text=True, timeout=120)
        assert r.returncode == status, (name, r.stderr)
        assert "Traceback" not in r.stderr and r.stderr.count("\n") == (0 if status == 0 else 1), (name, r.stderr)


# --------------------------------------------------------------------------- the API

@pytest.fixture
def wb(tmp_path):
    w = Workbench(tmp_path / "ws", engine="local")
    w.execute(SQL)
    yield w
    w.close()


@pytest.mark.parametrize("name,line,named", VALUE_ERRORS, ids=[c[0] for c in VALUE_ERRORS])
def test_the_same_values_through_the_api(wb, name, line, named):
    q = next(iter(wb.queries.values()))
    wb.inject([event_from_json(json.loads(GOOD1))])
    before = (wb.clock("S"), len(q.rows), wb.streams()[1]["rows"])
    outs = wb.inject([event_from_json(json.loads(line))])
    assert outs[0].status == "error" and all(w in outs[0].message for w in named), outs[0].message
    assert (wb.clock("S"), len(q.rows), wb.streams()[1]["rows"]) == before
    ev = event_from_json(json.loads(line))
    if ev.kind == "row" and ev.stream == "S" and ev.producer is None:
        with pytest.raises(EventError) as e:
            wb.insert("S", ev.values, rowtime=ev.rowtime)
        assert all(w in str(e.value) for w in named)
    wb.inject([event_from_json(json.loads(GOOD3))])
    assert [r.values[0] for r in q.rows] == [1, 3]


@pytest.mark.parametrize("rowtime", [float("nan"), math.inf, 10**30, -10**15, [1], "garbage", "25:99", None])
def test_bad_rowtimes_through_the_api(wb, rowtime):
    wb.insert("S", {"a": 1}, rowtime="2020-01-01 10:00:00")
    with pytest.raises(EventError) as e:
        if rowtime is None:
            wb.punctuate("S", None)
        else:
            wb.insert("S", {"a": 2}, rowtime=rowtime)
    assert "\n" not in str(e.value) and len(str(e.value)) < 300
    assert wb.clock("S") == 1577872800000


@pytest.mark.parametrize("data,named", [
    ({"ROWTIME": ["garbage"], "a": [1]}, "ROWTIME"),
    ({"ROWTIME": [1.5], "a": [1]}, "ROWTIME"),
    ({"ROWTIME": [10**20], "a": [1]}, "too large"),
    ({"ROWTIME": [-10**15], "a": [1]}, "0001"),
    ({"ROWTIME": [None], "a": [1]}, "NULL"),
    ({"ROWTIME": [1577872800000], "a": ["x"]}, "A"),
    ({"ROWTIME": [1577872800000], "a": [float("nan")]}, "A"),
    ({"ROWTIME": [1577872800000], "b": ["x" * 11]}, r"VARCHAR\(10\)"),
    ({"ROWTIME": [1577872800000], "zz": [1]}, "zz"),
    ({"ROWTIME": [1577872800000, 1], "a": [1]}, "length"),
    ("not a table", "DataFrame"),
])
def test_bad_loads_change_nothing(wb, data, named):
    q = next(iter(wb.queries.values()))
    wb.insert("S", {"a": 1}, rowtime="2020-01-01 09:00:00")
    step = wb.last_step
    with pytest.raises(EventError, match=named) as e:
        wb.load("S", data)
    assert "\n" not in str(e.value)
    assert wb.last_step == step and len(q.rows) == 1
    wb.load("S", {"ROWTIME": [1577872800000], "a": [7]})
    assert [r.values[0] for r in q.rows] == [1, 7]


def test_a_stream_name_that_is_not_a_string_in_an_event(wb):
    with pytest.raises(EventsFileError, match='"stream"'):
        event_from_json({"stream": ["S"], "rowtime": 0})
    assert wb.inject([Event(None, "row", 0, {})])[0].status == "error"
