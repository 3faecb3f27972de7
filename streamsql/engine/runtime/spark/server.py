"""The shared engine: one warm Spark, a Spark Connect server on 127.0.0.1, for every process of
the user (kernels, ``streamsql replay``, test sessions).

``streamsql engine start`` (or a workbench in ``shared`` mode) starts it as a background process;
it writes ``engine.json`` (port, token, pid, versions) into its *engine directory*
(``STREAMSQL_ENGINE_DIR``, default ``~/.cache/streamsql/engine``; mode 0700, the file 0600: only
the user reads the token), and stops itself once no client has been seen for ``idle`` seconds
(clients touch ``clients/<pid>`` while they hold a session). ``status`` and ``stop`` read the same
file. A server that is gone, of another streamsql or pyspark version, or not answering, is
reported with what to do, never waited for without end.
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ... import environment
from ...errors import StreamSqlError
from ...lock import process_alive

#: seconds without a client before the engine stops itself (``--idle``, ``STREAMSQL_ENGINE_IDLE``)
DEFAULT_IDLE = 3600
HEARTBEAT = 10.0     # a client touches its file this often
SERVE_MODULE = "streamsql.engine.runtime.spark.serve"     # the server process (serve.py)
#: the exit status of a server that found another one holding its directory (started at the same
#: moment by another process): its starter then waits for that one's ``engine.json``
ANOTHER = 75


class EngineError(StreamSqlError):
    """The shared engine cannot be used (gone, foreign, not answering); the message says why."""


def versions() -> dict:
    import pyspark
    from importlib.metadata import PackageNotFoundError, version
    try:
        mine = version("streamsql")
    except PackageNotFoundError:
        mine = "dev"
    return {"streamsql": mine, "build": build(), "pyspark": pyspark.__version__, "python": sys.executable}


@functools.lru_cache(maxsize=1)
def build() -> str:
    """A fingerprint of the streamsql code this process imported (each module's path, size and
    modification time): an engine started before an update, or before an edit of a checkout,
    runs other code than its clients although the version number is the same."""
    root = Path(__file__).resolve().parents[3]          # the streamsql package (not imported here)
    h = hashlib.sha256(str(root).encode())
    for p in sorted(root.rglob("*.py")):
        st = p.stat()
        h.update(f"{p.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def engine_dir() -> Path:
    return _private(Path(environment.engine_dir() or Path.home() / ".cache" / "streamsql" / "engine"))


def _private(d: Path) -> Path:
    d.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(d, 0o700)
    return d


@dataclass
class EngineInfo:
    pid: int
    port: int
    token: str
    versions: dict
    started: float
    idle: float
    dir: Path

    @property
    def url(self) -> str:
        # "localhost": the Connect client then sends the token over a local (not TLS) channel
        return f"sc://localhost:{self.port}/;token={self.token}"

    def describe(self) -> str:
        up = time.time() - self.started
        return (f"engine up: pid {self.pid}, sc://localhost:{self.port}, up {up:.0f} s, stops after "
                f"{self.idle:.0f} s without a client, streamsql {self.versions.get('streamsql')}, "
                f"pyspark {self.versions.get('pyspark')} ({self.dir})")


def info_file(d: Path) -> Path:
    return d / "engine.json"


def read_info(d: Path | None = None) -> EngineInfo | None:
    d = d or engine_dir()
    try:
        s = json.loads(info_file(d).read_text())
        return EngineInfo(int(s["pid"]), int(s["port"]), str(s["token"]), dict(s["versions"]), float(s["started"]),
                          float(s.get("idle", DEFAULT_IDLE)), d)
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError, OSError) as e:
        raise EngineError(f"{info_file(d)} is not a streamsql engine file ({e}); remove it or run "
                          f"`streamsql engine stop`") from None


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs; an engine this process started and that ended is reaped."""
    if process_alive(pid):
        return True
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass
    return False


def _is_ours(pid: int) -> bool:
    try:
        return SERVE_MODULE.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return alive(pid)


def _answers(port: int, timeout: float = 2.0) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout):
            return True
    except OSError:
        return False


def check(info: EngineInfo) -> None:
    """Raise :class:`EngineError` unless ``info`` is a live engine this process can use."""
    if not alive(info.pid) or not _is_ours(info.pid):
        raise EngineError(f"stale shared engine: process {info.pid} of {info_file(info.dir)} is gone "
                          f"(`streamsql engine start` starts a new one)")
    mine = versions()
    if info.versions.get("streamsql") == mine["streamsql"] and info.versions.get("build") != mine["build"]:
        raise EngineError(f"the shared engine (pid {info.pid}, {info.dir}) runs other streamsql code than this "
                          f"process (the code changed since the engine started: an update or an edit): stop it "
                          f"with `streamsql engine stop` (the next workbench or `streamsql engine start` starts "
                          f"a new one)")
    for k in ("streamsql", "pyspark"):
        if info.versions.get(k) != mine[k]:
            raise EngineError(f"the shared engine (pid {info.pid}, {info.dir}) runs {k} {info.versions.get(k)}, this "
                              f"process has {mine[k]}: stop it with `streamsql engine stop` (or set "
                              f"STREAMSQL_ENGINE_DIR to use another engine directory)")
    if not _answers(info.port):
        raise EngineError(f"the shared engine (pid {info.pid}) does not answer on 127.0.0.1:{info.port}; "
                          f"`streamsql engine stop` and start it again")


def running(d: Path | None = None) -> EngineInfo | None:
    """The live engine of directory ``d``, else None (a stale file is left for ``start``/``stop``)."""
    info = read_info(d)
    if info is None:
        return None
    try:
        check(info)
    except EngineError:
        return None
    return info


def start(idle: float | None = None, wait: bool = True, timeout: float = 180.0, d: Path | None = None) -> EngineInfo:
    """The running engine, or a new one started in the background (returns once it answers)."""
    d = _private(d) if d is not None else engine_dir()
    info = read_info(d)
    if info is not None:
        if alive(info.pid) and _is_ours(info.pid):
            check(info)                  # a foreign version or a hung server: say so, do not replace it
            return info
        info_file(d).unlink(missing_ok=True)       # stale: its process is gone
    idle = float(idle if idle is not None else environment.engine_idle() or DEFAULT_IDLE)
    log = open(d / "server.log", "ab")
    # a process that opened a Connect session has PySpark's Connect mode in its environment: the
    # server starts a classic SparkContext
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SPARK_CONNECT_", "SPARK_REMOTE", "PYSPARK_REMOTE"))}
    proc = subprocess.Popen([sys.executable, "-m", SERVE_MODULE, str(d), str(idle)], stdin=subprocess.DEVNULL,
                            stdout=log, stderr=log, start_new_session=True, close_fds=True, env=env)
    log.close()
    if not wait:
        return None
    deadline = time.monotonic() + timeout
    server = proc.pid
    while time.monotonic() < deadline:
        code = proc.poll()
        if code == ANOTHER:       # another process started one at the same moment: wait for that one
            server = None
        elif code is not None:
            tail = (d / "server.log").read_text(errors="replace").strip().splitlines()[-3:]
            raise EngineError(f"the shared engine did not start (exit {code}): {' | '.join(tail)}")
        info = read_info(d)
        if info is not None and (server is None or info.pid == server) and alive(info.pid) and _answers(info.port):
            return info
        time.sleep(0.1)
    proc.terminate()
    raise EngineError(f"the shared engine did not answer within {timeout:.0f} s (log: {d / 'server.log'})")


def stop(d: Path | None = None, timeout: float = 60.0) -> str:
    d = d or engine_dir()
    info = read_info(d)
    if info is None:
        return "no shared engine is running"
    if not alive(info.pid) or not _is_ours(info.pid):
        info_file(d).unlink(missing_ok=True)
        return f"removed the file of a stale engine (process {info.pid} was gone)"
    os.kill(info.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while alive(info.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if alive(info.pid):
        os.kill(info.pid, signal.SIGKILL)
    info_file(d).unlink(missing_ok=True)
    return f"stopped the shared engine (pid {info.pid})"


def touch_client(d: Path) -> None:
    """This process uses the engine (its idle clock starts again)."""
    c = d / "clients"
    c.mkdir(exist_ok=True)
    (c / str(os.getpid())).touch()


_heartbeats: set[Path] = set()


def keep_alive(d: Path) -> None:
    """Touch this process's client file now and every :data:`HEARTBEAT` seconds while it lives."""
    touch_client(d)
    if d in _heartbeats:
        return
    _heartbeats.add(d)
    import threading

    def beat():
        while True:
            time.sleep(HEARTBEAT)
            try:
                touch_client(d)
            except OSError:
                pass
    threading.Thread(target=beat, daemon=True, name="streamsql-engine-heartbeat").start()


MODES = ("auto", "shared", "process")


def mode(remote: str | None, master: str | None) -> str:
    """How a workbench reaches Spark, decided here only: ``remote`` (an ``sc://`` URL given, which
    wins), ``process`` (a master URL other than local mode: this process's own driver), or else
    what ``STREAMSQL_ENGINE`` says: ``auto`` (the default: the shared engine when it is up, this
    process's own Spark when not), ``shared`` (the shared engine, started when it is down) or
    ``process`` (always Spark in this process)."""
    if remote:
        if not remote.startswith("sc://"):
            raise EngineError(f"a Spark Connect endpoint is an sc:// URL (sc://host:15002), not {remote!r}")
        return "remote"
    if master and not master.startswith("local"):
        return "process"
    chosen = environment.engine()
    if chosen not in MODES:
        raise EngineError(f"STREAMSQL_ENGINE must be one of {', '.join(MODES)}, not {chosen!r}")
    return chosen


def endpoint(remote: str | None, master: str | None) -> str | None:
    """Where a workbench's Spark runs, as :func:`mode` decides: a Spark Connect URL, or None for a
    Spark in this process."""
    how = mode(remote, master)
    if how == "remote":
        return remote
    if how == "process":
        return None
    d = engine_dir()
    if how == "shared":
        info = start(d=d)
    else:
        info = running(d)
        if info is None:
            return None
    keep_alive(d)
    return info.url
