"""A query's native twin: the same query as plain Spark Structured Streaming over
the same events, one event per micro-batch, with its record and the comparison beside the
query's own releases.

The twin reads the journal (what *entered* the query's streams, late rows included: Spark
decides lateness by its own watermark), not the stream log. It follows the query on demand:
every :meth:`NativeTwin.update` feeds it the events committed since the last one.
"""
from __future__ import annotations

from .native import Comparison, NativeStep, compare, delay_text, native_events, native_shape, parse_delay


class NativeTwin:
    """The native twin of a :class:`~streamsql.engine.continuous_query.ContinuousQuery`."""

    def __init__(self, wb, q, delay):
        self.wb = wb
        self.q = q
        self.delay_ms = parse_delay(delay)
        self.shape = native_shape(q.plan)
        self.steps: list[NativeStep] = []
        self._fed = q.start_step
        self._runner = None
        self._comparison: Comparison | None = None

    @property
    def delay(self) -> str:
        """The watermark delay every input of the twin has, as text (``10 minutes``)."""
        return delay_text(self.delay_ms)

    def update(self) -> "NativeTwin":
        """Feed the twin every event of the query's streams the query has processed since the
        last update (waiting for the query first), one step at a time."""
        q, wb = self.q, self.wb
        upto = q.processed_step
        if q.running:           # everything committed so far (a stopped query: what it saw)
            upto = wb.last_step
            q.wait()
        cat = wb.catalog
        uids = {cat.streams[s].uid for s in self.shape.streams}
        journaled = wb.journal.events(uids, after=self._fed, upto=upto)
        events = native_events(journaled, lambda s, v: cat.coerce_values(cat.streams[s], v))
        if self._runner is None:
            self._runner = wb.runtime.native_twin(q, self.shape, self.delay_ms, q.start_step)
        self.steps += self._runner.feed(events)
        self._fed = max(self._fed, upto)
        self._comparison = None
        return self

    @property
    def comparison(self) -> Comparison:
        """The query's releases beside the twin's emissions, step by step (typed data)."""
        if self._comparison is None:
            self._comparison = compare(self.q.name, self.shape, self.delay_ms, self.q.fields, self.q.rows, self.steps)
        return self._comparison

    @property
    def watermarks(self) -> dict[int, int | None]:
        """Step -> Spark's watermark after it."""
        return {s.step: s.watermark for s in self.steps}

    @property
    def dropped(self) -> list[NativeStep]:
        """The steps whose row Spark dropped as late."""
        return [s for s in self.steps if s.dropped]

    def stop(self) -> None:
        """Stop the twin's Spark query (its record stays)."""
        if self._runner is not None:
            self._runner.stop()
            self._runner = None

    def __repr__(self):
        c = self.comparison
        return (f"<NativeTwin of {self.q.name} (delay {self.delay}): {len(self.steps)} steps, "
                f"{sum(len(s.rows) for s in self.steps)} rows emitted, {len(self.dropped)} dropped as late, "
                f"{len(c.differing)} rows at different steps>")


def twin_of(wb, q, delay="0 seconds") -> NativeTwin:
    """The query's twin with this delay, brought up to date (a new one when the delay changed)."""
    delay_ms = parse_delay(delay)
    old = getattr(q, "twin", None)
    if old is None or old.delay_ms != delay_ms:
        if old is not None:
            old.stop()
        q.twin = None
        twin = NativeTwin(wb, q, delay_ms)
        q.twin = twin.update()
    else:
        old.update()
    return q.twin
