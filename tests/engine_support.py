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
