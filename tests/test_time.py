import numpy as np
import pytest

from streamsql.engine import time as T


def ts(s):
    return T.parse_timestamp(s)


def test_parse_and_format_round_trip():
    t = ts("2006-10-10 10:00:00")
    assert T.format_timestamp(t) == "2006-10-10 10:00:00"
    assert T.format_timestamp(ts("2006-10-10 06:59:59.999")) == "2006-10-10 06:59:59.999"
    assert ts("2006-10-10T10:00:00Z") == t
    assert ts("2006-10-10 10:00") == t


def test_millisecond_precision_is_enforced():
    assert ts("2006-10-10 10:00:00.5") - ts("2006-10-10 10:00:00") == 500
    with pytest.raises(T.TimeFormatError, match="millisecond"):
        ts("2006-10-10 10:00:00.0001")


def test_short_times_need_a_day():
    day = ts("2006-10-10")
    assert T.parse_timestamp("10:05", day=day) == ts("2006-10-10 10:05:00")
    with pytest.raises(T.TimeFormatError, match="HH:MM"):
        T.parse_timestamp("25:00", day=day)
    with pytest.raises(T.TimeFormatError):
        T.parse_timestamp("10:05")


def test_strict_bound_is_the_next_millisecond():
    t = ts("2006-10-10 06:59:59.999")
    assert T.bound_value(t, strict=True) == ts("2006-10-10 07:00:00")
    assert T.bound_value(t) == t


def test_intervals():
    assert T.parse_interval("10", "MINUTE") == T.Interval(millis=600_000)
    assert T.parse_interval("1:30", "HOUR", "MINUTE") == T.Interval(millis=90 * 60_000)
    assert T.parse_interval("2 03:04:05.5", "DAY", "SECOND").millis == ((2 * 24 + 3) * 3600 + 4 * 60 + 5) * 1000 + 500
    assert T.parse_interval("1-2", "YEAR", "MONTH") == T.Interval(months=14)
    with pytest.raises(T.TimeFormatError):
        T.parse_interval("1:30", "MINUTE", "HOUR")


def test_floor_ceil_step():
    t = ts("2006-10-10 10:17:05")
    assert T.floor_to(t, "HOUR") == ts("2006-10-10 10:00:00")
    assert T.ceil_to(t, "HOUR") == ts("2006-10-10 11:00:00")
    assert T.ceil_to(ts("2006-10-10 11:00:00"), "HOUR") == ts("2006-10-10 11:00:00")
    assert T.floor_to(t, "MONTH") == ts("2006-10-01")
    assert T.floor_to(t, "YEAR") == ts("2006-01-01")
    assert T.floor_to(t, "QUARTER") == ts("2006-10-01")
    assert T.floor_to(t, "WEEK") == ts("2006-10-09")  # a Monday
    assert T.step_floor(t, T.Interval(millis=15 * 60_000)) == ts("2006-10-10 10:15:00")


def test_vectorised_floor_matches_scalar():
    xs = np.array([ts("2006-10-10 10:17:05"), ts("2006-12-31 23:59:59.999"), ts("1969-12-31 23:00:00")])
    for unit in ("SECOND", "MINUTE", "HOUR", "DAY", "WEEK", "MONTH", "QUARTER", "YEAR"):
        assert list(T.floor_to_array(xs, unit)) == [T.floor_to(int(x), unit) for x in xs]


def test_month_arithmetic_clamps_to_month_end():
    assert T.add_interval(ts("2006-01-31 10:00:00"), T.Interval(months=1)) == ts("2006-02-28 10:00:00")
