"""Spark's per-query Python processes, forked from a warm one instead of started cold.

Each streaming query start makes Spark launch fresh Python processes (``python -m <module>``): the
runner of the log source, the runner that reads a stateful stage's state schema on the first
batch and, on a Spark Connect server, the ``foreachBatch`` runner. Each one imports pyspark,
pyarrow, pandas and streamsql before it does anything: about a second apiece on two busy cores,
most of a query's start (``benchmarks/bench_query_start.py``).

So Spark's ``pythonExec`` is a tiny launcher (``python -IS``: no site, no imports but the standard
library's): it hands its command line, environment, working directory and standard streams (the
descriptors themselves, over a Unix socket) to a *fork server* that imported all of that once,
which forks a child that runs the module exactly as ``python -m`` would; the launcher relays
signals to it and exits with its status. Spark's own ``pyspark.daemon`` (started the same way)
then forks executor workers that have it all imported too. Anything else (no server listening, a
command that is not ``-m module ...``) makes the launcher exec the real interpreter, as before.

Local mode only (the launcher and the server are on this machine): a cluster's executors start
the real interpreter.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ... import environment
from ...paths import private_dir
from ...tempdirs import prune_orphans

#: what the server imports before forking (what the per-query processes need)
WARM = ["pyspark.sql.streaming.python_streaming_source_runner", "pyspark.daemon", "pyspark.worker",
        "pyspark.sql.streaming.transform_with_state_driver_worker", "pandas", "pyarrow", "numpy",
        "streamsql.engine.runtime.spark.source", "streamsql.engine.runtime.spark.stage",
        "streamsql.engine.runtime.spark.sink", "streamsql.engine.runtime.spark.pipeline"]
#: imported too in a Spark Connect server (``STREAMSQL_FORK_CONNECT=1``): its foreachBatch runner
#: needs grpc and PySpark's Connect client (about a second to import), which Spark in a
#: notebook's own process never runs
WARM_CONNECT = ["pyspark.sql.connect.streaming.worker.foreach_batch_worker",
                 "pyspark.sql.connect.streaming.worker.listener_worker"]

LAUNCHER = r'''#!{python} -IS
# streamsql's launcher for Spark's Python processes (streamsql/engine/runtime/spark/forkserver.py)
import json, os, signal, socket, struct, sys
REAL, SOCK = {python!r}, {sock!r}
args = sys.argv[1:]
def real():
    os.execv(REAL, [REAL] + args)
if len(args) < 2 or args[0] != "-m":
    real()
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(SOCK)
    # signals this process ignores (Spark's JVM ignores SIGINT, so a notebook's interrupt, sent to
    # the kernel's whole process group, never reaches the processes Spark starts): the child too
    ignored = [int(x) for x in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT) if signal.getsignal(x) == signal.SIG_IGN]
    msg = json.dumps({{"module": args[1], "args": args[2:], "env": dict(os.environ), "cwd": os.getcwd(),
                      "ignored": ignored}}).encode()
    socket.send_fds(s, [struct.pack("!I", len(msg)) + msg], [0, 1, 2])
    head = b""
    while len(head) < 4:
        b = s.recv(4 - len(head))
        if not b:
            raise OSError("fork server closed")
        head += b
    pid = struct.unpack("!i", head)[0]
except OSError:
    real()
if pid <= 0:
    real()
def relay(sig, _frame):
    try:
        os.kill(pid, sig)
    except OSError:
        pass
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
    if sig not in ignored:
        signal.signal(sig, relay)
data = b""
while len(data) < 4:
    b = s.recv(4 - len(data))
    if not b:
        break
    data += b
code = struct.unpack("!i", data[:4])[0] if len(data) >= 4 else 1
os._exit(code & 0xFF if code >= 0 else 128 - code)
'''


def state_dir() -> Path:
    """A directory only this user can enter (the server's socket lives there)."""
    return private_dir(Path(os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir())
                       / f"streamsql-fork-{os.getuid()}")


class ForkServer:
    """A running fork server (a child process of this one) and its launcher."""

    def __init__(self, proc: subprocess.Popen, sock: Path, launcher: Path):
        self.proc, self.sock, self.launcher = proc, sock, launcher

    def alive(self) -> bool:
        return self.proc.poll() is None

    def wait_ready(self, timeout: float = 60.0) -> bool:
        """Whether it listens (``ready`` on its output) within ``timeout`` seconds."""
        import select
        r, _w, _x = select.select([self.proc.stdout], [], [], timeout)
        return bool(r) and self.proc.stdout.readline().strip() == b"ready"

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()      # the server ends when its owner's pipe closes
                self.proc.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
        for p in (self.sock, self.launcher):
            try:
                p.unlink()
            except OSError:
                pass


def start(tag: str | None = None) -> ForkServer:
    """Start a fork server for this interpreter. Returns at once: until it listens (its imports
    take a few seconds), the launcher runs the real interpreter."""
    d = state_dir()
    prune_orphans(d)      # the launchers and sockets of killed processes: one pair per kernel
    tag = tag or f"{os.getpid()}-{int(time.time() * 1000)}"
    sock = d / f"{tag}.sock"
    launcher = d / f"{tag}-python"
    launcher.write_text(LAUNCHER.format(python=sys.executable, sock=str(sock)))
    launcher.chmod(0o700)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", __name__, str(sock)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    return ForkServer(proc, sock, launcher)


# --------------------------------------------------------------------------- the server

def _recv_request(conn: socket.socket):
    msg, fds, _flags, _addr = socket.recv_fds(conn, 1 << 20, 3)
    while len(msg) < 4 or len(msg) < 4 + struct.unpack("!I", msg[:4])[0]:
        more = conn.recv(1 << 20)
        if not more:
            raise OSError("launcher went away")
        msg += more
    n = struct.unpack("!I", msg[:4])[0]
    return json.loads(msg[4:4 + n]), fds


def _child(req: dict, fds: list[int], launcher: socket.socket, others: list[socket.socket]) -> None:
    """In the forked child: become ``python -m module`` with the launcher's streams and environment,
    and end when the launcher is killed (Spark stops a worker by ending the process it started)."""
    code = 1
    try:
        for c in others:
            c.close()
        import threading

        def watch():
            try:
                while launcher.recv(64):
                    pass
            except OSError:
                pass
            os.kill(os.getpid(), signal.SIGKILL)
        threading.Thread(target=watch, daemon=True, name="streamsql-launcher-watch").start()
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for sig in req.get("ignored", ()):      # as the launcher had them (python -m would too)
            signal.signal(sig, signal.SIG_IGN)
        for i, fd in enumerate(fds[:3]):
            os.dup2(fd, i)
            os.close(fd)
        os.environ.clear()
        os.environ.update(req["env"])
        os.chdir(req["cwd"])
        # sys.path as ``python -m`` makes it: the working directory, PYTHONPATH, then the rest
        extra = [p for p in req["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[:] = [req["cwd"]] + extra + [p for p in sys.path[1:] if p not in extra]
        sys.stdin = open(0, "r", closefd=False)
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        sys.stdout.reconfigure(write_through=True)
        sys.stderr.reconfigure(write_through=True)
        import runpy
        sys.modules.pop(req["module"], None)     # runs afresh as __main__ (its imports stay warm)
        sys.argv = [req["module"], *req.get("args", [])]
        try:
            runpy.run_module(req["module"], run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            import traceback
            traceback.print_exc()
            code = 1
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
    finally:
        os._exit(code)


def serve(sock_path: str) -> None:
    import importlib
    import select
    for m in WARM:
        importlib.import_module(m)
    for m in WARM_CONNECT if environment.fork_connect() else []:
        try:
            importlib.import_module(m)
        except Exception:   # noqa: BLE001 - the Connect client missing: its runner starts cold
            pass
    try:
        os.unlink(sock_path)
    except OSError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o077)
    try:
        listener.bind(sock_path)
    finally:
        os.umask(old)
    listener.listen(64)
    waiting: dict[int, socket.socket] = {}    # child pid -> its launcher's connection
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    owner = sys.stdin.fileno()
    while True:
        r, _w, _x = select.select([listener, owner], [], [], 0.05)
        if owner in r and not os.read(owner, 4096):
            break                                     # the owner ended
        if listener in r:
            conn, _ = listener.accept()
            try:
                req, fds = _recv_request(conn)
            except (OSError, ValueError):
                conn.close()
                continue
            pid = os.fork()
            if pid == 0:
                _child(req, fds, conn, [listener, *waiting.values()])
            for fd in fds:
                os.close(fd)
            try:
                conn.sendall(struct.pack("!i", pid))
                waiting[pid] = conn
            except OSError:
                conn.close()
        while waiting:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            conn = waiting.pop(pid, None)
            if conn is not None:
                code = os.waitstatus_to_exitcode(status)
                try:
                    conn.sendall(struct.pack("!i", code))
                except OSError:
                    pass
                conn.close()
    listener.close()
    try:
        os.unlink(sock_path)
    except OSError:
        pass


if __name__ == "__main__":
    serve(sys.argv[1])
