"""The package's lock order (docs/design.md, "Threads and locks"): the recorder that checks it
(streamsql/engine/lockdep.py, on in the whole suite), the rules the locks keep in every run
(streamsql/engine/locks.py), and the real paths that once broke it: a statement that told the views
under the workbench's lock, a redraw that asked the engine under the redrawer's lock, an injector
that read the engine under its own."""
from __future__ import annotations

import threading
import time

import pytest

from streamsql.engine import lockdep, locks
from streamsql.engine.locks import Waited, callout, callout_aside, engine_depth, engine_lock, engine_rlock, widget_lock


@pytest.fixture
def rec(monkeypatch):
    """A recorder of this test's own (the suite's keeps the order of everything else)."""
    r = lockdep.Recorder()
    monkeypatch.setattr(lockdep, "RECORDER", r)
    return r


def _in_thread(fn):
    t = threading.Thread(target=fn)
    t.start()
    t.join(10)
    assert not t.is_alive()


# --------------------------------------------------------------------------- the recorder

def test_two_threads_taking_two_locks_in_opposite_orders_are_reported_though_they_never_met(rec):
    a, b = widget_lock("test-a"), widget_lock("test-b")

    def one():
        with a, b:
            pass

    def other():
        with b, a:
            pass
    _in_thread(one)
    assert rec.take_violations() == []
    _in_thread(other)                     # sequential: no deadlock happened, yet it could have
    found = rec.take_violations()
    assert [v.kind for v in found] == ["cycle"]
    text = found[0].text
    assert "test-b" in text and "test-a" in text
    assert "in one" in text and "in other" in text, text      # both stacks


def test_an_engine_lock_taken_against_the_written_order_is_reported(rec):
    inner, outer = engine_lock("query"), engine_lock("log-head")     # log-head comes before query
    with inner, outer:
        pass
    found = rec.take_violations()
    assert [v.kind for v in found] == ["order"]
    assert "'log-head' comes before 'query'" in found[0].text


def test_engine_and_widget_locks_never_nest_either_way(rec):
    eng, wid = engine_lock("query"), widget_lock("test-view")
    with wid, eng:
        pass
    with eng, wid:
        pass
    kinds = sorted((v.kind, v.held, v.taken) for v in rec.take_violations())
    assert kinds == [("cycle", "query", "test-view"), ("family", "query", "test-view"),
                     ("family", "test-view", "query")]


def test_trying_a_lock_without_waiting_records_no_order(rec):
    a, b = widget_lock("test-a"), widget_lock("test-b")
    with a, b:
        pass
    with b:
        assert a.acquire(blocking=False)
        a.release()
    assert rec.take_violations() == []


def test_a_wait_for_spark_work_counts_as_taking_a_lock(rec):
    wb_lock = engine_rlock("workbench")
    batch = Waited("spark-query-batch")
    with batch.running():                  # a delivery that waits for the workbench's lock ...
        with wb_lock:
            pass
    with wb_lock:                          # ... and a statement that stops the query
        batch.wait_point()
    assert [v.kind for v in rec.take_violations()] == ["order", "cycle"]


def test_a_condition_wait_lets_go_of_its_lock_and_takes_it_back(rec):
    cv = locks.engine_condition("sink-follower")
    with cv:
        assert engine_depth() == 1
        cv.wait(0.01)
        assert engine_depth() == 1
    assert engine_depth() == 0
    assert rec.take_violations() == []


# --------------------------------------------------------------------------- callouts

def test_a_callout_under_an_engine_lock_runs_once_the_last_one_is_released():
    told = []
    lk, inner = engine_rlock("workbench"), engine_lock("query")
    with lk:
        with inner:
            callout(lambda: told.append(("first", engine_depth())))
        with lk:
            callout(lambda: told.append(("second", engine_depth())))
        assert told == []
    assert told == [("first", 0), ("second", 0)]
    callout(lambda: told.append(("now", engine_depth())))
    assert told[-1] == ("now", 0)


def test_a_callout_that_fails_is_logged_and_the_others_still_run(caplog):
    told = []
    with engine_lock("query"):
        callout(lambda: 1 / 0)
        callout(lambda: told.append(1))
    assert told == [1]
    assert "ZeroDivisionError" in caplog.text


def test_a_callout_aside_runs_now_on_another_thread_and_the_caller_waits_for_it_at_release():
    ran = threading.Event()
    where = []

    def show():
        where.append((threading.current_thread().name, engine_depth()))
        time.sleep(0.2)
        ran.set()
    with engine_rlock("workbench"):
        callout_aside(show)
        assert ran.wait(5)                  # while this thread still holds the lock
    assert where == [("streamsql-callouts", 0)]


def test_work_handed_to_a_held_lock_is_done_by_its_holder_before_it_lets_go():
    lk = engine_rlock("workbench")
    done = []
    lk.run_when_free(lambda: done.append(threading.current_thread().name))
    assert done == [threading.current_thread().name]          # free: at once, here
    holding, handed = threading.Event(), threading.Event()
    release = threading.Event()

    def holder():
        with lk:
            holding.set()
            release.wait(10)
    t = threading.Thread(target=holder, name="holder")
    t.start()
    holding.wait(5)
    lk.run_when_free(lambda: (done.append(threading.current_thread().name), handed.set()))
    assert done == [threading.current_thread().name]           # the caller did not wait
    release.set()
    assert handed.wait(5)
    t.join(5)
    assert done[-1] == "holder"


# --------------------------------------------------------------------------- the real paths

DDL = ("CREATE STREAM A (v INTEGER); CREATE STREAM B (v INTEGER); "
       "CREATE STREAM H (k VARCHAR(5), n INTEGER);")


def _views(wb):
    from streamsql.widgets.compose import workbench
    q1 = wb.query("SELECT STREAM ROWTIME, v FROM A UNION ALL SELECT STREAM ROWTIME, v FROM B", "u")
    q2 = wb.query("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, k, COUNT(*) AS c FROM H "
                  "GROUP BY FLOOR(ROWTIME TO HOUR), k", "g")
    views = [workbench(q) for q in (q1, q2)]
    for v in views:
        v._repr_mimebundle_()
        v.tabs.selected_index = 0           # the timeline: it waits for its queries to catch up
    return views


def test_an_insert_statement_tells_the_views_after_it_and_no_view_asks_the_engine_under_its_lock(wb_local, rec):
    from streamsql.widgets.hooks import REDRAWER
    wb = wb_local
    wb.execute(DDL)
    views = _views(wb)
    depth_when_told = []
    wb.on_inject(lambda _o: depth_when_told.append(engine_depth()))
    for r in range(3):
        wb.execute(f"INSERT INTO A (ROWTIME, v) VALUES ('2006-10-10 10:0{r}:00', {r}); "
                   f"INSERT INTO H (ROWTIME, k, n) VALUES ('2006-10-10 10:0{r}:01', 'k', {r});")
        assert REDRAWER.idle(20)
        for v in views:
            for inj in v.injectors.values():
                inj.refresh()
    assert depth_when_told == [0] * 6
    found = rec.take_violations()
    assert found == [], "\n\n".join(v.text for v in found)
    assert views[0].live.redraws >= 1


def test_an_injector_click_while_a_statement_holds_the_workbench_lock_waits_and_is_applied(wb_local, rec):
    wb = wb_local
    wb.execute(DDL)
    views = _views(wb)
    inj = views[0].injectors["A"]
    clicked = threading.Event()
    answers = []
    inj.send = lambda msg: answers.append(msg)

    def click():
        clicked.set()
        inj._on_click(inj, {"op": "insert", "id": 1, "rowtime": "2006-10-10 10:05:00",
                            "values": {"V": "7"}, "nulls": [], "producer": ""}, [])
    with wb.lock:           # a cell's statement runs: the click waits for it, nothing deadlocks
        t = threading.Thread(target=click)
        t.start()
        clicked.wait(5)
        time.sleep(0.1)
        assert answers == []
    t.join(10)
    assert answers == [{"ack": 1, "op": "insert", "ok": True}]
    assert wb.clock("A") == wb.rowtime_of("A", "2006-10-10 10:05:00")
    assert rec.take_violations() == []
