"""Foreign streams on the file server: CSV files read into a stream (by Spark's file source on
the Spark engine), stamped by the column a view promotes, a bound after each file, new files
picked up while running, malformed records to the error stream with file and line."""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.csv as pcsv
import pytest

from streamsql import SqlError, Workbench
from streamsql.engine import time as T

DDL = """
CREATE FOREIGN STREAM RawTrades (ts VARCHAR(30), ticker VARCHAR(10), price DOUBLE, volume INTEGER)
  SERVER FILE_SERVER OPTIONS ("PARSER" 'CSV', "DIRECTORY" '{dir}', "FILENAME_PATTERN" 'trades-.*\\.csv',
  "SKIP_HEADER" 'true', "SEPARATOR" ',', "CHARACTER_ENCODING" 'UTF-8');
CREATE VIEW Trades AS SELECT STREAM CAST(ts AS TIMESTAMP) AS ROWTIME, ticker, price, volume FROM RawTrades;
"""
HOURLY = ("SELECT STREAM ticker, SUM(volume) AS v, COUNT(*) AS c FROM Trades "
          "GROUP BY FLOOR(Trades.ROWTIME TO HOUR), ticker")


def ts(s):
    return T.parse_timestamp("2006-10-10 " + s)


def write(path, text):
    path.write_text(text)


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_files_rows_bounds_and_malformed_records(tmp_path, engine, request):
    if engine == "spark":
        request.getfixturevalue("spark")
    d = tmp_path / "in"
    d.mkdir()
    write(d / "trades-001.csv", "ts,ticker,price,volume\n2006-10-10 10:00:00,ORCL,10.5,100\n"
                                "2006-10-10 10:30:00,IBM,20,200\n\n2006-10-10 10:45:00,ORCL,oops,5\n")
    write(d / "trades-002.csv", "ts,ticker,price,volume\n2006-10-10 11:05:00,IBM,21,50\n"
                                "2006-10-10 11:10:00,ORCL,11,10,extra\n")
    write(d / "notes.txt", "not a trade file\n")
    wb = Workbench(tmp_path / "ws", engine=engine)
    try:
        wb.execute(DDL.format(dir=d))
        errors = wb.query("SELECT STREAM MESSAGE, DATA_ROW, STREAM_NAME FROM ERRORS")
        q = wb.query(HOURLY)
        q.wait()
        # file 1: steps 1-3 (the bad record is step 3), bound (step 4); file 2: steps 5-6, bound 7
        assert [(r.step, r.rowtime, r.values) for r in q.rows] == [
            (5, ts("11:00"), ("IBM", 200, 1)), (5, ts("11:00"), ("ORCL", 100, 1))]
        assert wb.clock("RAWTRADES") == ts("11:05")
        errors.wait()
        got = [(r.step, r.values[0], json.loads(r.values[1])) for r in errors.rows]
        assert [g[0] for g in got] == [3, 6]
        assert got[0][1].startswith("trades-001.csv:5: column PRICE")
        assert got[0][2]["line"] == 5 and got[0][2]["record"] == "2006-10-10 10:45:00,ORCL,oops,5"
        assert got[1][1] == "trades-002.csv:3: malformed CSV record (4 fields expected)"
        # a file added while the query runs is picked up; its rows complete the 11:00 hour
        write(d / "trades-003.csv", "ts,ticker,price,volume\n2006-10-10 12:01:00,IBM,22,1\n")
        q.wait()
        assert [(r.step, r.values) for r in q.rows][-1] == (8, ("IBM", 50, 1))   # step 8: its row
        assert wb.readers["RAWTRADES"].progress == (3, 3)
    finally:
        wb.close()


def test_option_errors(wb_local, tmp_path):
    with pytest.raises(SqlError, match="unknown option COMPRESSION"):
        wb_local.execute(f"""CREATE FOREIGN STREAM S (a INTEGER) SERVER FILE_SERVER
            OPTIONS ("PARSER" 'CSV', "DIRECTORY" '{tmp_path}', "COMPRESSION" 'gzip')""")
    with pytest.raises(SqlError, match="needs a DIRECTORY"):
        wb_local.execute("""CREATE FOREIGN STREAM S (a INTEGER) SERVER FILE_SERVER OPTIONS ("PARSER" 'CSV')""")
    with pytest.raises(SqlError, match="only FILE_SERVER"):
        wb_local.execute(f"""CREATE FOREIGN STREAM S (a INTEGER) SERVER KAFKA_SERVER OPTIONS ("DIRECTORY" '{tmp_path}')""")


def test_arrival_time_stamps_without_a_promoted_column(wb_local, tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    write(d / "a.csv", "1,x\n2,y\n")
    wb_local.execute(f"""CREATE FOREIGN STREAM S (n INTEGER, s VARCHAR(5)) SERVER FILE_SERVER
        OPTIONS ("PARSER" 'CSV', "DIRECTORY" '{d}')""")
    q = wb_local.query("SELECT STREAM ROWTIME, n, s FROM S")
    q.wait()
    assert [r.values for r in q.rows] == [(1, "x"), (2, "y")]
    assert q.rows[0].rowtime == q.rows[1].rowtime > T.parse_timestamp("2026-01-01")


def test_a_million_rows_through_an_aggregation_match_a_spark_batch_query(tmp_path, spark):
    """The acceptance run: 1,000,000 trades in 10 CSV files (one malformed line) replayed through
    a foreign stream into an hourly GROUP BY on Spark; the result equals a Spark batch query over
    the same files."""
    d = tmp_path / "big"
    d.mkdir()
    n, files = 1_000_000, 10
    rng = np.random.default_rng(3)
    base = ts("00:00")
    times = base + np.arange(n, dtype=np.int64) * 250
    tickers = np.array(["T%02d" % i for i in range(20)])[rng.integers(0, 20, n)]
    volume = rng.integers(1, 1000, n)
    per = n // files
    bad_file, bad_line = 4, 1234
    for k in range(files):
        sl = slice(k * per, (k + 1) * per)
        t = pa.table({"ts": [T.format_timestamp(int(x)) for x in times[sl]], "ticker": tickers[sl],
                      "price": np.round(rng.uniform(1, 100, per), 2), "volume": volume[sl]})
        path = d / f"trades-{k:03d}.csv"
        pcsv.write_csv(t, path, pcsv.WriteOptions(quoting_style="none"))
        if k == bad_file:
            lines = path.read_text().splitlines()
            lines[bad_line - 1] = lines[bad_line - 1].replace(",", ";")
            path.write_text("\n".join(lines) + "\n")
    wb = Workbench(tmp_path / "ws", engine="spark", buckets=2, trace=False)
    try:
        wb.execute(DDL.format(dir=d))
        errors = wb.query("SELECT STREAM DATA_ROW FROM ERRORS")
        q = wb.query(HOURLY)
        q.wait()
        wb.punctuate("RAWTRADES", T.format_timestamp(int(times[-1]) + 3_600_000))   # close the last hour
        q.wait()
        errors.wait()
        assert [json.loads(r.values[0])["line"] for r in errors.rows] == [bad_line]
        from pyspark.sql import functions as F
        batch = (spark.read.option("header", "true").option("mode", "DROPMALFORMED")
                 .schema("ts STRING, ticker STRING, price DOUBLE, volume INT").csv(str(d))
                 .where("ts IS NOT NULL AND ticker IS NOT NULL AND volume IS NOT NULL")
                 .groupBy(F.date_trunc("hour", F.to_timestamp("ts")).alias("h"), "ticker")
                 .agg(F.sum("volume").alias("v"), F.count("*").alias("c")).collect())
        expected = sorted((r["ticker"], int(r["v"]), int(r["c"])) for r in batch)
        got = sorted(r.values for r in q.rows)
        assert len(got) == len(expected) > 1000
        assert got == expected
    finally:
        wb.close()


def test_a_files_values_are_typed_by_the_one_parser(wb_local, tmp_path):
    # a CSV field is read as INSERT and the injector read it: 'nan' and '1e999' are no DOUBLE
    # (Arrow's own cast takes both), ' 2 ' is the DOUBLE 2.0; a refused field refuses its record only
    d = tmp_path / "in"
    d.mkdir()
    write(d / "a.csv", "1,1.5\n2,nan\n3, 2 \n4,1e999\n")
    wb_local.execute(f"""CREATE FOREIGN STREAM S (n INTEGER, x DOUBLE) SERVER FILE_SERVER
        OPTIONS ("PARSER" 'CSV', "DIRECTORY" '{d}')""")
    errors = wb_local.query("SELECT STREAM MESSAGE FROM ERRORS")
    q = wb_local.query("SELECT STREAM n, x FROM S")
    q.wait()
    errors.wait()
    assert [r.values for r in q.rows] == [(1, 1.5), (3, 2.0)]
    assert [r.values[0] for r in errors.rows] == ["a.csv:2: column X (DOUBLE): 'nan' is not a number (like 1.5 or 2e-3)",
                                                  "a.csv:4: column X (DOUBLE): 1e999 is not a finite number"]
