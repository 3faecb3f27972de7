"""Workspace files are data, never code, and a torn or damaged file is named, never trusted
(docs/reliability.md): a corrupt or foreign catalog.json is a clear error naming it (and
nothing is executed or changed); a torn log tail (a half-written segment, a segment past the
commit, a truncated or non-Arrow segment, a missing or damaged HEAD) is detected on open and
ignored with a warning naming the file; the committed events are all there and the workspace
goes on. No workspace file is a pickle."""
from __future__ import annotations

import json
import logging
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow as pa
import pytest

from streamsql.engine.errors import WorkspaceError
from streamsql.engine.log import entry_schema, segment_problem
from streamsql.engine.workbench import Workbench
from test_names import snapshot

ROOT = Path(__file__).resolve().parent.parent
T0 = "2020-01-01 10:00:00"


class _Evil:
    """Unpickling this would create the file ``path``: proof that nothing unpickles."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def make_ws(path: Path, n: int = 3) -> Path:
    """A closed workspace with stream S (n rows, one append each) and a query ``q`` over it."""
    with Workbench(path, engine="local") as wb:
        wb.execute("CREATE STREAM S (a INTEGER, b VARCHAR(5))")
        wb.query("SELECT STREAM ROWTIME, a, b FROM S", name="q")
        for i in range(n):
            wb.insert("S", {"a": i, "b": f"r{i}"}, rowtime=f"2020-01-01 10:0{i}:00")
    return path


def segments(ws: Path) -> list[Path]:
    return sorted(p for p in (ws / "log").glob("*_S/*.arrow"))


def rows_of(wb) -> list:
    return [r.values for r in wb.queries["q"].rows]


# --------------------------------------------------------------------------- catalog.json

def _corruptions(ws: Path, marker: Path) -> dict[str, bytes]:
    good = (ws / "catalog.json").read_bytes()
    j = json.loads(good)
    newer = dict(j, version=99)
    bad_uid = json.loads(good)
    bad_uid["catalog"]["streams"][1]["uid"] = "../../etc"
    bad_type = json.loads(good)
    bad_type["catalog"]["streams"][1]["fields"][0]["type"]["name"] = "EVIL"
    bad_step = json.loads(good)
    bad_step["catalog"]["next_step"] = "3"
    return {
        "garbage": os.urandom(200),
        "empty": b"",
        "truncated": good[: len(good) // 2],
        "a list": b"[1, 2, 3]",
        "another program's JSON": json.dumps({"name": "my-app", "version": "1.0"}).encode(),
        "a pickle": pickle.dumps(_Evil(marker)),
        "a newer version": json.dumps(newer).encode(),
        "a uid that is a path": json.dumps(bad_uid).encode(),
        "an unknown type": json.dumps(bad_type).encode(),
        "a text next_step": json.dumps(bad_step).encode(),
        "deeply nested": b"[" * 100_000 + b"]" * 100_000,
        "not UTF-8": b'{"version": 1, "catalog": "\xff\xfe"}',
    }


def test_corrupt_or_foreign_catalog_is_a_clear_error_naming_the_file(tmp_path):
    ws = make_ws(tmp_path / "ws")
    good = (ws / "catalog.json").read_bytes()
    marker = tmp_path / "pwned"
    for what, data in _corruptions(ws, marker).items():
        (ws / "catalog.json").write_bytes(data)
        before = snapshot(ws)
        with pytest.raises(WorkspaceError) as e:
            Workbench(ws, engine="local")
        msg = str(e.value)
        assert str(ws / "catalog.json") in msg and "\n" not in msg and len(msg) < 400, (what, msg)
        assert ("newer streamsql" in msg) if what == "a newer version" else ("not a streamsql catalog" in msg), msg
        assert not marker.exists(), what
        assert snapshot(ws) == before, what          # nothing repaired, moved or deleted
    (ws / "catalog.json").write_bytes(good)
    with Workbench(ws, engine="local") as wb:      # the real file still opens, everything there
        assert rows_of(wb) == [(0, "r0"), (1, "r1"), (2, "r2")]


def test_a_log_without_its_catalog_is_refused_not_wiped(tmp_path):
    ws = make_ws(tmp_path / "ws")
    (ws / "catalog.json").unlink()
    before = snapshot(ws)
    with pytest.raises(WorkspaceError, match="has an event log but no catalog.json"):
        Workbench(ws, engine="local")
    assert snapshot(ws) == before


def test_a_file_where_the_workspace_should_be(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(WorkspaceError, match="cannot use .*file as a workspace"):
        Workbench(f, engine="local")


def test_corrupt_sink_mark_names_the_file(tmp_path):
    out = tmp_path / "out"
    with Workbench(tmp_path / "ws", engine="local") as wb:
        wb.execute("CREATE STREAM S (a INTEGER)")
        q = wb.query("SELECT STREAM ROWTIME, a FROM S", name="q")
        q.write_to(out, "csv")
        wb.insert("S", {"a": 1}, rowtime=T0)
    (out / "_streamsql_sink.json").write_bytes(b"\x80\x04garbage")
    with Workbench(tmp_path / "ws", engine="local") as wb:
        assert wb.queries["q"].error and "_streamsql_sink.json" in wb.queries["q"].error
        assert any("_streamsql_sink.json" in w for w in wb.open_warnings)
        wb.insert("S", {"a": 2}, rowtime="2020-01-01 10:01:00")   # the workspace goes on


# --------------------------------------------------------------------------- the log's tail

def _arrow_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def _segment_for(wb_fields, step: int, a: int) -> bytes:
    schema = entry_schema(wb_fields)
    t = pa.Table.from_pydict({"step": [step], "kind": [0], "rowtime": [1577880000000 + step * 60000],
                              "clock": [1577880000000 + step * 60000], "c0": [a], "c1": ["torn"]}, schema=schema)
    return _arrow_bytes(t)


def _reopen_and_check(ws: Path, caplog, expect_rows, name_in_warning: str, moved: bool = True):
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="streamsql"):
        wb = Workbench(ws, engine="local")
    try:
        assert any(name_in_warning in w for w in wb.open_warnings), wb.open_warnings
        assert any(name_in_warning in r.getMessage() for r in caplog.records)
        assert rows_of(wb) == expect_rows
        assert json.loads((ws / "log" / "HEAD").read_text())["step"] == wb.last_step
        if moved:
            assert list((ws / "torn").rglob(Path(name_in_warning).name)), "the torn file is kept aside"
        # the session goes on: a new append gets the next step and the query sees it
        step = wb.last_step
        wb.insert("S", {"a": 9, "b": "new"}, rowtime="2020-01-01 11:00:00")
        assert wb.last_step == step + 1 and rows_of(wb)[-1] == (9, "new")
    finally:
        wb.close()
    with Workbench(ws, engine="local") as wb:      # and the next open finds nothing wrong
        assert wb.open_warnings == []
        assert rows_of(wb) == expect_rows + [(9, "new")]


ALL = [(0, "r0"), (1, "r1"), (2, "r2")]


def test_half_written_segment_is_ignored_with_a_warning(tmp_path, caplog):
    ws = make_ws(tmp_path / "ws")
    last = segments(ws)[-1]
    tmp = last.parent / "00000000000000000009-00000000000000000009.arrow.tmp"
    tmp.write_bytes(last.read_bytes()[:50])
    _reopen_and_check(ws, caplog, ALL, tmp.name)


def test_segment_past_the_commit_is_ignored_and_its_steps_reused(tmp_path, caplog):
    ws = make_ws(tmp_path / "ws")
    with Workbench(ws, engine="local") as wb:
        fields, last = wb.catalog.streams["S"].fields, wb.last_step
    seg = segments(ws)[-1].parent / f"{last + 1:020d}-{last + 1:020d}.arrow"
    seg.write_bytes(_segment_for(fields, last + 1, 77))   # a whole segment whose commit never happened
    _reopen_and_check(ws, caplog, ALL, seg.name)          # never read: no (77, 'torn') row


def test_truncated_arrow_segment_is_ignored_with_a_warning(tmp_path, caplog):
    ws = make_ws(tmp_path / "ws")
    last = segments(ws)[-1]
    data = last.read_bytes()
    last.write_bytes(data[: len(data) - 20])
    assert "truncated" in segment_problem(last)
    _reopen_and_check(ws, caplog, ALL[:2], last.name)     # its row is lost, and the warning says so


@pytest.mark.parametrize("content", [b"hello, not arrow", b"", b"PAR1" + os.urandom(300) + b"PAR1", None])
def test_a_segment_that_is_not_arrow_is_ignored_and_never_unpickled(tmp_path, caplog, content):
    ws = make_ws(tmp_path / "ws")
    marker = tmp_path / "pwned"
    first = segments(ws)[0]
    first.write_bytes(pickle.dumps(_Evil(marker)) if content is None else content)
    _reopen_and_check(ws, caplog, ALL[1:], first.name)
    assert not marker.exists()


def test_missing_or_damaged_head_is_rewritten_with_a_warning(tmp_path, caplog):
    ws = make_ws(tmp_path / "ws")
    (ws / "log" / "HEAD").unlink()
    _reopen_and_check(ws, caplog, ALL, "HEAD", moved=False)
    for bad in (b"{\"step\": ", b"[]", b"{\"step\": -4}", b"\xff"):
        (ws / "log" / "HEAD").write_bytes(bad)
        caplog.clear()
        with Workbench(ws, engine="local") as wb:
            assert any("HEAD" in w and "rewritten" in w for w in wb.open_warnings), (bad, wb.open_warnings)
            assert json.loads((ws / "log" / "HEAD").read_text())["step"] == wb.last_step


def test_head_ahead_of_the_catalog_is_pulled_back(tmp_path):
    ws = make_ws(tmp_path / "ws")
    (ws / "log" / "HEAD").write_text(json.dumps({"step": 1000}))
    with Workbench(ws, engine="local") as wb:
        assert any("says step 1000" in w for w in wb.open_warnings)
        assert json.loads((ws / "log" / "HEAD").read_text())["step"] == wb.last_step < 1000


def test_a_segment_damaged_while_open_is_a_clear_error_naming_it(tmp_path):
    ws = make_ws(tmp_path / "ws")
    with Workbench(ws, engine="local") as wb:
        seg = segments(ws)[1]
        seg.write_bytes(b"garbage" * 10)
        d = wb.catalog.streams["S"]
        with pytest.raises(WorkspaceError, match=f"log segment {seg} cannot be read"):
            wb.log._segments.clear()
            wb.log.read(d.uid, entry_schema(d.fields), 0, wb.last_step)


def test_a_valid_arrow_segment_with_other_columns_fails_the_query_not_the_workspace(tmp_path):
    ws = make_ws(tmp_path / "ws")
    seg = segments(ws)[0]
    seg.write_bytes(_arrow_bytes(pa.table({"x": ["not", "ours"]})))
    with Workbench(ws, engine="local") as wb:
        q = wb.queries["q"]
        assert not q.running and str(seg) in q.error and "does not hold this stream's entries" in q.error
        wb.insert("S", {"a": 5, "b": "ok"}, rowtime="2020-01-01 11:00:00")   # appends still work
        assert wb.last_step == 4


# --------------------------------------------------------------------------- no pickle anywhere we own

def test_nothing_but_the_in_flight_wire_uses_pickle():
    """pickle/marshal/shelve appear in one module only: values in flight between the Spark stages of
    one micro-batch (never written to the workspace); everything persisted is JSON or Arrow."""
    allowed = {"streamsql/engine/runtime/spark/wire.py"}
    found = set()
    for p in (ROOT / "streamsql").rglob("*.py"):
        text = p.read_text()
        if any(f"import {m}" in text or f"from {m}" in text for m in ("pickle", "marshal", "shelve", "cloudpickle")):
            found.add(str(p.relative_to(ROOT)))
    assert found <= allowed, found - allowed


def test_replay_with_a_corrupt_workspace_is_one_line_and_status_1(tmp_path):
    ws = make_ws(tmp_path / "ws")
    (ws / "catalog.json").write_bytes(b"\x00\x01")
    sql = tmp_path / "q.sql"
    sql.write_text("CREATE STREAM T (a INTEGER); SELECT STREAM ROWTIME, a FROM T")
    ev = tmp_path / "e.jsonl"
    ev.write_text("")
    r = subprocess.run([sys.executable, "-m", "streamsql.engine.cli", "replay", str(sql), str(ev), "--engine", "local",
                        "--workspace", str(ws)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "catalog.json is not a streamsql catalog" in r.stderr


_ABANDON = """
import sys, streamsql
wb = streamsql.Workbench(engine=sys.argv[1])
wb.execute("CREATE STREAM T (a INTEGER)")
q = wb.query("SELECT STREAM ROWTIME, a FROM T")
wb.insert("T", {"a": 1}, rowtime="2020-01-01 10:00:00")
assert q.wait(120).rows, "the query ran"
kept = streamsql.Workbench(sys.argv[2])      # a named workspace: the user's, never removed
kept.execute("CREATE STREAM K (a INTEGER)")
print(wb.path, flush=True)
"""


@pytest.mark.parametrize("kind", ["local", "spark"])
def test_a_temporary_workspace_nobody_closed_is_removed_at_exit(tmp_path, kind, request):
    """A script or a kernel that ends without ``close()`` leaves no workspace behind in /tmp
    (the Spark session's own exit hook runs first: the removal must not disturb it); a named one
    stays. Spark: on the test session's shared engine, as a notebook's kernel runs."""
    from engine_support import env_for
    env = env_for(request.getfixturevalue("engine")) if kind == "spark" else dict(os.environ)
    r = subprocess.run([sys.executable, "-c", _ABANDON, kind, str(tmp_path / "kept")], capture_output=True,
                       text=True, timeout=300, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    path = Path(r.stdout.strip().splitlines()[-1])
    assert path.name.split("-")[0].isdigit()        # named for its process (tempdirs.py)
    assert path.parent == Path(tempfile.gettempdir()) / f"streamsql-ws-{os.getuid()}"
    assert not path.exists(), f"{path} was left behind"
    assert (tmp_path / "kept" / "catalog.json").is_file()
    assert "Traceback" not in r.stderr, r.stderr[-3000:]


_KILLED = """
import os, sys, time, streamsql
wb = streamsql.Workbench(engine="local")
wb.execute("CREATE STREAM T (a INTEGER)")
print(wb.path, flush=True)
time.sleep(600)
"""


def test_a_killed_processs_temporary_workspace_goes_with_the_next_one_opened():
    """SIGKILL runs no exit hook, so a killed kernel's temporary workspace stays; the next
    temporary workspace opened (by any process of the user) removes it, and keeps those of live
    processes and anything else in the folder."""
    import signal
    from streamsql.engine import tempdirs
    root = tempdirs.root("ws")
    p = subprocess.Popen([sys.executable, "-c", _KILLED], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        left = Path(p.stdout.readline().strip())
        assert left.parent == root and (left / "catalog.json").is_file()
        live = Workbench(engine="local")        # the child is alive: its workspace is kept
        assert left.is_dir()
        live.close()
        assert not live.path.exists()
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    assert left.is_dir()                       # no hook ran
    other = root / "notes"
    other.mkdir(exist_ok=True)
    try:
        wb = Workbench(engine="local")
        try:
            assert not left.exists(), f"{left} of a killed process was kept"
            assert other.is_dir() and wb.path.is_dir()
        finally:
            wb.close()
    finally:
        other.rmdir()


def test_files_and_folders_named_for_a_gone_process_are_pruned_others_kept(tmp_path):
    """One rule for every per-process leftover (temporary workspaces, the fork server's launchers
    and sockets): a name that starts with the pid of a process that is gone goes; a live one's,
    and names of no process, stay."""
    from streamsql.engine import tempdirs
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()                                    # reaped: its pid is gone
    dead, live = p.pid, os.getpid()
    gone = [tmp_path / f"{dead}-1700000000000-python", tmp_path / f"{dead}-1700000000000.sock",
            tmp_path / f"{dead}-abcd"]
    kept = [tmp_path / f"{live}-1700000000000-python", tmp_path / "engine.sock", tmp_path / "notes"]
    for f in gone[:2] + kept[:2]:
        f.write_text("x")
    gone[2].mkdir()
    (gone[2] / "catalog.json").write_text("{}")
    kept[2].mkdir()
    assert sorted(tempdirs.prune_orphans(tmp_path)) == sorted(gone)
    assert all(not f.exists() for f in gone) and all(f.exists() for f in kept)
