"""The clicked view first (streamsql/engine/runtime/spark/holds.py): an event sent from a view's
injector runs that view's query before the other queries of its stream, and changes only when
they read it, never what they release."""
from __future__ import annotations

import json
import threading
import time

import pytest

from streamsql.engine.log import EventLog, HeadHold, read_head, visible_head
from streamsql.engine.runtime.spark.holds import Holds


def _head(root):
    return json.loads((root / "log" / "HEAD").read_text())


def test_a_hold_and_what_ends_it(tmp_path):
    log = EventLog(tmp_path, durable=False)
    h = Holds(log)
    h.max_hold_s = 30
    h.publish(5, "F", 4)
    assert (read_head(tmp_path), visible_head(tmp_path, "F"), visible_head(tmp_path, "G")) == (5, 5, 4)
    h.publish(6, "F", 5)                      # the same view again: the others stay at 4
    assert (visible_head(tmp_path, "F"), visible_head(tmp_path, "G")) == (6, 4)
    h.delivered("G", 6)                       # another query's delivery ends nothing
    h.delivered("F", 5)                       # F has not delivered its last step yet
    assert visible_head(tmp_path, "G") == 4
    h.delivered("F", 6)
    assert visible_head(tmp_path, "G") == 6 and _head(tmp_path) == {"step": 6}

    h.publish(7, "F", 6)
    h.publish(8, "G", 7)                      # another view's click: F's step is everyone's now
    assert (visible_head(tmp_path, "F"), visible_head(tmp_path, "G"), visible_head(tmp_path, None)) == (7, 8, 7)
    h.publish(9, None, 8)                     # a commit from a cell: no hold
    assert _head(tmp_path) == {"step": 9} and h.current is None

    h.publish(10, "F", 9)
    h.release()                               # a wait for a query
    assert _head(tmp_path) == {"step": 10}


def test_a_hold_ends_by_itself(tmp_path):
    """Clicks into one view for longer than the limit: the limit counts from the hold's first
    click, so the others move on while the clicks go on."""
    log = EventLog(tmp_path, durable=False)
    h = Holds(log)
    h.max_hold_s = 1.0
    h.publish(3, "F", 2)
    assert visible_head(tmp_path, "G") == 2
    seen, step = [], 3
    t0 = time.monotonic()
    while time.monotonic() - t0 < 3.0:
        time.sleep(0.1)
        step += 1
        h.publish(step, "F", step - 1)
        seen.append(visible_head(tmp_path, "G"))
    assert max(seen) > 2                      # moved on during the clicks (a restarted limit never would)
    deadline = time.monotonic() + 5      # the timer's thread writes HEAD, then forgets the hold
    while (visible_head(tmp_path, "G") != step or h.current is not None) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert visible_head(tmp_path, "G") == step and h.current is None


def test_a_stale_release_changes_nothing(tmp_path):
    log = EventLog(tmp_path, durable=False)
    old = HeadHold("F", 4)
    log.write_head(5, old)
    log.write_head(6, None)
    assert log.release_hold(old) is False and _head(tmp_path) == {"step": 6}
    new = HeadHold("F", 6)
    log.write_head(7, new)
    assert log.release_hold(old) is False and _head(tmp_path)["others"] == 6
    assert log.release_hold(new) is True and _head(tmp_path) == {"step": 7}


def test_a_head_that_cannot_be_written(tmp_path):
    """A failed write leaves HEAD and the hold as they were, and the next release writes HEAD."""
    log = EventLog(tmp_path, durable=False)
    h = Holds(log)
    h.max_hold_s = 30
    h.publish(5, "F", 4)
    block = tmp_path / "log" / "HEAD.tmp"      # where HEAD is written before its rename
    block.mkdir()
    with pytest.raises(OSError):
        h.publish(6, "G", 5)
    assert _head(tmp_path) == {"step": 5, "first": "F", "others": 4}
    h.release()                                # fails too: still held, nothing lost
    assert h.current is not None and visible_head(tmp_path, "G") == 4
    block.rmdir()
    h.release()
    assert _head(tmp_path) == {"step": 5} and h.current is None


def test_a_release_never_undoes_a_later_commit(tmp_path):
    """A delivery (Spark's sink thread) and commits (the kernel) write HEAD in turns: HEAD never
    goes back."""
    log = EventLog(tmp_path, durable=False)
    h = Holds(log)
    h.max_hold_s = 30
    stop = threading.Event()

    def deliver():
        while not stop.is_set():
            h.delivered("F", 10 ** 9)
            time.sleep(0)
    t = threading.Thread(target=deliver)
    t.start()
    try:
        seen = 0
        for step in range(1, 200):
            h.publish(step, "F" if step % 3 else None, step - 1)
            assert read_head(tmp_path) == step and visible_head(tmp_path, "F") == step
            g = visible_head(tmp_path, "G")
            assert seen <= g <= step and (step % 3 or g == step)
            seen = g
    finally:
        stop.set()
        t.join()


def test_a_head_from_before_holds_and_a_damaged_hold(tmp_path):
    (tmp_path / "log").mkdir()
    (tmp_path / "log" / "HEAD").write_text('{"seq": 7}')          # a version-1 workspace
    assert visible_head(tmp_path, "F") == 7
    (tmp_path / "log" / "HEAD").write_text('{"step": 7, "first": "F", "others": "x"}')
    assert visible_head(tmp_path, "G") == 7                         # a hold it cannot read holds nothing


OVER = ("SELECT STREAM ROWTIME, A, V, SUM(V) OVER (PARTITION BY A RANGE INTERVAL '10' MINUTE PRECEDING) AS L10 "
        "FROM S")
FILTER = "SELECT STREAM ROWTIME, A, V FROM S WHERE V > 0"


def _run(wb, first, n=4, insert=None):
    """Insert ``n`` rows (from the view of ``first``, or with ``insert(k)``); per insert, the
    order in which the two queries delivered its micro-batch."""
    o, f = wb.queries["o"], wb.queries["f"]
    order: list[str] = []
    o.on_progress(lambda: order.append("o"))
    f.on_progress(lambda: order.append("f"))
    orders = []
    for k in range(n):
        order.clear()
        if insert is not None:
            insert(k)
        else:
            with wb.commits.first(first):
                wb.insert("S", {"A": 1, "V": 10 + k})
        deadline = time.monotonic() + 60
        while len(order) < 2 and time.monotonic() < deadline:
            time.sleep(0.005)
        orders.append(list(order))
        time.sleep(0.1)
    return orders


def test_the_clicked_views_query_delivers_first(wb_spark):
    """An OVER (stateful: slower) and a filter read S. From the OVER's view, every insert runs the
    OVER's micro-batch before the filter's; both release exactly what they would without it."""
    wb = wb_spark
    wb.execute("CREATE STREAM S (A INTEGER, V INTEGER)")
    wb.query(OVER, name="o")
    wb.query(FILTER, name="f")
    wb.runtime.holds.max_hold_s = 60            # a slow machine's batch must not end the hold
    wb.insert("S", {"A": 1, "V": 1}, rowtime="2006-10-10 10:00:00")
    for q in wb.queries.values():
        q.wait()
    assert _run(wb, "o") == [["o", "f"]] * 4
    assert _head(wb.path) == {"step": wb.last_step}
    for q in wb.queries.values():
        q.wait()
    assert [r.values for r in wb.queries["f"].rows] == [(1, 1)] + [(1, 10 + k) for k in range(4)]
    over = [r.values for r in wb.queries["o"].rows]
    assert [v[2] for v in over] == [1, 11, 22, 34, 47]


def test_a_wait_ends_the_hold(wb_spark):
    """Spark's processAllAvailable sees no new data in a query held back: a wait for it ends the
    hold first, so it returns with the event processed."""
    wb = wb_spark
    wb.execute("CREATE STREAM S (A INTEGER, V INTEGER)")
    o = wb.query(OVER, name="o")
    f = wb.query(FILTER, name="f")
    wb.runtime.holds.max_hold_s = 60
    for k in range(3):
        with wb.commits.first("o"):
            wb.insert("S", {"A": 2, "V": 5 + k}, rowtime=f"2006-10-10 10:0{k}:00")
        f.wait()
        assert [r.values for r in f.rows][-1] == (2, 5 + k)
    o.wait()
    assert [r.values[2] for r in o.rows] == [5, 11, 18]


def test_a_click_in_a_workbench_runs_its_query_first(wb_spark):
    """The injector of a query's workbench sends its events as that query's (what a click does)."""
    from streamsql.widgets.compose import WorkbenchView
    wb = wb_spark
    wb.execute("CREATE STREAM S (A INTEGER, V INTEGER)")
    o = wb.query(OVER, name="o")
    wb.query(FILTER, name="f")
    wb.runtime.holds.max_hold_s = 60
    wb.insert("S", {"A": 1, "V": 1}, rowtime="2006-10-10 10:00:00")
    for q in wb.queries.values():
        q.wait()
    inj = WorkbenchView(o).injectors["S"]
    assert inj.query == "o"

    def click(k):
        inj.inputs["A"].value = "1"
        inj.inputs["V"].value = str(10 + k)
        assert inj.insert() is not None, inj.last_message
    assert _run(wb, None, 3, click) == [["o", "f"]] * 3


def test_no_hold_for_a_stream_the_query_does_not_read_and_a_stop_ends_one(wb_spark):
    wb = wb_spark
    wb.execute("CREATE STREAM S (A INTEGER, V INTEGER); CREATE STREAM T (A INTEGER)")
    o = wb.query(OVER, name="o")
    wb.query("SELECT STREAM ROWTIME, A FROM T", name="t")
    wb.runtime.holds.max_hold_s = 60
    wb.insert("S", {"A": 1, "V": 1}, rowtime="2006-10-10 10:00:00")
    o.wait()
    with wb.commits.first("o"):
        wb.insert("T", {"A": 1})
    assert _head(wb.path) == {"step": wb.last_step}
    with wb.commits.first("o"):
        wb.insert("S", {"A": 1, "V": 2})
    o.stop()                                   # it will never deliver: the others go on at once
    assert _head(wb.path) == {"step": wb.last_step}
    wb.queries["t"].wait()
