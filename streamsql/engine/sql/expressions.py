"""Scalar expressions: sqlglot nodes to typed :mod:`streamsql.engine.expr` nodes.

Typing follows SQL (and :mod:`streamsql.engine.types`): INTEGER / INTEGER stays INTEGER, exact
literals are DECIMAL, ``||`` casts non-strings to VARCHAR, a string literal compared with a
TIMESTAMP becomes a TIMESTAMP literal. Aggregates and OVER calls are handed to the clause's
collectors (:class:`Ctx`), which decide whether they are allowed there.
"""
from __future__ import annotations

import decimal
import re
from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp

from .. import time as sqltime
from .. import functions as F
from ..expr import CONSTANT, CalcError, Call, Col, Expr, FUNCTIONS, Lit, Rowtime, compile_expr, monotonicity
from ..types import (BIGINT, BOOLEAN, DOUBLE, INTEGER, INTERVAL, NULLTYPE, TIMESTAMP, SqlType,
                     common_type, decimal_type, parse_type_name)
from . import nodes as N
from .names import Scope
from .source import Source, start_of

AGGREGATES = {exp.Count: "COUNT", exp.Sum: "SUM", exp.Avg: "AVG", exp.Min: "MIN", exp.Max: "MAX",
              exp.FirstValue: "FIRST_VALUE", exp.LastValue: "LAST_VALUE"}


@dataclass
class Ctx:
    """How one clause translates: its names, and who takes aggregates and OVER calls."""
    scope: Scope | None
    source: Source
    clause: str                          # for messages: WHERE, SELECT, ON, GROUP BY, ...
    grouping: Any = None                 # aggregates.Grouping in an aggregate query's SELECT/HAVING
    windows: Any = None                  # windows.WindowCollector in a windowed SELECT list
    constant_message: str | None = None  # column references are errors with this message

    def plain(self, clause: str | None = None) -> "Ctx":
        return replace(self, clause=clause or self.clause, grouping=None, windows=None)


def sentence(message: str) -> str:
    """A library message (lower-case start) as an error message."""
    return message[:1].upper() + message[1:]


def tname(t: SqlType) -> str:
    """A type as error messages show it (nullability left out)."""
    return str(t.with_nullable(True))


def _type_list(types) -> str:
    names = [tname(t) for t in types]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def cannot_apply(source: Source, op: str, types, at) -> Exception:
    return source.error(f"Cannot apply '{op}' to arguments of type {_type_list(types)}", at)


def same_expr(a: Expr, b: Expr) -> bool:
    """Structural equality of analyzed expressions."""
    if type(a) is not type(b):
        return False
    if isinstance(a, Col):
        return a.index == b.index
    if isinstance(a, Rowtime):
        return a.input == b.input
    if isinstance(a, Lit):
        return a.value == b.value and type(a.value) is type(b.value) and a.type.name == b.type.name
    if isinstance(a, Call):
        return (a.fn == b.fn and a.arg == b.arg and a.type.name == b.type.name
                and len(a.args) == len(b.args) and all(same_expr(x, y) for x, y in zip(a.args, b.args)))
    return a is b


def is_constant(e: Expr) -> bool:
    return monotonicity(e) == CONSTANT


def constant_value(e: Expr, source: Source | None = None, at=None):
    """The value of a constant expression (folded with the engine's own evaluator); a
    calculator error in it is an error of the statement (at ``at``)."""
    try:
        return compile_expr(e)((), ())
    except CalcError as err:
        if source is None:
            raise
        raise source.error(sentence(err.describe()), at) from None


def call(fn: str, args, type_: SqlType, arg=None) -> Call:
    assert fn in FUNCTIONS, fn
    return Call(fn, tuple(args), type_, arg)


def result_type(fn: str, args, arg=None) -> SqlType | None:
    """The type of ``fn(args)`` by the function table's rule (None: the arguments do not fit)."""
    return F.get(fn).type([a.type for a in args], arg)


def typed(fn: str, args, arg=None) -> Call:
    """``fn(args)`` typed by the function table, for arguments already checked."""
    t = result_type(fn, args, arg)
    assert t is not None, (fn, [str(a.type) for a in args])
    return call(fn, args, t, arg)


def cast(e: Expr, t: SqlType) -> Expr:
    """``e`` as type ``t`` (a CAST only when the representation changes)."""
    if e.type.name == "NULL" or (e.type.name == t.name and (
            t.name != "DECIMAL" or e.type.scale == t.scale)):
        return e
    t = t.with_nullable(e.type.nullable)
    return call("CAST", (e,), t, t)


def any_nullable(*es: Expr) -> bool:
    return any(e.type.nullable for e in es)


# --------------------------------------------------------------------------- literals

def number_literal(text: str, source: Source, at) -> Lit:
    if re.fullmatch(r"\d+", text):
        v = int(text)
        if v < 2 ** 31:
            return Lit(v, INTEGER.with_nullable(False))
        if v < 2 ** 63:
            return Lit(v, BIGINT.with_nullable(False))
        if len(text) <= 38:
            return Lit(decimal.Decimal(v), decimal_type(len(text), 0, nullable=False))
        raise source.error(f"Numeric literal {text} is out of range", at)
    if "e" in text.lower():
        return Lit(float(text), DOUBLE.with_nullable(False))
    d = decimal.Decimal(text)
    sign, digits, exponent = d.as_tuple()
    scale = max(0, -exponent)
    precision = max(len(digits), scale, 1)
    if precision > 38:
        raise source.error(f"Numeric literal {text} has more than 38 digits", at)
    return Lit(d, decimal_type(precision, scale, nullable=False))


def string_literal(text: str) -> Lit:
    return Lit(text, SqlType("VARCHAR", len(text), None, nullable=False))


def timestamp_literal(text: str, source: Source, at) -> Lit:
    try:
        return Lit(sqltime.parse_timestamp(text), TIMESTAMP.with_nullable(False))
    except sqltime.TimeFormatError as e:
        raise source.error(f"Invalid TIMESTAMP literal '{text}': {e}", at) from None


def as_timestamp(e: Expr, source: Source, at) -> Expr:
    """A string literal used where a TIMESTAMP is expected, converted now."""
    if isinstance(e, Lit) and isinstance(e.value, str) and e.type.is_string:
        return timestamp_literal(e.value, source, at)
    return e


_TYPE_TEXT = re.compile(r"^\s*([A-Za-z][A-Za-z0-9_ ]*?)\s*(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?\s*$")


def sql_type(name: str, params: list[int], source: Source, at, nullable: bool = True) -> SqlType:
    try:
        return parse_type_name(name, params, nullable)
    except ValueError as e:
        raise source.error(sentence(str(e)), at) from None


def type_from_text(text: str, source: Source, at) -> SqlType:
    m = _TYPE_TEXT.match(text)
    if not m:
        raise source.error(f"Unsupported type {text}", at)
    params = [int(x) for x in m.groups()[1:] if x is not None]
    return sql_type(m.group(1), params, source, at)


# --------------------------------------------------------------------------- translation

def translate(node: exp.Expr, ctx: Ctx) -> Expr:
    """The typed expression for ``node`` in clause ``ctx``."""
    if node is None:   # the parser let an operand be missing (e.g. FLOOR())
        raise ctx.source.error(f"Syntax error: an operand is missing in {ctx.clause}")
    if ctx.grouping is not None:
        hit = ctx.grouping.substitute(node, ctx)
        if hit is not None:
            return written(hit, node, ctx)
    handler = _HANDLERS.get(type(node))
    if handler is None:
        for klass, h in _HANDLERS.items():
            if isinstance(node, klass):
                handler = h
                break
    if handler is None:
        if isinstance(node, exp.AggFunc):
            raise ctx.source.error(f"Unsupported aggregate function {func_name(node, ctx.source)}", node)
        if isinstance(node, exp.Func):
            raise ctx.source.error(f"Unsupported function {func_name(node, ctx.source)}", node)
        raise ctx.source.error(f"Unsupported expression '{ctx.source.snippet(node)}'", node)
    return written(handler(node, ctx), node, ctx)


def written(e: Expr, node: exp.Expr, ctx: Ctx) -> Expr:
    """``e`` remembering the text it was written as (calculator errors quote it)."""
    if isinstance(e, (Col, Call)) and e.text is None:
        return replace(e, text=ctx.source.snippet(node))
    return e


def func_name(node: exp.Expr, source: Source) -> str:
    """The function name as written (the token where the call starts)."""
    off = start_of(node)
    if off is not None:
        i = source.token_at_or_after(off)
        if i < len(source.tokens) and source.tokens[i].start == off:
            return source.tokens[i].text.upper()
    if isinstance(node, exp.Anonymous):
        return str(node.this).upper()
    return node.sql_name() if hasattr(node, "sql_name") else type(node).__name__.upper()


def _column(node: exp.Column, ctx: Ctx) -> Expr:
    if isinstance(node.this, exp.Star):
        raise ctx.source.error("'*' is only allowed in the select list or COUNT(*)", node)
    if ctx.constant_message or ctx.scope is None:
        raise ctx.source.error(ctx.constant_message or f"A column cannot be used in {ctx.clause}", node)
    return ctx.scope.resolve(node)


def _literal(node: exp.Literal, ctx: Ctx) -> Expr:
    if node.is_string:
        return string_literal(node.this)
    return number_literal(node.this, ctx.source, node)


def _boolean(node, ctx):
    return Lit(bool(node.this), BOOLEAN.with_nullable(False))


def _null(node, ctx):
    return Lit(None, NULLTYPE)


def _paren(node, ctx):
    return translate(node.this, ctx)


def _neg(node, ctx):
    e = translate(node.this, ctx)
    if isinstance(e, Lit) and e.value is not None and (e.type.is_numeric or e.type.name == "INTERVAL"):
        return Lit(e.value.copy_negate() if isinstance(e.value, decimal.Decimal) else -e.value, e.type)
    t = result_type("NEG", [e])
    if t is None:
        raise cannot_apply(ctx.source, "-", [e.type], node)
    return call("NEG", (e,), t)


_ARITH = {exp.Add: "+", exp.Sub: "-", exp.Mul: "*", exp.Div: "/", exp.Mod: "%"}


def _arith(node, ctx):
    op = _ARITH[type(node)]
    a, b = translate(node.this, ctx), translate(node.expression, ctx)
    t = result_type(op, [a, b])
    if t is None:
        shown = "MOD" if op == "%" and ctx.source.operator_text(node, "%") != "%" else op
        raise cannot_apply(ctx.source, shown, [a.type, b.type], _op_at(node, ctx))
    return call(op, (a, b), t)


def _op_at(node, ctx):
    off = ctx.source.operator_offset(node)
    return off if off is not None else node


_COMPARE = {exp.EQ: "=", exp.NEQ: "<>", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}


def comparable(a: SqlType, b: SqlType) -> bool:
    """Comparable without a CAST: numbers with numbers, strings with strings, else same type."""
    return a.same_kind(b)


def compare(op: str, a: Expr, b: Expr, ctx: Ctx, at, shown: str | None = None,
            a_at=None, b_at=None) -> Expr:
    """``a op b`` for a comparison; a string literal facing a TIMESTAMP becomes a TIMESTAMP."""
    if a.type.name == "TIMESTAMP":
        b = as_timestamp(b, ctx.source, b_at if b_at is not None else at)
    if b.type.name == "TIMESTAMP":
        a = as_timestamp(a, ctx.source, a_at if a_at is not None else at)
    t = result_type(op, [a, b])
    if t is None:
        raise cannot_apply(ctx.source, shown or op, [a.type, b.type], at)
    return call(op, (a, b), t)


def _compare(node, ctx):
    op = _COMPARE[type(node)]
    a, b = translate(node.this, ctx), translate(node.expression, ctx)
    at = _op_at(node, ctx)
    return compare(op, a, b, ctx, at, ctx.source.operator_text(node, op), node.this, node.expression)


def require_boolean(e: Expr, source: Source, what: str, at) -> Expr:
    if e.type.name not in ("BOOLEAN", "NULL"):
        raise source.error(f"{what} must be a BOOLEAN expression, not {tname(e.type)}", at)
    return e


def _logic(node, ctx):
    op = "AND" if isinstance(node, exp.And) else "OR"
    a, b = translate(node.this, ctx), translate(node.expression, ctx)
    t = result_type(op, [a, b])
    if t is None:
        raise cannot_apply(ctx.source, op, [a.type, b.type], _op_at(node, ctx))
    return call(op, (a, b), t)


def _not(node, ctx):
    inner = node.this
    while isinstance(inner, exp.Paren) and isinstance(inner.this, exp.Is):
        inner = inner.this
    if isinstance(inner, exp.Is) and isinstance(inner.expression, (exp.Boolean, exp.Null)):
        return _is(inner, ctx, negate=True)
    e = translate(node.this, ctx)
    t = result_type("NOT", [e])
    if t is None:
        raise cannot_apply(ctx.source, "NOT", [e.type], node)
    return call("NOT", (e,), t)


def _is(node, ctx, negate: bool = False):
    e = translate(node.this, ctx)
    target = node.expression
    negate = negate != bool(node.args.get("negate"))
    if isinstance(target, exp.Null):
        return typed("IS_NOT_NULL" if negate else "IS_NULL", (e,))
    if isinstance(target, exp.Boolean):
        if e.type.name not in ("BOOLEAN", "NULL"):
            raise cannot_apply(ctx.source, "IS " + ("NOT " if negate else "") + ("TRUE" if target.this else "FALSE"),
                               [e.type], _op_at(node, ctx))
        fn = ("IS_NOT_" if negate else "IS_") + ("TRUE" if target.this else "FALSE")
        return typed(fn, (e,))
    raise ctx.source.error(f"Unsupported IS predicate '{ctx.source.snippet(node)}'", node)


def _between(node, ctx):
    if node.args.get("symmetric"):
        raise ctx.source.error("BETWEEN SYMMETRIC is not supported", node)
    x = translate(node.this, ctx)
    lo, hi = translate(node.args["low"], ctx), translate(node.args["high"], ctx)
    at = _op_at(node, ctx)
    a = compare(">=", x, lo, ctx, at, "BETWEEN", node.this, node.args["low"])
    b = compare("<=", x, hi, ctx, at, "BETWEEN", node.this, node.args["high"])
    return typed("AND", (a, b))


def _in(node, ctx):
    if node.args.get("query") is not None or node.args.get("unnest") is not None \
            or node.args.get("field") is not None:
        raise ctx.source.error("IN supports a list of values only (no sub-queries)", node)
    x = translate(node.this, ctx)
    at = _op_at(node, ctx)
    values = []
    for v in node.expressions:
        e = translate(v, ctx)
        if x.type.name == "TIMESTAMP":
            e = as_timestamp(e, ctx.source, v)
        if not comparable(x.type, e.type):
            raise cannot_apply(ctx.source, "IN", [x.type, e.type], at)
        values.append(e)
    return typed("IN", (x, *values))


def _like(node, ctx, escape: exp.Expr | None = None):
    if isinstance(node, exp.ILike):
        raise ctx.source.error("ILIKE is not supported; use LOWER(x) LIKE ...", node)
    a, p = translate(node.this, ctx), translate(node.expression, ctx)
    at = _op_at(node, ctx)
    for e in (a, p):
        if not (e.type.is_string or e.type.name == "NULL"):
            raise cannot_apply(ctx.source, "LIKE", [a.type, p.type], at)
    esc = None
    if escape is not None:
        lit = translate(escape, ctx.plain())
        if not (isinstance(lit, Lit) and isinstance(lit.value, str) and len(lit.value) == 1):
            raise ctx.source.error("ESCAPE must be a string literal of one character", escape)
        esc = lit.value
    e = typed("LIKE", (a, p), esc)
    if node.args.get("negate"):
        e = typed("NOT", (e,))
    return e


def _escape(node, ctx):
    inner = node.this
    if not isinstance(inner, exp.Like):
        raise ctx.source.error("ESCAPE is only supported with LIKE", node)
    return _like(inner, ctx, node.expression)


def unify(exprs: list[Expr], source: Source, what: str, at) -> tuple[list[Expr], SqlType]:
    """Bring expressions to their common type (CASE branches, COALESCE arguments)."""
    t = NULLTYPE
    for e in exprs:
        c = common_type(t, e.type)
        if c is None:
            raise source.error(f"{what} has incompatible types {tname(t)} and {tname(e.type)}", at)
        t = c
    t = t.with_nullable(any_nullable(*exprs)) if t.name != "NULL" else t
    return [cast(e, t) for e in exprs], t


def _case(node, ctx):
    operand = node.this
    op = translate(operand, ctx) if operand is not None else None
    conds, values = [], []
    for branch in node.args.get("ifs") or []:
        w = translate(branch.this, ctx)
        if op is not None:
            w = compare("=", op, w, ctx, branch.this, "=")
        elif w.type.name not in ("BOOLEAN", "NULL"):
            raise ctx.source.error(f"CASE WHEN condition must be a BOOLEAN expression, not {tname(w.type)}",
                                   branch.this)
        conds.append(w)
        values.append(translate(branch.args["true"], ctx))
    default = node.args.get("default")
    else_ = translate(default, ctx) if default is not None else Lit(None, NULLTYPE)
    unified, t = unify(values + [else_], ctx.source, "CASE", node)
    if default is None:
        t = t.with_nullable(True)
        unified[-1] = Lit(None, t)
    args = []
    for c, v in zip(conds, unified):
        args += [c, v]
    args.append(unified[-1])
    return typed("CASE", args)


def _cast(node, ctx):
    to = node.args["to"]
    target = type_from_text(ctx.source.snippet(to), ctx.source, to)
    e = translate(node.this, ctx)
    if target.name == "TIMESTAMP" and isinstance(e, Lit) and isinstance(e.value, str):
        try:
            return Lit(sqltime.parse_timestamp(e.value), TIMESTAMP.with_nullable(False))
        except sqltime.TimeFormatError:
            pass
    if e.type.name == "INTERVAL" and not target.is_string:
        raise ctx.source.error(f"Cannot cast INTERVAL to {tname(target)}", node)
    t = target.with_nullable(e.type.nullable)
    return call("CAST", (e,), result_type("CAST", [e], t), t)


def _timestamp_literal(node, ctx):
    lit = node.this
    if not (isinstance(lit, exp.Literal) and lit.is_string):
        raise ctx.source.error("TIMESTAMP must be followed by a string literal", node)
    return timestamp_literal(lit.this, ctx.source, node)


def interval_value(node: exp.Interval, source: Source) -> sqltime.Interval:
    sign, v = 1, node.this
    while isinstance(v, (exp.Neg, exp.Paren)):
        if isinstance(v, exp.Neg):
            sign = -sign
        v = v.this
    if not isinstance(v, exp.Literal):
        raise source.error("INTERVAL needs a literal value, as in INTERVAL '10' MINUTE", node)
    unit = node.args.get("unit")
    if unit is None:
        raise source.error("INTERVAL needs a unit, as in INTERVAL '10' MINUTE", node)
    if isinstance(unit, exp.IntervalSpan):
        first, last = unit.this.name, unit.expression.name
    else:
        first, last = unit.name, None
    try:
        iv = sqltime.parse_interval(str(v.this), first, last)
    except sqltime.TimeFormatError as e:
        raise source.error(f"Invalid interval: {e}", node) from None
    return -iv if sign < 0 else iv


def _interval(node, ctx):
    return Lit(interval_value(node, ctx.source), INTERVAL.with_nullable(False))


def _dpipe(node, ctx):
    parts = []
    for side in (node.this, node.expression):
        e = translate(side, ctx)
        if not e.type.is_string:
            e = call("CAST", (e,), SqlType("VARCHAR", nullable=e.type.nullable),
                     SqlType("VARCHAR", nullable=e.type.nullable))
        parts.append(e)
    return typed("||", parts)


def _floor_ceil(node, ctx):
    floor = isinstance(node, exp.Floor)
    name = "FLOOR" if floor else "CEIL"
    x = translate(node.this, ctx)
    to = node.args.get("to")
    if node.args.get("decimals") is not None:
        raise ctx.source.error(f"{name} takes one argument (or <timestamp> TO <unit>)", node)
    if to is not None:
        try:
            unit = sqltime.unit_name(to.name)
        except sqltime.TimeFormatError as e:
            raise ctx.source.error(sentence(str(e)), to) from None
        fn = "FLOOR_TO" if floor else "CEIL_TO"
        if result_type(fn, [x], unit) is None:
            raise cannot_apply(ctx.source, f"{name} ... TO {unit}", [x.type], node)
        return typed(fn, (x,), unit)
    if result_type(name, [x]) is None:
        raise cannot_apply(ctx.source, func_name(node, ctx.source), [x.type], node)
    return typed(name, (x,))


def _step(node, ctx):
    x = translate(node.this, ctx)
    iv = translate(node.expression, ctx.plain())
    if x.type.name not in ("TIMESTAMP", "NULL") or iv.type.name != "INTERVAL":
        raise cannot_apply(ctx.source, "STEP", [x.type, iv.type], node)
    if not is_constant(iv):
        raise ctx.source.error("STEP needs a constant interval", node.expression)
    value = constant_value(iv, ctx.source, node.expression)
    if not value.is_fixed or value.millis <= 0:
        raise ctx.source.error("STEP needs a positive day-time interval (not months or years)", node.expression)
    return typed("STEP", (x,), value)


def _need(ctx, node, kind: str, *es: Expr):
    ok = {"numeric": lambda t: t.is_numeric, "string": lambda t: t.is_string,
          "integer": lambda t: t.is_integer}[kind]
    for e in es:
        if not (ok(e.type) or e.type.name == "NULL"):
            raise cannot_apply(ctx.source, func_name(node, ctx.source), [x.type for x in es], node)


def _unary_fn(fn: str, kind: str):
    def handler(node, ctx):
        x = translate(node.this, ctx)
        _need(ctx, node, kind, x)
        return typed(fn, (x,))
    return handler


def _substring(node, ctx):
    s = translate(node.this, ctx)
    start = node.args.get("start")
    length = node.args.get("length")
    args = [s] + [translate(a, ctx) for a in (start, length) if a is not None]
    _need(ctx, node, "string", s)
    _need(ctx, node, "integer", *args[1:])
    return typed("SUBSTRING", args)


def _trim(node, ctx):
    s = translate(node.this, ctx)
    args = [s]
    chars = node.args.get("expression")
    if chars is not None:
        args.append(translate(chars, ctx))
    _need(ctx, node, "string", *args)
    mode = node.args.get("position")
    mode = (mode.name if isinstance(mode, exp.Expr) else str(mode)).upper() if mode else "BOTH"
    return typed("TRIM", args, mode)


def _position(node, ctx):
    if node.args.get("position") is not None:
        raise ctx.source.error("POSITION takes two arguments: POSITION(a IN b)", node)
    sub, s = translate(node.args["substr"], ctx), translate(node.this, ctx)
    _need(ctx, node, "string", sub, s)
    return typed("POSITION", (sub, s))


def _round(node, ctx):
    x = translate(node.this, ctx)
    args = [x]
    if node.args.get("decimals") is not None:
        args.append(translate(node.args["decimals"], ctx))
    _need(ctx, node, "numeric", x)
    if len(args) > 1:
        _need(ctx, node, "integer", args[1])
    return typed("ROUND", args)


def _double_fn(fn: str):
    def handler(node, ctx):
        args = [translate(node.this, ctx)]
        if node.args.get("expression") is not None:
            args.append(translate(node.expression, ctx))
        _need(ctx, node, "numeric", *args)
        return typed(fn, args)
    return handler


def _coalesce(node, ctx):
    args = [translate(a, ctx) for a in [node.this, *node.expressions]]
    unified, _t = unify(args, ctx.source, "COALESCE", node)
    return typed("COALESCE", unified)


def _nullif(node, ctx):
    a, b = translate(node.this, ctx), translate(node.expression, ctx)
    compare("=", a, b, ctx, node, "NULLIF")
    return typed("NULLIF", (a, b))


def _aggregate(node, ctx):
    name = AGGREGATES[type(node)]
    raise ctx.source.error(f"Aggregate function {name} is not allowed in {ctx.clause}", node)


def _over(node, ctx):
    if ctx.windows is None:
        raise ctx.source.error(f"Windowed aggregation (OVER) is not allowed in {ctx.clause}", node)
    return ctx.windows.add(node, ctx)


def _unsupported(message: str):
    def handler(node, ctx):
        raise ctx.source.error(message, node)
    return handler


def _anonymous(node, ctx):
    from .window_names import unknown_function
    name = func_name(node, ctx.source)
    raise ctx.source.error(unknown_function(name) or f"Unknown function {name}", node)


_HANDLERS = {
    exp.Column: _column,
    exp.Literal: _literal,
    exp.Boolean: _boolean,
    exp.Null: _null,
    exp.Paren: _paren,
    exp.Neg: _neg,
    **{k: _arith for k in _ARITH},
    **{k: _compare for k in _COMPARE},
    exp.And: _logic,
    exp.Or: _logic,
    exp.Not: _not,
    exp.Is: _is,
    exp.Between: _between,
    exp.In: _in,
    exp.Like: _like,
    exp.ILike: _like,
    exp.Escape: _escape,
    exp.Case: _case,
    exp.Cast: _cast,
    N.TimestampLiteral: _timestamp_literal,
    exp.Interval: _interval,
    exp.DPipe: _dpipe,
    exp.Floor: _floor_ceil,
    exp.Ceil: _floor_ceil,
    N.Step: _step,
    exp.Abs: _unary_fn("ABS", "numeric"),
    exp.Upper: _unary_fn("UPPER", "string"),
    exp.Lower: _unary_fn("LOWER", "string"),
    exp.Length: _unary_fn("CHAR_LENGTH", "string"),
    exp.Substring: _substring,
    exp.Trim: _trim,
    exp.StrPosition: _position,
    exp.Round: _round,
    exp.Pow: _double_fn("POWER"),
    exp.Sqrt: _double_fn("SQRT"),
    exp.Ln: _double_fn("LN"),
    exp.Exp: _double_fn("EXP"),
    exp.Coalesce: _coalesce,
    exp.Nullif: _nullif,
    **{k: _aggregate for k in AGGREGATES},
    N.Over: _over,
    exp.Anonymous: _anonymous,
    exp.Placeholder: _unsupported("Bind parameters (?) are not supported; write the values"),
    exp.Subquery: _unsupported("Sub-queries are only supported in FROM"),
    exp.Select: _unsupported("Sub-queries are only supported in FROM"),
    exp.Exists: _unsupported("EXISTS is not supported"),
    exp.Star: _unsupported("'*' is only allowed in the select list or COUNT(*)"),
}
