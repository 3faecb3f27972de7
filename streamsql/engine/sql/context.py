"""State shared while one statement is analyzed, and what planning a query returns.

Two planning modes exist. ``AUTO`` is used under ``SELECT STREAM`` (and for view bodies): named
streams are streams, tables are relations, and whatever combines a stream is a stream (the STREAM
keyword of sub-queries and views has no effect). ``RELATIONAL`` is a query without STREAM: a
stream can only be read through its retained history.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from sqlglot import exp

from ..plan import CatalogReader, Field, Node
from .source import Source

AUTO = "auto"
RELATIONAL = "relational"


@dataclass
class Reads:
    """Named streams and tables a statement reads, in query order (views included)."""
    streams: list[str] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    #: foreign streams whose rows a view stamps with one of their columns (``col AS ROWTIME``)
    promoted: dict = field(default_factory=dict)

    def stream(self, name: str) -> None:
        if name not in self.streams:
            self.streams.append(name)

    def table(self, name: str) -> None:
        if name not in self.tables:
            self.tables.append(name)


@dataclass
class CteDef:
    name: str
    query: exp.Expr
    columns: list[str] | None
    env: "Env"          # the environment the definition sees (earlier WITH items only)


@dataclass
class Env:
    catalog: CatalogReader
    source: Source
    reads: Reads = field(default_factory=Reads)
    ctes: dict[str, CteDef] = field(default_factory=dict)
    views: tuple[str, ...] = ()        # views being expanded, for cycle detection
    require_stream: bool = False       # the SELECTs being planned are a SELECT STREAM's top level

    def derive(self, **changes) -> "Env":
        return replace(self, **changes)


@dataclass
class Origin:
    """The first relation a non-stream result reads: what a streaming query reports when it
    cannot convert the result to a stream."""
    kind: str          # "table" or "values"
    name: str
    offset: int | None

    def error(self, source: Source):
        if self.kind == "values":
            return source.error("Cannot stream VALUES", self.offset)
        return source.error(f"Cannot convert table '{self.name}' to a stream", self.offset)


@dataclass
class QueryResult:
    node: Node
    columns: list[Field]
    is_stream: bool
    has_rowtime: bool
    rowtime_column: int | None = None
    column_at: list = field(default_factory=list)   # per column: where its select item is
    origin: Origin | None = None
