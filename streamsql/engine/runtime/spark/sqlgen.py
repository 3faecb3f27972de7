"""Typed expressions rendered as Spark SQL text, by the function table's templates.

Each expression gives two pieces of SQL: its value, and a *flag* that is TRUE exactly where the
Python evaluator raises a calculator error (the semantics, section 1) -- the argument's flags first, in
the order Python evaluates them (AND, OR, CASE and COALESCE stop early), then the function's own
condition (``try_*`` gave NULL from non-NULL operands, a division by zero, an infinity). A row
whose flag is TRUE produces no value; the runtime re-evaluates it in Python for the message. The
templates use ``try_*`` forms, so neither ANSI mode turns a bad row into a failed query.

``checked=False`` renders the unchecked forms (wrap-around and NULLs, no flags), which only the
benchmark's baseline uses.
"""
from __future__ import annotations

from typing import Callable

from ... import functions as F
from ... import time as sqltime
from ...expr import Call, Col, Expr, Lit, Rowtime
from . import sqlfunctions
from .sqltext import literal, sql_or

#: stands for an INTERVAL literal, which only time arithmetic's templates may take (they read
#: the literal itself); anywhere else it makes invalid SQL rather than a wrong value
_INTERVAL = "<an INTERVAL can only be used in time arithmetic>"


def quote_ident(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class SparkSql:
    """Renders expressions; ``col(i)`` names input column ``i``, ``rowtime(k)`` input k's rowtime."""

    def __init__(self, col: Callable[[int], str], rowtime: Callable[[int], str], checked: bool = True):
        self.col = col
        self.rowtime = rowtime
        self.checked = checked
        self._memo: dict[int, tuple[Expr, str, str]] = {}

    def __call__(self, e: Expr) -> str:
        return self.render(e)

    def render(self, e: Expr) -> str:
        """The value of ``e``."""
        return self._both(e)[0]

    def flag(self, e: Expr) -> str:
        """TRUE where evaluating ``e`` raises a calculator error (never NULL); ``FALSE`` when it
        cannot."""
        f = self._both(e)[1]
        return f if f == "FALSE" else f"coalesce({f}, FALSE)"

    def _both(self, e: Expr) -> tuple[str, str]:
        hit = self._memo.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1], hit[2]
        if isinstance(e, Col):
            out = (self.col(e.index), "FALSE")
        elif isinstance(e, Rowtime):
            out = (self.rowtime(e.input), "FALSE")
        elif isinstance(e, Lit):
            out = (_INTERVAL if isinstance(e.value, sqltime.Interval) else literal(e.value, e.type), "FALSE")
        elif isinstance(e, Call):
            out = self._call(e)
        else:
            raise ValueError(f"cannot render {e!r}")
        self._memo[id(e)] = (e, *out)
        return out

    def _call(self, e: Call) -> tuple[str, str]:
        spec, sql = F.get(e.fn), sqlfunctions.get(e.fn)
        parts = [self._both(a) for a in e.args]
        xs = [p[0] for p in parts]
        if not self.checked:
            return (sql.plain or sql.value)(e, xs), "FALSE"
        v = sql.value(e, xs)
        flags = [p[1] for p in parts]
        if spec.lazy:
            return v, (sql.flag(e, xs, flags) if sql.flag is not None else _fold(flags))
        flag = _fold(flags)
        own = sql.fails(e, xs, v) if sql.fails is not None and F.may_fail(e) else None
        if own is not None:
            if spec.strict:
                guard = " AND ".join(f"{x} IS NOT NULL" for x, a in zip(xs, e.args) if a.type.nullable
                                     or not isinstance(a, (Lit, Rowtime)))
                own = f"({guard} AND {own})" if guard else own
            flag = sql_or(flag, own)
        return v, flag


def _fold(flags) -> str:
    out = "FALSE"
    for f in flags:
        out = sql_or(out, f)
    return out
