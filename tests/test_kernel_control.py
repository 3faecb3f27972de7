"""Control of running queries in a real kernel (jupyter_client talking to ipykernel, Spark in
the kernel): rerunning a cell (the cell id JupyterLab sends with each request) replaces the
query that cell started, a named query is replaced by name, and the kernel's interrupt during a
blocking ``wait()`` stops the waiting only: the query, Spark and the workbench stay usable."""
from __future__ import annotations

import queue
import time

import pytest
from jupyter_client.manager import start_new_kernel


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    km, kc = start_new_kernel(kernel_name="python3", cwd=str(tmp_path_factory.mktemp("kernel")))
    try:
        yield km, kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def run(kc, code: str, cell_id: str | None = None, timeout: float = 300, during=None):
    """Execute ``code`` as JupyterLab does (with ``cellId`` in the request's metadata); returns
    the reply content and ``(stdout, stderr, [display text/plain])``. ``during(elapsed)`` is
    called while waiting (an interrupt can be sent from there)."""
    content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
               "allow_stdin": False, "stop_on_error": True}
    msg = kc.session.msg("execute_request", content, metadata={"cellId": cell_id} if cell_id else {})
    kc.shell_channel.send(msg)
    msg_id = msg["header"]["msg_id"]
    out, err, shown = [], [], []
    start = time.monotonic()
    while True:
        if time.monotonic() - start > timeout:
            raise TimeoutError(code)
        if during is not None:
            during(time.monotonic() - start)
        try:
            m = kc.get_iopub_msg(timeout=0.5)
        except queue.Empty:
            continue
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        t, c = m["msg_type"], m["content"]
        if t == "stream":
            (out if c["name"] == "stdout" else err).append(c["text"])
        elif t in ("display_data", "execute_result"):
            shown.append(c["data"].get("text/plain", ""))
        elif t == "update_display_data":
            shown.append(("update", c["data"].get("text/html", "")))
        elif t == "error":
            err.append(f"{c['ename']}: {c['evalue']}")
        elif t == "status" and c["execution_state"] == "idle":
            break
    reply = kc.get_shell_msg(timeout=60)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=60)
    return reply["content"], ("".join(out), "".join(err), shown)


def snapshot_updates(kc, seconds: float) -> list[str]:
    """The snapshot redraws (``update_display_data``) the kernel sends within ``seconds``, from
    any request: they come from its snapshot keeper's thread, after the cell that caused them."""
    found, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            m = kc.get_iopub_msg(timeout=0.2)
        except queue.Empty:
            continue
        if m["msg_type"] == "update_display_data":
            found.append(m["content"]["data"].get("text/html", ""))
    return found


def value(kc, expr: str):
    reply, (out, err, _shown) = run(kc, f"print(repr(({expr})))")
    assert reply["status"] == "ok", err
    return out.strip()


def test_rerunning_a_cell_replaces_its_query(kernel):
    _km, kc = kernel
    run(kc, "%load_ext streamsql")
    reply, (out, err, _s) = run(kc, "%%streamsql\nCREATE STREAM P (name VARCHAR(10))")
    assert reply["status"] == "ok" and out == "Stream P created\n"
    cell = "%%streamsql -o p\nSELECT STREAM ROWTIME, name FROM P"
    reply, (out, err, shown) = run(kc, cell, cell_id="cell-a")
    assert reply["status"] == "ok", err
    assert out.splitlines()[-2:] == ["Query q1 started", "Spark is ready."]
    reply, (out, err, shown) = run(kc, cell, cell_id="cell-a")            # the same cell again
    assert (reply["status"], out, err) == ("ok", "Query q1 replaced: the one running before was stopped\n", "")
    assert [x for x in shown if isinstance(x, str) and x][-1].startswith("Query q1 (running)")
    reply, (out, err, _s) = run(kc, cell, cell_id="cell-b")               # another cell, same text
    assert out == "Query q2 started\n"
    running = "[n for n, x in streamsql.magics.current_workbench().queries.items() if x.running]"
    run(kc, "import streamsql")
    assert value(kc, running) == "['q1', 'q2']"
    # the edited cell: still one query for it; a failing version leaves it (and p) running
    reply, (out, err, _s) = run(kc, "%%streamsql -o p\nSELECT STREAM ROWTIME, nme FROM P", cell_id="cell-b")
    assert reply["status"] == "ok" and err.startswith("SQL error: line 1:24: Column 'NME' not found")
    assert value(kc, "p.name, p.running") == "('q2', True)"
    reply, (out, err, _s) = run(kc, "%%streamsql -o p\nSELECT STREAM name FROM P WHERE name <> 'x'",
                                cell_id="cell-b")
    assert out == "Query q2 replaced: the one running before was stopped\n"
    assert value(kc, running) == "['q1', 'q2']"
    # the static snapshot beside the live view follows the state after each cell (a frontend
    # that sends cell ids renders widgets: JupyterLab), so the saved notebook shows the last state
    reply, (out, err, shown) = run(kc, "%streamsql INSERT INTO P (ROWTIME, name) VALUES "
                                       "(TIMESTAMP '2006-10-10 01:00:00', 'p1')", cell_id="cell-c")
    # (off the cell's path: the kernel's snapshot keeper redraws once the query has caught up)
    updates = [html for kind, html in (x for x in shown if isinstance(x, tuple))] + snapshot_updates(kc, 15)
    assert any("p1" in h and 'class="streamsql-static"' in h and "Query q1 (running): 1 row released" in h
               for h in updates), updates
    snapshot_updates(kc, 3)                                                   # whatever was still due
    reply, (out, err, shown) = run(kc, "print('nothing changed')", cell_id="cell-d")
    later = [x for x in shown if isinstance(x, tuple)] + snapshot_updates(kc, 3)
    assert later == []                                                        # redrawn only when it changed
    reply, (out, err, _s) = run(kc, "%streamsql stop --all")
    assert sorted(out.splitlines()) == ["Query q1 stopped (1 row released)", "Query q2 stopped (1 row released)"]


SLOW = """
import numpy as np, pyarrow as pa, streamsql
slow_wb = streamsql.Workbench(None, batch_events=1, trace=False)     # one micro-batch per event: slow
slow_wb.execute("CREATE STREAM S (x INTEGER)")
slow = slow_wb.query("SELECT STREAM ROWTIME, x FROM S", name="slow")
slow.wait()
t0 = 1160474400000
slow_wb.load("S", {"ROWTIME": pa.array(np.arange(t0, t0 + 3000, 1000, dtype=np.int64)),
                   "x": pa.array(np.arange(3, dtype=np.int32))})
slow_wb.load("S", {"ROWTIME": pa.array(np.arange(t0 + 3000, t0 + 3_000_000, 1000, dtype=np.int64)),
                   "x": pa.array(np.arange(2997, dtype=np.int32))})
"""


def test_interrupt_stops_a_blocking_wait_and_the_workbench_stays_usable(kernel):
    km, kc = kernel
    reply, (out, err, _s) = run(kc, SLOW)
    assert reply["status"] == "ok", err
    sent = []

    def interrupt(elapsed):
        if elapsed > 4 and not sent:
            km.interrupt_kernel()
            sent.append(elapsed)
    reply, (out, err, _s) = run(kc, "slow.wait()", during=interrupt, timeout=120)
    assert sent, "the wait ended before the interrupt: make the query slower"
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt"
    assert reply["evalue"].startswith("stopped waiting for query slow; it keeps running (step ")
    # the query was not cancelled: it is still running, without error, and still catching up
    state = value(kc, "slow.running, slow.error, slow.processed_step < slow_wb.last_step")
    assert state == "(True, None, True)"
    before = int(value(kc, "slow.processed_step"))
    time.sleep(2)
    assert int(value(kc, "slow.processed_step")) > before
    # the workbench and Spark stay usable: stop it, start another query, insert, wait
    reply, (out, err, _s) = run(kc, "slow.stop()\n"
                                    "again = slow_wb.query('SELECT STREAM ROWTIME, x FROM S WHERE x > 5', name='again')\n"
                                    "slow_wb.insert('S', {'x': 7})\n"
                                    "print([r.values for r in again.wait(120).rows])")
    assert reply["status"] == "ok", err
    assert out == "[(7,)]\n"
    assert value(kc, "slow.running") == "False"
    run(kc, "slow_wb.close()")
