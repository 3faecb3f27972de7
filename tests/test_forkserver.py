"""The fork server (runtime/spark/forkserver.py): Spark's ``python -m module`` through the launcher
behaves as the real interpreter does (arguments, environment, working directory, standard
streams, exit status, signals), and without a server the launcher runs the real interpreter."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from streamsql.engine.runtime.spark import forkserver

PROBE = """import os, sys
print("args", sys.argv[1:], "cwd", os.getcwd(), "env", os.environ.get("PROBE_VALUE"), "pid", os.getpid())
print("err line", file=sys.stderr)
data = sys.stdin.read()
print("stdin", data.strip())
sys.exit(int(os.environ.get("PROBE_EXIT", "0")))
"""
SLEEPER = "import time\ntime.sleep(60)\n"


@pytest.fixture(scope="module")
def server():
    fs = forkserver.start()
    try:
        assert fs.wait_ready(120), "the fork server did not listen"
        yield fs
    finally:
        fs.stop()


def run(launcher, tmp_path, exit_code=0):
    (tmp_path / "probe_mod.py").write_text(PROBE)
    env = {**os.environ, "PROBE_VALUE": "v1", "PROBE_EXIT": str(exit_code)}
    return subprocess.run([str(launcher), "-m", "probe_mod", "a", "b c"], input="hello", capture_output=True,
                          text=True, cwd=tmp_path, env=env, timeout=60)


def test_a_forked_module_sees_what_python_m_would(server, tmp_path):
    r = run(server.launcher, tmp_path, exit_code=3)
    assert r.returncode == 3, r.stderr
    assert f"args ['a', 'b c'] cwd {tmp_path} env v1" in r.stdout
    assert "stdin hello" in r.stdout and "err line" in r.stderr
    pid = int(r.stdout.split("pid ")[1].split()[0])
    assert pid != os.getpid()


def test_signals_reach_the_forked_process(server, tmp_path):
    (tmp_path / "sleeper_mod.py").write_text(SLEEPER)
    p = subprocess.Popen([str(server.launcher), "-m", "sleeper_mod"], cwd=tmp_path)
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    assert p.wait(30) == 128 + signal.SIGTERM


def test_without_a_server_the_launcher_runs_the_real_interpreter(tmp_path):
    fs = forkserver.start()
    fs.wait_ready(120)
    fs.stop()                         # the launcher stays, its server is gone
    fs.launcher.write_text(forkserver.LAUNCHER.format(python=sys.executable, sock=str(fs.sock)))
    fs.launcher.chmod(0o700)
    try:
        r = run(fs.launcher, tmp_path, exit_code=5)
        assert r.returncode == 5 and "env v1" in r.stdout and "stdin hello" in r.stdout
    finally:
        fs.launcher.unlink()


def test_a_start_removes_what_killed_processes_left(tmp_path, monkeypatch):
    """A kernel killed before its exit hook leaves its launcher and socket behind; the next start
    removes those of processes that are gone and keeps those of live ones (and other files)."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    d = forkserver.state_dir()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    left = [d / f"{gone.pid}-1795817111043-python", d / f"{gone.pid}-1795817111043.sock"]
    alive = [d / f"{os.getpid()}-1795817111044-python", d / f"{os.getpid()}-1795817111044.sock", d / "notes.txt"]
    for p in left + alive:
        p.write_text("x")
    fs = forkserver.start()
    try:
        assert not any(p.exists() for p in left)
        assert all(p.exists() for p in alive)
        assert fs.launcher.exists()
    finally:
        fs.stop()
    assert not fs.launcher.exists()
