"""A shared engine for tests: started in the test session's engine directory (conftest sets
``STREAMSQL_ENGINE_DIR``), stopped afterwards even when a test fails."""
from __future__ import annotations

import contextlib
import os
from pathlib import Path


@contextlib.contextmanager
def running_engine(d: Path | None = None, idle: float = 1800):
    from streamsql.engine.runtime.spark import server
    d = Path(d) if d is not None else server.engine_dir()
    info = server.start(idle=idle, d=d)
    try:
        yield info
    finally:
        server.stop(d)


def env_for(info, **extra) -> dict:
    """The environment of a child process that uses the engine ``info``."""
    return {**os.environ, "STREAMSQL_ENGINE": "shared", "STREAMSQL_ENGINE_DIR": str(info.dir), **extra}


class SessionEngine:
    """The test session's engine: its start begins at once in a background thread, :meth:`info`
    waits for it. This process is one of its clients while it lives (the engine's idle clock runs
    only once it is gone: a test session killed hard leaves no engine behind for long);
    :meth:`stop` stops it."""

    IDLE = 600.0

    def __init__(self, d: Path | None = None):
        import concurrent.futures
        from streamsql.engine.runtime.spark import server
        self.dir = Path(d) if d is not None else server.engine_dir()
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="test-engine-start")
        self._start = self._pool.submit(server.start, idle=self.IDLE, d=self.dir)
        self._pool.shutdown(wait=False)

    def info(self):
        from streamsql.engine.runtime.spark import server
        info = self._start.result()
        server.keep_alive(self.dir)
        return info

    def stop(self) -> None:
        from streamsql.engine.runtime.spark import server
        try:
            self._start.result()
        except Exception:           # it did not start: its process (if any) was ended by start()
            pass
        server.stop(self.dir)
