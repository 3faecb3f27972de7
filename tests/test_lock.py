"""One writer per workspace (docs/reliability.md), with real processes: a second writer is refused
with a message naming the owner (pid and host); a read-only workbench reads the catalog, clocks
and history and runs relational queries while the writer goes on, and every write it tries is a
clear error; the lock of a process killed with SIGKILL is taken over with a warning; of several
processes racing to write, exactly one does. Only processes this test started are killed."""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from streamsql.engine.catalog import Event
from streamsql.engine.errors import WorkspaceError
from streamsql.engine.lock import lock_owner
from streamsql.engine.workbench import Workbench
from streamsql.engine.workspace import clear_workspace

WRITER = r"""
import sys
from streamsql.engine.workbench import Workbench
wb = Workbench(sys.argv[1], engine="local")
if "S" not in wb.catalog.streams:
    wb.execute("CREATE STREAM S (a INTEGER); CREATE TABLE R (k INTEGER, name VARCHAR(10))")
    wb.execute("INSERT INTO R VALUES (1, 'one'), (2, 'two')")
    wb.set_history("S")
wb.insert("S", {"a": 1}, rowtime="2020-01-01 10:00:00")
print("ready", flush=True)
for line in sys.stdin:
    cmd = line.split()
    if cmd[0] == "insert":
        wb.insert("S", {"a": int(cmd[1])}, rowtime=cmd[2] + " " + cmd[3])
        print("done", flush=True)
    elif cmd[0] == "close":
        wb.close()
        print("closed", flush=True)
        break
"""


class Writer:
    """A real process holding a workspace open as its writer."""

    def __init__(self, ws: Path):
        self.p = subprocess.Popen([sys.executable, "-c", WRITER, str(ws)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.p.stdout.readline()
        assert line.strip() == "ready", self.p.stderr.read()

    def send(self, cmd: str, expect: str) -> None:
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        assert self.p.stdout.readline().strip() == expect

    def kill(self) -> None:
        if self.p.poll() is None:
            os.kill(self.p.pid, signal.SIGKILL)      # only the pid this test started
        self.p.wait(timeout=30)

    def stop(self) -> None:
        if self.p.poll() is None:
            self.send("close", "closed")
            self.p.wait(timeout=30)


@pytest.fixture
def writer(tmp_path):
    w = Writer(tmp_path / "ws")
    yield w
    w.kill()


def test_a_second_writer_is_refused_with_the_owners_pid_and_host(tmp_path, writer):
    ws = tmp_path / "ws"
    before = (ws / "catalog.json").read_bytes()
    with pytest.raises(WorkspaceError) as e:
        Workbench(ws, engine="local")
    msg = str(e.value)
    assert f"process {writer.p.pid} on {socket.gethostname()}" in msg and "read_only=True" in msg
    assert "\n" not in msg
    assert (ws / "catalog.json").read_bytes() == before
    assert lock_owner(ws)["pid"] == writer.p.pid       # the refused opener changed nothing
    writer.send("insert 2 2020-01-01 10:01:00", "done")   # and the writer goes on


def test_read_only_reads_while_the_writer_writes_and_refuses_every_write(tmp_path, writer):
    ws = tmp_path / "ws"
    ro = Workbench(ws, engine="local", read_only=True)
    try:
        assert ro.read_only and ro.clock("S") == 1577872800000 and ro.last_step == 1
        assert [s["name"] for s in ro.streams()] == ["ERRORS", "S"]
        assert ro.execute("SELECT k, name FROM R ORDER BY k")[0].rows == [(1, "one"), (2, "two")]
        assert ro.execute("SELECT a FROM S")[0].rows == [(1,)]
        writer.send("insert 2 2020-01-01 10:01:00", "done")
        assert ro.last_step == 1                  # a snapshot until refreshed
        ro.refresh()
        assert ro.last_step == 2 and ro.clock("S") == 1577872860000
        assert ro.execute("SELECT a FROM S")[0].rows == [(1,), (2,)]
        before = {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()}
        writes = [
            lambda: ro.execute("CREATE STREAM T (a INTEGER)"),
            lambda: ro.execute("INSERT INTO S (ROWTIME, a) VALUES (TIMESTAMP '2020-01-01 11:00:00', 3)"),
            lambda: ro.execute("INSERT INTO R VALUES (3, 'three')"),
            lambda: ro.execute("DROP STREAM S"),
            lambda: ro.query("SELECT STREAM ROWTIME, a FROM S"),
            lambda: ro.insert("S", {"a": 3}, rowtime="2020-01-01 11:00:00"),
            lambda: ro.punctuate("S", "2020-01-01 11:00:00"),
            lambda: ro.attach("S", "p2"),
            lambda: ro.detach("S"),
            lambda: ro.inject([Event("S", "row", 1577880000000, {"a": 3})]),
            lambda: ro.load("S", {"ROWTIME": [1577880000000], "a": [3]}),
            lambda: ro.set_history("S", 1000),
            lambda: ro.stop_query("q"),
            lambda: ro.log.write_head(99),
        ]
        for w in writes:
            with pytest.raises(WorkspaceError, match="read-only") as e:
                w()
            assert "\n" not in str(e.value)
        assert {p: p.read_bytes() for p in ws.rglob("*") if p.is_file()} == before
        assert ro.last_step == 2
    finally:
        ro.close()
    writer.send("insert 3 2020-01-01 10:02:00", "done")   # the reader took no lock
    writer.stop()
    with Workbench(ws, engine="local") as wb:           # closed properly: no take-over warning
        assert wb.open_warnings == [] and wb.last_step == 3


def test_read_only_needs_an_existing_workspace(tmp_path):
    with pytest.raises(WorkspaceError, match="no workspace at"):
        Workbench(tmp_path / "nothing", engine="local", read_only=True)
    assert not (tmp_path / "nothing").exists()


def test_a_killed_writers_lock_is_taken_over_with_a_warning(tmp_path):
    ws = tmp_path / "ws"
    w = Writer(ws)
    pid = w.p.pid
    w.kill()
    assert lock_owner(ws)["pid"] == pid                  # the record is still there, the OS lock is not
    with Workbench(ws, engine="local") as wb:
        assert any(f"took over the lock left by process {pid}" in m and "not running any more" in m
                   for m in wb.open_warnings), wb.open_warnings
        assert wb.last_step == 1 and wb.clock("S") == 1577872800000
        assert lock_owner(ws)["pid"] == os.getpid()
        wb.insert("S", {"a": 2}, rowtime="2020-01-01 10:01:00")
    assert lock_owner(ws) is None                        # released on close


def test_two_workbenches_of_one_process(tmp_path):
    ws = tmp_path / "ws"
    a = Workbench(ws, engine="local")
    with pytest.raises(WorkspaceError, match="another Workbench of this process"):
        Workbench(ws, engine="local")
    a.close()
    Workbench(ws, engine="local").close()
    Workbench(ws, engine="local")                         # dropped without close(): freed by the GC
    Workbench(ws, engine="local").close()


RACER = r"""
import sys, time
from streamsql.engine.errors import WorkspaceError
from streamsql.engine.workbench import Workbench
start = float(sys.argv[2])
while time.time() < start:
    pass
try:
    wb = Workbench(sys.argv[1], engine="local")
except WorkspaceError as e:
    print("refused", flush=True)
    sys.exit(0)
print("writer", flush=True)
time.sleep(3)
wb.close()
"""


def test_of_racing_processes_exactly_one_writes(tmp_path):
    ws = tmp_path / "ws"
    Workbench(ws, engine="local").close()
    start = time.time() + 3
    ps = [subprocess.Popen([sys.executable, "-c", RACER, str(ws), str(start)], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = []
    for p in ps:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        outs.append(out.strip())
    assert sorted(outs) == ["refused"] * 3 + ["writer"], outs


def test_reset_does_not_wipe_a_workspace_another_process_writes(tmp_path, writer):
    ws = tmp_path / "ws"
    before = sorted(p.name for p in ws.rglob("*"))
    with pytest.raises(WorkspaceError, match=f"process {writer.p.pid}"):
        clear_workspace(ws)
    assert sorted(p.name for p in ws.rglob("*")) == before
    writer.stop()
    clear_workspace(ws)
    assert [p.name for p in ws.iterdir()] == ["LOCK"]


def test_lock_file_records_the_owner(tmp_path):
    ws = tmp_path / "ws"
    with Workbench(ws, engine="local"):
        j = json.loads((ws / "LOCK").read_text())
        assert j["pid"] == os.getpid() and j["host"] == socket.gethostname() and "since" in j
