"""The client's side of a query whose sink runs in a Spark Connect server.

There ``foreachBatch`` runs in a Python process of the server: the sink writes each batch's
release (rows, bounds, refused rows, the trace) into the query's folder and commits it with
``state.json``, as it always does. A follower thread here watches that commit point and hands
each new batch, in batch order, to the query, exactly as the in-process callback would. It also
notices a query that failed or a server that went away (a one-line message on the query).
"""
from __future__ import annotations

import threading
import time

from ...locks import engine_condition
from .waits import QUERY_BATCH

#: how often the commit point is looked at (a stat and a small read); the query's state over RPC
#: is asked far less often
POLL = 0.005
STATE_EVERY = 1.0


class SinkFollower:
    def __init__(self, sink, deliver, on_failure, handle_status):
        """``deliver(SinkBatch)`` per batch; ``on_failure(message)`` once when the query or the
        server fails; ``handle_status()`` raises when the query has failed (an RPC)."""
        self.sink = sink
        self.deliver = deliver
        self.on_failure = on_failure
        self.handle_status = handle_status
        self.done = sink.batch_id          # delivered up to here (a resumed query's history is delivered)
        self._stop = threading.Event()
        self._cond = engine_condition("sink-follower")
        self.failed: str | None = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="streamsql-follow")
        self._thread.start()

    def _poll(self) -> None:
        last = self.sink.committed_batch()
        while self.done < last:
            i = self.done + 1
            res = self.sink.read_batch(i, trace=True)
            with QUERY_BATCH.running():     # a wait for the query waits for this delivery
                self.deliver(res)
            with self._cond:
                self.done = i
                self._cond.notify_all()

    def _run(self) -> None:
        checked = time.monotonic()
        while not self._stop.is_set():
            try:
                self._poll()
                if time.monotonic() - checked > STATE_EVERY:
                    checked = time.monotonic()
                    self.handle_status()
            except Exception as e:        # the query failed, or the server went away
                if not self._stop.is_set():
                    self.failed = str(e)
                    self.on_failure(e)
                with self._cond:
                    self._cond.notify_all()
                return
            self._stop.wait(POLL)

    def wait_for(self, batch: int, timeout: float | None = None) -> None:
        """Until every batch up to ``batch`` is delivered (or the follower failed)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        QUERY_BATCH.wait_point()
        with self._cond:
            while self.done < batch and self.failed is None and self._thread.is_alive():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"the sink's batch {batch} was not delivered in time")
                self._cond.wait(0.05 if left is None else min(0.05, left))
        if self.done < batch and self.failed is None:
            self._poll()

    def stop(self) -> None:
        self._stop.set()
