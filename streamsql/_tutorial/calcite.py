"""Helpers for tutorial notebook 06 (Calcite's streaming SQL tour, seed 004): the seed's example
tables transcribed as data, the seed's orders played into a workbench and shown beside its
tables, and the exercises' answer checkers.

Everything here prints plain text with no wall-clock times, ids or timings, so that a notebook's
outputs are the same on every run (what ``pytest --nbval`` compares).

The seed's tables are transcribed line by line from seed 004 (Apache Calcite's "SQL extensions
for streaming"); the rows of the examples it prints no table for, and the expected answers of the
exercises, are derived by hand from the rules (the semantics page, ``docs/semantics.md``), and
``tests/test_notebooks_05_07.py`` checks the exercises against the engine.
"""
from __future__ import annotations

from ..engine import time as sqltime
from ..engine.catalog import Event
from ..engine.errors import StreamSqlError
from ..engine.types import format_value
from .common import Beside, Text, Verdict, _blank, _hm, _say, digest, run_local
# calculator errors: the error stream's rows and the check against rows derived by hand (also in 01)
from .common import compare_calc_errors, error_rows

__all__ = ["CalciteTour", "CALCITE", "BY_HAND", "compare_calcite", "check_step_query", "check_rejected",
           "check_running_total", "EX06_QUERIES", "error_rows", "compare_calc_errors"]


def _seed(spec: str) -> tuple[list[str], list[list[str]]]:
    """A seed 004 table (``a | b`` lines, header first, no rule line) as header and rows."""
    lines = [ln for ln in spec.strip().splitlines() if not set(ln.strip()) <= set("-+")]
    cells = [[c.strip() for c in ln.split("|")] for ln in lines]
    return cells[0], cells[1:]


#: Seed 004's result tables, transcribed as printed (typos included); ``None``: the seed prints no
#: table for that example, and the expected rows below were derived by hand from its data.
CALCITE: dict[str, tuple[list[str], list[list[str]]]] = {
    "history": _seed("""
  rowtime | productId | orderId | units
 08:30:00 |        10 |       1 |     3
 08:45:10 |        20 |       2 |     1
 09:12:21 |        10 |       3 |    10
 09:27:44 |        30 |       4 |     2
"""),
    "stream": _seed("""
  rowtime | productId | orderId | units
 10:17:00 |        30 |       5 |     4
 10:17:05 |        10 |       6 |     1
 10:18:05 |        20 |       7 |     2
 10:18:07 |        30 |       8 |    20
 11:02:00 |        10 |       9 |     6
 11:04:00 |        10 |      10 |     1
 11:09:30 |        40 |      11 |    12
 11:24:11 |        10 |      12 |     4
"""),
    "filter": _seed("""
  rowtime | productId | orderId | units
 10:17:00 |        30 |       5 |     4
 10:18:07 |        30 |       8 |    20
 11:02:00 |        10 |       9 |     6
 11:09:30 |        40 |      11 |    12
 11:24:11 |        10 |      12 |     4
"""),
    "projection": _seed("""
  rowtime | description
 10:17:00 | An order for 4 units of product #30
 10:17:05 | An order for 1 unit of product #10
 10:18:05 | An order for 2 units of product #20
 10:18:07 | An order for 20 units of product #30
 11:02:00 | An order by 6 units of product #10
 11:04:00 | An order by 1 unit of product #10
 11:09:30 | An order for 12 units of product #40
 11:24:11 | An order by 4 units of product #10
"""),
    "tumbling": _seed("""
  rowtime | productId |       c | units
 10:00:00 |        30 |       2 |    24
 10:00:00 |        10 |       1 |     1
 10:00:00 |        20 |       1 |     7
 11:00:00 |        10 |       3 |    11
 11:00:00 |        40 |       1 |    12
"""),
    "having": _seed("""
  rowtime | productId
 10:00:00 |        30
 11:00:00 |        10
 11:00:00 |        40
"""),
    "order_by": _seed("""
  rowtime | productId | orderId | units
 10:00:00 |        30 |       8 |    20
 10:00:00 |        30 |       5 |     4
 10:00:00 |        20 |       7 |     2
 10:00:00 |        10 |       6 |     1
 11:00:00 |        40 |      11 |    12
 11:00:00 |        10 |       9 |     6
 11:00:00 |        10 |      12 |     4
 11:00:00 |        10 |      10 |     1
"""),
    "union": _seed("""
  rowtime | productId | orderId | units
 10:17:05 |        10 |       6 |     1
 10:17:00 |        30 |       5 |     4
 10:18:07 |        30 |       8 |    20
 11:02:00 |        10 |       9 |     6
 11:04:00 |        10 |      10 |     1
 11:24:11 |        10 |      12 |     4
"""),
    "union_ordered": _seed("""
  rowtime | productId | orderId | units
 10:17:00 |        30 |       5 |     4
 10:17:05 |        10 |       6 |     1
 10:18:07 |        30 |       8 |    20
 11:02:00 |        10 |       9 |     6
 11:04:00 |        10 |      10 |     1
 11:24:11 |        10 |      12 |     4
"""),
}

#: Examples the seed shows without a result table: the rows derived by hand from the eight
#: orders (see the notebook for the derivations).
BY_HAND: dict[str, tuple[list[str], list[list[str]]]] = {
    # every hour, per product, the totals of the hourly groups of the last two hours (09:00 has no
    # streamed orders: the query sees only the orders that arrive after it starts)
    "hopping": _seed("""
  rowtime | productId | su | c
 10:00:00 |        10 |  1 | 1
 10:00:00 |        20 |  2 | 1
 10:00:00 |        30 | 24 | 2
 11:00:00 |        10 | 12 | 4
 11:00:00 |        40 | 12 | 1
"""),
    # units of all products in the hour up to each order, both ends included
    "sliding": _seed("""
  rowtime | productId | units | unitsLastHour
 10:17:00 |        30 |     4 |  4
 10:17:05 |        10 |     1 |  5
 10:18:05 |        20 |     2 |  7
 10:18:07 |        30 |    20 | 27
 11:02:00 |        10 |     6 | 33
 11:04:00 |        10 |     1 | 34
 11:09:30 |        40 |    12 | 46
 11:24:11 |        10 |     4 | 23
"""),
    # per product: integer averages over 10 minutes and 7 days; rows where the first is larger
    "m10_d7": _seed("""
  rowtime | productId | units | m10 | d7
 11:02:00 |        10 |     6 |   6 |  3
 11:04:00 |        10 |     1 |   3 |  2
 11:24:11 |        10 |     4 |   4 |  3
"""),
    # units of all products since the top of the hour
    "cascading": _seed("""
  rowtime | productId | units | unitsSinceTopOfHour
 10:17:00 |        30 |     4 |  4
 10:17:05 |        10 |     1 |  5
 10:18:05 |        20 |     2 |  7
 10:18:07 |        30 |    20 | 27
 11:02:00 |        10 |     6 |  6
 11:04:00 |        10 |     1 |  7
 11:09:30 |        40 |    12 | 19
 11:24:11 |        10 |     4 | 23
"""),
}

#: Where the seed's own tables are wrong, checked by hand against its data.
SEED_004_TYPOS = {
    ("tumbling", ("10:00:00", "20", "1", "7")):
        "the seed prints 7 units for product 20, but its only order of product 20 (10:18:05, order 7) is for 2 units",
    ("projection", ("11:02:00", "An order by 6 units of product #10")):
        "the seed prints 'An order by' in three rows, which its own query ('An order for ') cannot produce",
    ("projection", ("11:04:00", "An order by 1 unit of product #10")): "",
    ("projection", ("11:24:11", "An order by 4 units of product #10")): "",
}

SEED_004_ORDERS = [("10:17:00", 30, 5, 4), ("10:17:05", 10, 6, 1), ("10:18:05", 20, 7, 2), ("10:18:07", 30, 8, 20),
                   ("11:02:00", 10, 9, 6), ("11:04:00", 10, 10, 1), ("11:09:30", 40, 11, 12), ("11:24:11", 10, 12, 4)]
SEED_004_HISTORY = [("08:30:00", 10, 1, 3), ("08:45:10", 20, 2, 1), ("09:12:21", 10, 3, 10), ("09:27:44", 30, 4, 2)]

CALCITE_DDL = """\
CREATE STREAM Orders (productId INTEGER, orderId INTEGER, units INTEGER);
CREATE STREAM Shipments (orderId INTEGER);
CREATE TABLE Products (productId INTEGER, name VARCHAR(20));
INSERT INTO Products (productId, name) VALUES (10, 'Beer'), (20, 'Wine'), (30, 'Cheese'), (40, 'Bread')"""


def _hms(ms: int) -> str:
    d = sqltime.to_datetime(ms)
    return d.strftime("%H:%M:%S")


class CalciteTour:
    """Seed 004's Orders, played into a workbench: the four orders of the past (the history a
    relational query reads), then for each example the eight orders of the present. A stream
    only moves forward, so each example's orders arrive one day after the previous example's;
    the tables show times of day, as the seed does."""

    DAY = "2015-02-15"

    def __init__(self, wb):
        self.wb = wb
        self.plays = 0

    def day(self, k: int) -> str:
        return sqltime.format_timestamp(sqltime.parse_timestamp(self.DAY) + k * sqltime.DAY)[:10]

    def history(self) -> Text:
        """The four orders before 10:00 of the first day, kept as the stream's history."""
        self.wb.set_history("Orders")
        for t, p, o, u in SEED_004_HISTORY:
            self.wb.insert("Orders", {"productId": p, "orderId": o, "units": u}, rowtime=f"{self.DAY} {t}")
        return Text(f"4 orders inserted on {self.DAY}, from 08:30:00 to 09:27:44; Orders keeps its history")

    def play(self, q, example: str, *, stop: bool = True) -> Beside:
        """Insert the seed's eight orders (the next day), then a bound at 12:00 that closes the
        11:00 hour; show the seed's table for ``example`` beside what ``q`` released, with the
        event that released each row (1-8: the orders, 9: the bound). Then stop ``q``."""
        day = self.day(self.plays)
        self.plays += 1
        first = self.wb.last_step + 1
        for t, p, o, u in SEED_004_ORDERS:
            self.wb.insert("Orders", {"productId": p, "orderId": o, "units": u}, rowtime=f"{day} {t}")
        self.wb.punctuate("Orders", f"{day} 12:00:00")
        q.wait()
        rows = [[_hms(r.rowtime)] + [format_value(v) for v in r.values] for r in q.rows]
        events = [str(r.step - first + 1) for r in q.rows]
        if stop:
            q.stop()
        label = f"streamsql on {q.wb.runtime.label} (Event: what released the row)"
        return compare_calcite(example, ["ROWTIME"] + q.columns, rows, label, events)

    def table(self, result, example: str) -> Beside:
        """A relational query's answer (``%%streamsql -o VAR`` binds it) beside the seed's table."""
        rows = [[_hms(v) if f.name == "ROWTIME" else format_value(v) for f, v in zip(result.fields, row)]
                for row in result.rows]
        return compare_calcite(example, list(result.columns), rows,
                               f"streamsql on {self.wb.runtime.label} (a relational query)")


def compare_calcite(example: str, header: list[str], rows: list[list[str]], label: str,
                    events: list[str] | None = None) -> Beside:
    """The seed's table (or the rows derived by hand) beside the engine's, and how they compare."""
    by_hand = example not in CALCITE
    want_header, want = (BY_HAND if by_hand else CALCITE)[example]
    mine = [list(r) for r in rows]
    notes = []
    if mine == want:
        verdict = "✓ the same rows, in the same order"
    elif sorted(mine) == sorted(want):
        verdict = "✓ the same rows; the seed lists them in another order"
    else:
        typos = []
        rest_w, rest_m = [r for r in want if r not in mine], [r for r in mine if r not in want]
        for r in rest_w:
            why = SEED_004_TYPOS.get((example, tuple(r)))
            if why is not None:
                typos.append(r)
                if why:
                    notes.append(f"  seed's row {' '.join(r)}: {why}")
        if len(typos) == len(rest_w) and len(rest_m) == len(rest_w):
            same_order = [r for r in want if r not in typos] == [r for r in mine if r not in rest_m]
            verdict = (f"✓ the same rows except {len(typos)} the seed misprints (checked by hand against its data)"
                       + ("" if same_order else "; the seed also lists the rows in another order") + ":")
        else:
            verdict = "✗ the rows differ from the seed's table"
    source = "rows derived by hand from the seed's data (the seed prints no table)" if by_hand else "the seed's table"
    shown = [[e] + r for e, r in zip(events, mine)] if events is not None else mine
    title = f"Seed 004, {example.replace('_', ' ')}"
    if events is not None:
        title += ": events 1-8 are the eight orders, event 9 a bound at 12:00"
    return Beside(title, (source, want_header, want),
                  (label, (["Event"] if events is not None else []) + list(header), shown), "\n".join([verdict] + notes))


# --------------------------------------------------------------------------- exercises of notebook 06

def _calcite_events(day: str = "2015-02-15") -> list[Event]:
    evs = [Event("Orders", "row", sqltime.parse_timestamp(f"{day} {t}"), {"productId": p, "orderId": o, "units": u})
           for t, p, o, u in SEED_004_ORDERS]
    return evs + [Event("Orders", "bound", sqltime.parse_timestamp(f"{day} 12:00:00"))]


def _calcite_query(sql, hint: str):
    """The reader's query run over the eight orders (and a bound at 12:00), or the Verdict that
    says why it could not be."""
    if _blank(sql):
        return _say(None, hint)
    try:
        return run_local(CALCITE_DDL, str(sql), _calcite_events())[0]
    except StreamSqlError as e:
        return _say(False, f"the query does not run: {e.caret() if getattr(e, 'sql', None) else e}")


def _col(q, name: str):
    names = [f.name for f in q.fields]
    return None if name.upper() not in names else [r.values[names.index(name.upper())] for r in q.rows]


#: the digests of the answers derived by hand (``common.digest``; the answers are in the tests)
_ANSWERS = {"06.1": "dad41b17e7a10fe5d3d77f9b8595ffdd", "06.3": "a8b71a55cd67f3a45dc96c94ee8887ff"}


def check_step_query(sql) -> Verdict:
    """Exercise 06.1: total units per product every 15 minutes (a tumbling window FLOOR cannot
    express; STEP can)."""
    q = _calcite_query(sql, "group by a STEP expression of rowtime (periods of 15 minutes) and by productId; select "
                            "productId and SUM(units) AS units.")
    if isinstance(q, Verdict):
        return q
    pid, units = _col(q, "productId"), _col(q, "units")
    if pid is None or units is None:
        return _say(False, f"select the columns PRODUCTID and UNITS; the query selects {', '.join(q.columns)}")
    quarter = 15 * 60_000
    for shift, stamped in ((0, "the start"), (quarter, "the end")):
        got = [(_hm(r.rowtime - shift), p, u) for r, p, u in zip(q.rows, pid, units)]
        if digest("06.1", got) == _ANSWERS["06.1"]:
            return _say(True, f"6 rows, stamped with {stamped} of each quarter: the quarters starting 10:15 "
                              "(products 10, 20, 30), 11:00 (10 and 40) and 11:15 (10). Each is released when the Orders clock reaches the "
                              "end of its quarter: the 11:02 order closes 10:15-10:30, 11:24:11 closes 11:00-11:15 "
                              "and the 12:00 bound the last one.")
    got = [(_hm(r.rowtime), p, u) for r, p, u in zip(q.rows, pid, units)]
    return _say(False, f"over the eight orders it released {got} as (rowtime, productId, units); expected 6 rows, "
                       "one per product and quarter of an hour with orders.")


#: Exercise 06.2: which of these does streamsql (like Calcite) refuse?
EX06_QUERIES = {
    "A": "SELECT STREAM * FROM Orders WHERE units > 10",
    "B": "SELECT * FROM Shipments",
    "C": "SELECT STREAM productId, SUM(units) AS units FROM Orders GROUP BY productId",
    "D": "SELECT STREAM FLOOR(rowtime TO HOUR) AS rowtime, productId, COUNT(*) AS c FROM Orders "
         "GROUP BY FLOOR(rowtime TO HOUR), productId",
    "E": "SELECT STREAM * FROM Orders ORDER BY units DESC",
    "F": "SELECT * FROM Products",
    "G": "SELECT STREAM * FROM Products",
}
def _rejected() -> set[str]:
    """The letters of the queries in ``EX06_QUERIES`` the engine refuses."""
    from ..engine.errors import SqlError
    from ..engine.workbench import Workbench
    out = set()
    with Workbench(None, engine="local", durable=False) as wb:
        wb.execute(CALCITE_DDL)
        for letter, sql in EX06_QUERIES.items():
            try:
                for r in wb.execute(sql):
                    if r.query is not None:
                        wb.stop_query(r.query.name)
            except SqlError:
                out.add(letter)
    return out


def check_rejected(answer) -> Verdict:
    """Exercise 06.2: the letters of the queries in ``EX06_QUERIES`` that are rejected (the engine
    says which are)."""
    if _blank(answer):
        return _say(None, "a streaming query needs streams, and a GROUP BY or ORDER BY on a stream needs a "
                          "monotonic expression first; a relational query needs tables (or a stream's history).")
    got = {str(a).strip().upper() for a in answer}
    rejected = _rejected()
    if got == rejected:
        return _say(True, "B (Shipments is a stream without history: not a table), C (no monotonic expression in "
                          "GROUP BY), E (ORDER BY must start with a monotonic expression) and G (Products is a "
                          "table: not a stream). A, D and F run.")
    missing, extra = sorted(rejected - got), sorted(got - rejected)
    why = []
    if extra:
        why.append(f"{', '.join(extra)} {'runs' if len(extra) == 1 else 'run'}")
    if missing:
        why.append(f"{len(missing)} rejected {'query is' if len(missing) == 1 else 'queries are'} missing")
    return _say(False, "; ".join(why) + ". Try them in %%streamsql cells.")




def check_running_total(sql) -> Verdict:
    """Exercise 06.3: a cascading window per product: rowtime, productId, units and, last, the
    units of that product since the top of the hour."""
    q = _calcite_query(sql, "a cascading window whose PARTITION BY has both the hour "
                            "(FLOOR(rowtime TO HOUR)) and the product; select rowtime, productId, units and the sum last.")
    if isinstance(q, Verdict):
        return q
    pid, units = _col(q, "productId"), _col(q, "units")
    if pid is None or units is None:
        return _say(False, f"select the columns PRODUCTID and UNITS; the query selects {', '.join(q.columns)}")
    got = [(_hms(r.rowtime), p, u, r.values[-1]) for r, p, u in zip(q.rows, pid, units)]
    if digest("06.3", got) == _ANSWERS["06.3"]:
        return _say(True, "8 rows, one per order, each released at once: product 10 goes 1 (10:00 hour), then "
                          "6, 7, 11 (11:00 hour); product 30 goes 4, 24.")
    return _say(False, f"it released {[(t, p, s) for t, p, _u, s in got]} as (rowtime, productId, total): "
                       "does each product's total restart at the top of the hour?")
