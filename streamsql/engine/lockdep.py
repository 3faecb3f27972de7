"""Records the order in which threads take streamsql's locks, as the Linux kernel's lockdep does,
and reports a possible deadlock the first time an order is broken, not when it finally hangs.

Off unless ``STREAMSQL_LOCKDEP=1`` is in the environment (the test suite sets it for itself, its
kernels and its subprocesses) or :func:`enable` is called; then every acquisition of a
:class:`~streamsql.engine.locks.TrackedLock` and every :class:`~streamsql.engine.locks.Waited`
point is seen here. A lock's *class* is its name (every workbench's lock is one class). When a
thread takes B while holding A, the edge A -> B is recorded with where each was taken. A
violation is reported (logged, kept for :func:`take_violations`, and written as a file to
``STREAMSQL_LOCKDEP_DIR`` when that is set) the first time:

- B -> ... -> A was recorded before: a cycle, so two threads can deadlock, whether they did or not;
- B comes before A in :data:`~streamsql.engine.locks.ORDER`: the written order is broken;
- A and B are of different families: an engine lock (or a wait for Spark's work) under a widget
  lock, or a widget lock (a view, then) under an engine lock (doing the work others wait for is
  no lock: a Spark batch's delivery tells the views);
- A and B are two locks of the same class: their order is not defined.

Trying a lock without waiting (``acquire(blocking=False)``) cannot deadlock and records no edge.
"""
from __future__ import annotations

import itertools
import logging
import os
import sys
import threading
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from . import environment

log = logging.getLogger("streamsql.lockdep")

#: the recorder, when on (the locks look here on every acquisition)
RECORDER: "Recorder | None" = None


@dataclass(frozen=True)
class Violation:
    """A possible deadlock: what was broken, and where."""
    kind: str           # "cycle", "order", "family" or "same class"
    held: str           # the lock held ...
    taken: str          # ... when this one was taken
    text: str           # the whole report, with the stacks

    def __str__(self) -> str:
        return self.text


_PLUMBING = ("locks.py", "lockdep.py", "threading.py")


def _where(depth: int = 14) -> tuple:
    """The calling frames as ``(file, line, function)``, innermost first, from the first one
    outside the locks' own plumbing (cheap: no source lines are read)."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.endswith(_PLUMBING):
        f = f.f_back
    out = []
    while f is not None and len(out) < depth:
        co = f.f_code
        out.append((co.co_filename, f.f_lineno, co.co_name))
        f = f.f_back
    return tuple(out)


def _show(stack: tuple) -> str:
    return "\n".join(f"      {Path(fn).name}:{line} in {name}" for fn, line, name in stack)


class Recorder:
    """The graph of lock classes (edges in the order they were first seen) and the violations."""

    def __init__(self, report_dir: str | None = None):
        self._mu = threading.Lock()         # the recorder's own: never held while a lock is taken
        self._tls = threading.local()
        self.edges: dict[tuple[str, str], tuple[tuple, tuple, str]] = {}
        self._next: dict[str, set[str]] = {}
        self.violations: list[Violation] = []
        self._seen: set[tuple[str, str, str]] = set()
        self._dir = Path(report_dir) if report_dir else None
        self._n = itertools.count(1)

    def _held(self) -> list:
        h = getattr(self._tls, "held", None)
        if h is None:
            h = self._tls.held = []
        return h

    def before(self, lock, blocking: bool) -> None:
        """``lock`` is about to be taken (or waited for) by the calling thread."""
        if not blocking:
            return
        held = self._held()
        if not held:
            return
        here = None
        for other, where in held:
            if other is lock:
                continue
            key = (other.name, lock.name)
            if key in self.edges and other.name != lock.name:
                continue
            if here is None:
                here = _where()
            self._edge(other, lock, where, here)

    def acquired(self, lock) -> None:
        self._held().append((lock, _where()))

    def released(self, lock) -> None:
        held = self._held()
        for i in range(len(held) - 1, -1, -1):
            if held[i][0] is lock:
                del held[i]
                return

    def held_names(self) -> list[str]:
        """The locks the calling thread holds, outermost first."""
        return [lk.name for lk, _w in self._held()]

    # ------------------------------------------------------------------ the graph

    def _edge(self, a, b, where_a: tuple, where_b: tuple) -> None:
        thread = threading.current_thread().name
        problems = []
        if a.name == b.name:
            problems.append(("same class", f"two locks of class {a.name!r} nested (their order is not defined)"))
        elif a.kind != b.kind and not a.is_wait:
            what = ("an engine lock taken under a widget lock" if b.kind == "engine"
                    else "a widget lock (a view) taken under an engine lock: a callout under an engine lock")
            problems.append(("family", what))
        else:
            ra, rb = a.rank, b.rank
            if ra is not None and rb is not None and rb < ra:
                problems.append(("order", f"{b.name!r} comes before {a.name!r} in locks.ORDER"))
        with self._mu:
            new = (a.name, b.name) not in self.edges
            if new:
                self.edges[(a.name, b.name)] = (where_a, where_b, thread)
                self._next.setdefault(a.name, set()).add(b.name)
                if a.name != b.name:
                    path = self._path(b.name, a.name)
                    if path is not None:
                        problems.append(("cycle", "a cycle: " + " -> ".join([a.name] + path)))
        for kind, what in problems:
            self._report(kind, a, b, what, where_a, where_b, thread)

    def _path(self, src: str, dst: str) -> list[str] | None:
        """A path src -> ... -> dst in the recorded order (caller holds ``_mu``)."""
        prev = {src: None}
        todo = deque([src])
        while todo:
            n = todo.popleft()
            if n == dst:
                out = [n]
                while prev[out[-1]] is not None:
                    out.append(prev[out[-1]])
                return out[::-1]
            for m in self._next.get(n, ()):
                if m not in prev:
                    prev[m] = n
                    todo.append(m)
        return None

    def _report(self, kind: str, a, b, what: str, where_a: tuple, where_b: tuple, thread: str) -> None:
        key = (kind, a.name, b.name)
        with self._mu:
            if key in self._seen:
                return
            self._seen.add(key)
        lines = [f"possible deadlock ({kind}): {what}",
                 f"  thread {thread!r} holds {a!r}, taken at",
                 _show(where_a),
                 f"  and takes {b!r} at",
                 _show(where_b)]
        if kind == "cycle":
            with self._mu:
                order = self._path(b.name, a.name) or []
                for x, y in zip(order, order[1:]):
                    wx, wy, t = self.edges[(x, y)]
                    lines += [f"  the other way: thread {t!r} held {x!r}, taken at", _show(wx),
                              f"  and took {y!r} at", _show(wy)]
        v = Violation(kind, a.name, b.name, "\n".join(lines))
        with self._mu:
            self.violations.append(v)
        log.error("%s", v.text)
        if self._dir is not None:
            try:
                self._dir.mkdir(parents=True, exist_ok=True)
                (self._dir / f"{os.getpid()}-{next(self._n)}.txt").write_text(
                    f"process {os.getpid()} ({' '.join(sys.argv)[:200]})\n{v.text}\n")
            except OSError:
                pass

    def take_violations(self) -> list[Violation]:
        """The violations reported since the last call."""
        with self._mu:
            out, self.violations = self.violations, []
        return out


def enable(report_dir: str | None = None) -> Recorder:
    """Turn the recorder on in this process (before the locks to record are taken)."""
    global RECORDER
    if RECORDER is None:
        RECORDER = Recorder(report_dir or environment.lockdep_dir())
    return RECORDER


def take_violations() -> list[Violation]:
    """The violations reported since the last call (none when the recorder is off)."""
    return RECORDER.take_violations() if RECORDER is not None else []


if environment.lockdep():
    enable()
