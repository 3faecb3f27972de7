"""Identifier rules and name scopes.

Unquoted identifiers are case-insensitive and stored upper-cased; quoted ones are exact. A
:class:`Scope` is what a clause can see: the relations of its FROM clause laid out in one tuple
(``offset`` says where each starts) and how each relation's ROWTIME reads there (``Rowtime(k)``
inside a join's ON, an extra column above a join, ``Rowtime(0)`` for a single input).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from ..expr import Col, Expr
from ..plan import Field
from .source import Source

ROWTIME = "ROWTIME"


class NotAName(Exception):
    """Raised where the parser accepted something else in the place of a name; the analyzer
    reports it as a syntax error at ``node``."""

    def __init__(self, node):
        super().__init__("expected a name")
        self.node = node


def canonical(ident) -> str:
    """The canonical form of an identifier node (or of a bare name, taken as unquoted)."""
    if isinstance(ident, exp.Identifier):
        return ident.this if ident.quoted else ident.this.upper()
    if isinstance(ident, exp.Column) and not ident.args.get("table"):
        return canonical(ident.this)
    if isinstance(ident, str):
        return ident.upper()
    if isinstance(ident, exp.Var) and isinstance(ident.this, str):
        return ident.this.upper()
    raise NotAName(ident)


def column_parts(node: exp.Column) -> tuple[str | None, str]:
    """(qualifier, name) of a column reference, both canonical."""
    table = node.args.get("table")
    return (canonical(table) if table is not None else None), canonical(node.this)


@dataclass
class Rel:
    """One FROM item as seen by a clause."""
    alias: str | None            # canonical; None for an unaliased sub-query
    fields: list[Field]
    offset: int = 0              # index of its first field in the scope's tuple
    rowtime: Expr | None = None  # its ROWTIME here, None if it has none (or it is not visible)
    hidden: frozenset = field(default_factory=frozenset)   # field indices excluded from * and names
    has_rowtime: bool = False
    #: its ROWTIME is the rowtime of every row the FROM clause gives (a single input, or the stream
    #: side of a stream-table join), so that ``x.ROWTIME`` in a select list is the output's ROWTIME
    gives_rowtime: bool = False

    def visible(self):
        for i, f in enumerate(self.fields):
            if i not in self.hidden:
                yield i, f


class Scope:
    """Name resolution for one clause."""

    def __init__(self, rels: list[Rel], source: Source, rowtime: Expr | None = None,
                 ambiguous_rowtime: bool = False):
        self.rels = rels
        self.source = source
        self.rowtime = rowtime                    # what unqualified ROWTIME means here
        self.ambiguous_rowtime = ambiguous_rowtime

    @property
    def single(self) -> bool:
        return len(self.rels) == 1

    def rel(self, qualifier: str, at) -> Rel:
        for r in self.rels:
            if r.alias == qualifier:
                return r
        raise self.source.error(f"Table '{qualifier}' not found", at)

    def resolve(self, node: exp.Column) -> Expr:
        qualifier, name = column_parts(node)
        if node.args.get("db") is not None:
            raise self.source.error(
                f"Column '{self.source.snippet(node)}': only one qualifier is allowed", node)
        if qualifier is not None:
            rel = self.rel(qualifier, node)
            hits = [(rel, i, f) for i, f in rel.visible() if f.name == name]
            if not hits:
                if name == ROWTIME and rel.rowtime is not None:
                    return rel.rowtime
                if name == ROWTIME and rel.has_rowtime:
                    raise self.source.error(
                        f"Column '{qualifier}.ROWTIME' cannot be used here", node)
                raise self.source.error(f"Column '{name}' not found in '{qualifier}'", node)
        else:
            hits = [(r, i, f) for r in self.rels for i, f in r.visible() if f.name == name]
            if not hits and name == ROWTIME:
                if self.ambiguous_rowtime:
                    raise self.source.error("Column 'ROWTIME' is ambiguous", node)
                if self.rowtime is not None:
                    return self.rowtime
        if not hits:
            raise self.source.error(f"Column '{name}' not found", node)
        if len(hits) > 1:
            raise self.source.error(f"Column '{name}' is ambiguous", node)
        rel, i, f = hits[0]
        return Col(rel.offset + i, f.name, f.type)

    def is_implicit_rowtime(self, node: exp.Column) -> bool:
        """Whether ``node`` names a relation's implicit ROWTIME (not a real column)."""
        qualifier, name = column_parts(node)
        if name != ROWTIME:
            return False
        if qualifier is None:
            return not any(f.name == ROWTIME for r in self.rels for _, f in r.visible())
        rel = next((r for r in self.rels if r.alias == qualifier), None)
        return rel is not None and not any(f.name == ROWTIME for _, f in rel.visible())

    def star(self, qualifier: str | None, at) -> list[tuple[str, Expr]]:
        rels = self.rels if qualifier is None else [self.rel(qualifier, at)]
        return [(f.name, Col(r.offset + i, f.name, f.type)) for r in rels for i, f in r.visible()]
