"""Helpers for the SQL front-end tests: an in-memory catalog that applies analyzed statements,
and short ways to analyze a query or catch its error. (No tests here.)"""
from __future__ import annotations

import pytest

from streamsql.engine import plan as P
from streamsql.engine.errors import SqlError
from streamsql.engine.expr import Call, Col, Expr, Lit, Rowtime
from streamsql.engine.sql import analyze, split_script
from streamsql.engine.types import parse_type_name


def F(name: str, type_name: str, *params: int, nullable: bool = True) -> P.Field:
    return P.Field(name, parse_type_name(type_name, list(params), nullable))


class MemoryCatalog(P.CatalogReader):
    """Streams, tables, views and pumps by canonical name; ``apply`` runs DDL statements."""

    def __init__(self, *objects):
        self.objects = {o.name: o for o in objects}

    def resolve(self, name):
        return self.objects.get(name)

    def add(self, obj):
        self.objects[obj.name] = obj
        return self

    def apply(self, stmt: P.Statement) -> P.Statement:
        if isinstance(stmt, P.CreateStream):
            self.add(P.StreamInfo(stmt.name, [P.Field(c.name, c.type) for c in stmt.columns],
                                  foreign=stmt.foreign is not None))
        elif isinstance(stmt, P.CreateTable):
            self.add(P.TableInfo(stmt.name, [P.Field(c.name, c.type) for c in stmt.columns]))
        elif isinstance(stmt, P.CreateView):
            self.add(P.ViewInfo(stmt.name, stmt.column_names, stmt.body_sql))
        elif isinstance(stmt, P.CreatePump):
            self.add(P.PumpInfo(stmt.name, stmt.target))
        elif isinstance(stmt, P.Drop):
            self.objects.pop(stmt.name, None)
        return stmt

    def run(self, script: str) -> list[P.Statement]:
        """Analyze and apply every statement of a script."""
        return [self.apply(analyze(s, self, script)) for s in split_script(script)]


def sample_catalog() -> MemoryCatalog:
    """The schemas of the seeds: Calcite's Orders (a stream with history), Shipments and
    Products; SQLstream's Orders/Trades, TradeStream, AskStream, Events, P and Q."""
    return MemoryCatalog(
        P.StreamInfo("ORDERS", [F("PRODUCTID", "INTEGER"), F("ORDERID", "INTEGER"), F("UNITS", "INTEGER"),
                                F("TICKER", "VARCHAR", 10), F("AMOUNT", "INTEGER")], history=True),
        P.StreamInfo("SHIPMENTS", [F("ORDERID", "INTEGER")]),
        P.TableInfo("PRODUCTS", [F("PRODUCTID", "INTEGER"), F("NAME", "VARCHAR", 20)]),
        P.StreamInfo("TRADES", [F("ORDERID", "INTEGER"), F("TRADEID", "INTEGER"), F("TICKER", "VARCHAR", 10),
                                F("AMOUNT", "INTEGER"), F("PRICE", "DECIMAL", 6, 2)]),
        P.StreamInfo("TRADESTREAM", [F("TICKER", "VARCHAR", 10), F("PRICE", "DOUBLE"), F("VOLUME", "INTEGER"),
                                     F("QTY", "INTEGER")]),
        P.StreamInfo("ASKSTREAM", [F("TICKER", "VARCHAR", 10), F("PRICE", "DOUBLE")]),
        P.StreamInfo("EVENTS", [F("COLOR", "VARCHAR", 10)]),
        P.StreamInfo("P", [F("NAME", "VARCHAR", 10)]),
        P.StreamInfo("Q", [F("NAME", "VARCHAR", 10)]),
        P.PumpInfo("OLDPUMP", "P"),
    )


def query(sql: str, catalog=None) -> P.Query:
    stmt = analyze(sql, catalog or sample_catalog())
    assert isinstance(stmt, P.SelectStatement), stmt
    return stmt.query


def error(sql: str, catalog=None, script: str | None = None, stmt=None) -> SqlError:
    with pytest.raises(SqlError) as info:
        analyze(stmt if stmt is not None else sql, catalog or sample_catalog(), script)
    return info.value


def where(e: SqlError) -> tuple[int, int]:
    return e.line, e.col


def pos(sql: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """1-based (line, col) of the ``nth`` occurrence of ``needle`` in ``sql``."""
    i = -1
    for _ in range(nth + 1):
        i = sql.index(needle, i + 1)
    line = sql.count("\n", 0, i) + 1
    return line, i - (sql.rfind("\n", 0, i) + 1) + 1


def names(fields) -> list[str]:
    return [f.name for f in fields]


def col(e: Expr) -> int:
    assert isinstance(e, Col), e
    return e.index


def show(e: Expr | None) -> str:
    """A compact text of an expression, for assertions: $i columns, RT0 rowtimes, fn(args)."""
    if e is None:
        return "None"
    if isinstance(e, Col):
        return f"${e.index}"
    if isinstance(e, Rowtime):
        return f"RT{e.input}"
    if isinstance(e, Lit):
        return repr(e.value)
    if isinstance(e, Call):
        extra = f"[{e.arg}]" if e.arg is not None and e.fn != "CAST" else (f"[{e.arg.name}]" if e.fn == "CAST" else "")
        return f"{e.fn}{extra}({', '.join(show(a) for a in e.args)})"
    raise AssertionError(e)


def chain(node: P.Node) -> list[str]:
    """Node class names from the root down the first input."""
    out = []
    while True:
        out.append(type(node).__name__)
        ins = node.inputs()
        if not ins:
            return out
        node = ins[0]
