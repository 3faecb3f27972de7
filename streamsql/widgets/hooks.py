"""How views hear about new events and releases without polling.

The engine calls back on releases (``ContinuousQuery.on_release``) and after every injection
(``Workbench.on_inject``: inserts, bounds, attach, detach, INSERT statements, bulk loads).
Callbacks from Spark's sink thread are coalesced by :class:`Debounced` so a bulk replay does not
redraw once per event.
"""
from __future__ import annotations

import logging
import threading
import weakref
from typing import Callable

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


class Debounced:
    """Runs ``fn`` once, shortly after one or more ``trigger()`` calls."""

    def __init__(self, fn: Callable[[], None], delay: float = 0.05):
        self.fn = fn
        self.delay = delay
        self._lock = threading.Lock()
        self._pending = False

    def trigger(self, *_args) -> None:
        with self._lock:
            if self._pending:
                return
            self._pending = True
        t = threading.Timer(self.delay, self._run)
        t.daemon = True
        t.start()

    def _run(self) -> None:
        with self._lock:
            self._pending = False
        try:
            self.fn()
        except Exception:
            log.exception("view refresh failed")


def settle(wb, timeout: float = 120.0) -> list[str]:
    """Wait until every running query of ``wb`` has processed every event so far (Spark runs
    asynchronously); returns the errors of queries that failed or timed out."""
    errors = []
    for q in list(wb.queries.values()):
        if not q.running:
            continue
        try:
            q.wait(timeout)
        except Exception as e:  # shown in the view's status, never raised into a click handler
            errors.append(f"{q.name}: {e}")
    return errors
