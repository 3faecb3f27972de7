"""Random streaming queries from a grammar, and random events, for the fuzzers
(``tests/fuzz_oracle.py``, ``tests/test_fuzz.py``, ``scripts/fuzz.sh``).

A query is a top-level shape over FROM items, each a stream, a view or a sub-query, nested up to
two levels deep:

- shapes: a projection with WHERE (ROWTIME kept, shifted by an interval, or replaced by its
  FLOOR/CEIL); GROUP BY a FLOOR/CEIL/STEP period of ROWTIME (or one plus an interval), with or
  without a key, HAVING, every aggregate (DISTINCT ones too) and expressions over them; OVER
  windows (RANGE, ROWS, offset, unbounded, hopping, cascading, named; partitioned or not); window
  joins of every kind (a window on one side or both: preceding, following, both, current row; an
  equi-condition, a residual one, or only a residual); stream-table joins; UNION ALL of two or
  three inputs;
- FROM items: S and T, views (``CREATE VIEW``, with or without STREAM in their body) and
  sub-queries of the shapes above;
- expressions from the calculator: arithmetic, MOD, ABS, CASE, COALESCE, NULLIF, IN, BETWEEN,
  LIKE, string functions, CASTs, DECIMAL literals; and expressions that raise calculator errors
  on some rows (division by zero, INTEGER overflow, a CAST of a string that is no number, a
  narrowing CAST).

Every failing expression comes with the rows it refuses (:class:`Fail`: the stream and a
predicate over a row's values), and is placed only where refusing a row is the same as the row
never having come (see ``fuzz_oracle.py``): over rows of one stream read once by the query, in a
WHERE or select list that no window or outer join sits between, an OVER or aggregate argument.

Events: rows at the stream's clock plus or minus a few minutes (some late), ties, NULLs,
bounds (strict ones, eclipsed ones), a second producer on S, then a bound far ahead on every
producer, so that everything is released."""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Callable

from streamsql.engine import time as T
from streamsql.engine.catalog import Event

DDL = """CREATE STREAM S (k VARCHAR(3), x INTEGER, c VARCHAR(4));
CREATE STREAM T (k VARCHAR(3), x INTEGER, c VARCHAR(4));
CREATE TABLE R (k VARCHAR(3), y INTEGER);
INSERT INTO R VALUES ('a', 10), ('b', 20), ('b', 21), (NULL, 30), ('c', 40);"""

STREAMS = ("S", "T")
MINUTE = 60_000
END = "2006-10-12 00:00:00"

# --------------------------------------------------------------------------- what a query is


@dataclass
class Fail:
    """Rows of ``stream`` that an expression of the query refuses (where they reach it):
    those whose values satisfy ``pred``; ``text`` is the expression."""
    stream: str
    pred: Callable[[dict], bool]
    text: str


@dataclass
class Peers:
    """An OVER column whose frame ends at the current row in RANGE mode: in a stream it holds
    only the peers that arrived earlier (the semantics, section 3.4). ``column`` is its position
    in the values (ROWTIME aside), ``partition`` the position of the partition key (None: one
    partition), ``cascade``/``order`` the units a FLOOR of ROWTIME partitions/orders by (None:
    none / ROWTIME itself); ``arrival``: the relation lists the rows in arrival order."""
    column: int
    partition: int | None
    cascade: str | None
    order: str | None
    arrival: bool


@dataclass
class Case:
    """A streaming query with what the oracle needs to know about it."""
    kind: str
    sql: str
    views: list[str] = field(default_factory=list)
    fails: list[Fail] = field(default_factory=list)
    peers: list[Peers] = field(default_factory=list)
    #: positions (in the values) of results that depend on the order of the rows where the
    #: relation does not list them in arrival order (FIRST_VALUE, LAST_VALUE, ROWS frames)
    unordered: list[int] = field(default_factory=list)

    @property
    def relational(self) -> str:
        """The same query without STREAM (views stay as they are)."""
        return re.sub(r"\bSELECT STREAM\b", "SELECT", self.sql)

    def script(self) -> str:
        return "\n".join(v + ";" for v in self.views)


@dataclass
class Source:
    """A FROM item: its text (without alias), the streams it reads (in order, with repeats),
    whether its rows are a stream's own rows passed through row-by-row operators only
    (``plain``: a failing expression above it refuses whole input rows), and whether its
    relation lists rows in arrival order (one stream)."""
    text: str
    streams: list[str]
    plain: bool
    fails: list[Fail] = field(default_factory=list)

    @property
    def arrival(self) -> bool:
        return len(self.streams) == 1 and self.plain


class Gen:
    """One query's generator: ``views`` collects the views it defines."""

    def __init__(self, rng: random.Random, name: str, allow_fail: bool = True):
        self.rng = rng
        self.name = name
        self.views: list[str] = []
        self.allow_fail = allow_fail

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def pick(self, xs):
        return self.rng.choice(xs)

    # ------------------------------------------------------------------ expressions

    def fail_expr(self, a: str) -> tuple[str, Callable[[dict], bool], str]:
        """An INTEGER expression of the row that raises a calculator error on some rows:
        (text, the rows it fails on, its type)."""
        r = self.rng
        kind = r.randrange(5)
        if kind == 0:
            v = r.choice([0, 1, 3])
            return f"{r.choice([10, 7, -4])} / ({a}x - {v})", lambda d, v=v: d.get("x") == v, "int"
        if kind == 1:
            v = r.choice([1, 3])
            return f"MOD({a}x * 2, {a}x - {v})", lambda d, v=v: d.get("x") == v, "int"
        if kind == 2:
            return f"CAST({a}c AS INTEGER)", lambda d: d.get("c") == "x", "int"
        if kind == 3:
            return f"{a}x * 1000000000", lambda d: d.get("x") is not None and abs(d["x"]) >= 3, "int"
        return (f"CAST({a}x * 100 AS TINYINT)", lambda d: d.get("x") is not None and not -128 <= d["x"] * 100 <= 127,
                "int")

    def int_expr(self, a: str = "") -> str:
        r = self.rng
        n = r.choice([1, 2, 3, 7])
        return r.choice([
            f"{a}x", f"{a}x + {n}", f"{a}x - {n}", f"{a}x * {n}", f"{a}x / {n}", f"MOD({a}x, {n})", f"ABS({a}x)",
            f"-{a}x", f"COALESCE({a}x, {n})", f"NULLIF({a}x, {r.choice([0, 1])})", f"CHAR_LENGTH({a}c)",
            f"CASE WHEN {a}x > {r.randint(-1, 3)} THEN {a}x ELSE {n} END",
            f"CASE WHEN {a}c <> 'x' THEN CAST({a}c AS INTEGER) END",
            f"CASE {a}k WHEN 'a' THEN 1 WHEN 'b' THEN 2 ELSE 0 END",
        ])

    def str_expr(self, a: str = "") -> str:
        return self.pick([f"{a}k", f"UPPER({a}k)", f"{a}k || '-' || {a}c", f"COALESCE({a}k, '?')",
                          f"TRIM({a}c)", f"SUBSTRING({a}c FROM 1 FOR 1)", f"CAST({a}x AS VARCHAR(6))",
                          f"CASE WHEN {a}x IS NULL THEN 'none' ELSE {a}k END"])

    def other_expr(self, a: str = "") -> str:
        """Non-integer values: DECIMAL arithmetic, booleans."""
        return self.pick([f"{a}x * 1.5", f"{a}x / 4.0", f"{a}x BETWEEN 0 AND 3", f"{a}k IN ('a', 'c')",
                          f"{a}c LIKE '%2'", f"{a}x IS NULL OR {a}x > 2", f"CAST({a}x AS DECIMAL(6, 2)) / 3"])

    def items(self, a: str, fails: list, stream: str | None, n: int) -> list[str]:
        """``n`` select-list items over the columns of one input (``a`` its qualifier with a
        dot, or empty); one may fail when ``stream`` is the single stream under it."""
        out = []
        for i in range(n):
            if stream is not None and self.allow_fail and self.chance(0.12):
                text, pred, _t = self.fail_expr(a)
                fails.append(Fail(stream, pred, text))
                out.append(f"{text} AS e{i}")
                continue
            e = self.pick([self.int_expr, self.int_expr, self.str_expr, self.other_expr])(a)
            out.append(f"{e} AS e{i}")
        return out

    def pred(self, a: str = "", fails: list | None = None, stream: str | None = None) -> str:
        r = self.rng
        atoms = [f"{a}x > {r.randint(-2, 4)}", f"{a}x < {r.randint(0, 6)}", f"{a}k = '{r.choice('abc')}'",
                 f"{a}k IS NULL", f"{a}x IS NOT NULL", f"{a}x <> {r.randint(0, 5)}", f"{a}c IS NULL",
                 f"{a}x BETWEEN {r.randint(-2, 1)} AND {r.randint(1, 5)}", f"{a}k IN ('a', 'c')",
                 f"{a}c LIKE '%{r.choice('12x')}%'", f"NOT ({a}x = {r.choice([0, 1, 3])})",
                 f"MOD({a}x, 2) = {r.choice([0, 1])}", f"{a}x + {r.randint(1, 3)} > {a}x * 2",
                 f"{a}k NOT IN ('b')", f"{a}c NOT LIKE '4%'", f"{a}x IN (1, 3, 5)"]
        if stream is not None and fails is not None and self.allow_fail and self.chance(0.15):
            text, p, _t = self.fail_expr(a)
            fails.append(Fail(stream, p, text))
            atoms = [f"{text} {r.choice(['>', '<>', '<='])} {r.randint(-1, 2)}"]
        p = r.choice(atoms)
        if r.random() < 0.35:
            p = f"({p} {r.choice(['AND', 'OR'])} {r.choice(atoms)})"
        return p

    def where(self, a: str = "", fails: list | None = None, stream: str | None = None, p: float = 0.5) -> str:
        return f" WHERE {self.pred(a, fails, stream)}" if self.chance(p) else ""

    # ------------------------------------------------------------------ FROM items

    def item(self, depth: int) -> Source:
        """A FROM item with the columns k (VARCHAR), x (an integer), c (VARCHAR)."""
        r = self.rng
        if depth <= 0 or r.random() < 0.5:
            s = self.pick(STREAMS)
            return Source(s, [s], True)
        kind = r.choice(["filter", "filter", "union", "group", "join", "table"])
        if kind == "filter":
            s = self.pick(STREAMS)
            fails: list[Fail] = []
            rt = self.pick(["ROWTIME", "ROWTIME", f"{s}.ROWTIME + INTERVAL '{r.choice([1, 2])}' MINUTE AS ROWTIME"])
            body = f"SELECT STREAM {rt}, k, x, c FROM {s}{self.where('', fails, s, p=0.8)}"
            src = Source(body, [s], True, fails)
        elif kind == "union":
            a, b = self.item(depth - 1), self.item(depth - 1)
            fa, fb = [], []
            wa = self.where("", fa, a.streams[0] if a.plain and len(a.streams) == 1 else None)
            wb = self.where("", fb, b.streams[0] if b.plain and len(b.streams) == 1 else None)
            body = (f"SELECT STREAM ROWTIME, k, x, c FROM {self.wrap(a, 'ua')}{wa} UNION ALL "
                    f"SELECT STREAM ROWTIME, k, x, c FROM {self.wrap(b, 'ub')}{wb}")
            src = Source(body, a.streams + b.streams, a.plain and b.plain, a.fails + b.fails + fa + fb)
        elif kind == "group":
            s = self.item(depth - 1)
            q = "g"
            tk = self.time_key(q)
            rt = self.pick([f"{tk} AS ROWTIME", "ROWTIME", f"{tk} + INTERVAL '1' MINUTE AS ROWTIME"])
            agg = self.pick(["SUM(x)", "COUNT(*)", "MAX(x)", "COUNT(DISTINCT c)", "MIN(x) + 1"])
            body = (f"SELECT STREAM {rt}, k, {agg} AS x, MAX(c) AS c FROM {self.wrap(s, q)}{self.where(q + '.')} "
                    f"GROUP BY {tk}, k")
            src = Source(body, s.streams, False, s.fails)
        elif kind == "join":
            body, streams, fails = self.join_body(depth - 1, ["ROWTIME", "s.k", "s.x", "t.c"], inner_only=True)
            src = Source(body, streams, False, fails)
        else:
            body, streams, fails = self.table_join_body(depth - 1, ["ROWTIME", "s.k", "r.y AS x", "s.c"])
            src = Source(body, streams, False, fails)
        if self.chance(0.4):
            name = f"V_{self.name}_{len(self.views)}"
            body = src.text if self.chance(0.6) else re.sub(r"\bSELECT STREAM\b", "SELECT", src.text)
            self.views.append(f"CREATE VIEW {name} AS {body}")
            src.text = name
        else:
            src.text = f"({src.text})"
        return src

    @staticmethod
    def wrap(src: Source, alias: str) -> str:
        return f"{src.text} AS {alias}"

    def time_key(self, q: str) -> str:
        r = self.rng
        return r.choice([f"FLOOR({q}.ROWTIME TO MINUTE)", f"FLOOR({q}.ROWTIME TO HOUR)",
                         f"CEIL({q}.ROWTIME TO MINUTE)", f"STEP({q}.ROWTIME BY INTERVAL '{r.choice([2, 3, 5, 10])}' MINUTE)",
                         f"FLOOR({q}.ROWTIME TO MINUTE) + INTERVAL '{r.choice([1, 5])}' MINUTE"])

    def join_window(self) -> str | None:
        r = self.rng
        m, f = r.choice([0, 1, 2, 3, 5]), r.choice([1, 2, 4])
        return r.choice([None, f"RANGE INTERVAL '{m}' MINUTE PRECEDING", f"RANGE INTERVAL '{f}' MINUTE FOLLOWING",
                         f"RANGE BETWEEN INTERVAL '{m}' MINUTE PRECEDING AND INTERVAL '{f}' MINUTE FOLLOWING",
                         "RANGE CURRENT ROW"])

    def join_body(self, depth: int, cols: list[str], inner_only: bool = False, fails_ok: bool = False,
                  lookup: str | None = None):
        """A window join of two FROM items aliased s and t; ``cols`` its select list. ``lookup``:
        a join with the table R (as r) after the window join, or before it (s JOIN r JOIN t)."""
        r = self.rng
        kind = "JOIN" if inner_only else r.choice(["JOIN", "JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "OUTER JOIN"])
        a, b = self.item(depth), self.item(depth)
        wa, wb = self.join_window(), self.join_window()
        if lookup == "before":      # a window on s would be a window on a stream-table join's stream
            wa = None
            if kind in ("RIGHT JOIN", "FULL JOIN", "OUTER JOIN"):
                kind = "LEFT JOIN"
        if wa is None and wb is None:
            wb = f"RANGE INTERVAL '{r.choice([1, 2, 5])}' MINUTE PRECEDING"
        left = f"{a.text}{f' OVER ({wa})' if wa else ''} AS s"
        if lookup == "before":
            left += f" {r.choice(['JOIN', 'LEFT JOIN'])} R AS r ON s.k = r.k"
        right = f"{b.text}{f' OVER ({wb})' if wb else ''} AS t"
        cond = r.choice(["s.k = t.k", "s.k = t.k", "s.k = t.k", "s.x = t.x", "s.k = t.k AND s.c = t.c"])
        if r.random() < 0.3:
            cond += f" AND s.x {r.choice(['<=', '<', '>=', '<>'])} t.x"
        if r.random() < 0.05:
            cond = f"s.x {r.choice(['<=', '<'])} t.x"
        fails: list[Fail] = list(a.fails) + list(b.fails)
        # a failing expression over s: only in an inner join (a refused pair is then the same as
        # the s row missing) and when s's stream is read nowhere else
        s_stream = a.streams[0] if (kind == "JOIN" and a.plain and len(a.streams) == 1
                                    and a.streams[0] not in b.streams) else None
        extra = []
        if fails_ok and self.chance(0.7):
            extra = self.items("s.", fails, s_stream, r.randint(1, 2))
        where = self.where("s.", fails, s_stream, p=0.3) if fails_ok else ""
        after = ""
        if lookup == "after":
            after = f" {r.choice(['JOIN', 'LEFT JOIN'])} R AS r ON {r.choice(['s.k', 't.k'])} = r.k"
        body = f"SELECT STREAM {', '.join(cols + extra)} FROM {left} {kind} {right} ON {cond}{after}{where}"
        return body, a.streams + b.streams, fails

    def table_join_body(self, depth: int, cols: list[str], fails_ok: bool = False):
        r = self.rng
        a = self.item(depth)
        fails = list(a.fails)
        s_stream = a.streams[0] if a.plain and len(a.streams) == 1 else None
        cond = "s.k = r.k" + (f" AND r.y {r.choice(['>', '<'])} {r.choice([15, 25])}" if r.random() < 0.3 else "")
        if r.random() < 0.25:
            frm = f"R AS r RIGHT JOIN {a.text} AS s"
        else:
            frm = f"{a.text} AS s {r.choice(['JOIN', 'LEFT JOIN'])} R AS r"
        extra = self.items("s.", fails, s_stream, r.randint(0, 2)) if fails_ok else []
        where = self.where("s.", fails, s_stream, p=0.3) if fails_ok else ""
        return f"SELECT STREAM {', '.join(cols + extra)} FROM {frm} ON {cond}{where}", a.streams, fails

    # ------------------------------------------------------------------ shapes

    def project(self) -> Case:
        r = self.rng
        src = self.item(2)
        fails = list(src.fails)
        one = src.streams[0] if src.plain and len(set(src.streams)) == 1 else None
        q = "q"
        rt = r.choice(["ROWTIME", f"{q}.ROWTIME + INTERVAL '{r.choice([1, 2])}' MINUTE AS ROWTIME",
                       f"FLOOR({q}.ROWTIME TO MINUTE) AS ROWTIME", f"CEIL({q}.ROWTIME TO MINUTE) AS ROWTIME", None])
        items = (["k"] if r.random() < 0.5 else []) + self.items(f"{q}.", fails, one, r.randint(1, 3))
        if r.random() < 0.15:
            items.append(r.choice([f"FLOOR({q}.ROWTIME TO MINUTE) AS m", f"{q}.ROWTIME - INTERVAL '1' MINUTE AS t0",
                                   f"CEIL({q}.ROWTIME TO HOUR) AS h"]))
        sel = ", ".join(([rt] if rt else []) + items)
        return Case("project", f"SELECT STREAM {sel} FROM {self.wrap(src, q)}{self.where(q + '.', fails, one)}",
                    self.views, fails)

    def union(self) -> Case:
        r = self.rng
        n = 3 if r.random() < 0.25 else 2
        srcs = [self.item(1) for _ in range(n)]
        fails = [f for s in srcs for f in s.fails]
        counts = {s: sum(x.streams.count(s) for x in srcs) for s in STREAMS}
        branches = []
        for i, s in enumerate(srcs):
            one = s.streams[0] if s.plain and len(s.streams) == 1 and counts[s.streams[0]] == 1 else None
            a = f"u{i}"
            if one is not None and self.allow_fail and r.random() < 0.2:
                text, p, _t = self.fail_expr(f"{a}.")
                fails.append(Fail(one, p, text))
                first = text
            else:
                first = self.int_expr(f"{a}.")
            branches.append(f"SELECT STREAM ROWTIME, {a}.k, {first} AS v FROM {self.wrap(s, a)}"
                            f"{self.where(a + '.', fails, one)}")
        body = " UNION ALL ".join(branches)
        if r.random() < 0.3:
            body = f"SELECT STREAM ROWTIME, k, v FROM ({body}) AS u WHERE {r.choice(['v > 0', 'k IS NOT NULL', 'v IS NULL OR k = ' + repr('a')])}"
        return Case("union", body, self.views, fails)

    def group(self) -> Case:
        r = self.rng
        src = self.item(2)
        fails = list(src.fails)
        one = src.streams[0] if src.plain and len(set(src.streams)) == 1 else None
        q = "q"
        tk = self.time_key(q)
        by_k = r.random() < 0.7
        aggs = r.sample(["COUNT(*)", "SUM(q.x)", "MIN(q.x)", "MAX(q.x)", "AVG(q.x)", "COUNT(q.x)", "FIRST_VALUE(q.x)",
                         "LAST_VALUE(q.x)", "COUNT(DISTINCT q.x)", "SUM(DISTINCT q.x)", "MIN(q.c)", "MAX(q.k)",
                         "LAST_VALUE(q.c)", f"SUM({self.int_expr('q.')})", f"AVG({self.int_expr('q.')})",
                         "MAX(q.x) - MIN(q.x)", "SUM(q.x) * 2 + COUNT(*)", "AVG(DISTINCT q.x)"], r.randint(1, 4))
        if one is not None and self.allow_fail and r.random() < 0.15:
            text, p, _t = self.fail_expr("q.")
            fails.append(Fail(one, p, text))
            aggs.append(f"{r.choice(['SUM', 'MAX', 'COUNT'])}({text})")
        head = r.choice([f"{tk} AS ROWTIME", f"{tk} AS p", "ROWTIME", None])
        sel = ([head] if head else []) + (["q.k"] if by_k else []) + [f"{a} AS a{i}" for i, a in enumerate(aggs)]
        first = (1 if head and "AS ROWTIME" not in head and head != "ROWTIME" else 0) + by_k
        unordered = [] if src.arrival else [first + i for i, a in enumerate(aggs) if "_VALUE(" in a]
        having = ""
        if r.random() < 0.35:
            having = " HAVING " + r.choice([f"COUNT(*) > {r.randint(0, 2)}", f"SUM(q.x) > {r.randint(-1, 4)}",
                                            "MIN(q.k) = 'a'", f"MAX(q.x) - MIN(q.x) >= {r.randint(0, 3)}"])
        keys = [tk] + (["q.k"] if by_k else [])
        if r.random() < 0.1:
            keys.append(f"FLOOR(q.ROWTIME TO HOUR)")
        return Case("group", f"SELECT STREAM {', '.join(sel)} FROM {self.wrap(src, q)}{self.where(q + '.', fails, one)} "
                             f"GROUP BY {', '.join(keys)}{having}", self.views, fails, unordered=unordered)

    def over(self) -> Case:
        r = self.rng
        src = self.item(2)
        fails = list(src.fails)
        one = src.streams[0] if src.plain and len(set(src.streams)) == 1 else None
        q = "q"
        calls, peers, named, unordered = [], [], [], []
        n = r.randint(1, 3)
        for i in range(n):
            fn = r.choice(["SUM(q.x)", "COUNT(*)", "MIN(q.x)", "MAX(q.c)", "AVG(q.x)", "COUNT(q.x)", "FIRST_VALUE(q.x)",
                           "LAST_VALUE(q.x)", "COUNT(DISTINCT q.k)", "SUM(DISTINCT q.x)", "LAST_VALUE(DISTINCT q.x)",
                           f"SUM({self.int_expr('q.')})"])
            if one is not None and self.allow_fail and r.random() < 0.12:
                text, p, _t = self.fail_expr("q.")
                fails.append(Fail(one, p, text))
                fn = f"{r.choice(['SUM', 'MAX'])}({text})"
            part = r.choice([None, None, "k", "k", "cascade", "both"])
            cascade = r.choice(["HOUR", "MINUTE"]) if part in ("cascade", "both") else None
            parts = ([] if part in (None, "cascade") else ["q.k"]) + ([f"FLOOR(q.ROWTIME TO {cascade})"] if cascade else [])
            order = r.choice([None, None, None, "MINUTE"])
            m, lo, hi = r.choice([1, 2, 3, 5, 10]), r.randint(1, 3), r.randint(0, 1)
            frames = [(f"RANGE INTERVAL '{m}' MINUTE PRECEDING", "RANGE", 0), (f"ROWS {r.randint(0, 3)} PRECEDING", "ROWS", 0),
                      (f"RANGE BETWEEN INTERVAL '{m + 1}' MINUTE PRECEDING AND INTERVAL '{r.choice([1, m])}' MINUTE PRECEDING",
                       "RANGE", 1),
                      (f"ROWS BETWEEN {lo + hi} PRECEDING AND {hi} PRECEDING", "ROWS", hi),
                      ("RANGE UNBOUNDED PRECEDING", "RANGE", 0), ("", "RANGE", 0), ("RANGE CURRENT ROW", "RANGE", 0),
                      ("ROWS CURRENT ROW", "ROWS", 0),
                      (f"RANGE BETWEEN INTERVAL '{m}' MINUTE PRECEDING AND CURRENT ROW", "RANGE", 0)]
            frame, mode, upper = r.choice(frames)
            if order and mode == "RANGE" and upper:     # a hopping offset window: keep it on the minute
                frame = f"RANGE BETWEEN INTERVAL '{m + 1}' MINUTE PRECEDING AND INTERVAL '1' MINUTE PRECEDING"
            spec = " ".join(x for x in [f"PARTITION BY {', '.join(parts)}" if parts else "",
                                        f"ORDER BY FLOOR(q.ROWTIME TO {order})" if order else "", frame] if x)
            if r.random() < 0.2:
                named.append(f"w{i} AS ({spec})")
                calls.append(f"{fn} OVER w{i} AS o{i}")
            else:
                calls.append(f"{fn} OVER ({spec}) AS o{i}")
            if mode == "RANGE" and upper == 0:
                peers.append(Peers(3 + i, 0 if part in ("k", "both") else None, cascade, order, src.arrival))
            if not src.arrival and (mode == "ROWS" or "_VALUE(" in fn):
                unordered.append(3 + i)
        window = f" WINDOW {', '.join(named)}" if named else ""
        sql = (f"SELECT STREAM ROWTIME, q.k, q.x, q.c, {', '.join(calls)} FROM {self.wrap(src, q)}"
               f"{self.where(q + '.', fails, one)}{window}")
        return Case("over", sql, self.views, fails, peers, unordered)

    def join(self) -> Case:
        r = self.rng
        cols = ["ROWTIME", "s.k", "s.x", "t.x AS tx"] + r.sample(["t.c AS tc", "s.ROWTIME AS sr", "t.ROWTIME AS tr",
                                                               "s.x + t.x AS st", "COALESCE(s.k, t.k) AS kk"],
                                                              r.randint(0, 2))
        lookup = r.choice([None, None, None, "after", "before"])
        if lookup:
            cols.append("r.y AS ry")
        body, _streams, fails = self.join_body(1, cols, fails_ok=True, lookup=lookup)
        return Case("join", body, self.views, fails)

    def table_join(self) -> Case:
        r = self.rng
        cols = ["ROWTIME", "s.k", "s.x", "r.y"] + (["r.k AS rk"] if r.random() < 0.3 else [])
        body, _streams, fails = self.table_join_body(1, cols, fails_ok=True)
        return Case("table_join", body, self.views, fails)


KINDS = ("project", "union", "group", "over", "join", "table_join")


def case(rng: random.Random, name: str, kind: str | None = None) -> Case:
    """One random query (of ``kind``, else any); its views are named after ``name``. A failing
    expression over a stream the query reads twice is not allowed (refusing its row would not
    be the same as the row missing): such a case is drawn again without failing expressions."""
    kind = kind or rng.choice(KINDS)
    state = rng.getstate()
    c = getattr(Gen(rng, name), kind)()
    streams = re.findall(r"\b(?:FROM|JOIN)\s+([ST])\b", c.sql + " " + " ".join(c.views))
    if c.fails and any(streams.count(f.stream) > 1 for f in c.fails):
        rng.setstate(state)
        c = getattr(Gen(rng, name, allow_fail=False), kind)()
    return c


def cases(rng: random.Random, n: int, prefix: str = "q") -> dict[str, Case]:
    """``n`` queries, the kinds in turn, named ``<prefix><i>_<kind>``."""
    out = {}
    for i in range(n):
        kind = KINDS[i % len(KINDS)]
        name = f"{prefix}{i}_{kind}"
        out[name] = case(rng, name.upper(), kind)
    return out


# --------------------------------------------------------------------------- events


def events(rng: random.Random, n: int) -> list[Event]:
    """``n`` random events, then a bound at :data:`END` on every producer. Rows come at the
    stream's clock plus or minus a few minutes (some late, many tied); a bound moves its
    producer's clock on, or repeats it (eclipsed), or now and then goes back (refused)."""
    start = T.parse_timestamp("2006-10-10 09:50:00")
    clock = {s: start for s in STREAMS}
    pclock: dict[tuple, int] = {}
    producers = set()
    out = []
    for _ in range(n):
        s = rng.choice(STREAMS)
        producer = "P2" if s == "S" and rng.random() < 0.15 else None
        producers.add((s, producer))
        if rng.random() < 0.2:
            d = rng.choice([-1, 0, 0, 0, 1, 2, 3, 6]) if rng.random() < 0.1 else rng.choice([0, 0, 1, 2, 3, 6])
            t = pclock.get((s, producer), clock[s]) + d * MINUTE + rng.choice([0, 0, 1])
            out.append(Event(s, "bound", t, strict=rng.random() < 0.3, producer=producer))
        else:
            d = rng.choice([-3, -1, 0, 0, 0, 1, 1, 2, 3, 6])
            t = clock[s] + d * MINUTE + rng.choice([0, 0, 0, 30_000])
            out.append(Event(s, "row", t, {"k": rng.choice([None, "a", "b", "b", "c"]),
                                           "x": rng.choice([None, -2, 0, 1, 3, 5]),
                                           "c": rng.choice([None, "1", "42", "x", "-3", " 7"])}, producer=producer))
        pclock[(s, producer)] = max(pclock.get((s, producer), t), t)
        clock[s] = max(clock[s], t)
    end = T.parse_timestamp(END)
    out += [Event(s, "bound", end, producer=p) for s, p in sorted(producers, key=str)]
    out += [Event(s, "bound", end) for s in STREAMS if (s, None) not in producers]
    return out
