"""What a saved query needs, as SQL: the streams it reads (and those that feed them through
pumps), the tables with their rows as ``INSERT``s, the views and pumps, in the catalog's order,
each spelled as the user wrote it."""
from __future__ import annotations

import math
from dataclasses import dataclass

from .. import time as sqltime
from ..sql.spelling import names_in, sql_name, written_names


@dataclass
class Closure:
    """The definitions a query depends on, by kind, in the catalog's order."""
    streams: list[str]
    tables: list[str]
    views: list[str]
    pumps: list[str]


def closure(wb, q) -> Closure:
    """Streams, tables, views and pumps the query depends on, in the catalog's order."""
    from ..sql import analyze
    c = wb.catalog
    streams, tables, views, pumps = set(q.plan.streams), set(q.plan.tables), set(), set()
    texts = [q.sql]
    while texts:
        while texts:                      # views named in the query, the pumps and other views
            names = names_in(texts.pop())
            for v, d in c.views.items():
                if v in names and v not in views:
                    views.add(v)
                    texts.append(d.body_sql)
        for p, d in c.pumps.items():      # pumps into the streams found so far, and what they read
            if d["target"] in streams and p not in pumps:
                pumps.add(p)
                pq = analyze(d["sql"], c).query
                streams |= set(pq.streams)
                tables |= set(pq.tables)
                texts.append(d["sql"])
    order = list(c.streams)
    return Closure([s for s in order if s in streams], [t for t in c.tables if t in tables],
                    [v for v in c.views if v in views], wb.pumps.order(sorted(pumps)))


# --------------------------------------------------------------------------- SQL text

def _literal(v, t) -> str:
    if v is None:
        return "NULL"
    if t.name == "TIMESTAMP":
        return f"TIMESTAMP '{sqltime.format_timestamp(v)}'"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, float) and not math.isfinite(v):
        return f"CAST('{v}' AS DOUBLE)"
    return str(v)


def ddl(wb, cl: Closure) -> list[str]:
    """The statements that make the closure again, in order."""
    c = wb.catalog
    out = []
    for s in cl.streams:
        d = c.streams[s]
        sp = written_names(d.sql)
        cols = ", ".join(f"{sql_name(f.name, sp)} {f.type}" for f in d.fields)
        out.append(d.sql or f"CREATE STREAM {sql_name(s)} ({cols})")
    for t in cl.tables:
        d = c.tables[t]
        sp = written_names(d.sql)
        out.append(d.sql or f"CREATE TABLE {sql_name(t)} ("
                   + ", ".join(f"{sql_name(f.name, sp)} {f.type}" for f in d.fields) + ")")
        if d.rows:
            cols = ", ".join(sql_name(f.name, sp) for f in d.fields)
            rows = ",\n  ".join("(" + ", ".join(_literal(v, f.type) for v, f in zip(r, d.fields)) + ")"
                                for r in d.rows)
            out.append(f"INSERT INTO {sql_name(t, sp)} ({cols}) VALUES\n  {rows}")
    for v in cl.views:
        out.append(c.views[v].sql)
    for p in cl.pumps:
        d = c.pumps[p]
        sp = written_names(c.streams[d["target"]].sql)
        cols = ", ".join(sql_name(x, sp) for x in d["columns"])
        out.append(f"CREATE PUMP {sql_name(p)} AS INSERT INTO {sql_name(d['target'], sp)} ({cols})\n{d['sql']}")
    return out


