"""vl-convert in a process of its own, for the snapshots redrawn in the background.

vl-convert holds the GIL while it draws a chart (45 ms for a small one, 350-500 ms for a lesson's
timeline on two busy cores). On a kernel's background thread that stalls every other thread of
the kernel, among them the one that receives a click: measured, a click's message then reached
the kernel 50-200 ms late. Drawn here, the kernel's threads wait on a pipe instead, without the
GIL. The worker reads one Vega-Lite spec per line on stdin and answers one JSON line; it ends
when its stdin closes (the kernel exited), so it never outlives the kernel. It runs at a lower
priority (``nice`` 10): a snapshot is for the saved notebook, and the cores it would take are
those of the click's micro-batches, the kernel and the browser.
"""
from __future__ import annotations

import atexit
import json
import select
import subprocess
import sys

if __name__ != "__main__":      # the worker's script (this file) needs none of the package
    from ..engine.locks import widget_lock

#: a drawing that takes longer than this is given up (the worker is restarted next time)
TIMEOUT = 120.0


class WorkerFailed(RuntimeError):
    pass


class SvgWorker:
    """One worker process, started on first use; calls are serialized."""

    def __init__(self):
        self._p: subprocess.Popen | None = None
        self._lock = widget_lock("svg-worker")
        #: how many drawings the worker made (what a test reads)
        self.served = 0

    def pid(self) -> int | None:
        return self._p.pid if self._p is not None and self._p.poll() is None else None

    def _proc(self) -> subprocess.Popen:
        if self._p is None or self._p.poll() is not None:
            # run as a script (-P: its folder not on sys.path), so the package is not imported
            self._p = subprocess.Popen([sys.executable, "-P", __file__], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                       bufsize=1)
        return self._p

    def svg(self, spec: dict, timeout: float = TIMEOUT) -> str:
        """The chart ``spec`` as SVG, drawn by the worker (raises :class:`WorkerFailed`)."""
        with self._lock:
            p = self._proc()
            try:
                p.stdin.write(json.dumps(spec) + "\n")
                p.stdin.flush()
                ready, _, _ = select.select([p.stdout], [], [], timeout)
                line = p.stdout.readline() if ready else ""
            except (OSError, ValueError) as e:
                self._stop()
                raise WorkerFailed(f"the SVG worker went away: {e}") from None
            if not line:
                self._stop()
                raise WorkerFailed("the SVG worker did not answer")
            out = json.loads(line)
            if "error" in out:
                raise WorkerFailed(out["error"])
            self.served += 1
            return out["svg"]

    def _stop(self) -> None:
        p, self._p = self._p, None
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()

    def close(self) -> None:
        with self._lock:
            self._stop()


if __name__ != "__main__":      # the kernel's side (this file is also the worker's script)
    WORKER = SvgWorker()
    atexit.register(WORKER.close)


#: the worker's niceness (a background job's)
NICE = 10


def main() -> None:
    import os
    try:
        os.nice(NICE)
    except OSError:         # not allowed here: drawn at the kernel's priority
        pass
    import vl_convert as vlc
    for line in sys.stdin:
        try:
            out = {"svg": vlc.vegalite_to_svg(json.loads(line))}
        except Exception as e:  # answered, so the caller falls back instead of waiting
            out = {"error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
