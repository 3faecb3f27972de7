"""The shared engine (docs/engine.md): a Spark Connect server on 127.0.0.1 that every process of
the user reuses. Real servers, real kernels: start, status and stop from the command line; a
stale or foreign server and a wrong token get a clear message; every shared scenario is exact
through it; two kernels share one engine; stopping the engine under a running query loses
nothing, and the query resumes on the next start."""
from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from streamsql.engine.cli import read_events, replay
from streamsql.engine.errors import StreamSqlError

from engine_support import env_for, running_engine
from scenario_compare import load, mismatch

from conftest import SCENARIOS

SHARED = sorted({p.with_suffix("") for p in SCENARIOS.glob("*.sql")})      # the team's shared scenarios
DAY = "2006-10-10 "


def cli(*args, env=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "streamsql.engine.cli", *args], capture_output=True, text=True,
                          env=env, timeout=timeout)


@pytest.mark.parametrize("remote,master,env,want", [
    ("sc://h:15002", "spark://c:7077", "process", "remote"),    # an endpoint given wins
    (None, "spark://c:7077", "shared", "process"),              # a cluster master: this process's driver
    (None, "local[2]", "shared", "shared"), (None, None, "process", "process"),
    (None, None, None, "auto"), (None, None, "", "auto")])      # unset or empty: the default
def test_one_function_decides_where_spark_runs(monkeypatch, remote, master, env, want):
    from streamsql.engine.runtime.spark import server
    if env is None:
        monkeypatch.delenv("STREAMSQL_ENGINE", raising=False)
    else:
        monkeypatch.setenv("STREAMSQL_ENGINE", env)
    assert server.mode(remote, master) == want


@pytest.mark.parametrize("remote,env,names", [("http://h:15002", "auto", "sc://"), (None, "Shared", "'Shared'")])
def test_where_spark_runs_refuses_what_it_cannot_read_in_one_line(monkeypatch, remote, env, names):
    from streamsql.engine.runtime.spark import server
    monkeypatch.setenv("STREAMSQL_ENGINE", env)
    with pytest.raises(server.EngineError) as e:
        server.mode(remote, None)
    assert names in str(e.value) and "\n" not in str(e.value)


def test_engine_start_status_stop_and_stale_or_foreign_servers(tmp_path):
    env = {**os.environ, "STREAMSQL_ENGINE_DIR": str(tmp_path / "engine")}
    r = cli("engine", "status", env=env)
    assert r.returncode == 0 and r.stdout.startswith("no shared engine is running"), r
    # two processes that start it at the same moment (two kernels opened together): one engine
    both = [subprocess.Popen([sys.executable, "-m", "streamsql.engine.cli", "engine", "start", "--idle", "600"], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in both]
    r = subprocess.CompletedProcess(both[0].args, both[0].returncode, *outs[0])
    try:
        assert r.returncode == 0 and both[1].returncode == 0, outs
        assert r.stdout.startswith("engine up: pid ") and "stops after 600 s without a client" in r.stdout
        d = tmp_path / "engine"
        info = json.loads((d / "engine.json").read_text())
        assert all(f"pid {info['pid']}," in out for out, _err in outs), outs
        servers = subprocess.run(["pgrep", "-f", f"streamsql.engine.runtime.spark.serve {d}"],
                                 capture_output=True, text=True).stdout.split()
        assert servers == [str(info["pid"])], servers
        assert stat.S_IMODE((d / "engine.json").stat().st_mode) == 0o600      # the token: the user's alone
        assert stat.S_IMODE(d.stat().st_mode) == 0o700
        listening = subprocess.run(["ss", "-ltnH", f"sport = :{info['port']}"], capture_output=True, text=True).stdout
        assert listening.strip() and all("127.0.0.1" in ln for ln in listening.strip().splitlines()), listening
        again = cli("engine", "start", env=env)          # reused, not a second one
        assert again.returncode == 0 and f"pid {info['pid']}" in again.stdout
        # a server of another version: refused with what to do
        foreign = dict(info, versions={**info["versions"], "streamsql": "0.0.1-other"})
        (d / "engine.json").write_text(json.dumps(foreign))
        r = cli("engine", "status", env=env)
        assert r.returncode == 1 and "runs streamsql 0.0.1-other" in r.stderr and "streamsql engine stop" in r.stderr
        # the same version, other code (the engine started before an update or an edit)
        other = dict(info, versions={**info["versions"], "build": "0" * 16})
        (d / "engine.json").write_text(json.dumps(other))
        r = cli("engine", "status", env=env)
        assert r.returncode == 1 and "runs other streamsql code than this process" in r.stderr, r.stderr
        assert "streamsql engine stop" in r.stderr
        (d / "engine.json").write_text(json.dumps(info))
        r = cli("engine", "stop", env=env)
        assert r.returncode == 0 and r.stdout.strip() == f"stopped the shared engine (pid {info['pid']})"
        from streamsql.engine.runtime.spark.server import alive
        assert not alive(info["pid"])
        # a stale file (its process gone): status says so, stop clears it
        (d / "engine.json").write_text(json.dumps(info))
        r = cli("engine", "status", env=env)
        assert r.returncode == 1 and f"stale shared engine: process {info['pid']}" in r.stderr
        r = cli("engine", "stop", env=env)
        assert "stale" in r.stdout and not (d / "engine.json").exists()
    finally:
        cli("engine", "stop", env=env)


def test_a_wrong_token_is_refused(engine, tmp_path):
    import streamsql
    bad = engine.url.replace(engine.token, "not-the-token")
    with streamsql.Workbench(tmp_path / "ws", remote=bad) as wb:
        wb.execute("CREATE STREAM S (x INTEGER)")
        with pytest.raises(StreamSqlError, match="Invalid authentication token"):
            wb.query("SELECT STREAM ROWTIME, x FROM S")
        assert wb.execute("CREATE STREAM T (x INTEGER)")[0]     # the workbench goes on


@pytest.mark.parametrize("batch", [None, 1], ids=["all-at-once", "one-event-batches"])
@pytest.mark.parametrize("base", SHARED, ids=lambda p: p.name)
def test_scenario_through_connect(base, batch, engine):
    sql, events, expected = load(base)
    out = io.StringIO()
    replay(sql, read_events(events), engine="spark", bounds=any("bound" in e for e in expected), batch=batch,
           buckets=2, out=out, remote=engine.url)
    got = [json.loads(ln) for ln in out.getvalue().splitlines() if ln.startswith("{")]
    diff = mismatch(got, expected)
    assert diff is None, diff


def test_replay_command_line_through_the_engine(engine):
    base = next(b for b in SHARED if b.name == "union_merge")
    r = cli("replay", str(base) + ".sql", str(base) + ".events.jsonl", "--remote",
            engine.url.replace("localhost", "127.0.0.1"), env=os.environ.copy())
    assert r.returncode == 0, r.stderr
    got = [json.loads(ln) for ln in r.stdout.splitlines() if ln.startswith("{")]
    assert mismatch(got, load(base)[2]) is None


KERNEL_CELLS = [
    "%load_ext streamsql",
    "%%streamsql\nCREATE STREAM P (name VARCHAR(10))",
    "%%streamsql -n p -o p\nSELECT STREAM ROWTIME, name FROM P WHERE name <> 'x'",
    "%streamsql INSERT INTO P (ROWTIME, name) VALUES (TIMESTAMP '2006-10-10 01:00:00', 'k')",
    "print(p.wait(300).to_pandas()['NAME'].tolist())",
    "from streamsql.engine.runtime.spark import session\n"
    "print('in-process', session._session is not None, 'url', p.wb.runtime.url.split(';')[0])",
]


def test_two_kernels_share_one_engine(engine):
    import nbformat
    from nbclient import NotebookClient
    env = env_for(engine)
    saved = {k: os.environ.get(k) for k in ("STREAMSQL_ENGINE", "STREAMSQL_ENGINE_DIR")}
    os.environ.update({k: env[k] for k in saved})       # the kernels inherit this process's environment
    try:
        nbs = [nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in KERNEL_CELLS]) for _ in range(2)]
        clients = [NotebookClient(nb, timeout=600, kernel_name="python3") for nb in nbs]
        for c in clients:
            c.execute()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    for nb in nbs:
        text = ["".join(o.get("text", "") for o in c.outputs) for c in nb.cells]
        # the session was opened ahead (at %load_ext), and the first query still reports it, as a
        # kernel with Spark in its own process does: a notebook's output does not depend on timing
        assert text[2] == f"connecting to Spark (sc://localhost:{engine.port})…\nQuery p started\nSpark is ready.\n"
        assert text[4].strip() == "['k']"
        assert text[5].strip() == f"in-process False url sc://localhost:{engine.port}/"


def test_engine_stop_under_a_running_query_loses_nothing(tmp_path):
    import streamsql
    d = tmp_path / "engine"
    with running_engine(d) as info:
        wb = streamsql.Workbench(tmp_path / "ws", remote=info.url)
        wb.execute("CREATE STREAM S (k INTEGER, x INTEGER); CREATE TABLE P (k INTEGER); INSERT INTO P (k) VALUES (1)")
        q = wb.query("SELECT STREAM FLOOR(S.ROWTIME TO MINUTE) AS m, k, SUM(x) AS t FROM S "
                     "GROUP BY FLOOR(S.ROWTIME TO MINUTE), k", name="totals")
        wb.insert("S", {"k": 1, "x": 5}, rowtime=DAY + "10:00:00")
        wb.insert("S", {"k": 1, "x": 6}, rowtime=DAY + "10:01:00")
        q.wait(300)
        assert [r.values[1:] for r in q.rows] == [(1, 5)]
        from streamsql.engine.runtime.spark import server
        server.stop(d)
        from streamsql.engine.errors import StreamSqlError
        t0 = time.monotonic()
        with pytest.raises(StreamSqlError) as err:      # a relational query: one line, never gRPC's repr
            wb.execute("SELECT k FROM P WHERE k > 0")
        assert time.monotonic() - t0 < 60
        said = str(err.value)
        assert "\n" not in said and ("went away" in said or "cannot open a Spark Connect session" in said), said
        deadline = time.monotonic() + 60
        while q.error is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert q.error and "went away" in q.error and "resumes" in q.error, q.error
        wb.insert("S", {"k": 1, "x": 7}, rowtime=DAY + "10:02:00")     # the log takes events meanwhile
        wb.close()
    with running_engine(d) as info:
        with streamsql.Workbench(tmp_path / "ws", remote=info.url) as wb:
            wb.insert("S", {"k": 1, "x": 1}, rowtime=DAY + "10:03:00")
            q = wb.queries["totals"]
            q.wait(300)
            assert [(r.step, r.values[1:]) for r in q.rows] == [(2, (1, 5)), (3, (1, 6)), (4, (1, 7))]


_KEEPS_A_QUERY = """
import sys, time, streamsql
wb = streamsql.Workbench(sys.argv[1])
wb.execute("CREATE STREAM S (x INTEGER)")
q = wb.query("SELECT STREAM ROWTIME, x FROM S", name="left_behind")
wb.insert("S", {"x": 1}, rowtime="2006-10-10 10:00:00")
q.wait(300)
print("ready", flush=True)
time.sleep(600)
"""


def test_the_engine_stops_the_queries_of_a_client_that_was_killed(tmp_path, engine):
    """A kernel killed with SIGKILL cannot stop its queries on the engine: the engine stops them
    once their process is gone (instead of running them until the session's timeout, an hour),
    and the workspace's query resumes where it was, with nothing lost or repeated."""
    import streamsql
    ws = tmp_path / "ws"
    p = subprocess.Popen([sys.executable, "-c", _KEEPS_A_QUERY, str(ws)], stdout=subprocess.PIPE, text=True,
                         env=env_for(engine))
    try:
        assert p.stdout.readline().strip() == "ready"
    finally:
        p.kill()
        p.wait()
    want = f"stopped query streamsql_left_behind_{p.pid}_"
    log = Path(engine.dir) / "server.log"
    deadline = time.monotonic() + 60
    while want not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert want in log.read_text(), log.read_text()[-2000:]
    with streamsql.Workbench(ws, remote=engine.url) as wb:
        wb.insert("S", {"x": 2}, rowtime=DAY + "10:01:00")
        q = wb.queries["left_behind"]
        q.wait(300)
        assert [(r.step, r.values) for r in q.rows] == [(1, (1,)), (2, (2,))]


def test_the_engine_stops_itself_when_no_client_comes(tmp_path):
    """A Connect URL of the user's own is not a client of the engine's (only ``clients/<pid>``
    files are): the engine stops after its idle time, and a relational query on the session that
    workbench still holds gets one line, not gRPC's repr."""
    import streamsql
    from streamsql.engine.errors import StreamSqlError
    from streamsql.engine.runtime.spark import server
    d = tmp_path / "engine"
    # idle long enough for the session to open and the table to be made on a loaded machine (at
    # 8 s the engine stopped first under a load of 17)
    info = server.start(idle=20, d=d)
    try:
        with streamsql.Workbench(tmp_path / "ws", remote=info.url) as wb:
            wb.execute("CREATE TABLE P (k INTEGER); INSERT INTO P (k) VALUES (1), (2)")
            assert wb.execute("SELECT k FROM P WHERE k > 1")[0].rows == [(2,)]
            deadline = time.monotonic() + 120
            while server.alive(info.pid) and time.monotonic() < deadline:
                time.sleep(0.5)
            assert not server.alive(info.pid)
            assert not (d / "engine.json").exists()
            assert "no client for 20 s, stopping" in (d / "server.log").read_text()
            with pytest.raises(StreamSqlError) as err:
                wb.execute("SELECT k FROM P WHERE k > 1")
            said = str(err.value)
            assert said.startswith("Spark could not run this query: the Spark engine at sc://") and "\n" not in said
            assert "went away" in said and "run the query again" in said, said
    finally:
        server.stop(d)



@contextlib.contextmanager
def _probe_server(method: str, handler):
    """A real gRPC server on 127.0.0.1 with the one method ``/probe/<method>``: ``(server, channel)``."""
    from concurrent import futures

    import grpc
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("probe", {method: handler})])
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            yield server, ch
    finally:
        server.stop(grace=0)


@pytest.mark.parametrize("cut", ["stop", "CANCELLED", "UNKNOWN"])
def test_a_stream_the_server_cut_reads_as_the_engine_went_away(cut):
    """A server that stops mid-call ends a streaming RPC with gRPC's raw error (as a query's status
    call did when the engine stopped: a stop reads UNAVAILABLE, a reset stream CANCELLED or UNKNOWN
    "Stream removed"): the query says the engine went away, never gRPC's repr."""
    import grpc

    from streamsql.engine.runtime.spark.driver import _connect_message
    started = threading.Event()

    def stream(_req, ctx):
        yield b"first"
        started.set()
        if cut != "stop":
            ctx.abort(getattr(grpc.StatusCode, cut), "Stream removed")
        time.sleep(30)
        yield b"never"

    with _probe_server("Stream", grpc.unary_stream_rpc_method_handler(stream)) as (server, ch):
        call = ch.unary_stream("/probe/Stream")(b"")
        assert next(call) == b"first"
        started.wait(10)
        if cut == "stop":
            server.stop(grace=0)
        with pytest.raises(grpc.RpcError) as err:
            next(call)
    msg = _connect_message(err.value, "sc://127.0.0.1:1")
    assert "went away" in msg and "resumes" in msg, (str(err.value), msg)
    # a failure of the query itself (pyspark's wrapped error) keeps its own text
    other = _connect_message(RuntimeError("[DIVIDE_BY_ZERO] Division by zero."), "sc://127.0.0.1:1")
    assert other == "[DIVIDE_BY_ZERO] Division by zero."


def _aborted_call(details: str, code: str = "UNKNOWN"):
    """The error a gRPC call gets from a server that ends it with ``code`` and ``details``."""
    import grpc

    def call(_req, ctx):
        ctx.abort(getattr(grpc.StatusCode, code), details)

    with _probe_server("Call", grpc.unary_unary_rpc_method_handler(call)) as (_server, ch):
        with pytest.raises(grpc.RpcError) as err:
            ch.unary_unary("/probe/Call")(b"", timeout=30)
    return err.value


@pytest.mark.parametrize("details, what", [
    ("Out of space in CodeCache for adapters", "room for compiled code"),
    ("java.lang.OutOfMemoryError: Java heap space", "memory"),
    ("java.lang.OutOfMemoryError: Metaspace", "memory for classes"),
    ("java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory", "threads")])
def test_a_jvm_out_of_room_says_which_engine_to_restart_and_how(details, what):
    """A JVM that ran out of room fails every later query until it restarts (CI's shared engine:
    "Out of space in CodeCache for adapters" through an ended RPC). The message says so, names
    the engine and how to restart it, instead of "the engine went away" (it is up) or gRPC's repr."""
    from streamsql.engine.runtime.spark.driver import _connect_message, _spark_message
    e = _aborted_call(details)
    shared = _connect_message(e, "sc://127.0.0.1:1/;token=secret", shared=True)
    assert shared.startswith(f"the shared engine: its JVM ran out of {what} ({details}); "
                             "restart it (`streamsql engine stop`, then `streamsql engine start`)"), shared
    assert "went away" not in shared and "secret" not in shared and "\n" not in shared
    theirs = _connect_message(e, "sc://127.0.0.1:1/;token=secret", query="relational")
    assert theirs.startswith("the Spark Connect server at sc://127.0.0.1:1") and "needs a restart" in theirs, theirs
    assert "secret" not in theirs
    # Spark in the process: py4j's text, the cause inside a line of Spark's
    here = _spark_message(RuntimeError(
        "An error occurred while calling o1.collect.\n: org.apache.spark.SparkException: Job aborted due to stage "
        "failure: Lost task 0.0 in stage 1.0 (TID 1) (localhost executor driver): " + details +
        "\n\tat org.apache.spark.Foo.bar(Foo.scala:1)"))
    assert here.startswith(f"this process's Spark: its JVM ran out of {what} ({details}); restart the kernel"), here


@pytest.mark.parametrize("text", [
    # Spark's own memory error fails a task, not the JVM
    "[UNABLE_TO_ACQUIRE_MEMORY] Unable to acquire 65536 bytes of memory, got 0. "
    "org.apache.spark.memory.SparkOutOfMemoryError: [UNABLE_TO_ACQUIRE_MEMORY]",
    # the user's own values and SQL, quoted by Spark
    "[CAST_INVALID_INPUT] The value 'java.lang.OutOfMemoryError: Java heap space' of the type \"STRING\" cannot be cast",
    "[DIVIDE_BY_ZERO] Division by zero. SQLSTATE: 22012\n== SQL (line 1, position 8) ==\nSELECT 'x' AS k, "
    "Metaspace / 0 FROM OutOfMemoryError",
])
def test_an_error_that_only_mentions_the_jvm_is_not_its_trouble(text):
    from streamsql.engine.runtime.spark.driver import _connect_message, _spark_message
    assert "ran out of" not in _spark_message(RuntimeError(text))
    assert "ran out of" not in _connect_message(RuntimeError(text), "sc://127.0.0.1:1", shared=True)
    # a gRPC error that is not the JVM's: the engine went away, as before
    assert "went away" in _connect_message(_aborted_call("Socket closed", "UNAVAILABLE"), "sc://127.0.0.1:1")


def test_caught_up_through_connect_reads_the_offset_log_not_the_server(tmp_path, engine):
    """Views ask whether a query caught up every few tens of milliseconds during a click: through
    Connect that must not be a round trip each time. Once a batch is delivered the answer comes
    from Spark's offset log in the workspace (the server's checkpoint), and it is right."""
    import streamsql
    with streamsql.Workbench(tmp_path / "ws", remote=engine.url) as wb:
        wb.execute("CREATE STREAM S (x INTEGER); CREATE STREAM T (x INTEGER)")
        q = wb.query("SELECT STREAM ROWTIME, x FROM S WHERE x > 0", name="f")
        wb.insert("S", {"x": 1}, rowtime="2006-10-10 10:00:00")
        q.wait(120)
        assert wb.runtime.through.get("f") == wb.last_step and wb.runtime.caught_up(q)
        wb.insert("T", {"x": 1}, rowtime="2006-10-10 10:01:00")       # another stream: nothing to do
        assert wb.runtime.caught_up(q)
        wb.insert("S", {"x": 2}, rowtime="2006-10-10 10:02:00")
        q.wait(120)
        assert wb.runtime.through["f"] == wb.last_step and wb.runtime.caught_up(q)
        assert [r.values for r in q.rows] == [(1,), (2,)]
