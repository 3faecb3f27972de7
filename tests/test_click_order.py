"""Clicks run in the order the browser made them, whatever thread or queue brings each
(widgets/clicks.py): a real Tornado loop stands for the kernel's main loop, the test's main
thread for the kernel's main thread."""
import logging
import threading

from tornado.ioloop import IOLoop

from streamsql.widgets import clicks


def _from_thread(f):
    t = threading.Thread(target=f)
    t.start()
    t.join()


def test_a_click_that_arrives_before_an_earlier_one_waits_for_it():
    loop = IOLoop()
    ran = []
    try:
        # clicks 2 and 3 reach a subshell thread while click 1 waits in the main thread's queue
        _from_thread(lambda: [clicks.apply_click(lambda k=k: ran.append(k), f"va-1-{k}", loop) for k in (2, 3)])
        assert ran == [] and clicks.waiting() == 0
        clicks.apply_click(lambda: ran.append(1), "va-1-1", loop)        # the main thread, free again
        assert ran == [1, 2, 3]
        clicks.apply_click(lambda: ran.append(4), "va-1-4", loop)
        assert ran == [1, 2, 3, 4]
    finally:
        loop.close(all_fds=False)


def test_clicks_of_two_views_are_ordered_each_on_its_own():
    loop = IOLoop()
    ran = []
    try:
        _from_thread(lambda: clicks.apply_click(lambda: ran.append("b2"), "vb-2", loop))
        clicks.apply_click(lambda: ran.append("c1"), "vc-1", loop)        # another view: not held
        clicks.apply_click(lambda: ran.append("b1"), "vb-1", loop)
        assert ran == ["c1", "b1", "b2"]
    finally:
        loop.close(all_fds=False)


def test_a_lost_click_holds_the_next_ones_only_until_the_main_thread_has_been_free(monkeypatch, caplog):
    monkeypatch.setattr(clicks, "GRACE", 0.05)
    loop = IOLoop()
    ran = []
    try:
        _from_thread(lambda: [clicks.apply_click(lambda k=k: ran.append(k), f"vd-{k}", loop) for k in (2, 3, 5)])
        with caplog.at_level(logging.WARNING, logger="streamsql.widgets"):
            loop.call_later(0.03, lambda: ran.append("free"))
            loop.call_later(1.0, loop.stop)
            loop.start()
        # not before the loop was free for a grace period; then in their order, 4 given up too
        assert ran == ["free", 2, 3, 5]
        assert "click vd-1 never arrived" in caplog.text and "click vd-4 never arrived" in caplog.text
    finally:
        loop.close(all_fds=False)


def test_without_a_kernel_a_click_runs_where_it_is_made():
    ran = []
    clicks.apply_click(lambda: ran.append(2), "ve-2")
    assert ran == [2]


def test_clicks_released_on_another_thread_run_on_the_main_loop_in_order():
    loop = IOLoop()
    ran = []
    try:
        _from_thread(lambda: [clicks.apply_click(lambda k=k: ran.append(k), f"vf-{k}", loop) for k in (2, 3, 1, 4)])
        assert ran == [] and clicks.waiting() == 4        # none ran beside the (busy) main thread
        loop.add_callback(loop.stop)
        loop.start()
        assert ran == [1, 2, 3, 4] and clicks.waiting() == 0
    finally:
        loop.close(all_fds=False)
