"""Live views under load never hang the kernel (docs/design.md, "Threads and locks"): three
workbench views on Spark, a cell of INSERT statements run fifty times while another thread clicks
an injector, and every event lands in its stream's log exactly once, in order. The lesson that
hung for good did exactly this (an INSERT marked a view under the workbench's lock while the
redraw thread waited for that lock under the view's)."""
from __future__ import annotations

import threading
import time

import pyarrow.compute as pc
import pytest

from streamsql.engine import time as T

DDL = """
CREATE STREAM A (v INTEGER); CREATE STREAM B (v INTEGER);
CREATE STREAM O (id INTEGER, t VARCHAR(5)); CREATE STREAM TR (id INTEGER, p INTEGER);
CREATE STREAM H (k VARCHAR(5), n INTEGER);
"""
ROUNDS = 50
BASE = T.parse_timestamp("2006-10-10 10:00:00")


def _at(ms: int) -> str:
    return T.format_timestamp(BASE + ms)


def _cell(r: int) -> str:
    """Round ``r``'s cell: one INSERT into each stream the cell feeds, a minute apart per round."""
    m = r * 60_000
    return (f"INSERT INTO A (ROWTIME, v) VALUES ('{_at(m)}', {r});\n"
            f"INSERT INTO TR (ROWTIME, id, p) VALUES ('{_at(m + 1000)}', {r}, {r * 10});\n"
            f"INSERT INTO O (ROWTIME, id, t) VALUES ('{_at(m + 2000)}', {r}, 'x');\n"
            f"INSERT INTO H (ROWTIME, k, n) VALUES ('{_at(m + 3000)}', 'k{r % 3}', {r});")


def _logged(wb, stream: str, column: str) -> list:
    """The values of ``column`` in the rows of ``stream``'s log, in step order."""
    from streamsql.engine.log import ROW, entry_schema
    d = wb.catalog.streams[stream]
    t = wb.log.read(d.uid, entry_schema(d.fields), 0, wb.last_step)
    i = [f.name for f in d.fields].index(column.upper())
    return t.filter(pc.equal(t.column("kind"), ROW)).column(f"c{i}").to_pylist()


@pytest.mark.timeout(600)
def test_fifty_insert_cells_and_clicks_beside_three_live_views_never_hang(wb_spark):
    from streamsql.widgets.compose import workbench
    from streamsql.widgets.hooks import REDRAWER
    wb = wb_spark
    wb.execute(DDL)
    queries = [
        wb.query("SELECT STREAM ROWTIME, v FROM A UNION ALL SELECT STREAM ROWTIME, v FROM B", "u"),
        wb.query("SELECT STREAM ROWTIME, o.id, t.p FROM O AS o "
                 "JOIN TR OVER (RANGE INTERVAL '1' MINUTE PRECEDING) AS t ON o.id = t.id", "j"),
        wb.query("SELECT STREAM FLOOR(ROWTIME TO HOUR) AS h, k, COUNT(*) AS c FROM H "
                 "GROUP BY FLOOR(ROWTIME TO HOUR), k", "g"),
    ]
    views = [workbench(q) for q in queries]
    for v in views:
        v._repr_mimebundle_()
        v.tabs.selected_index = 0                 # the timeline: the view that waits for quiet
    injector = views[0].injectors["B"]
    answers: list[dict] = []
    injector.send = answers.append                # the browser's side of the comm
    stop = threading.Event()
    clicks: list[int] = []

    def clicker():
        k = 0
        while not stop.is_set():
            at = _at(k * 1000 + 500)             # B's own times, half a second past A's rounds
            injector._on_click(injector, {"op": "insert", "id": k, "rowtime": at, "values": {"V": str(k)},
                                          "nulls": [], "producer": ""}, [])
            clicks.append(k)
            k += 1
            time.sleep(0.05)
    t = threading.Thread(target=clicker, name="clicks", daemon=True)
    t.start()
    slowest = 0.0
    try:
        for r in range(ROUNDS):
            t0 = time.monotonic()
            wb.execute(_cell(r))
            slowest = max(slowest, time.monotonic() - t0)
            assert slowest <= 5.0, f"round {r} took {slowest:.1f} s"
    finally:
        stop.set()
        t.join(30)
    assert not t.is_alive(), "the clicking thread hung"
    for q in queries:
        q.wait(120)
    assert REDRAWER.idle(60), "the views never finished redrawing"
    assert [a["ok"] for a in answers] == [True] * len(clicks)
    assert [a["ack"] for a in answers] == clicks
    assert _logged(wb, "A", "v") == list(range(ROUNDS))
    assert _logged(wb, "O", "id") == list(range(ROUNDS))
    assert _logged(wb, "TR", "p") == [r * 10 for r in range(ROUNDS)]
    assert _logged(wb, "H", "n") == list(range(ROUNDS))
    assert _logged(wb, "B", "v") == clicks
    # each order met the trade a second before it, released once the trades' clock passed it
    # (the next round's trade): all but the last round's
    assert [r.values for r in queries[1].rows] == [(r, r * 10) for r in range(ROUNDS - 1)]
    print(f"slowest round {slowest:.2f} s; {len(clicks)} clicks")
