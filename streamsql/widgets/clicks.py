"""Where a click is applied: on the kernel's main thread, in the order the clicks arrived, and
never while a cell runs there.

JupyterLab 4.6 sends widget messages on a kernel subshell when the kernel has them (ipykernel
7), and ipykernel hands each to the thread of the subshell that last sent on that widget: the
subshell's own thread after a click's answer, the main thread after a view redrew. Measured in
JupyterLab: the first click during ``time.sleep(8)`` waited for the cell, the next ones (on the
subshell) did not; during a cell of 300 INSERTs every click waited (the cell's events redrew the
views). So a click is handed to the main thread's event loop here, whichever thread received it:
while a cell runs it waits, shown as pending, and runs when the kernel is free, in click order;
the cell's events and the clicks' never interleave. Without a kernel (a terminal, the tests) a
click runs where it is made.

Click order is the order the browser made them, not the order they arrive: a click waiting in
the main thread's message queue (behind the cell) and the next ones received on a subshell
reach this module in either order (CI saw the tenth click of a burst applied before the
fourth). Each view numbers its clicks (``id`` ``<view>-<n>``, widgets/js), so a click whose
predecessor has not arrived is held until it does; if it never does (a lost message), the held
clicks run in their order once the main thread has been free for twice :data:`GRACE` seconds.
"""
from __future__ import annotations

import logging
import re
import threading
from typing import Callable

from ..engine.locks import widget_lock

log = logging.getLogger("streamsql.widgets")

#: guards :data:`_queued`, the clicks handed to the main loop and not run yet (never held while
#: a click runs)
_lock = widget_lock("clicks")
_queued = 0
#: per view, the number of the click that runs next, and the later clicks that arrived first
_next: dict[str, int] = {}
_held: dict[str, dict[int, Callable[[], None]]] = {}
_timed: set[str] = set()          # views whose missing click a timer is waiting for
#: a missing click is given up for lost once the main thread has been free twice this long (a
#: message delayed under load reaches the free main thread well within that)
GRACE = 5.0
_ID = re.compile(r"^(.+)-(\d+)$")


def _main_loop():
    """The kernel's main event loop (a Tornado IOLoop: ``add_callback`` is thread-safe), or None
    outside a kernel."""
    try:
        from ipykernel.kernelbase import Kernel
        if not Kernel.initialized():
            return None
        return getattr(Kernel.instance(), "io_loop", None)
    except Exception:  # no ipykernel: a terminal
        return None


def apply_click(fn: Callable[[], None], click_id=None, loop=None) -> None:
    """Run ``fn`` (a click's work) on the kernel's main thread after the clicks made before it
    (``click_id``: the browser's ``<view>-<n>``): at once when this is the main thread and none
    is waiting, else when the main loop is free (after the running cell). ``loop``: the main
    loop (default: the kernel's)."""
    loop = loop if loop is not None else _main_loop()
    m = _ID.match(click_id) if loop is not None and isinstance(click_id, str) else None
    if m is None:
        _dispatch([fn], loop)
        return
    view, n = m.group(1), int(m.group(2))
    ready, timer = [], False
    with _lock:
        expected = _next.setdefault(view, 1)
        if n > expected:                           # an earlier click of this view is still on its way
            _held.setdefault(view, {})[n] = fn
            timer = view not in _timed
            _timed.add(view)
        elif n == expected:
            ready = [fn] + _release(view, n + 1)
        else:                                      # a number seen before (a view re-rendered): as it comes
            ready = [fn]
    if timer:
        loop.add_callback(lambda: loop.call_later(GRACE, _give_up, view, expected, loop, False))
    if ready:
        _dispatch(ready, loop)


def _release(view: str, n: int) -> list:
    """The held clicks of ``view`` from number ``n`` on without a gap; sets its next number
    (holding :data:`_lock`)."""
    held = _held.get(view, {})
    out = []
    while n in held:
        out.append(held.pop(n))
        n += 1
    _next[view] = n
    return out


def _give_up(view: str, missing: int, loop, again: bool) -> None:
    """On the main loop, ``GRACE`` after it was free: if click ``missing`` of ``view`` is still
    missing, it is lost; the held clicks run in their order."""
    ready, wait = [], None
    with _lock:
        if not _held.get(view):
            _timed.discard(view)
            return
        if _next[view] != missing:             # that one came; a later one is missing now
            wait = (_next[view], False)
        elif not again:                        # the timer may have run out during the cell: once more
            wait = (missing, True)
        else:
            log.warning("click %s-%d never arrived; the clicks after it run in their order", view, missing)
            ready = _release(view, min(_held[view]))
            if _held[view]:
                wait = (_next[view], False)
            else:
                _timed.discard(view)
    if wait is not None:
        loop.call_later(GRACE, _give_up, view, wait[0], loop, wait[1])
    if ready:
        _dispatch(ready, loop)


def _dispatch(fns: list, loop) -> None:
    """Run ``fns`` in their order: here, when this is the main thread and no click waits for it,
    else on the main loop, queued together (a click released meanwhile by another thread cannot
    come between them)."""
    global _queued
    with _lock:
        inline = loop is None or (threading.current_thread() is threading.main_thread() and not _queued)
        if not inline:
            _queued += len(fns)
            for fn in fns:
                loop.add_callback(_on_main, fn)
    if inline:
        for fn in fns:
            fn()


def _on_main(fn: Callable[[], None]) -> None:
    global _queued
    try:
        fn()
    except Exception:  # a click's own errors are answered by fn; this must not stop the loop
        log.exception("a click failed")
    finally:
        with _lock:
            _queued -= 1


def waiting() -> int:
    """How many clicks wait for the main thread (tests)."""
    return _queued
