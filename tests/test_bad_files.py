"""Malformed files in a foreign stream's directory (docs/reliability.md): bytes that are not text in
the stream's encoding, a Parquet file the pattern happens to match, NUL bytes, unbalanced
quotes, wrong field counts, empty and header-only files, a 10 MB field, values that do not fit,
CRLF line ends. Every bad record goes to the error stream with its file and line (a one-line
message); the good records flow, every file is read once, and the stream goes on with the next
file. Bad options are refused when the stream is created."""
from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from streamsql import SqlError, Workbench
from streamsql.engine import time as T

DDL = """CREATE FOREIGN STREAM Raw (ts VARCHAR(30), ticker VARCHAR(10), price DOUBLE, volume INTEGER)
  SERVER FILE_SERVER OPTIONS ("PARSER" 'CSV', "DIRECTORY" '{dir}', "FILENAME_PATTERN" 't-.*',
  "SKIP_HEADER" 'true', "SEPARATOR" ',', "CHARACTER_ENCODING" 'UTF-8');
CREATE VIEW Trades AS SELECT STREAM CAST(ts AS TIMESTAMP) AS ROWTIME, ticker, price, volume FROM Raw;"""
HEAD = b"ts,ticker,price,volume\n"


def line(minute: int, ticker: str = "A", price="1.5", volume="1") -> bytes:
    return f"2006-10-10 10:{minute:02d}:00,{ticker},{price},{volume}\n".encode()


def make_files(d) -> dict[str, list[int]]:
    """Write the directory; returns each file's bad line numbers (None: any number of them)."""
    d.mkdir()
    (d / "t-01.csv").write_bytes(HEAD + line(1) + line(2))
    (d / "t-02.csv").write_bytes(HEAD + line(3) + b"2006-10-10 10:04:00,caf\xe9,1,1\n" + line(5))
    buf = pa.BufferOutputStream()
    pq.write_table(pa.table({"ts": ["2006-10-10 10:06:00"] * 50, "v": list(range(50))}), buf)
    (d / "t-03.parquet").write_bytes(buf.getvalue().to_pybytes())
    (d / "t-04.csv").write_bytes(HEAD + line(7) + b"2006-10-10 10:08:00,N\x00L,1,1\n" + line(9))
    (d / "t-05.csv").write_bytes(HEAD + line(10) + b'2006-10-10 10:11:00,"open quote,1,1\n'
                                 + b"2006-10-10 10:12:00,A,1\n" + b"2006-10-10 10:13:00,A,1,1,1\n" + line(14))
    (d / "t-06.csv").write_bytes(b"")
    (d / "t-07.csv").write_bytes(HEAD)
    (d / "t-08.csv").write_bytes(b"\n\n\r\n")
    (d / "t-09.csv").write_bytes(HEAD + line(15) + b"2006-10-10 10:16:00," + b"x" * 10_000_000 + b",1,1\n" + line(17))
    (d / "t-10.csv").write_bytes(HEAD + line(18) + line(19, volume="1e999") + line(20, price="abc")
                                 + b"yesterday,A,1,1\n" + b"2006-13-45 10:00:00,A,1,1\n" + line(21, volume="99999999999")
                                 + line(22))
    (d / "t-11.csv").write_bytes((HEAD + line(23) + line(24)).replace(b"\n", b"\r\n"))
    (d / "t-12.csv").write_bytes(HEAD + line(25) + b",".join([b"f"] * 100_000) + b"\n" + line(26))
    return {"t-02.csv": [3], "t-03.parquet": None, "t-04.csv": [3], "t-05.csv": [3, 4, 5],
            "t-09.csv": [3], "t-10.csv": [3, 4, 5, 6, 7], "t-12.csv": [3]}


GOOD_MINUTES = [1, 2, 3, 5, 7, 9, 10, 14, 15, 17, 18, 22, 23, 24, 25, 26]


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_malformed_files_go_to_the_error_stream_and_the_rest_flows(tmp_path, engine, request):
    if engine == "spark":
        request.getfixturevalue("spark")
    d = tmp_path / "in"
    bad = make_files(d)
    wb = Workbench(tmp_path / "ws", engine=engine, trace=False)
    try:
        wb.execute(DDL.format(dir=d))
        errors = wb.query("SELECT STREAM MESSAGE, DATA_ROW FROM ERRORS")
        q = wb.query("SELECT STREAM ROWTIME, ticker, volume FROM Trades")
        q.wait()
        errors.wait()
        assert [T.format_time_of_day(r.rowtime) for r in q.rows] == [f"10:{m:02d}" for m in GOOD_MINUTES]
        assert {r.values[0] for r in q.rows} == {"A"}
        got: dict[str, list[int]] = {}
        for msg, data in (r.values for r in errors.rows):
            where = json.loads(data)
            name = where["file"].rsplit("/", 1)[-1]
            assert msg.startswith(f"{name}:{where['line']}: ") and "\n" not in msg and len(msg) <= 300, msg
            got.setdefault(name, []).append(where["line"])
        for name, lines in bad.items():
            if lines is None:
                assert got.get(name), name            # a binary file: its pieces are refused, none flows
            else:
                assert sorted(got.get(name, [])) == lines, (name, got.get(name))
        assert set(got) == set(bad)
        r = wb.readers["RAW"]
        # Spark's file source hands over no rows for the empty, header-only and blank files, so
        # the reader cannot count them as read there (they hold nothing either way)
        assert r.progress == ((12, 12) if engine == "local" else (9, 12))
        # the stream goes on with the next file
        (d / "t-13.csv").write_bytes(HEAD + line(40))
        q.wait()
        assert T.format_time_of_day(q.rows[-1].rowtime) == "10:40"
    finally:
        wb.close()


def test_a_file_in_another_encoding_reads_with_that_encoding(tmp_path, wb_local):
    d = tmp_path / "in"
    d.mkdir()
    (d / "t-1.csv").write_bytes("2006-10-10 10:00:00,café,1,1\n".encode("latin-1"))
    wb_local.execute(DDL.format(dir=d).replace("'UTF-8'", "'ISO-8859-1'").replace("'true'", "'false'"))
    q = wb_local.query("SELECT STREAM ticker FROM Trades")
    q.wait()
    assert [r.values for r in q.rows] == [("café",)]


@pytest.mark.parametrize("option,value,named", [
    ("SEPARATOR", ";;", "SEPARATOR"), ("SEPARATOR", "", "SEPARATOR"), ("CHARACTER_ENCODING", "klingon", "klingon"),
    ("MAX_FILES_PER_BATCH", "many", "MAX_FILES_PER_BATCH"), ("MAX_FILES_PER_BATCH", "0", "MAX_FILES_PER_BATCH"),
    ("FILENAME_PATTERN", "([", "FILENAME_PATTERN"),
])
def test_bad_options_are_refused_at_create(wb_local, tmp_path, option, value, named):
    with pytest.raises(SqlError, match=named) as e:
        wb_local.execute(f"""CREATE FOREIGN STREAM S (a INTEGER) SERVER FILE_SERVER
            OPTIONS ("PARSER" 'CSV', "DIRECTORY" '{tmp_path}', "{option}" '{value}')""")
    assert e.value.line == 1 and "S" not in wb_local.catalog.streams
