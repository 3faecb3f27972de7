"""How views hear about new events and releases, and where they redraw: never on the thread that
committed the event (a click, a cell), always on one background thread of the process.

The engine calls back on every delivery (``ContinuousQuery.on_progress``: rows, bound moves and
trace records), when a query stops or fails (``on_state``) and after every injection
(``Workbench.on_inject``). Those callbacks only *mark* a view; :class:`Redrawer`'s thread then
redraws each marked view once, shortly after, in the order they were marked, and only when the
view's :meth:`LiveView.live_key` says its state changed. A burst of events or a bulk replay
therefore redraws each view a few times, not once per event, and nothing blocks the kernel.

A view that ``waits_for_quiet`` (a timeline chart: dear to draw, in the kernel and in the browser)
redraws only once every running query of its workbench has caught up with the events so far, or
``QUIET_MAX`` seconds after it was marked: during a click the CPU goes to Spark's micro-batches
and to the tables that show the released row, and the chart follows once, not at every stage.
"""
from __future__ import annotations

import logging
import threading
import time
import weakref
from typing import Callable

from ..engine.locks import widget_condition

log = logging.getLogger("streamsql.widgets")


def on_inject(wb, callback: Callable[[list], None]) -> None:
    """Call ``callback(outcomes)`` after every injection into ``wb`` (in the injecting thread;
    a bulk load or a pump calls it with an empty list)."""
    wb.on_inject(lambda what: callback(what if isinstance(what, list) else []))


def weak_method(method) -> Callable:
    """A callable that forwards to ``method`` while its object lives (views can be collected
    although the query they watched keeps its listener list)."""
    ref = weakref.WeakMethod(method)

    def call(*args):
        m = ref()
        if m is not None:
            m(*args)
    return call


class Redrawer:
    """One daemon thread that redraws marked views. ``delay`` gathers a burst: a mark within
    ``BURST`` seconds of the last redraw waits that long for more before redrawing; the first
    mark after a pause (the row a click released) is redrawn at once."""

    #: a mark this soon after the last redraw belongs to a burst
    BURST = 0.1
    #: how often a view waiting for its queries to catch up looks again (seconds)
    POLL = 0.03
    #: the longest a view waits for quiet (a query that never catches up, a steady pump)
    QUIET_MAX = 1.5

    def __init__(self, delay: float = 0.02):
        self.delay = delay
        self._cv = widget_condition("redrawer")
        self._marked: dict[int, tuple] = {}      # id -> (weak ref to the view, when first marked)
        self._thread: threading.Thread | None = None
        self._busy = False

    def mark(self, view) -> None:
        with self._cv:
            self._marked.setdefault(id(view), (weakref.ref(view), time.monotonic()))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="streamsql-redraw", daemon=True)
                self._thread.start()
            self._cv.notify()

    def idle(self, timeout: float = 30.0) -> bool:
        """Wait until no view is marked or being redrawn (tests, benchmarks); False on timeout."""
        deadline = time.monotonic() + timeout
        with self._cv:
            while self._marked or self._busy:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cv.wait(min(left, 0.05))
        return True

    def _next(self):
        """The marked view to redraw first: the lowest ``priority`` (a query's rows before its
        chart), then the earliest marked, leaving out views that wait for quiet while their
        queries run behind; None when none is ready. Whether queries caught up is asked of the
        engine without holding this redrawer's lock (a widget lock: the engine is never asked
        under one), then the view is taken off the marks under it."""
        with self._cv:
            marked = list(self._marked.items())
        best = None
        now = time.monotonic()
        gone = []
        for key, (ref, since) in marked:
            v = ref()
            if v is None:
                gone.append(key)
                continue
            if best is None or v.priority < best[1].priority:
                if v.waits_for_quiet and now - since < self.QUIET_MAX and not _quiet(v):
                    continue
                best = (key, v)
        with self._cv:
            for key in gone:
                self._marked.pop(key, None)
            if best is None or self._marked.pop(best[0], None) is None:
                return None
            self._busy = True
            return best[1]

    def _run(self) -> None:
        done_at = 0.0
        while True:
            with self._cv:
                while not self._marked:
                    self._cv.wait()
            if time.monotonic() - done_at < self.BURST:
                time.sleep(self.delay)      # marks come in a burst: gather it
            # else the first mark after a pause (a click's row): drawn at once
            while True:     # one view at a time: a row released meanwhile overtakes the charts
                v = self._next()
                if v is None:
                    with self._cv:
                        self._cv.notify_all()
                        done_at = time.monotonic()
                        if not self._marked:
                            break
                        self._cv.wait(self.POLL)     # views waiting for their queries to catch up
                    continue
                try:
                    v.redraw_if_changed()
                except Exception:  # a view that fails to draw must not stop the others
                    log.exception("view redraw failed")
                finally:
                    with self._cv:
                        self._busy = False
                        self._cv.notify_all()


#: the process's redrawing thread
REDRAWER = Redrawer()
#: called whenever a view is marked (:mod:`.static` hangs its snapshot keeper here)
ON_MARK: list[Callable[[], None]] = []


class LiveView:
    """Mixed into a view that redraws from engine callbacks. A view defines :meth:`live_key`
    (cheap: changes whenever what it shows would) and :meth:`refresh` (the redraw), and calls
    :meth:`follow` with the queries and workbench it shows."""

    _live_last = None
    #: False while the view sits in a tab that is not shown: it then waits to redraw
    visible = True
    #: how many times the view was redrawn (what a test of "no redraw without a change" reads)
    redraws = 0
    #: redrawn before views of a higher number (the rows a student waits for before the charts)
    priority = 5
    #: redrawn only once the workbench's queries have caught up (see ``Redrawer``)
    waits_for_quiet = False

    def live_key(self):
        """What the live view depends on; None: always redraw."""
        return None

    def refresh(self) -> None:  # pragma: no cover - every view defines it
        raise NotImplementedError

    def mark(self, *_args) -> None:
        """Something this view may show changed: redraw it soon, on the redrawing thread."""
        REDRAWER.mark(self)
        for f in ON_MARK:                   # the saved snapshot follows too, off this thread
            f()

    def follow(self, *, queries=(), wb=None) -> None:
        """Redraw after every delivery and state change of ``queries`` and injection into ``wb``."""
        m = weak_method(self.mark)
        for q in queries:
            q.on_progress(m)
            q.on_state(m)
        if wb is not None:
            on_inject(wb, m)

    def redraw_if_changed(self) -> bool:
        """Redraw when shown and when the state it shows changed since its last redraw."""
        if not self.visible:
            return False
        key = self.live_key()
        if key is not None and key == self._live_last:
            return False
        self.refresh()
        self._live_last = key
        self.redraws += 1
        return True


def settle(wb, timeout: float = 120.0) -> list[str]:
    """Wait until every running query of ``wb`` has processed every event so far (Spark runs
    asynchronously); returns the errors of queries that failed or timed out. For cells and
    displays, never for clicks."""
    errors = []
    for q in list(wb.queries.values()):
        if not q.running:
            continue
        try:
            q.wait(timeout)
        except Exception as e:  # shown in the view's status, never raised into a click handler
            errors.append(f"{q.name}: {e}")
    return errors


def _quiet(view) -> bool:
    """Whether every running query of the view's workbench has caught up (a view without one is)."""
    wb = getattr(getattr(view, "q", None), "wb", None)
    if wb is None:
        return True
    try:
        return caught_up(list(wb.queries.values()))
    except Exception:       # a runtime closing under the view: draw it
        return True


def caught_up(queries) -> bool:
    """Whether each of ``queries`` has processed every event so far, without waiting."""
    return all(not q.running or q.wb.runtime.caught_up(q) for q in queries)
