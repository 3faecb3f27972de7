"""The catalog's rules (the semantics, section 2), checked on the catalog itself: what leaves a
stream, late rows, producers, bounds. Engine-independent."""
import json
import logging

import pytest

from streamsql.engine import time as T
from streamsql.engine.catalog import ERROR_STREAM, Catalog, Event
from streamsql.engine.log import BOUND, ROW
from streamsql.engine.plan import Field
from streamsql.engine.types import SqlType


def ts(s):
    return T.parse_timestamp("2006-10-10 " + s)


class Cat:
    """A catalog with one stream S (ticker VARCHAR(10)) and a running step counter."""

    def __init__(self):
        self.c = Catalog()
        self.c.create_stream("S", [Field("TICKER", SqlType("VARCHAR", 10))])
        self.step = 0
        self.log = []          # (step, stream, entry)

    def ev(self, kind, t=None, producer=None, strict=False, **values):
        self.step += 1
        out = {}
        o = self.c.apply(Event("S", kind, None if t is None else ts(t), values or None, strict, producer),
                         self.step, out)
        for s, es in out.items():
            self.log += [(self.step, s, e) for e in es]
        return o

    def rows(self, stream="S"):
        return [(s, T.format_time_of_day(e.rowtime), e.values) for s, st, e in self.log if st == stream and e.kind == ROW]

    def bounds(self):
        return [(s, T.format_time_of_day(e.rowtime)) for s, st, e in self.log if st == "S" and e.kind == BOUND]


def test_single_producer_rows_leave_at_once_and_late_rows_are_rejected():
    k = Cat()
    assert k.ev("row", "10:00", ticker="ORCL").status == "ok"
    assert k.ev("row", "10:05", ticker="MSFT").status == "ok"
    late = k.ev("row", "10:01", ticker="IBM")
    assert late.status == "late" and late.clock == ts("10:05")
    assert k.rows() == [(1, "10:00", ("ORCL",)), (2, "10:05", ("MSFT",))]
    # the late row is in the error stream, with the step that brought it
    err = [e for s, st, e in k.log if st == ERROR_STREAM]
    assert len(err) == 1
    assert err[0].values[2] == "LATE_ROW" and err[0].values[4] == ts("10:01") and err[0].values[6] == "S"
    assert json.loads(err[0].values[5]) == {"TICKER": "IBM"} and err[0].values[8] == 3
    # equal rowtimes are not late
    assert k.ev("row", "10:05", ticker="X").status == "ok"


def test_late_rows_are_logged_at_powers_of_ten(caplog):
    k = Cat()
    k.ev("row", "11:00", ticker="A")
    with caplog.at_level(logging.WARNING, logger="streamsql.late"):
        for i in range(120):
            assert k.ev("row", "10:00", ticker="L").status == "late"
    msgs = [r.getMessage() for r in caplog.records if r.name == "streamsql.late"]
    assert [m.split()[2] for m in msgs] == ["#1", "#10", "#100"]
    assert all("stream S" in m and "10:00" in m and "11:00" in m for m in msgs)
    assert k.c.state["S"].late_count == 120
    assert len([1 for _s, st, _e in k.log if st == ERROR_STREAM]) == 120


def test_bounds_move_the_clock_and_strict_is_one_millisecond_later():
    k = Cat()
    k.ev("row", "10:00", ticker="A")
    assert k.ev("bound", "10:05").status == "ok"
    assert k.c.clock("S") == ts("10:05")
    assert k.ev("bound", "10:10", strict=True).status == "ok"
    assert k.c.clock("S") == ts("10:10") + 1
    assert k.ev("row", "10:10", ticker="B").status == "late"
    assert k.bounds() == [(2, "10:05"), (3, "10:10:00.001")]


def test_a_producer_cannot_move_its_bound_backwards():
    k = Cat()
    k.ev("bound", "10:05")
    o = k.ev("bound", "10:00")
    assert o.status == "error" and "cannot move backwards" in o.message and "10:05" in o.message
    assert k.c.clock("S") == ts("10:05")
    assert k.ev("bound", "10:05").status == "eclipsed"   # equal: a no-op
    assert k.bounds() == [(1, "10:05")]


def test_a_bound_below_the_stream_clock_is_eclipsed():
    k = Cat()
    k.ev("row", "10:05", ticker="A")
    o = k.ev("bound", "10:01", producer="P2")     # a new producer: not backwards for it, but no news
    assert o.status == "eclipsed"
    assert k.bounds() == []


def test_two_producers_seed_000_example():
    """Seed 000, 'Producers Entering and Leaving a Stream'."""
    k = Cat()
    assert k.ev("bound", "10:00", producer="P1").status == "ok"      # P1 arrives, bound 10:00
    assert k.ev("row", "10:00", producer="P1", ticker="A").status == "ok"
    assert k.rows() == [(2, "10:00", ("A",))]                         # it enters at once
    assert k.ev("bound", "10:05", producer="P2").status == "ok"      # P2 arrives, bound 10:05
    assert k.ev("row", "10:05", producer="P2", ticker="B").status == "ok"
    assert k.rows() == [(2, "10:00", ("A",))]                         # held: P1 is only at 10:00
    assert k.c.clock("S") == ts("10:00")
    late = k.ev("row", "09:59", producer="P2", ticker="C")
    assert late.status == "late" and late.clock == ts("10:05")        # below P2's own clock
    o = k.ev("detach", producer="P1")                                  # P1 leaves: P2 alone
    assert o.status == "ok" and o.released == 1
    assert k.rows()[-1] == (6, "10:05", ("B",))
    assert k.c.clock("S") == ts("10:05")
    assert k.ev("detach", producer="P2").status == "ok"                # all gone: bound remembered
    late3 = k.ev("row", "10:01", producer="P3", ticker="D")
    assert late3.status == "late" and late3.clock == ts("10:05")


def test_rows_of_several_producers_merge():
    k = Cat()
    k.ev("bound", "10:00", producer="P1")
    k.ev("bound", "10:00", producer="P2")
    k.ev("row", "10:07", producer="P2", ticker="b1")
    assert k.rows() == []
    k.ev("row", "10:05", producer="P1", ticker="a1")
    k.ev("row", "10:05", producer="P1", ticker="a2")
    assert [r[2][0] for r in k.rows()] == ["a1", "a2"]
    k.ev("bound", "10:08", producer="P1")
    assert [r[2][0] for r in k.rows()] == ["a1", "a2", "b1"]
    assert k.c.clock("S") == ts("10:07")


def test_values_are_checked_and_nothing_changes_on_error():
    k = Cat()
    o = k.ev("row", "10:00", nosuch="x")
    assert o.status == "error" and "no column" in o.message and "TICKER" in o.message
    o = k.ev("row", "10:00", ticker="x" * 11)
    assert o.status == "error" and "VARCHAR(10)" in o.message
    assert k.c.clock("S") == T.NO_TIME and k.rows() == []


def test_snapshot_round_trip_keeps_producers_and_pending_rows():
    k = Cat()
    k.ev("bound", "10:00", producer="P1")
    k.ev("row", "10:05", producer="P2", ticker="held")
    c2 = Catalog.from_json(json.loads(json.dumps(k.c.to_json())))
    assert c2.state["S"].pending == k.c.state["S"].pending
    assert c2.producer_clocks("S") == k.c.producer_clocks("S")
    assert c2.clock("S") == k.c.clock("S") and c2.next_step == k.c.next_step
