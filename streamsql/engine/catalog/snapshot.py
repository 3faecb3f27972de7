"""The catalog as one JSON document (``catalog.json``, the workspace's commit point) and back:
definitions, per-stream state and the rows still waiting for a slow producer. Values JSON cannot
hold exactly are tagged (``{"$d": "1.50"}`` a DECIMAL, ``{"$i": [months, millis]}`` an INTERVAL)."""
from __future__ import annotations

import decimal

from .. import time as sqltime
from ..plan import Field
from ..types import SqlType
from ..values import ValueRefused, coerce
from .definitions import StreamDef, TableDef, ViewDef
from .producers import Producer, StreamState


def to_json(c) -> dict:
    """The snapshot of catalog ``c``."""
    return {
        "next_step": c.next_step,
        "uid_counter": c.uid_counter,
        "late_commits": c.late_commits or 0,
        "streams": [{"name": d.name, "uid": d.uid, "fields": [_field_json(f) for f in d.fields],
                     "system": d.system, "foreign": d.foreign, "history": d.history, "sql": d.sql,
                     "history_window": d.history_window, "state": _state_json(c.state[d.name])}
                    for d in c.streams.values()],
        "tables": [{"name": t.name, "fields": [_field_json(f) for f in t.fields], "sql": t.sql,
                    "rows": [[_value_json(v) for v in r] for r in t.rows]} for t in c.tables.values()],
        "views": [{"name": v.name, "column_names": v.column_names, "body_sql": v.body_sql, "sql": v.sql}
                  for v in c.views.values()],
        "pumps": list(c.pumps.values()),
    }


def fill_from_json(c, j: dict) -> None:
    """Set catalog ``c``'s definitions and state from snapshot ``j`` (a ``KeyError`` or
    ``TypeError`` for a document that is not one)."""
    c.next_step = j["next_step"]
    c.uid_counter = j["uid_counter"]
    late = j.get("late_commits")
    if late is not None and (not isinstance(late, int) or isinstance(late, bool) or late < 0):
        raise TypeError("\"late_commits\" is not a count")
    c.late_commits = late
    c.streams, c.state, c.tables, c.views, c.pumps = {}, {}, {}, {}, {}
    for s in j["streams"]:
        fields = [_field_from(f) for f in s["fields"]]
        d = StreamDef(s["name"], s["uid"], fields, s["system"], s["foreign"], s["history"], s["sql"])
        d.history_window = s.get("history_window")
        c.streams[d.name] = d
        c.state[d.name] = _state_from(s["state"], d)
    for t in j["tables"]:
        fields = [_field_from(f) for f in t["fields"]]
        c.tables[t["name"]] = TableDef(t["name"], fields,
                                       [_table_row(fields, r) for r in t["rows"]], t["sql"])
    for v in j["views"]:
        c.views[v["name"]] = ViewDef(v["name"], v["column_names"], v["body_sql"], v["sql"])
    for p in j.get("pumps", []):
        c.pumps[p["name"]] = p


def _field_json(f: Field) -> dict:
    return {"name": f.name, "type": f.type.to_json()}


def _field_from(j: dict) -> Field:
    return Field(j["name"], SqlType.from_json(j["type"]))


def _value_json(v):
    if isinstance(v, decimal.Decimal):
        return {"$d": str(v)}
    if isinstance(v, sqltime.Interval):
        return {"$i": [v.months, v.millis]}
    return v


def _table_row(fields: list[Field], r: list) -> tuple:
    """A table row as its columns' types: a workspace written before INSERT typed its values
    may hold a DECIMAL in a DOUBLE column. A value the rules refuse stays as it was."""
    out = []
    for f, v in zip(fields, r):
        v = _value_from(v)
        try:
            v = coerce(v, f.type.with_nullable(True))
        except ValueRefused:
            pass
        out.append(v)
    return tuple(out)


def _value_from(v):
    if isinstance(v, dict) and "$d" in v:
        return decimal.Decimal(v["$d"])
    if isinstance(v, dict) and "$i" in v:
        return sqltime.Interval(*v["$i"])
    return v


def _state_json(st: StreamState) -> dict:
    return {"bound": st.bound, "late_count": st.late_count, "rows_in": st.rows_in, "bounds_in": st.bounds_in,
            "eclipsed": st.eclipsed,
            "producers": {p: [s.clock, s.attached] for p, s in st.producers.items()},
            "pending": [[r, s, p, [_value_json(v) for v in vals]] for r, s, p, vals in st.pending]}


def _state_from(j: dict, d: StreamDef) -> StreamState:
    st = StreamState(j["bound"], {p: Producer(c, a) for p, (c, a) in j["producers"].items()}, [],
                     j["late_count"], j["rows_in"], j.get("bounds_in", 0), j.get("eclipsed", 0))
    st.pending = [(r, s, p, tuple(_value_from(v) for v in vals)) for r, s, p, vals in j["pending"]]
    return st
