"""Every lock streamsql makes is made here, by name, so that one written order holds for all of
them (``docs/design.md``, "Threads and locks") and the test suite can record the order in which
threads take them (:mod:`.lockdep`).

Two families never nest. *Engine* locks guard a workbench's state (its catalog and log, a query's
rows, the holds, Spark's session); *widget* locks guard a view's own state. The rules, kept in every
run and checked by :mod:`.lockdep` in the test suite:

1. No callout (a view, a listener, user code) runs while its thread holds an engine lock:
   :func:`callout` runs it at once on a thread that holds none, and otherwise when that thread
   releases its last engine lock, in the order the callouts were made. So an ``INSERT`` statement,
   which runs under the workbench's lock, tells the views after the statement, never during it.
2. No engine lock is taken while a widget lock is held (a view reads the engine before it takes
   its own lock), and no widget lock while an engine lock is held (rule 1 makes that so).
3. Engine locks are taken in the order of :data:`ORDER`. A thread that holds one never *waits*
   for another thread's work that may need it: such waits are :class:`Waited` points, recorded
   like taking a lock, and a thread that must do work under the workbench's lock from a place
   others wait for (a Spark batch's delivery) hands it over with :meth:`TrackedLock.run_when_free`
   instead of waiting for the lock.
"""
from __future__ import annotations

import collections
import contextvars
import logging
import queue
import threading
from typing import Callable

from . import lockdep

log = logging.getLogger("streamsql")

ENGINE, WIDGET = "engine", "widget"

#: the engine's locks and waits, outermost first: a thread holding one may take (or wait for)
#: only those after it. Widget locks are leaves of their own family and never nest with these.
ORDER = (
    "spark-reader-batch",   # a foreign stream's Spark batch: it loads the batch's files into the stream
    "workbench",            # a workbench: statements, appends, its catalog, log and queries
    "foreign-reader",       # a foreign stream's reader: the files it has read (it loads under it)
    "spark-start",          # waiting for Spark's session, which another thread may be starting
    "spark-session",        # this process's SparkSession, made or found
    "connect-session",      # the Spark Connect sessions of this process
    "native-conf",          # the session conf a native twin changes while its query starts
    "spark-query-batch",    # a continuous query's Spark batch being delivered (stopping a query waits for it)
    "sink-follower",        # a Spark Connect query's follower: the batches its server committed
    "spark-holds",          # the clicked view's hold in HEAD
    "log-head",             # HEAD as this writer last wrote it
    "log-index",            # the log's list of segment files
    "startup",              # the start-up phases of the first query
    "query",                # one query's released rows and bounds
)
_RANK = {name: i for i, name in enumerate(ORDER)}

_local = threading.local()      # .depth: engine locks this thread holds; .later: its deferred callouts


def rank(name: str) -> int | None:
    """Where an engine lock sits in :data:`ORDER` (None: a widget lock)."""
    return _RANK.get(name)


def engine_depth() -> int:
    """How many engine locks the calling thread holds (a re-entered lock counts each time)."""
    return getattr(_local, "depth", 0)


def callout(fn: Callable, *args) -> None:
    """Call ``fn(*args)`` (a view, a listener, user code) now, or, when this thread holds an engine
    lock, as soon as it releases the last one. A callout that raises is logged: it must not break
    the engine's work nor the callouts after it."""
    if engine_depth():
        later = getattr(_local, "later", None)
        if later is None:
            later = _local.later = collections.deque()
        later.append((fn, args))
        return
    _call(fn, args)


def callout_aside(fn: Callable, *args) -> None:
    """:func:`callout` for a call that cannot wait until this thread lets go of its engine locks
    (the start-up line, shown while Spark starts under them; a load's progress): it runs now,
    on a thread of its own that holds no lock, in the calling thread's context (so that what it
    displays goes to the notebook cell that runs), and the calling thread waits for it once it
    releases its last engine lock. Calls made aside run one at a time, in the order made."""
    if not engine_depth():
        _call(fn, args)
        return
    done = threading.Event()
    _aside.put((contextvars.copy_context(), fn, args, done))
    _start_aside()
    callout(done.wait, 30.0)


_aside: "queue.SimpleQueue" = queue.SimpleQueue()
_aside_thread: threading.Thread | None = None
_aside_start = threading.Lock()     # plain: held only to start the thread


def _start_aside() -> None:
    global _aside_thread
    with _aside_start:
        if _aside_thread is None or not _aside_thread.is_alive():
            _aside_thread = threading.Thread(target=_run_aside, daemon=True, name="streamsql-callouts")
            _aside_thread.start()


def _run_aside() -> None:
    while True:
        ctx, fn, args, done = _aside.get()
        try:
            ctx.run(_call, fn, args)
        finally:
            done.set()


def _call(fn, args) -> None:
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - see callout
        log.exception("a callout (%s) failed", getattr(fn, "__qualname__", fn))


def _run_deferred() -> None:
    later = getattr(_local, "later", None)
    while later and not engine_depth():
        fn, args = later.popleft()
        _call(fn, args)


class TrackedLock:
    """A lock or re-entrant lock of the package, with its name and family. It keeps the rules of
    the module: an engine lock counts towards :func:`engine_depth` and runs the thread's deferred
    callouts once it is released last; with :mod:`.lockdep` on, every acquisition is recorded."""

    __slots__ = ("name", "kind", "rank", "reentrant", "_lock", "_owner", "_count", "_handover", "__weakref__")

    def __init__(self, name: str, kind: str = ENGINE, reentrant: bool = False):
        if kind == ENGINE and name not in _RANK:
            raise ValueError(f"engine lock {name!r} has no place in locks.ORDER")
        self.name, self.kind, self.reentrant = name, kind, reentrant
        self.rank = _RANK.get(name) if kind == ENGINE else None
        self._lock = threading.RLock() if reentrant else threading.Lock()
        self._owner: int | None = None
        self._count = 0
        self._handover: collections.deque = collections.deque()

    is_wait = False

    def __repr__(self) -> str:
        return f"<{self.kind} lock {self.name}>"

    # ------------------------------------------------------------------ the lock protocol

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        me = threading.get_ident()
        rec = lockdep.RECORDER
        again = self.reentrant and self._owner == me
        if rec is not None and not again:
            rec.before(self, blocking)
        if not self._lock.acquire(blocking, timeout):
            return False
        self._entered(me, again, rec)
        return True

    def _entered(self, me: int, again: bool, rec) -> None:
        self._owner = me
        self._count += 1
        if self.kind == ENGINE:
            _local.depth = engine_depth() + 1
        if rec is not None and not again:
            rec.acquired(self)

    def release(self) -> None:
        mine = self._owner == threading.get_ident()     # a plain lock may be released by another thread
        if self._count == 1 and self._handover and mine:
            self._run_handover()            # work handed over while this thread held it
        self._count -= 1
        last = self._count == 0
        if last:
            self._owner = None
        self._lock.release()
        rec = lockdep.RECORDER
        if last and rec is not None and mine:
            rec.released(self)
        if self.kind == ENGINE and mine:
            _local.depth = engine_depth() - 1
            if not _local.depth:
                _run_deferred()
        if last and self._handover:
            self._take_handover()           # handed over after we looked: run it if the lock is free

    __enter__ = acquire

    def __exit__(self, *exc) -> None:
        self.release()

    def locked(self) -> bool:
        return self._owner is not None

    def held_by_me(self) -> bool:
        """Whether the calling thread holds this lock."""
        return self._owner == threading.get_ident()

    # what threading.Condition asks of the lock it waits on
    def _is_owned(self) -> bool:
        return self.held_by_me()

    def _release_save(self):
        count = self._count
        rec = lockdep.RECORDER
        self._count = 0
        self._owner = None
        if self.reentrant:
            state = self._lock._release_save()
        else:
            self._lock.release()
            state = None
        if rec is not None:
            rec.released(self)
        if self.kind == ENGINE:
            _local.depth = engine_depth() - count
        return state, count

    def _acquire_restore(self, saved) -> None:
        state, count = saved
        rec = lockdep.RECORDER
        if rec is not None:
            rec.before(self, True)
        if self.reentrant:
            self._lock._acquire_restore(state)
        else:
            self._lock.acquire()
        self._owner = threading.get_ident()
        self._count = count
        if self.kind == ENGINE:
            _local.depth = engine_depth() + count
        if rec is not None:
            rec.acquired(self)

    # ------------------------------------------------------------------ handing work over

    def run_when_free(self, fn: Callable[[], None]) -> None:
        """Run ``fn()`` under this lock without waiting for it: now, when the lock is free, else
        by the thread that holds it, right before it lets go. For work that must be done under
        the lock from a thread others may wait for while they hold it (a Spark batch's delivery,
        which stopping a query waits for)."""
        self._handover.append(fn)
        self._take_handover()

    def pending_handover(self) -> int:
        """How many handed-over calls wait for the lock's holder."""
        return len(self._handover)

    def _take_handover(self) -> None:
        while self._handover and self.acquire(blocking=False):
            self.release()                  # release runs what was handed over first

    def _run_handover(self) -> None:
        while self._handover:
            fn = self._handover.popleft()
            try:
                fn()
            except Exception:  # noqa: BLE001 - the holder's own work must go on
                log.exception("work handed over to the holder of the %s lock failed", self.name)


class Waited:
    """A point where a thread waits for work that another thread does in :meth:`running` (a
    Spark batch being delivered, Spark's session being started). Waiting there while holding a
    lock that the work may need can deadlock, so :mod:`.lockdep` records a wait as taking a lock
    of this name, and the work as holding it."""

    __slots__ = ("name", "rank")

    def __init__(self, name: str):
        if name not in _RANK:
            raise ValueError(f"wait {name!r} has no place in locks.ORDER")
        self.name, self.rank = name, _RANK[name]

    kind = ENGINE       # waits order like engine locks
    #: doing the work is no lock: views may be told from it (a batch's delivery tells them)
    is_wait = True

    def __repr__(self) -> str:
        return f"<wait {self.name}>"

    def wait_point(self) -> None:
        """The calling thread is about to wait for this work."""
        rec = lockdep.RECORDER
        if rec is not None:
            rec.before(self, True)

    def running(self) -> "_Running":
        """A context in which the calling thread does the work others wait for."""
        return _Running(self)


class _Running:
    __slots__ = ("w",)

    def __init__(self, w: Waited):
        self.w = w

    def __enter__(self):
        rec = lockdep.RECORDER
        if rec is not None:
            rec.before(self.w, True)
            rec.acquired(self.w)
        return self

    def __exit__(self, *exc) -> None:
        rec = lockdep.RECORDER
        if rec is not None:
            rec.released(self.w)


def engine_lock(name: str) -> TrackedLock:
    """A lock of the engine, named in :data:`ORDER`."""
    return TrackedLock(name, ENGINE)


def engine_rlock(name: str) -> TrackedLock:
    """A re-entrant lock of the engine, named in :data:`ORDER`."""
    return TrackedLock(name, ENGINE, reentrant=True)


def engine_condition(name: str) -> threading.Condition:
    """A condition variable over an engine lock named in :data:`ORDER`."""
    return threading.Condition(TrackedLock(name, ENGINE))


def widget_lock(name: str, reentrant: bool = False) -> TrackedLock:
    """A lock of a view's own state: never held while the engine is asked anything."""
    return TrackedLock(name, WIDGET, reentrant)


def widget_condition(name: str) -> threading.Condition:
    """A condition variable over a widget lock."""
    return threading.Condition(TrackedLock(name, WIDGET))
