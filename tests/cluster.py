"""A Spark standalone cluster on 127.0.0.1 started with the scripts in the pyspark wheel
(``sbin/spark-daemon.sh``): one master and N workers, each in its own JVM, with their logs, pid
files and work directories in one temporary folder and free ports. Used by the cluster tests
(tests/test_cluster.py) and benchmarks/bench_cluster.py.

Only processes this object started are ever signalled: the daemons by the pids their pid files
hold, executors by pids found as children of those daemons.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_home() -> Path:
    import importlib.util
    spec = importlib.util.find_spec("pyspark")
    return Path(spec.origin).parent


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting for its parent counts as dead)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if ppid == pid:
            out.append(int(d.name))
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class StandaloneCluster:
    """``with StandaloneCluster(folder) as c: ... c.url ...``; stopped on exit, even on failure."""

    MASTER = "org.apache.spark.deploy.master.Master"
    WORKER = "org.apache.spark.deploy.worker.Worker"

    def __init__(self, folder: Path, workers: int = 2, cores: int = 1, memory: str = "1g"):
        self.folder = Path(folder)
        self.workers = workers
        self.cores = cores
        self.memory = memory
        self.ident = f"streamsql-{os.getpid()}-{int(time.time() * 1000) % 10**8}"
        self.port = free_port()
        self.ui_port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.started: list[int] = []            # daemon pids, master first
        self.stopped: list[int] = []            # every pid stop() signalled or waited for

    # ------------------------------------------------------------------ environment

    def env(self) -> dict:
        from streamsql.engine.runtime.spark.java import find_java
        e = dict(os.environ)
        e.update(JAVA_HOME=find_java()[0], SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP="127.0.0.1",
                 SPARK_LOG_DIR=str(self.folder / "logs"), SPARK_PID_DIR=str(self.folder / "pids"),
                 SPARK_WORKER_DIR=str(self.folder / "work"), SPARK_IDENT_STRING=self.ident,
                 SPARK_DAEMON_MEMORY="512m")
        return e

    def _daemon(self, action: str, cls: str, instance: int, *args: str) -> None:
        script = spark_home() / "sbin" / "spark-daemon.sh"
        subprocess.run(["bash", str(script), action, cls, str(instance), *args], env=self.env(), check=True,
                       capture_output=True, timeout=120)

    def _pid(self, cls: str, instance: int) -> int | None:
        p = self.folder / "pids" / f"spark-{self.ident}-{cls}-{instance}.pid"
        try:
            return int(p.read_text().strip())
        except (OSError, ValueError):
            return None

    # ------------------------------------------------------------------ life

    def start(self, timeout: float = 180) -> "StandaloneCluster":
        for d in ("logs", "pids", "work"):
            (self.folder / d).mkdir(parents=True, exist_ok=True)
        try:
            self._daemon("start", self.MASTER, 1, "--host", "127.0.0.1", "--port", str(self.port),
                         "--webui-port", str(self.ui_port))
            self._record(self.MASTER, 1)
            self._wait(lambda s: s is not None, timeout, "the master to answer")
            for i in range(1, self.workers + 1):
                self._daemon("start", self.WORKER, i, "--host", "127.0.0.1", "--port", str(free_port()),
                             "--webui-port", str(free_port()), "--cores", str(self.cores), "--memory", self.memory,
                             "--work-dir", str(self.folder / "work" / f"w{i}"), self.url)
                self._record(self.WORKER, i)
            self._wait(lambda s: s is not None and sum(w["state"] == "ALIVE" for w in s["workers"]) == self.workers,
                       timeout, f"{self.workers} workers to register")
        except BaseException:
            self.stop()
            raise
        return self

    def _record(self, cls: str, instance: int) -> None:
        pid = self._pid(cls, instance)
        if pid is not None:
            self.started.append(pid)

    def status(self) -> dict | None:
        """The master's JSON status page (workers, applications), or None when it does not answer."""
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=5) as r:
                return json.loads(r.read())
        except (OSError, ValueError):
            return None

    def _wait(self, ok, timeout: float, what: str) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if ok(self.status()):
                return
            for pid in self.started:
                if not alive(pid):
                    raise RuntimeError(f"a Spark daemon (pid {pid}) died while waiting for {what}; "
                                       f"logs in {self.folder / 'logs'}")
            time.sleep(0.5)
        raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}; logs in {self.folder / 'logs'}")

    def worker_pids(self) -> list[int]:
        return self.started[1:]

    def executor_pids(self, worker: int | None = None) -> list[int]:
        """The executor JVMs the workers (or worker number ``worker``, from 0) started."""
        ws = self.worker_pids() if worker is None else [self.worker_pids()[worker]]
        return [e for w in ws for e in self.executor_pids_of(w)]

    def stop(self, timeout: float = 60) -> None:
        """Stop the workers, then the master (SIGTERM: a worker stops its executors), and SIGKILL
        whatever of theirs is still alive after ``timeout``."""
        executors = self.executor_pids()
        for pid in reversed(self.started):
            if alive(pid):
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.time() + timeout
        mine = self.started + executors
        while time.time() < deadline and any(alive(p) for p in mine):
            time.sleep(0.2)
        for pid in mine:
            if alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.stopped += mine
        self.started = []

    @staticmethod
    def executor_pids_of(worker_pid: int) -> list[int]:
        return [c for c in children(worker_pid) if "CoarseGrainedExecutorBackend" in cmdline(c)]

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
