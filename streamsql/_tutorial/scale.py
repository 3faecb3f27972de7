"""Helpers for tutorial notebook 07 (real data at scale): a million synthetic trades written as
CSV files, replayed into a workbench with progress bars, checked against a batch computation (pandas) and
charted, a few orders zoomed out of them for the workbench, and the exercises' answer checkers.

Outputs are plain text with no wall-clock times or ids, so that a notebook's outputs are the
same on every run (what ``pytest --nbval`` compares). Timings are returned as numbers, for the one
notebook cell that prints them.
"""
from __future__ import annotations

import threading
import time as _time
from dataclasses import dataclass
from pathlib import Path

from ..engine import time as sqltime
from ..engine.catalog import Event
from ..engine.errors import StreamSqlError
from .common import Text, Verdict, _as_int, _blank, _say

__all__ = [
    "SCALE_DDL", "HOURLY_SQL", "MATCHED_SQL", "generate_trades", "events_table", "describe_events", "Progress",
    "replay", "batch_hourly", "batch_matches", "compare_hourly", "compare_matches", "hourly_frame", "hourly_chart",
    "fills_frame", "fills_chart", "zoom", "zoom_events", "check_first_release", "check_fills_query",
]


TICKERS = ["AAPL", "AMZN", "CSCO", "GOOG", "IBM", "INTC", "MSFT", "ORCL", "SAP", "YHOO"]
DAY0 = sqltime.parse_timestamp("2006-10-10 00:00:00")
HOUR = 3_600_000

SCALE_DDL = """\
CREATE STREAM Orders (orderId INTEGER, ticker VARCHAR(10), amount INTEGER);
CREATE STREAM Trades (orderId INTEGER, ticker VARCHAR(10), price DOUBLE, amount INTEGER)"""

HOURLY_SQL = """\
SELECT STREAM ticker, COUNT(*) AS trades, SUM(amount) AS volume,
       SUM(price * amount) / SUM(amount) AS vwap
FROM Trades
GROUP BY FLOOR(Trades.ROWTIME TO HOUR), ticker"""

MATCHED_SQL = """\
SELECT STREAM ROWTIME, o.orderId, o.ticker, o.amount AS orderAmount,
       t.amount AS tradeAmount, t.price
FROM Orders AS o
JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t
ON o.orderId = t.orderId"""


def generate_trades(folder, *, trades: int = 1_000_000, orders: int = 250_000, files: int = 10,
                    seed: int = 2006) -> Text:
    """Write a day of synthetic orders and the trades that fill them as CSV files, the same on
    every run (``numpy``'s generator with a fixed seed): ``folder/orders/orders.csv`` and
    ``folder/trades/trades-000.csv`` ... (``files`` files, in time order). Each trade fills a
    random order 0 to 20 minutes after it was placed, at a price that follows a daily curve
    per ticker plus noise."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pcsv
    rng = np.random.default_rng(seed)
    folder = Path(folder)
    (folder / "trades").mkdir(parents=True, exist_ok=True)
    (folder / "orders").mkdir(parents=True, exist_ok=True)
    tick = np.array(TICKERS)
    o_time = DAY0 + np.sort(rng.integers(0, 24 * HOUR - 20 * 60_000, orders))
    o_tick = rng.integers(0, len(tick), orders)
    o_amount = (rng.integers(1, 100, orders) * 10).astype(np.int32)
    which = rng.integers(0, orders, trades)
    t_time = o_time[which] + rng.integers(0, 20 * 60_000, trades)
    order = np.argsort(t_time, kind="stable")
    t_time, which = t_time[order], which[order]
    hours = (t_time - DAY0) / HOUR
    base = 20.0 + 8.0 * o_tick[which]
    price = np.round(base * (1 + 0.05 * np.sin(hours / 24 * 2 * np.pi + o_tick[which])) +
                     rng.normal(0, 0.2, trades), 2)
    t_amount = (rng.integers(1, 10, trades) * 10).astype(np.int32)

    def ts(ms):
        return pa.array(ms, pa.timestamp("ms"))
    per = -(-trades // files)
    opts = pcsv.WriteOptions(quoting_style="none")
    for k in range(files):
        s = slice(k * per, (k + 1) * per)
        pcsv.write_csv(pa.table({"ts": ts(t_time[s]), "orderId": which[s].astype(np.int32),
                                 "ticker": tick[o_tick[which[s]]], "price": price[s], "amount": t_amount[s]}),
                       folder / "trades" / f"trades-{k:03d}.csv", opts)
    pcsv.write_csv(pa.table({"ts": ts(o_time), "orderId": np.arange(orders, dtype=np.int32), "ticker": tick[o_tick],
                             "amount": o_amount}), folder / "orders" / "orders.csv", opts)
    return Text(f"{trades:,} trades in {files} files trades/trades-000.csv ... trades-{files - 1:03d}.csv, "
                f"{orders:,} orders in orders/orders.csv\n"
                f"orders from {sqltime.format_timestamp(int(o_time[0]))} to {sqltime.format_timestamp(int(o_time[-1]))}, "
                f"trades from {sqltime.format_timestamp(int(t_time[0]))} to {sqltime.format_timestamp(int(t_time[-1]))}")


#: the last folder read: its files' (path, size, mtime) and its tables (the notebook reads the
#: same files for its events and for each batch check)
_last_read: tuple | None = None


def read_csv(folder):
    """The orders and the trades, read from the CSV files with pyarrow (``ts`` as epoch ms)."""
    global _last_read
    folder = Path(folder)
    files = sorted((folder / "trades").glob("trades-*.csv")) + [folder / "orders" / "orders.csv"]
    key = tuple((str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    if _last_read is None or _last_read[0] != key:
        _last_read = (key, _read_csv(folder))
    return _last_read[1]


def _read_csv(folder: Path):
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv
    conv = pcsv.ConvertOptions(column_types={"ts": pa.timestamp("ms"), "orderId": pa.int32(), "amount": pa.int32()})

    def ms(t):
        return t.set_column(0, "ts", pc.cast(t.column("ts"), pa.int64()))
    trades = pa.concat_tables([pcsv.read_csv(p, convert_options=conv)
                               for p in sorted((folder / "trades").glob("trades-*.csv"))])
    orders = pcsv.read_csv(folder / "orders" / "orders.csv", convert_options=conv)
    return ms(orders), ms(trades)


def events_table(folder, *, bound_every: int = 10_000):
    """One table of events for ``Workbench.load(None, ...)``: the orders and the trades merged in
    time order (an order before a trade of the same millisecond), a bound on both streams every
    ``bound_every`` events (at the time of the next event: a producer that has sent everything
    up to then says so), and a final bound on both an hour after the last trade. Columns:
    ``STREAM``, ``ROWTIME``, ``BOUND`` and the streams' columns."""
    import numpy as np
    import pyarrow as pa
    orders, trades = read_csv(folder)
    n_o, n_t = orders.num_rows, trades.num_rows
    rt = np.concatenate([orders.column("ts").to_numpy(), trades.column("ts").to_numpy()])
    src = np.concatenate([np.zeros(n_o, np.int8), np.ones(n_t, np.int8)])
    pos = np.concatenate([np.arange(n_o), np.arange(n_t)])
    order = np.lexsort((src, rt))
    rt, src, pos = rt[order], src[order], pos[order]
    n = len(rt)
    at = np.arange(bound_every, n, bound_every)
    # each bound goes right before event ``at``, Orders' first, then Trades'
    key = np.concatenate([np.arange(n) * 3 + 2, at * 3, at * 3 + 1])
    o2 = np.argsort(key, kind="stable")
    end = int(rt[-1]) + HOUR
    stream = np.concatenate([src, np.zeros(len(at), np.int8), np.ones(len(at), np.int8)])[o2]
    times = np.concatenate([rt, rt[at], rt[at]])[o2]
    bound = np.concatenate([np.zeros(n, bool), np.ones(2 * len(at), bool)])[o2]
    pos = np.concatenate([pos, np.zeros(2 * len(at), np.int64)])[o2]
    stream, times = np.concatenate([stream, [0, 1]]), np.concatenate([times, [end, end]])
    bound, pos = np.concatenate([bound, [True, True]]), np.concatenate([pos, [0, 0]])
    is_o, is_t = (stream == 0) & ~bound, (stream == 1) & ~bound

    def col(name, dtype, null=None):
        o = orders.column(name).to_numpy(zero_copy_only=False) if name in orders.column_names else None
        t = trades.column(name).to_numpy(zero_copy_only=False)
        out = np.empty(len(stream), dtype=dtype)
        out[:] = null if null is not None else 0
        if o is not None:
            out[is_o] = o[pos[is_o]]
        out[is_t] = t[pos[is_t]]
        return out
    tick = col("ticker", object, "")
    return pa.table({"STREAM": np.where(stream == 0, "Orders", "Trades"), "ROWTIME": times, "BOUND": bound,
                     "orderId": col("orderId", np.int32), "ticker": pa.array(np.where(bound, None, tick), pa.string()),
                     "amount": col("amount", np.int32), "price": col("price", np.float64)})


def describe_events(table) -> Text:
    import numpy as np
    s = np.asarray(table.column("STREAM").to_pylist(), dtype=object)
    b = table.column("BOUND").to_numpy(zero_copy_only=False)
    rt = table.column("ROWTIME").to_numpy()
    n_o, n_t = int(((s == "Orders") & ~b).sum()), int(((s == "Trades") & ~b).sum())
    return Text(f"{table.num_rows:,} events: {n_o:,} orders, {n_t:,} trades and {int(b.sum()):,} bounds, "
                f"from {sqltime.format_timestamp(int(rt[0]))} to {sqltime.format_timestamp(int(rt[-1]))}")


class Progress:
    """Progress bars (ipywidgets) for a replay: the events loaded into the workspace, then the
    events each query has processed (its last released step). ``text/plain`` is a fixed line,
    so that a notebook's stored output does not depend on how far the bars were when shown."""

    def __init__(self, total: int, queries: list):
        import ipywidgets as widgets
        self.total = total
        self.queries = queries
        style = {"description_width": "110px"}
        layout = widgets.Layout(width="520px")
        self.load_bar = widgets.IntProgress(value=0, min=0, max=total, description="loaded", style=style,
                                            layout=layout)
        self.bars = {q.name: widgets.IntProgress(value=0, min=0, max=total, description=f"query {q.name}",
                                                 style=style, layout=layout) for q in queries}
        self.label = widgets.Label("")
        self.box = widgets.VBox([self.load_bar, *self.bars.values(), self.label])
        self._stop = threading.Event()
        self._loaded = 0

    def loaded(self, done: int, total: int) -> None:
        """``Workbench.load``'s progress callback: ``done`` of ``total`` rows of the stream being
        written (one stream after the other)."""
        if done == total:
            self._loaded += total
            self.load_bar.value = min(self.total, self._loaded)
        else:
            self.load_bar.value = min(self.total, self._loaded + done)

    def _poll(self) -> None:
        while not self._stop.wait(0.25):
            for q in self.queries:
                self.bars[q.name].value = max(0, min(self.total, q.processed_step - q.start_step))

    def start(self) -> None:
        threading.Thread(target=self._poll, daemon=True).start()

    def finish(self) -> None:
        self._stop.set()
        self.load_bar.value = self.total
        for bar in self.bars.values():
            bar.value = self.total
        self.label.value = "done"

    def _repr_mimebundle_(self, **kwargs):
        data = self.box._repr_mimebundle_(**kwargs)
        data["text/plain"] = (f"Progress of the replay: {self.total:,} events loaded, then processed by "
                              + ", ".join(q.name for q in self.queries))
        data["text/html"] = f"<div>{data['text/plain']}</div>"      # without a kernel (nbconvert, nbviewer)
        return data


@dataclass
class Replay:
    events: int
    load_seconds: float
    seconds: dict       # query name -> seconds from the start of the load until it had processed all

    def throughput(self) -> Text:
        lines = [f"load into the workspace: {self.events:,} events in {self.load_seconds:.1f} s "
                 f"({self.events / self.load_seconds:,.0f} events/s)"]
        for name, s in self.seconds.items():
            lines.append(f"query {name}: all {self.events:,} events processed {s:.1f} s after the load began "
                         f"({self.events / s:,.0f} events/s)")
        return Text("\n".join(lines))


def replay(wb, table, queries: list, progress: Progress | None = None) -> Replay:
    """Load ``table`` into ``wb`` (the queries are running: Spark processes the events as they
    are committed), then wait until every query has processed every event; times both."""
    if progress is not None:
        progress.start()
    t0 = _time.perf_counter()
    wb.load(None, table, chunk=100_000, progress=progress.loaded if progress is not None else None)
    t1 = _time.perf_counter()
    seconds = {}
    for q in queries:
        q.wait()
        seconds[q.name] = _time.perf_counter() - t0
    if progress is not None:
        progress.finish()
    return Replay(table.num_rows, t1 - t0, seconds)


def batch_hourly(folder) -> list[tuple]:
    """The hourly query as an ordinary batch computation (pandas) over the trade files: ``(end of
    the hour, ticker, trades, volume, vwap)`` sorted. No bounds, no stream, no Spark."""
    _orders, trades = read_csv(folder)
    df = trades.to_pandas()
    df["hour_end"] = df.ts // HOUR * HOUR + HOUR
    df["pa"] = df.price * df.amount
    g = df.groupby(["hour_end", "ticker"]).agg(trades=("ts", "size"), volume=("amount", "sum"), pa=("pa", "sum"))
    return sorted((int(h), t, int(r.trades), int(r.volume), float(r.pa / r.volume))
                  for (h, t), r in g.iterrows())


def batch_matches(folder) -> list[tuple]:
    """The join as an ordinary batch computation (pandas) over the CSV files: every order with
    every trade of the same order id in the ten minutes after it, both ends included:
    ``(order time, orderId, ticker, orderAmount, tradeAmount, price)`` sorted."""
    orders, trades = read_csv(folder)
    o, t = orders.to_pandas(), trades.to_pandas()
    j = o.merge(t, on="orderId", suffixes=("_o", "_t"))
    j = j[(j.ts_t >= j.ts_o) & (j.ts_t <= j.ts_o + 10 * 60_000)]
    return sorted(zip(j.ts_o.tolist(), j.orderId.tolist(), j.ticker_o.tolist(), j.amount_o.tolist(),
                      j.amount_t.tolist(), j.price.tolist()))


def _streamed(q) -> list[tuple]:
    t = q.table()
    cols = [t.column("rowtime").to_pylist()] + [t.column(f"v{i}").to_pylist() for i in range(len(q.columns))]
    return list(zip(*cols))


def compare_hourly(q, batch: list[tuple]) -> Text:
    """The streaming hourly rows (stamped with the end of their hour) against the batch query:
    counts and volumes exactly, the VWAP to 1e-9 (a sum of floats depends on its order)."""
    import math
    got = sorted(_streamed(q))
    if len(got) != len(batch):
        return Text(f"✗ {len(got)} hourly rows streamed, {len(batch)} from the batch query")
    for g, b in zip(got, batch):
        if g[:4] != b[:4] or not math.isclose(g[4], b[4], rel_tol=1e-9):
            return Text(f"✗ first difference: streamed {g}, batch {b}")
    return Text(f"✓ equal: the {len(got)} hourly rows of the stream (hour, ticker, trades, volume, VWAP to 1e-9) "
                f"are the batch computation's, {sum(r[2] for r in got):,} trades in all")


def compare_matches(q, batch: list[tuple]) -> Text:
    """The streaming join's rows against the batch join, as sorted lists (exactly)."""
    got = sorted(_streamed(q))
    if got == batch:
        return Text(f"✓ equal: the stream's {len(got):,} matches (rowtime, orderId, ticker, amounts, price) are "
                    f"the batch join's, row for row")
    extra = [r for r in got[:1000] if r not in set(batch[:2000])][:1]
    return Text(f"✗ {len(got):,} matches streamed, {len(batch):,} from the batch join" +
                (f"; e.g. streamed only: {extra[0]}" if extra else ""))


def hourly_frame(q):
    """The hourly rows as a pandas frame: ``hour`` (its start), ticker, trades, volume, VWAP in cents."""
    import pandas as pd
    rows = sorted(_streamed(q))
    return pd.DataFrame({"hour": [sqltime.format_timestamp(r[0] - HOUR)[11:16] for r in rows],
                         "ticker": [r[1] for r in rows], "trades": [r[2] for r in rows],
                         "volume": [r[3] for r in rows], "vwap": [round(r[4], 2) for r in rows]})


def hourly_chart(q):
    """Hourly VWAP per ticker (Altair; the data rounded to cents, so the chart is the same on
    every run)."""
    import altair as alt
    df = hourly_frame(q)
    return (alt.Chart(df).mark_line(point=True)
            .encode(x=alt.X("hour:O", title="hour (UTC)"), y=alt.Y("vwap:Q", title="VWAP", scale=alt.Scale(zero=False)),
                    color=alt.Color("ticker:N"), tooltip=["hour", "ticker", "trades", "volume", "vwap"])
            .properties(width=560, height=280, title="Hourly volume-weighted average price, streamed"))


def fills_frame(q):
    """Matched trades per hour of the order (the join's rowtime) and their share of all trades."""
    import pandas as pd
    t = q.table()
    hours = (pd.Series(t.column("rowtime").to_numpy()) - DAY0) // HOUR
    counts = hours.value_counts().sort_index()
    return pd.DataFrame({"hour": [f"{int(h):02d}:00" for h in counts.index], "matches": counts.values.astype(int)})


def fills_chart(q):
    import altair as alt
    df = fills_frame(q)
    return (alt.Chart(df).mark_bar()
            .encode(x=alt.X("hour:O", title="hour of the order (UTC)"), y=alt.Y("matches:Q", title="trades matched"),
                    tooltip=["hour", "matches"])
            .properties(width=560, height=200, title="Orders matched by a trade within ten minutes, per hour"))


# --------------------------------------------------------------------------- exercises of notebook 07

def _first_release_step(table) -> int:
    """The step that releases the first hourly rows: the first Trades event (row or bound) at or
    after 01:00, which closes the hour 00:00-01:00 (steps count the table's events from 1)."""
    import numpy as np
    s = np.asarray(table.column("STREAM").to_pylist(), dtype=object)
    rt = table.column("ROWTIME").to_numpy()
    return int(np.nonzero((s == "Trades") & (rt >= DAY0 + HOUR))[0][0]) + 1


def check_first_release(answer, table) -> Verdict:
    """Exercise 07.1: the step at which the hourly query releases its first rows (steps count
    the loaded events from 1)."""
    if _blank(answer):
        return _say(None, "the 00:00 groups are complete when the Trades clock reaches 01:00. Find the first event of "
                          "the table on Trades (a row or a bound) whose ROWTIME is 01:00 or later; its step is its "
                          "position in the table, counting from 1.")
    truth = _first_release_step(table)
    a = _as_int(answer)
    if a == truth:
        return _say(True, f"step {truth:,}: the first Trades event at or after 01:00 closes the 00:00 hour of every "
                          "ticker, and their 10 rows are released together, ordered by ticker.")
    if a is not None and a == truth - 1:
        return _say(False, "one too early: steps count from 1, positions in a table from 0.")
    return _say(False, "not that step. An Orders event does not move the Trades clock; a bound on Trades does.")


FILLS_COLUMNS = ("ticker", "fills", "filled")


def _sample(table, minutes: int = 20):
    """The events of the first ``minutes`` minutes, and a bound on both streams an hour later."""
    import numpy as np
    import pyarrow as pa
    rt = table.column("ROWTIME").to_numpy()
    n = int(np.searchsorted(rt, DAY0 + minutes * 60_000))
    head = table.slice(0, n)
    end = pa.table({"STREAM": ["Orders", "Trades"], "ROWTIME": [DAY0 + 2 * HOUR] * 2, "BOUND": [True, True],
                    "orderId": pa.array([0, 0], pa.int32()), "ticker": pa.array([None, None], pa.string()),
                    "amount": pa.array([0, 0], pa.int32()), "price": [0.0, 0.0]})
    return pa.concat_tables([head, end.cast(head.schema)])


def _expected_fills(table, minutes: int = 20) -> list[tuple]:
    """Per ticker, the matches of the sample's orders (every trade of the same order id within
    ten minutes after the order, both ends included) and their traded amount; computed with
    pandas, independently of the engine."""
    df = _sample(table, minutes).to_pandas()
    ev = df[~df["BOUND"]]
    o = ev[ev["STREAM"] == "Orders"][["ROWTIME", "orderId", "ticker"]]
    t = ev[ev["STREAM"] == "Trades"][["ROWTIME", "orderId", "amount"]]
    m = o.merge(t, on="orderId", suffixes=("_o", "_t"))
    m = m[(m["ROWTIME_t"] >= m["ROWTIME_o"]) & (m["ROWTIME_t"] <= m["ROWTIME_o"] + 600_000)]
    g = m.groupby("ticker").agg(fills=("amount", "size"), filled=("amount", "sum")).reset_index()
    return sorted((r.ticker, int(r.fills), int(r.filled)) for r in g.itertuples())


def check_fills_query(sql, table) -> Verdict:
    """Exercise 07.2: per ticker and hour, how many trades matched an order within ten minutes
    (``fills``) and their total amount (``filled``), run on the first 20 minutes of the data."""
    if _blank(sql):
        return _say(None, "put the join in a sub-query (SELECT ROWTIME, o.ticker, t.amount ... FROM Orders AS o JOIN "
                          "Trades OVER (...) AS t ON ...) and GROUP BY FLOOR(m.ROWTIME TO HOUR), ticker on top; "
                          "select ticker, COUNT(*) AS fills, SUM(amount) AS filled.")
    try:
        from ..engine.workbench import Workbench
        wb = Workbench(None, engine="local", durable=False, trace=False)
        try:
            wb.execute(SCALE_DDL)
            q = wb.query(str(sql))
            wb.load(None, _sample(table))
            q.wait()
        finally:
            wb.close()
    except StreamSqlError as e:
        return _say(False, f"the query does not run: {e.caret() if getattr(e, 'sql', None) else e}")
    cols = [c.lower() for c in q.columns]
    if not set(FILLS_COLUMNS) <= set(cols):
        return _say(False, f"select the columns ticker, fills and filled; the query selects {', '.join(q.columns)}")
    ix = [cols.index(c) for c in FILLS_COLUMNS]
    got = sorted(tuple(r.values[i] for i in ix) for r in q.rows)
    want = _expected_fills(table)
    if got == want:
        return _say(True, f"{len(want)} rows (one per ticker: the sample's orders all fall in the hour 00:00), "
                          f"{sum(w[1] for w in want):,} matches in all, as pandas computes them from the same events.")
    return _say(False, f"{len(got)} rows, {sum(g[1] for g in got) if got and isinstance(got[0][1], int) else '?'} "
                       f"matches; pandas finds {len(want)} rows and {sum(w[1] for w in want):,} matches. Is the "
                       "window ten minutes FOLLOWING on Trades, and is every row of the join counted?")


def zoom(table, orders: int = 4):
    """A few orders and their trades out of the big table (order ids below ``orders``), with a
    bound on both streams an hour after the last of them: small enough to follow in the
    workbench."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    keep = pc.and_(pc.invert(table.column("BOUND")), pc.less(table.column("orderId"), orders))
    part = table.filter(keep)
    end = int(np.max(part.column("ROWTIME").to_numpy())) + HOUR
    tail = pa.table({"STREAM": ["Orders", "Trades"], "ROWTIME": [end, end], "BOUND": [True, True],
                     "orderId": pa.array([0, 0], pa.int32()), "ticker": pa.array([None, None], pa.string()),
                     "amount": pa.array([0, 0], pa.int32()), "price": [0.0, 0.0]})
    return pa.concat_tables([part, tail.cast(part.schema)])


def zoom_events(table, orders: int = 4) -> list[Event]:
    """:func:`zoom` as a list of events, for ``Workbench.inject``: unlike a bulk load, injected
    events are traced one by one (``Workbench.event_trace``), so the workbench's step table and
    timeline show every input."""
    out = []
    for r in zoom(table, orders).to_pylist():
        if r["BOUND"]:
            out.append(Event(r["STREAM"], "bound", r["ROWTIME"]))
        elif r["STREAM"] == "Orders":
            out.append(Event("Orders", "row", r["ROWTIME"], {"orderId": r["orderId"], "ticker": r["ticker"],
                                                             "amount": r["amount"]}))
        else:
            out.append(Event("Trades", "row", r["ROWTIME"], {"orderId": r["orderId"], "ticker": r["ticker"],
                                                             "price": r["price"], "amount": r["amount"]}))
    return out
