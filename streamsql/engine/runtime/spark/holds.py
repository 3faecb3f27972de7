"""The clicked view first: an event sent from a view's injector runs that view's query before
the other queries that read the stream.

Every query that reads a stream runs a micro-batch for each of its events, and on a small
machine those micro-batches share its cores: with five views over one stream, the row a click
sends reaches its own view only when all five batches are nearly done. So the commit of a click
writes HEAD with a *hold* (:class:`~streamsql.engine.log.HeadHold`): the clicked view's query
reads the new step at once, the others see HEAD as it was before the click until that query has
delivered the step, or :data:`MAX_HOLD_S` has passed, or anything waits for a query. A later
click into the same view keeps the others where they were (within the same time limit); any
other commit ends the hold.

A hold changes only when the other queries read the event, never what they read or release:
each still reads every event, in order, one committed step at a time.
"""
from __future__ import annotations

import threading

from ...locks import engine_lock
from ...log import EventLog, HeadHold

#: the longest the other queries wait for the clicked view's query (a query that is starting,
#: or failing, must not keep everyone else waiting)
MAX_HOLD_S = 0.5


class Holds:
    """The hold in the HEAD of ``log``, and when it ends."""

    def __init__(self, log: EventLog):
        self.log = log
        self._lock = engine_lock("spark-holds")
        self._upto = 0                      # the last step the clicked query must deliver
        self._timer: threading.Timer | None = None
        self.max_hold_s = MAX_HOLD_S

    @property
    def current(self) -> HeadHold | None:
        """The hold in HEAD now (the log keeps it: a write that failed changed neither)."""
        return self.log.hold

    def publish(self, head: int, first: str | None, before: int) -> None:
        """Write HEAD for a commit of the steps ``(before, head]``; ``first``: the query to run
        first (None: every query at once, which ends a hold)."""
        with self._lock:
            cur = self.current
            if first is None:
                hold = None
            elif cur is not None and cur.first == first:
                hold = cur                      # the same view again: the others stay, the limit too
            else:
                hold = HeadHold(first, before)
            self.log.write_head(head, hold)       # raises (OSError) with HEAD and the hold as they were
            self._upto = head
            if hold is not cur:
                self._cancel_timer()
                if hold is not None:
                    self._timer = threading.Timer(self.max_hold_s, self._expire, args=(hold,))
                    self._timer.daemon = True
                    try:
                        self._timer.start()
                    except RuntimeError:        # no thread to be had: hold nobody back
                        self._timer = None
                        self._release(hold)

    def delivered(self, query: str, through: int) -> None:
        """Query ``query`` delivered the steps up to ``through``: the hold for it ends once that
        reaches the last step it was held for."""
        with self._lock:
            cur = self.current
            if cur is not None and cur.first == query and through >= self._upto:
                self._release(cur)

    def release(self) -> None:
        """End the hold now (a wait for a query, a query stopped, the runtime closed)."""
        with self._lock:
            if self.current is not None:
                self._release(self.current)

    def _expire(self, hold: HeadHold) -> None:
        with self._lock:
            if self.current is hold:
                self._release(hold)

    def _release(self, hold: HeadHold) -> None:
        self._cancel_timer()
        try:
            self.log.release_hold(hold)
        except OSError:       # HEAD stays held: the next wait, release or commit writes it again
            pass

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
