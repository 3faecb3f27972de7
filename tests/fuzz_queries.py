"""Random queries from a small grammar over the supported features, and random event sequences,
for the differential fuzz (issue 13, item 6; ``tests/test_fuzz.py``, ``scripts/fuzz.sh``).

Queries: filters and projections (with ROWTIME shifts and FLOOR/CEIL of ROWTIME as the new
ROWTIME), UNION ALL, GROUP BY with FLOOR/STEP time keys (HAVING, every aggregate), OVER windows
(RANGE and ROWS, partitioned or not), and joins of every type with a window on either side, a
residual condition or none. Events: rows at the clock plus or minus a few minutes (some late),
ties, NULL keys and values, bounds (strict ones, eclipsed ones), and a second producer on S."""
from __future__ import annotations

import random

from streamsql.engine import time as T
from streamsql.engine.catalog import Event

DDL = "CREATE STREAM S (k VARCHAR(3), x INTEGER); CREATE STREAM T (k VARCHAR(3), x INTEGER);"
MINUTE = 60_000


def _pred(rng: random.Random, a: str = "") -> str:
    atoms = [f"{a}x > {rng.randint(-2, 4)}", f"{a}x < {rng.randint(0, 6)}", f"{a}k = '{rng.choice('ab')}'",
             f"{a}k IS NULL", f"{a}x IS NOT NULL", f"{a}x <> {rng.randint(0, 5)}"]
    p = rng.choice(atoms)
    if rng.random() < 0.4:
        p = f"({p} {rng.choice(['AND', 'OR'])} {rng.choice(atoms)})"
    return p


def _where(rng, a: str = "") -> str:
    return f" WHERE {_pred(rng, a)}" if rng.random() < 0.5 else ""


def _window(rng) -> str:
    m = rng.choice([0, 1, 2, 3, 5])
    f = rng.choice([0, 0, 1, 2, 4])
    kind = rng.randint(0, 2)
    if kind == 0:
        return f"RANGE INTERVAL '{m}' MINUTE PRECEDING"
    if kind == 1:
        return f"RANGE INTERVAL '{f}' MINUTE FOLLOWING"
    return f"RANGE BETWEEN INTERVAL '{m}' MINUTE PRECEDING AND INTERVAL '{f}' MINUTE FOLLOWING"


def _time_key(rng, src: str) -> str:
    return rng.choice([f"FLOOR({src}.ROWTIME TO MINUTE)", f"FLOOR({src}.ROWTIME TO HOUR)",
                       f"STEP({src}.ROWTIME BY INTERVAL '{rng.choice([3, 5, 10])}' MINUTE)"])


def filter_query(rng) -> str:
    rt = rng.choice(["ROWTIME", "S.ROWTIME + INTERVAL '2' MINUTE AS ROWTIME", "FLOOR(S.ROWTIME TO MINUTE) AS ROWTIME",
                     "CEIL(S.ROWTIME TO MINUTE) AS ROWTIME"])
    cols = rng.choice(["k, x", "x + 1 AS y, k", "k"])
    return f"SELECT STREAM {rt}, {cols} FROM S{_where(rng)}"


def union_query(rng) -> str:
    return (f"SELECT STREAM ROWTIME, k, x FROM S{_where(rng)} UNION ALL "
            f"SELECT STREAM ROWTIME, k, x FROM T{_where(rng)}")


def group_by_query(rng) -> str:
    src = rng.choice(["S", "T"])
    tk = _time_key(rng, src)
    keys = [tk] + (["k"] if rng.random() < 0.7 else [])
    aggs = rng.sample(["COUNT(*) AS n", "SUM(x) AS s", "MIN(x) AS mn", "MAX(x) AS mx", "AVG(x) AS a",
                       "COUNT(x) AS cx", "FIRST_VALUE(x) AS f", "LAST_VALUE(x) AS l"], rng.randint(1, 4))
    having = f" HAVING COUNT(*) > {rng.randint(0, 2)}" if rng.random() < 0.3 else ""
    head = f"{tk} AS ROWTIME" if rng.random() < 0.3 else f"{tk} AS p"
    return (f"SELECT STREAM {', '.join([head] + keys[1:] + aggs)} FROM {src}{_where(rng)} "
            f"GROUP BY {', '.join(keys)}{having}")


def over_query(rng) -> str:
    calls = []
    for i in range(rng.randint(1, 3)):
        fn = rng.choice(["SUM(x)", "COUNT(*)", "MIN(x)", "MAX(x)", "AVG(x)", "COUNT(x)"])
        part = "PARTITION BY k " if rng.random() < 0.5 else ""
        frame = (f"RANGE INTERVAL '{rng.choice([1, 3, 5, 10])}' MINUTE PRECEDING" if rng.random() < 0.6
                 else f"ROWS {rng.randint(0, 3)} PRECEDING")
        calls.append(f"{fn} OVER ({part}{frame}) AS w{i}")
    return f"SELECT STREAM ROWTIME, k, x, {', '.join(calls)} FROM S{_where(rng)}"


def join_query(rng) -> str:
    kind = rng.choice(["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"])
    left = f"S OVER ({_window(rng)}) AS s" if rng.random() < 0.6 else "S AS s"
    right = f"T OVER ({_window(rng)}) AS t" if rng.random() < 0.6 or left == "S AS s" else "T AS t"
    cond = "s.k = t.k" + (f" AND s.x {rng.choice(['<=', '<', '>='])} t.x" if rng.random() < 0.3 else "")
    return f"SELECT STREAM ROWTIME, s.k, s.x, t.x AS tx FROM {left} {kind} {right} ON {cond}"


KINDS = {"filter": filter_query, "union": union_query, "group_by": group_by_query, "over": over_query,
         "join": join_query}


def queries(rng: random.Random, n: int) -> dict[str, str]:
    """``n`` queries, the kinds in turn (so every sample has each kind), named ``<kind>_<i>``."""
    names = list(KINDS)
    return {f"{names[i % len(names)]}_{i}": KINDS[names[i % len(names)]](rng) for i in range(n)}


def events(rng: random.Random, n: int) -> list[Event]:
    clock = {"S": T.parse_timestamp("2006-10-10 09:50:00"), "T": T.parse_timestamp("2006-10-10 09:50:00")}
    producers = set()
    out = []
    for _ in range(n):
        s = rng.choice("ST")
        producer = "P2" if s == "S" and rng.random() < 0.15 else None
        producers.add((s, producer))
        d = rng.choice([-3, -1, 0, 0, 1, 1, 2, 3, 6])
        if rng.random() < 0.2:
            t = clock[s] + d * MINUTE + rng.choice([0, 0, 1])      # d < 0: an eclipsed bound
            out.append(Event(s, "bound", t, strict=rng.random() < 0.3, producer=producer))
        else:
            t = clock[s] + d * MINUTE
            out.append(Event(s, "row", t, {"k": rng.choice([None, "a", "b", "b"]),
                                           "x": rng.choice([None, -2, 0, 1, 3, 5])}, producer=producer))
        clock[s] = max(clock[s], t)
    end = T.parse_timestamp("2006-10-12 00:00:00")
    out += [Event(s, "bound", end, producer=p) for s, p in sorted(producers, key=str)]
    out += [Event(s, "bound", end) for s in "ST" if (s, None) not in producers]
    return out
