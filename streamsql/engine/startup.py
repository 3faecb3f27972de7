"""Start-up phases: what the first query waits for (the JVM, the Spark session, the query's plan,
its first micro-batch), with the seconds each took.

A small hook: a start path calls ``on_phase(name)`` as each phase begins and ``on_phase(None)``
when the first result is in (``get_session(on_phase=...)`` and the Spark runtime do); a
:class:`StartupPhases` records the calls and tells its listeners, which is what the notebook's
start-up line shows live. Spark started ahead, in the background, reports its phases afterwards
with the times they began (``on_phase(name, at)``), then ``READY`` when it was up: the time
between (the user still typing) belongs to no phase."""
from __future__ import annotations

import time
from typing import Callable

from .locks import callout, engine_lock
PHASES = ("JVM", "Spark session", "plan", "first batch")
#: not a phase: the background start was over at this time (idle until the next phase)
READY = "ready"


class StartupPhases:
    """Callable as ``on_phase``: ``phases("JVM")`` begins a phase (ending the one before),
    ``phases(None)`` ends the last one."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self.started = clock()
        self.marks: list[tuple[str, float]] = []      # (phase, when it began)
        self.finished: float | None = None
        self._listeners: list[Callable[["StartupPhases"], None]] = []
        self._lock = engine_lock("startup")

    def __call__(self, name: str | None, at: float | None = None) -> None:
        with self._lock:
            if self.finished is not None:
                return
            if name is None:
                self.finished = self.clock()
            elif not self.marks or self.marks[-1][0] != name:
                self.marks.append((name, self.clock() if at is None else at))
        for f in list(self._listeners):     # views: never under an engine lock (a query start holds some)
            callout(f, self)

    def listen(self, f: Callable[["StartupPhases"], None]) -> None:
        self._listeners.append(f)

    @property
    def done(self) -> bool:
        return self.finished is not None

    def durations(self) -> list[tuple[str, float]]:
        """``(phase, seconds)`` for each phase so far; the current one counts up to now."""
        with self._lock:
            marks = list(self.marks)
            end = self.finished if self.finished is not None else self.clock()
        out = []
        for i, (name, t0) in enumerate(marks):
            t1 = marks[i + 1][1] if i + 1 < len(marks) else end
            if name != READY:
                out.append((name, max(0.0, t1 - t0)))
        return out

    @property
    def ahead(self) -> bool:
        """Whether Spark began starting before the query asked for it (in the background)."""
        return bool(self.marks) and self.marks[0][1] < self.started

    def text(self, times: bool = True) -> str:
        """``Start-up: JVM 2.1 s · Spark session 4.0 s · plan 0.3 s · first batch… 1.2 s``; without
        ``times``, the phases alone (what a stored notebook keeps: no timings). The total counts
        from the query's start: phases done ahead, in the background, count only their wait."""
        if not times:
            return "Start-up: " + " · ".join(PHASES)
        parts = []
        durs = self.durations()
        for i, (name, secs) in enumerate(durs):
            running = not self.done and i == len(durs) - 1
            parts.append(f"{name}{'…' if running else ''} {secs:.1f} s")
        total = (self.finished if self.done else self.clock()) - self.started
        tail = f" — first result after {total:.1f} s" if self.done else f" ({total:.1f} s so far)"
        if self.ahead:
            up = next((t for n, t in self.marks if n == READY), None)
            waited = (up if up is not None else self.finished or self.clock()) - self.started
            tail += (f" ({waited:.1f} s of it waiting for Spark, which started ahead in the background)"
                     if waited >= 0.05 else " (Spark started ahead, in the background)")
        return "Start-up: " + " · ".join(parts) + tail
