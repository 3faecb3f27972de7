"""The snapshot keeper draws its charts in a worker process (vl-convert holds the GIL while it
draws, which stalled the kernel's thread that receives clicks): same SVG, and a worker that fails
or dies costs nothing but a drawing in the process."""
from __future__ import annotations

import os
import signal

import pytest

from streamsql.widgets import static
from streamsql.widgets.svgworker import SvgWorker, WorkerFailed
from streamsql.widgets.timeline_spec import timeline_chart


@pytest.fixture
def chart(wb_local):
    wb_local.execute("CREATE STREAM S (x INTEGER)")
    q = wb_local.query("SELECT STREAM ROWTIME, x FROM S WHERE x > 1", name="s")
    for i, x in enumerate((1, 2, 3)):
        wb_local.insert("S", {"x": x}, rowtime=f"2006-10-10 10:0{i}:00")
    return timeline_chart(q)


def _away(chart) -> str:
    static._drawing.away = True
    try:
        return static.svg_of(chart)
    finally:
        static._drawing.away = False


def test_the_keeper_draws_in_the_worker_what_the_process_draws(chart):
    from streamsql.widgets.svgworker import WORKER
    here = static.svg_of(chart)
    served = WORKER.served
    away = _away(chart)
    assert WORKER.served == served + 1 and WORKER.pid() not in (None, os.getpid())
    assert away == here and "<svg" in away and "10:01" in away


def test_a_failing_or_dead_worker_falls_back_and_recovers(chart):
    w = SvgWorker()
    try:
        with pytest.raises(WorkerFailed, match="conversion failed"):
            w.svg({"mark": 5})                                   # a spec vl-convert refuses: said, not hung
        spec = {"mark": "point", "data": {"values": [{"a": 1}]}, "encoding": {"x": {"field": "a", "type": "quantitative"}}}
        first = w.svg(spec)
        pid = w.pid()
        os.kill(pid, signal.SIGKILL)
        w._p.wait(10)
        assert w.svg(spec) == first and w.pid() not in (None, pid)  # a dead worker: a new one draws
        pid = w.pid()
        os.kill(pid, signal.SIGSTOP)                             # a worker that hangs ...
        with pytest.raises(WorkerFailed, match="did not answer"):
            w.svg(spec, timeout=1.0)                             # ... is given up, and killed
        assert w.pid() is None
        assert w.svg(spec) == first and w.pid() not in (None, pid)  # then a new one draws
    finally:
        w.close()
    assert w.pid() is None


def test_the_keeper_falls_back_to_drawing_here_when_its_worker_died(chart):
    from streamsql.widgets.svgworker import WORKER
    here = static.svg_of(chart)
    assert _away(chart) == here
    os.kill(WORKER.pid(), signal.SIGKILL)
    assert _away(chart) == here                  # drawn here this once, the next in a new worker
    served = WORKER.served
    assert _away(chart) == here and WORKER.served == served + 1


def test_the_worker_draws_at_a_background_priority(chart):
    """A snapshot is for the saved notebook: its drawing yields the cores to a click's work."""
    from streamsql.widgets.svgworker import NICE, WORKER
    _away(chart)
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    assert os.getpriority(os.PRIO_PROCESS, WORKER.pid()) == min(19, mine + NICE)


def test_a_timeline_snapshot_is_the_charts_drawing_without_rebuilding_it(wb_local):
    """The snapshot of a live timeline reuses the live chart's spec (built by Altair once per
    shape) with its data inline: the same SVG as the chart built anew with inline data."""
    from streamsql.widgets import TimelineView, vega
    wb_local.execute("CREATE STREAM S (x INTEGER)")
    q = wb_local.query("SELECT STREAM FLOOR(S.ROWTIME TO MINUTE) AS ROWTIME, COUNT(*) AS n FROM S "
                       "GROUP BY FLOOR(S.ROWTIME TO MINUTE)", name="g")
    view = TimelineView(q)
    for i in range(4):
        wb_local.insert("S", {"x": i}, rowtime=f"2006-10-10 10:0{i}:30")
        view.refresh()
        assert view.static_parts()[0] == static.spec_html(vega.spec_of(view.chart()))
    assert "10:02" in view.static_parts()[0]
