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
"""
from __future__ import annotations

import logging
import threading
from typing import Callable

from ..engine.locks import widget_lock

log = logging.getLogger("streamsql.widgets")

#: guards :data:`_queued`, the clicks handed to the main loop and not run yet (never held while
#: a click runs)
_lock = widget_lock("clicks")
_queued = 0


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


def apply_click(fn: Callable[[], None]) -> None:
    """Run ``fn`` (a click's work) on the kernel's main thread after the clicks handed there
    before it: at once when this is the main thread and none is waiting, else when the main
    loop is free (after the running cell)."""
    global _queued
    loop = _main_loop()
    with _lock:
        inline = loop is None or (threading.current_thread() is threading.main_thread() and not _queued)
        if not inline:
            _queued += 1
    if inline:
        fn()
        return

    def run():
        global _queued
        try:
            fn()
        except Exception:  # a click's own errors are answered by fn; this must not stop the loop
            log.exception("a click failed")
        finally:
            with _lock:
                _queued -= 1
    loop.add_callback(run)


def waiting() -> int:
    """How many clicks wait for the main thread (tests)."""
    return _queued
