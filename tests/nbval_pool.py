"""The tutorial notebooks' nbval runs, started in the background as soon as the tests are
collected (``conftest.pytest_collection_finish``), each in its own kernel on the test session's
shared engine; ``tests/test_notebooks.py`` then waits for each run's result.

Why in the background: a notebook run mostly waits (on Spark's micro-batches, on its kernel), and
so do most of the tests around it: the suite as a whole kept the two cores only about 70% busy,
and the notebooks' ten runs were a wall of their own (205 s of 1,460). So one notebook at a time
runs beside the other tests from the start, and when the notebooks' own tests are reached the
runs still waiting go ``WORKERS`` at a time. The slowest start first.
"""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Callable

import nbformat

ROOT = Path(__file__).resolve().parent.parent

#: notebooks run this many at a time once their tests are reached (one at a time before that,
#: beside the other tests)
WORKERS = int(os.environ.get("STREAMSQL_NBVAL_WORKERS", "2"))
SLOW_FIRST = ("07_", "06_", "00_")

#: The one line a kernel prints differently on the shared engine: where its Spark is (the stored
#: outputs are the default's, Spark in the kernel). The expected outputs of a run on the engine are
#: the stored ones with this line, and only it, replaced by the line naming the engine's port, so
#: nbval still compares every output strictly, and a kernel that did not use the engine fails.
IN_PROCESS_LINE = "starting Spark (local[*])…\n"


def engine_line(port: int) -> str:
    return f"connecting to Spark (sc://localhost:{port})…\n"


def expected_on_engine(path: Path, port: int, dest: Path) -> Path:
    """A copy of notebook ``path`` in ``dest`` whose stored start-up line is the engine's."""
    nb = nbformat.read(path, as_version=4)
    n = 0
    for c in nb.cells:
        for o in c.get("outputs", []):
            if o.get("output_type") == "stream" and IN_PROCESS_LINE in o.text:
                o.text = o.text.replace(IN_PROCESS_LINE, engine_line(port))
                n += 1
    assert n <= 1, f"{path.name}: {n} start-up lines (Spark starts once per kernel)"
    dest.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, dest / path.name)
    return dest / path.name


def run_nbval(path: Path, procs: list, env: dict) -> subprocess.CompletedProcess:
    """One notebook under ``pytest --nbval`` in its own kernel, bounded: a notebook that hangs
    fails on its own cell within minutes, naming itself."""
    p = subprocess.Popen([sys.executable, "-m", "pytest", "--nbval", str(path), "-q", "-p", "no:cacheprovider",
                          "--nbval-cell-timeout", "600", "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"),
                          "-o", "addopts="],
                         cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         env=env)
    procs.append(p)
    try:
        out, err = p.communicate(timeout=1200)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        err += "\n(killed after 1200 s)"
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


class NbvalPool:
    """The nbval runs of ``paths``, one at a time until :meth:`widen`, then ``WORKERS`` at a time.
    ``engine`` returns the shared engine's info (it waits for the engine to be up)."""

    def __init__(self, paths: list[Path], engine: Callable, env_for: Callable):
        self._engine, self._env_for = engine, env_for
        self._gate = threading.Semaphore(1)
        self._widened = False
        self._stopped = False
        self._procs: list = []
        self._copies = Path(tempfile.mkdtemp(prefix="streamsql-nbval-"))
        self.seconds: dict[Path, float] = {}
        order = sorted(paths, key=lambda p: next((i for i, s in enumerate(SLOW_FIRST) if p.name.startswith(s)),
                                                 len(SLOW_FIRST)))
        self._pool = ThreadPoolExecutor(max(1, WORKERS), thread_name_prefix="nbval")
        self.runs: dict[Path, Future] = {p: self._pool.submit(self._run, p) for p in order}

    def _run(self, path: Path) -> subprocess.CompletedProcess:
        info = self._engine()
        copy = expected_on_engine(path, info.port, self._copies / path.stem)
        with self._gate:
            if self._stopped:
                raise RuntimeError("the test session ended before this notebook ran")
            t0 = time.monotonic()
            try:
                return run_nbval(copy, self._procs, self._env_for(info))
            finally:
                self.seconds[path] = time.monotonic() - t0

    def widen(self) -> None:
        """From now on ``WORKERS`` notebooks at a time (the notebooks' tests are waiting)."""
        if not self._widened:
            self._widened = True
            if WORKERS > 1:
                self._gate.release(WORKERS - 1)

    def result(self, path: Path) -> subprocess.CompletedProcess:
        self.widen()
        return self.runs[path].result()

    def stop(self) -> None:
        """Ends the runs still going (only the ones this pool started, each with its kernel)."""
        self._stopped = True
        self._pool.shutdown(wait=False, cancel_futures=True)
        for p in self._procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        shutil.rmtree(self._copies, ignore_errors=True)
