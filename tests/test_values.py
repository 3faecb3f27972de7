"""The one typed-value parser (streamsql/engine/values.py), through every door a value comes in:
a widget field, an INSERT literal and an event file. One table of good and bad values per SQL
type; each door must accept exactly the good ones, with exactly the expected value, and refuse
the bad ones with a message naming the column and its type, inserting nothing."""
from __future__ import annotations

import decimal
import json
import re

import pytest

from streamsql.engine import time as T
from streamsql.engine.cli import read_events
from streamsql.engine.errors import StreamSqlError
from streamsql.engine.types import parse_type_name
from streamsql.engine.values import ValueRefused, coerce, parse_text
from streamsql.widgets import Injector

D = decimal.Decimal
TS = T.parse_timestamp

#: (column type, what is typed, the value it is or the words of the refusal)
CASES = [
    ("INTEGER", "42", 42), ("INTEGER", "-7", -7), ("INTEGER", " 12 ", 12), ("INTEGER", "-2147483648", -2147483648),
    ("INTEGER", "3.7", "'3.7' is not a whole number"), ("INTEGER", "12x", "'12x' is not a whole number"),
    ("INTEGER", "1_000", "'1_000' is not a whole number"),
    ("INTEGER", "2147483648", "2147483648 is out of range for INTEGER"),
    ("TINYINT", "127", 127), ("TINYINT", "128", "128 is out of range for TINYINT (-128 to 127)"),
    ("TINYINT", "-129", "out of range for TINYINT"),
    ("SMALLINT", "32767", 32767), ("SMALLINT", "32768", "out of range for SMALLINT"),
    ("BIGINT", "9223372036854775807", 2**63 - 1), ("BIGINT", "9223372036854775808", "out of range for BIGINT"),
    ("DOUBLE", "1.5", 1.5), ("DOUBLE", "-2e-3", -0.002), ("DOUBLE", "7", 7.0),
    ("DOUBLE", "1,5", "'1,5' is not a number"), ("DOUBLE", "1.5.2", "'1.5.2' is not a number"),
    ("DOUBLE", "nan", "'nan' is not a number"), ("DOUBLE", "inf", "'inf' is not a number"),
    ("DOUBLE", "1e400", "is not a finite number"),
    ("REAL", "2.5", 2.5), ("REAL", "1e39", "out of range for REAL"),
    ("DECIMAL(6,2)", "12.34", D("12.34")), ("DECIMAL(6,2)", "12.3", D("12.30")), ("DECIMAL(6,2)", "-5", D("-5.00")),
    ("DECIMAL(6,2)", "1.500", D("1.50")),
    ("DECIMAL(6,2)", "1.234", "has more than 2 digits after the decimal point"),
    ("DECIMAL(6,2)", "12345.6", "needs more than 4 digits before the decimal point"),
    ("DECIMAL(6,2)", "1,5", "'1,5' is not a decimal number"),
    ("VARCHAR(3)", "abc", "abc"), ("VARCHAR(3)", " a ", " a "), ("VARCHAR(3)", "", ""),
    ("VARCHAR(3)", "abcd", "'abcd' is longer than VARCHAR(3) (4 characters)"),
    ("CHAR(2)", "ab", "ab"), ("CHAR(2)", "abc", "is longer than CHAR(2)"),
    ("BOOLEAN", "TRUE", True), ("BOOLEAN", "false", False), ("BOOLEAN", "yes", "'yes' is not a BOOLEAN (TRUE or FALSE)"),
    ("TIMESTAMP", "2006-10-10 10:00:00", TS("2006-10-10 10:00:00")),
    ("TIMESTAMP", "2006-10-10 10:00:00.250", TS("2006-10-10 10:00:00.250")),
    ("TIMESTAMP", "2006-13-01 10:00:00", "invalid timestamp"), ("TIMESTAMP", "yesterday", "invalid timestamp"),
    ("TIMESTAMP", "2006-10-10 10:00:00.2501", "millisecond precision"),
]
IDS = [f"{t}:{text!r}" for t, text, _ in CASES]
AT = "2006-10-10 10:00:00"


def refused(expected) -> bool:
    return isinstance(expected, str) and not isinstance(expected, bool) and (
        "not" in expected or "out of range" in expected or "more than" in expected or "longer" in expected
        or "invalid" in expected or "precision" in expected)


def unquoted(text: str) -> str:
    """A number value is shown as it is, a typed text in quotes: compare without them."""
    return text.replace("'", "")


def streams(cases) -> dict[str, str]:
    """One stream per type: ``type -> stream name``."""
    return {t: f"S{i}" for i, t in enumerate(dict.fromkeys(t for t, _x, _e in cases))}


@pytest.fixture
def typed(wb_local):
    names = streams(CASES)
    wb_local.execute(";".join(f"CREATE STREAM {s} (c {t})" for t, s in names.items()))
    return wb_local, names


def rows_in(wb, stream) -> list:
    return [r["values"] for r in wb.event_trace if r["stream"] == stream and r["status"] == "ok"]


def check(expected, got_value=None, error: Exception | None = None) -> None:
    if refused(expected):
        assert error is not None, f"accepted {got_value!r}, expected a refusal: {expected}"
        assert expected in str(error), str(error)
    else:
        assert error is None, str(error)
        assert got_value == expected and type(got_value) is type(expected), (got_value, expected)


def _split(t: str):
    m = re.match(r"(\w+)(?:\((\d+)(?:,(\d+))?\))?$", t)
    return m.group(1), [int(x) for x in m.groups()[1:] if x is not None]


@pytest.mark.parametrize("t,text,expected", CASES, ids=IDS)
def test_parse_text(t, text, expected):
    st = parse_type_name(*_split(t))
    try:
        v, err = parse_text(text, st, where="column C"), None
    except ValueRefused as e:
        v, err = None, e
        assert str(e).startswith(f"column C ({st}): ")          # names the column and the type
    check(expected, v, err)


def test_widget_field(typed):
    """What a person types in the injector's field for the column."""
    wb, names = typed
    injectors = {t: Injector(wb, s) for t, s in names.items()}
    for t, text, expected in CASES:
        inj, s = injectors[t], names[t]
        before = len(wb.event_trace)
        # what the browser's Insert row sends: the values on screen, carried by the click
        inj._on_click(inj, {"op": "insert", "id": f"{t}-{text}", "rowtime": AT, "values": {"C": text},
                            "nulls": [], "producer": "default"}, [])
        if refused(expected):
            assert len(wb.event_trace) == before, (t, text)            # nothing went in, no step taken
            assert "error: column C (" + str(parse_type_name(*_split(t))) in inj.last_message, inj.last_message
            assert expected in inj.last_message, (t, text, inj.last_message)
        else:
            assert inj.last_message.startswith("step "), (t, text, inj.last_message)
            check(expected, rows_in(wb, s)[-1]["C"])


def sql_literal(t: str, text: str) -> str:
    """How the same value is written in an INSERT statement (text that is no literal of the
    type is written as a string, which the statement must refuse)."""
    base = _split(t)[0]
    if base in ("INTEGER", "TINYINT", "SMALLINT", "BIGINT", "DOUBLE", "REAL", "DECIMAL") and \
            re.fullmatch(r"\s*-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*", text):
        return text.strip()
    if base == "BOOLEAN" and text.upper() in ("TRUE", "FALSE"):
        return text
    if base == "TIMESTAMP":
        return f"TIMESTAMP '{text}'"
    return "'" + text.replace("'", "''") + "'"


def test_insert_literal(typed):
    wb, names = typed
    for t, text, expected in CASES:
        s = names[t]
        before = len(rows_in(wb, s))
        sql = f"INSERT INTO {s} (ROWTIME, c) VALUES (TIMESTAMP '{AT}', {sql_literal(t, text)})"
        try:
            wb.execute(sql)
            err = None
        except StreamSqlError as e:
            err = e
        if refused(expected):
            assert err is not None, (sql, rows_in(wb, s)[-1:])
            assert len(rows_in(wb, s)) == before
            if not type(err).__name__ == "SqlError":     # refused by the parser, not the analyzer
                assert f"column C of stream {s} ({parse_type_name(*_split(t))})" in str(err), str(err)
                assert unquoted(expected) in unquoted(str(err)), str(err)
        else:
            assert err is None, (sql, err)
            check(expected, wb.catalog.coerce_values(wb.catalog.stream(s), rows_in(wb, s)[-1])[0])


def json_forms(text: str) -> list:
    """The value as a JSON string, and as a JSON number or boolean when it spells one."""
    forms = [text]
    try:
        v = json.loads(text)
    except ValueError:
        return forms
    if isinstance(v, (int, float, bool)):
        forms.append(v)
    return forms


def test_event_file(typed, tmp_path):
    wb, names = typed
    lines, want = [], []
    for t, text, expected in CASES:
        for v in json_forms(text):
            lines.append(json.dumps({"stream": names[t], "rowtime": AT, "values": {"c": v}}))
            want.append((t, v, expected))
    path = tmp_path / "values.events.jsonl"
    path.write_text("\n".join(lines) + "\n")
    outcomes = wb.inject(read_events(path))
    for (t, v, expected), o in zip(want, outcomes):
        if refused(expected):
            assert o.status == "error", (t, v, o.status)
            assert o.message.startswith(f"column C of stream {names[t]} ({parse_type_name(*_split(t))}): "), o.message
            assert unquoted(expected) in unquoted(o.message), (t, v, o.message)
        else:
            assert o.status == "ok", (t, v, o.message)
            got = wb.catalog.coerce_values(wb.catalog.stream(names[t]), o.event.values)[0]
            check(expected, got)


def test_table_insert_literal(wb_local):
    """A table's INSERT stores each value as its column's type, exactly as a stream's does, or
    refuses it naming the table's column (a DECIMAL literal into a DOUBLE column is a DOUBLE)."""
    wb = wb_local
    names = {t: f"T{i}" for i, t in enumerate(dict.fromkeys(t for t, _x, _e in CASES))}
    wb.execute(";".join(f"CREATE TABLE {s} (c {t})" for t, s in names.items()))
    for t, text, expected in CASES:
        s = names[t]
        rows = wb.catalog.tables[s].rows
        before = len(rows)
        try:
            wb.execute(f"INSERT INTO {s} VALUES ({sql_literal(t, text)})")
            err = None
        except StreamSqlError as e:
            err = e
        if refused(expected):
            assert err is not None and len(rows) == before, (t, text, rows[-1:])
            if f"column C of table {s} " in str(err):
                assert f"column C of table {s} ({parse_type_name(*_split(t))}): " in str(err), str(err)
                assert unquoted(expected) in unquoted(str(err)), str(err)
            else:                                        # the analyzer refused the literal itself
                assert re.search(r"Cannot assign|Invalid TIMESTAMP literal", str(err)), str(err)
        else:
            assert err is None, (t, text, err)
            check(expected, rows[-1][0])


@pytest.mark.parametrize("form", ["text", "value"])
def test_bulk_load(typed, form):
    """``Workbench.load`` types a column as inserting its rows one by one would (Arrow where the
    rules accept every value, the one parser otherwise), or refuses it naming the column."""
    from streamsql.engine.errors import EventError
    wb, names = typed

    def loaded(wb, s):
        return [r["values"] for r in wb.traced_events(streams=[s]) if r["status"] == "ok"]
    for t, text, expected in CASES:
        forms = json_forms(text)
        if form == "value" and len(forms) == 1:
            continue
        v = forms[-1] if form == "value" else text
        s = names[t]
        before = len(loaded(wb, s))
        try:
            wb.load(s, {"ROWTIME": [AT, AT], "c": [v, None]})
            err = None
        except EventError as e:
            err = e
        if refused(expected):
            assert err is not None, (t, v, loaded(wb, s)[-1:])
            assert len(loaded(wb, s)) == before
            assert str(err).startswith(f"column C of stream {s} ({parse_type_name(*_split(t))}): "), str(err)
            assert unquoted(expected) in unquoted(str(err)) and str(err).endswith("(row 1)"), str(err)
        else:
            assert err is None, (t, v, err)
            got = wb.catalog.coerce_values(wb.catalog.stream(s), loaded(wb, s)[-2])[0]
            check(expected, got)


def test_bulk_load_converts_whole_columns_by_the_same_rules():
    """The column form of the rules on the columns a data frame gives: decimals and integers
    into DOUBLE, text into DECIMAL, nanosecond timestamps to milliseconds; a fraction in an
    INTEGER column, a lossy timestamp or a non-finite DOUBLE is refused at its row."""
    import pyarrow as pa
    from streamsql.engine.values import column
    dbl, dec = parse_type_name("DOUBLE"), parse_type_name("DECIMAL", [6, 2])
    assert column(pa.array([D("17.0"), D("0.25"), None]), dbl, "c").to_pylist() == [17.0, 0.25, None]
    assert column(pa.array([10, 30]), dbl, "c").to_pylist() == [10.0, 30.0]
    assert column(pa.array(["1.5", " 12.34 "]), dec, "c").to_pylist() == [D("1.50"), D("12.34")]
    assert column(pa.array([0.1, 2.5]), dec, "c").to_pylist() == [D("0.10"), D("2.50")]
    ts = pa.array([1_160_474_400_000_000_000], pa.timestamp("ns"))
    assert column(ts, parse_type_name("TIMESTAMP"), "c").to_pylist() == [TS("2006-10-10 10:00:00")]
    for col, t, words in [(pa.array([1, 2, 3.5]), parse_type_name("INTEGER"), "3.5 is not a whole number (row 3)"),
                          (pa.array([1.0, float("inf")]), dbl, "inf is not a finite number (row 2)"),
                          (pa.array([1_160_474_400_000_000_001], pa.timestamp("ns")), parse_type_name("TIMESTAMP"),
                           "millisecond precision; got 2006-10-10T10:00:00.000000001 (row 1)"),
                          (pa.array([True]), parse_type_name("INTEGER"), "TRUE is a BOOLEAN, not a number (row 1)")]:
        with pytest.raises(ValueRefused, match=re.escape(words)):
            column(col, t, "column C")


def test_python_values_are_never_changed():
    """The API's Python values: a whole float is an integer, a fraction is not; decimals keep
    their value or are refused; booleans are not numbers."""
    i, d = parse_type_name("INTEGER"), parse_type_name("DECIMAL", [6, 2])
    assert coerce(3.0, i) == 3 and coerce(D("4.00"), i) == 4
    for bad in (3.7, D("3.5"), True, float("nan")):
        with pytest.raises(ValueRefused):
            coerce(bad, i)
    assert coerce(1.25, d) == D("1.25")
    with pytest.raises(ValueRefused, match="more than 2 digits"):
        coerce(1.255, d)
    with pytest.raises(ValueRefused, match="NOT NULL"):
        coerce(None, parse_type_name("INTEGER", nullable=False))
    assert parse_text("08:15", parse_type_name("TIMESTAMP"), day=TS("2006-10-10")) == TS("2006-10-10 08:15:00")
    with pytest.raises(ValueRefused, match="invalid timestamp"):
        parse_text("08:15", parse_type_name("TIMESTAMP"))          # no day to put it on


# --------------------------------------------------------------------------- ROWTIME defaults

def test_blank_rowtime_is_the_stream_clock_and_times_of_day_take_its_date(wb_local):
    """SEMANTICS: a blank ROWTIME is the stream's clock, else the latest clock of any stream;
    ``HH:MM`` takes that clock's date; only ``now`` is the wall clock (the README example)."""
    from streamsql.engine.catalog import now_ms
    from streamsql.engine.errors import EventError
    wb = wb_local
    wb.execute("CREATE STREAM Orders (orderId INTEGER); CREATE STREAM Trades (orderId INTEGER)")
    assert wb.default_rowtime("Trades") == (None, None)
    with pytest.raises(EventError, match="no stream has a clock yet.*'YYYY-MM-DD HH:MM:SS'.*'now'"):
        wb.insert("Orders", {"orderId": 1})
    with pytest.raises(EventError, match="'10:02' is a time of day, but no stream has a clock yet"):
        wb.insert("Orders", {"orderId": 1}, rowtime="10:02")
    assert wb.event_trace == []                                           # nothing went in
    wb.insert("Orders", {"orderId": 1}, rowtime="2006-10-10 10:00:00")
    # Trades has no clock: Orders' gives the date (and a blank rowtime its time)
    assert wb.default_rowtime("Trades") == (TS("2006-10-10 10:00:00"), "ORDERS")
    assert wb.insert("Trades", {"orderId": 1}, rowtime="10:02").event.rowtime == TS("2006-10-10 10:02:00")
    assert wb.insert("Trades", {"orderId": 2}).event.rowtime == TS("2006-10-10 10:02:00")     # its own clock now
    wb.punctuate("Trades", "10:05")
    assert wb.insert("Trades", {"orderId": 3}).event.rowtime == TS("2006-10-10 10:05:00")
    # a producer's own clock counts for its rows (the earliest rowtime that is not late for it)
    wb.attach("Orders", "late_one")
    wb.punctuate("Orders", "10:30", producer="late_one")
    assert wb.insert("Orders", {"orderId": 4}, producer="late_one").event.rowtime == TS("2006-10-10 10:30:00")
    assert wb.insert("Orders", {"orderId": 5}).event.rowtime == TS("2006-10-10 10:00:00")
    # INSERT statements: no ROWTIME column is a blank one; '10:06' and 'now' as in the API
    wb.execute("INSERT INTO Trades (orderId) VALUES (6); INSERT INTO Trades (ROWTIME, orderId) VALUES ('10:06', 7)")
    assert [r["rowtime"] for r in wb.event_trace[-2:]] == [TS("2006-10-10 10:05:00"), TS("2006-10-10 10:06:00")]
    before = now_ms()
    wb.execute("INSERT INTO Trades (ROWTIME, orderId) VALUES ('now', 8)")
    assert wb.event_trace[-1]["rowtime"] >= before
