"""A workspace written before the step had one name (catalog version 1, where the files call it
``seq``) opens and replays exactly as the same workspace in this version's format, and goes on
from there. The version-1 workspace is made by hand from a fresh one: every name this version
writes as ``step`` is written back as ``seq`` (the catalog's ``next_seq`` and ``start_seq``, the
log's column and HEAD, the journal's entries and Arrow column; on Spark the checkpoint's offsets,
the sink's ``processed_seq``, its held rows' column and its state format 1)."""
from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from streamsql import Workbench
from streamsql.engine.log import entry_schema
from streamsql.engine.runtime.spark.sink import read_arrow, write_arrow
from streamsql.engine.workspace import CATALOG_VERSION

DDL = """
CREATE STREAM Raw (ticker VARCHAR(10), amount INTEGER);
CREATE STREAM Big (ticker VARCHAR(10), amount INTEGER);
CREATE STREAM T (ticker VARCHAR(10), price INTEGER);
CREATE PUMP p1 AS INSERT INTO Big SELECT STREAM ROWTIME, ticker, amount FROM Raw WHERE amount > 4;
"""
QUERIES = {
    # T's slow producer holds its clock back: the merge (the Spark sink) holds Raw's rows
    "uni": "SELECT STREAM ROWTIME, ticker, amount FROM Raw UNION ALL SELECT STREAM ROWTIME, ticker, price FROM T",
    "agg": "SELECT STREAM ticker, SUM(amount) AS total, COUNT(*) AS n FROM Raw "
           "GROUP BY FLOOR(Raw.ROWTIME TO HOUR), ticker",
    "calc": "SELECT STREAM ROWTIME, ticker, 100 / amount AS inv FROM Raw",      # errors at amount 0
    "big": "SELECT STREAM ROWTIME, ticker, amount FROM Big",
}


def ts(h: int, m: int) -> str:
    return f"2006-10-10 {h:02d}:{m:02d}:00"


def build(ws: Path, engine: str) -> None:
    """A workspace with a bit of everything that is persisted: journal segments (JSON lines and
    a load's Arrow file) and tail, pumps, queries started at step 0 and later, late rows,
    calculator errors, a pending row of a slow producer."""
    wb = Workbench(ws, engine=engine)
    wb.execute(DDL)
    for name, sql in QUERIES.items():
        wb.query(sql, name=name)
    for i in range(36):                               # more than the journal's tail holds
        wb.insert("Raw", {"ticker": "AB"[i % 2], "amount": i % 7}, rowtime=ts(1 + i // 18, (i % 18) * 3))
    wb.punctuate("T", ts(1, 0), producer="P1")
    wb.insert("T", {"ticker": "A", "price": 5}, rowtime=ts(1, 30), producer="P2")   # waits for P1
    wb.load("Raw", pd.DataFrame({"ticker": ["A", "B", "A"], "amount": [3, 1, 2],     # the 2:10 row is late
                                 "ROWTIME": pd.to_datetime([ts(2, 55), ts(2, 10), ts(2, 58)])}))
    wb.query("SELECT STREAM ROWTIME, ticker, amount FROM Raw WHERE amount > 3", name="mid")
    wb.insert("Raw", {"ticker": "A", "amount": 9}, rowtime=ts(2, 59))
    for q in wb.queries.values():
        q.wait()
    wb.close()


def more(wb: Workbench) -> None:
    wb.detach("T", "P1")
    for i in range(6):
        wb.insert("Raw", {"ticker": "AB"[i % 2], "amount": i}, rowtime=ts(3, i * 5))
        wb.insert("T", {"ticker": "AB"[i % 2], "price": i}, rowtime=ts(3, i * 5 + 1), producer="P2")
    wb.punctuate("Raw", ts(5, 0))
    wb.punctuate("T", ts(5, 0), producer="P2")


def snapshot(wb: Workbench) -> dict:
    """What a workspace holds and its queries released, in this version's names. The queries are
    waited for first: on Spark a calculator error reaches ``ERRORS`` after its event's commit
    (an error-only commit, when its batch is delivered), so a log read before the wait may miss it."""
    for q in wb.queries.values():
        q.wait()
    out = {"last": wb.last_step, "clocks": wb.clocks(), "streams": wb.streams(),
           "producers": {n: wb.catalog.producer_clocks(n) for n in wb.catalog.streams},
           "journal": [vars(e) for e in wb.journal.events()], "log": {}, "queries": {}}
    for n, d in wb.catalog.streams.items():
        out["log"][n] = wb.log.read(d.uid, entry_schema(d.fields), 0, wb.last_step).to_pylist()
    for n, q in sorted(wb.queries.items()):
        out["queries"][n] = (q.start_step, q.running, q.error, [(r.step, r.rowtime, r.values) for r in q.rows],
                             q.bounds, [(e.step, e.name, e.message) for e in q.errors])
    return out


# --------------------------------------------------------------------------- version 1, by hand

def _seq_table(t: pa.Table) -> pa.Table:
    return t.rename_columns(["seq" if n == "step" else n for n in t.schema.names])


def to_v1(ws: Path) -> set[str]:
    """Rewrite the workspace at ``ws`` as version 1 wrote it; returns the kinds of file rewritten."""
    done: set[str] = set()
    p = ws / "catalog.json"
    j = json.loads(p.read_text())
    assert j["version"] == 2
    j["version"] = 1
    c = j["catalog"]
    c["next_seq"] = c.pop("next_step")
    for pump in c["pumps"]:
        pump["start_seq"] = pump.pop("start_step")
    for d in j["queries"].values():
        d["start_seq"] = d.pop("start_step")
    for e in j["journal"]["tail"]:
        e["seq"] = e.pop("step")
    p.write_text(json.dumps(j))
    done.add("catalog")
    head = ws / "log" / "HEAD"
    head.write_text(json.dumps({"seq": json.loads(head.read_text())["step"]}))
    for f in (ws / "log").glob("*/*.arrow"):
        write_arrow(f, _seq_table(read_arrow(f)), False)
        done.add("log segment")
    for f in (ws / "journal").glob("*.jsonl"):
        lines = [json.loads(x) for x in f.read_text().splitlines()]
        f.write_text("".join(json.dumps({("seq" if k == "step" else k): v for k, v in e.items()}) + "\n"
                             for e in lines))
        done.add("journal lines")
    for f in (ws / "journal").glob("*.arrow"):
        t = read_arrow(f)
        write_arrow(f, _seq_table(t).replace_schema_metadata(t.schema.metadata), False)
        done.add("journal load")
    for f in ws.glob("queries/*/checkpoint/offsets/*"):
        if not f.name.isdigit():
            continue
        lines = f.read_text().split("\n")
        f.write_text("\n".join(re.sub(r'^\{"step": (\d+)\}$', r'{"seq": \1}', x) for x in lines))
        (f.parent / f".{f.name}.crc").unlink(missing_ok=True)     # its checksum is the old content's
        done.add("offsets")
    for sink in ws.glob("queries/*/sink"):
        s = json.loads((sink / "state.json").read_text())
        s["processed_seq"] = s.pop("processed_step")
        (sink / "state.json").write_text(json.dumps(s))
        state = sink / s["state"]
        state.write_bytes(state.read_bytes().replace(b'"streamsql-state/2"', b'"streamsql-state/1"', 1))
        done.add("sink state")
        if s["held"]:
            write_arrow(sink / s["held"], _seq_table(read_arrow(sink / s["held"])), False)
            done.add("held rows")
    return done


@pytest.mark.parametrize("engine", ["local", "spark"])
def test_a_version_1_workspace_opens_and_replays_exactly(tmp_path, engine, request):
    if engine == "spark":
        request.getfixturevalue("spark")
    old, new = tmp_path / "old", tmp_path / "new"
    build(new, engine)
    shutil.copytree(new, old)
    kinds = to_v1(old)
    assert kinds >= {"catalog", "log segment", "journal lines", "journal load"}
    if engine == "spark":
        assert kinds >= {"offsets", "sink state", "held rows"}
    assert not re.search(rb'"step"|"next_step"|"start_step"', (old / "catalog.json").read_bytes())

    if engine == "local":      # a reader of the old workspace sees what a reader of the new one does
        ro_old, ro_new = (Workbench(w, engine="local", read_only=True) for w in (old, new))
        try:
            assert snapshot(ro_old) == snapshot(ro_new)
        finally:
            ro_old.close()
            ro_new.close()

    seen = {}
    for name, ws in (("new", new), ("old", old)):
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)      # nothing reads the old names
            wb = Workbench(ws, engine=engine)
            try:
                assert wb.open_warnings == []
                reopened = snapshot(wb)
                more(wb)
                seen[name] = (reopened, snapshot(wb))
            finally:
                wb.close()
    assert seen["old"][0] == seen["new"][0]
    assert seen["old"][1] == seen["new"][1]
    reopened, went_on = seen["old"]
    assert went_on["last"] == reopened["last"] + 15 and len(went_on["journal"]) == went_on["last"]
    assert all(q[1] and q[2] is None for q in went_on["queries"].values())
    assert went_on["queries"]["uni"][3] and went_on["queries"]["agg"][3] and went_on["queries"]["calc"][5]

    # written again, it is a workspace of this version
    assert json.loads((old / "catalog.json").read_text())["version"] == CATALOG_VERSION
    assert json.loads((old / "log" / "HEAD").read_text()) == {"step": went_on["last"]}


def test_a_version_1_catalog_that_is_damaged_is_still_a_clear_error(tmp_path):
    ws = tmp_path / "ws"
    wb = Workbench(ws, engine="local")
    wb.execute("CREATE STREAM S (v INTEGER)")
    wb.close()
    j = json.loads((ws / "catalog.json").read_text())
    j["version"] = 1
    j["catalog"]["next_seq"] = "3"               # a text where a step belongs
    del j["catalog"]["next_step"]
    (ws / "catalog.json").write_text(json.dumps(j))
    from streamsql import WorkspaceError
    with pytest.raises(WorkspaceError, match="is not a streamsql catalog.*next_step"):
        Workbench(ws, engine="local")
