"""Comparisons, boolean logic and conditional expressions (three-valued, as SQL).

AND, OR, CASE and COALESCE evaluate their arguments left to right and stop as soon as the result
is known, so ``b <> 0 AND a / b > 1`` never divides by zero; every other function evaluates all
its arguments (the Spark runtime's error flags follow the same order:
:mod:`streamsql.engine.runtime.spark.sqlfunctions.logic`)."""
from __future__ import annotations

import decimal
import operator as o

import pyarrow as pa
import pyarrow.compute as pc

from ..types import BOOLEAN, NULLTYPE, common_type
from .spec import Fn, nullable

_OPS = {"=": o.eq, "<>": o.ne, "<": o.lt, "<=": o.le, ">": o.gt, ">=": o.ge}
#: the comparison operators and the IS tests, by their names in the table
COMPARISONS = tuple(_OPS)
IS_TESTS = ("IS_NULL", "IS_NOT_NULL", "IS_TRUE", "IS_FALSE", "IS_NOT_TRUE", "IS_NOT_FALSE")


def compare(op: str):
    f = _OPS[op]

    def g(a, b):
        if a is None or b is None:
            return None
        # an exact number against a DOUBLE compares as two DOUBLEs (as Spark and Java do: a
        # BIGINT near 2**63 equals the DOUBLE it rounds to)
        if isinstance(b, float) and isinstance(a, (int, decimal.Decimal)) and not isinstance(a, bool):
            a = float(a)
        elif isinstance(a, float) and isinstance(b, (int, decimal.Decimal)) and not isinstance(b, bool):
            b = float(b)
        return f(a, b)
    return g


def _cmp_type(ts, arg):
    a, b = ts
    return BOOLEAN.with_nullable(nullable(a, b)) if a.same_kind(b) else None


def _bools(ts) -> bool:
    return all(t.name in ("BOOLEAN", "NULL") for t in ts)


def _logic_type(ts, arg):
    return BOOLEAN.with_nullable(nullable(*ts)) if _bools(ts) else None


def _three_valued(stop: bool):
    """AND (``stop`` False) and OR (``stop`` True) over SQL's three values: the first argument
    equal to ``stop`` decides, else NULL if any was NULL, else ``not stop``; later arguments are
    not evaluated (so their calculator errors are not raised, as in SQL)."""
    def build(e, args):
        def logic(row, rts):
            r = not stop
            for f in args:
                v = f(row, rts)
                if v is stop:
                    return stop
                if v is None:
                    r = None
            return r
        return logic
    return build


_and_python = _three_valued(False)
_or_python = _three_valued(True)


def _common(ts):
    """The common type of ``ts``, nullable when one of them is (NULL alone stays NULL)."""
    t = NULLTYPE
    for v in ts:
        t = common_type(t, v) if t.name != "NULL" else (v if v.name != "NULL" else t)
        if t is None:
            return None
    return t.with_nullable(nullable(*ts)) if t.name != "NULL" else t


def _case_type(ts, arg):
    return _common(list(ts[1:-1:2]) + [ts[-1]])


def _case_python(e, args):
    pairs = [(args[i], args[i + 1]) for i in range(0, len(args) - 1, 2)]
    other = args[-1]

    def case(row, rts):
        for w, th in pairs:
            if w(row, rts) is True:
                return th(row, rts)
        return other(row, rts)
    return case


def _coalesce_type(ts, arg):
    t = _common(ts)
    return t.with_nullable(all(v.nullable for v in ts)) if t is not None and t.name != "NULL" else t


def _coalesce_python(e, args):
    def coalesce(row, rts):
        for f in args:
            v = f(row, rts)
            if v is not None:
                return v
        return None
    return coalesce


def _nullif_python(e):
    c = compare("=")
    return lambda a, b: None if c(a, b) is True else a


def _in_python(e):
    c = compare("=")

    def in_(v, *rest):
        if v is None:
            return None
        r = False
        for x in rest:
            m = c(v, x)
            if m is True:
                return True
            if m is None:
                r = None
        return r
    return in_


def _is(fn):
    if fn == "IS_NULL":
        return lambda e: lambda v: v is None
    if fn == "IS_NOT_NULL":
        return lambda e: lambda v: v is not None
    want = fn.endswith("TRUE")
    neg = "_NOT_" in fn
    return lambda e: lambda v: (v is want) != neg


def _is_type(ts, arg):
    return BOOLEAN.with_nullable(False)


_CMP_SAMPLES = (("INTEGER", "INTEGER"), ("DECIMAL(5,2)", "DOUBLE"), ("VARCHAR", "VARCHAR"), ("TIMESTAMP", "TIMESTAMP"),
                ("BIGINT", "DECIMAL(38,0)"), ("INTEGER", "DOUBLE"), ("REAL", "DOUBLE"), ("BIGINT", "DOUBLE"))
_B2 = (("BOOLEAN", "BOOLEAN"),)

# --------------------------------------------------------------------------- Arrow forms

#: types whose Arrow arrays compare as their Python values do (DECIMAL and INTERVAL do not:
#: Decimal against float, intervals stored as text)
_ARROW_EXACT = {"BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "REAL", "DOUBLE", "VARCHAR", "CHAR",
                "TIMESTAMP"}
_WIDE, _FLOATS = {"BIGINT", "TIMESTAMP"}, {"REAL", "DOUBLE"}
_PC = {"=": "equal", "<>": "not_equal", "<": "less", "<=": "less_equal", ">": "greater", ">=": "greater_equal"}


def _arrow_exact(a, b) -> bool:
    """Arrow compares ``a`` and ``b`` as Python does: both of a type above, and no 64-bit integer
    against a float (both evaluators round it to a double, but whether Arrow's implicit cast
    accepts every 64-bit value is Arrow's choice: left to the row evaluator)."""
    if a.name not in _ARROW_EXACT or b.name not in _ARROW_EXACT:
        return False
    return not ({a.name, b.name} & _WIDE and {a.name, b.name} & _FLOATS)


def _cmp_arrow(e):
    if not _arrow_exact(e.args[0].type, e.args[1].type):
        return None
    f = getattr(pc, _PC[e.fn])
    return lambda xs: f(xs[0], xs[1])


def _fold(kernel):
    def f(xs):
        r = xs[0]
        for x in xs[1:]:
            r = kernel(r, x)
        return r
    return f


def _is_arrow(fn):
    if fn == "IS_NULL":
        return lambda e: lambda xs: pc.is_null(xs[0])
    if fn == "IS_NOT_NULL":
        return lambda e: lambda xs: pc.is_valid(xs[0])
    want, neg = fn.endswith("TRUE"), "_NOT_" in fn

    def build(e):
        def f(xs):
            v = xs[0] if want else pc.invert(xs[0])
            v = pc.fill_null(v, False)
            return pc.invert(v) if neg else v
        return f
    return build


def _in_arrow(e):
    """``v IN (literals)``: TRUE on a match, else NULL when ``v`` is NULL, else FALSE (no NULL
    in the list: a NULL literal would make a miss NULL; left to the row evaluator)."""
    from ..types import arrow_type
    v, rest = e.args[0], e.args[1:]
    # literals only (``expr.Lit``, the one node with a ``value``: the table does not import expr)
    if not all(getattr(x, "value", None) is not None and _arrow_exact(v.type, x.type) for x in rest):
        return None
    # the list in ``v``'s Arrow type, if every literal is exactly a value of it
    try:
        values = pa.array([x.value for x in rest], arrow_type(v.type))
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError):
        return None
    eq = compare("=")
    if not all(eq(a, x.value) is True for a, x in zip(values.to_pylist(), rest)):
        return None

    def f(xs):
        hit = pc.is_in(xs[0], value_set=values)
        return pc.if_else(pc.is_null(xs[0]), pa.scalar(None, pa.bool_()), hit)
    return f


TABLE = [
    *(Fn(op, _cmp_type, lambda e: compare(e.fn), samples=_CMP_SAMPLES, arrow=_cmp_arrow) for op in COMPARISONS),
    Fn("AND", _logic_type, _and_python, lazy=True, strict=False, samples=_B2, arrow=lambda e: _fold(pc.and_kleene)),
    Fn("OR", _logic_type, _or_python, lazy=True, strict=False, samples=_B2, arrow=lambda e: _fold(pc.or_kleene)),
    Fn("NOT", lambda ts, arg: BOOLEAN.with_nullable(ts[0].nullable) if _bools(ts) else None,
       lambda e: lambda v: not v, samples=(("BOOLEAN",),), arrow=lambda e: lambda xs: pc.invert(xs[0])),
    *(Fn(fn, _is_type, _is(fn), strict=False,
         samples=(("BOOLEAN",),) if fn not in ("IS_NULL", "IS_NOT_NULL") else (("INTEGER",), ("VARCHAR",)),
         arrow=_is_arrow(fn))
      for fn in IS_TESTS),
    Fn("CASE", _case_type, _case_python, lazy=True, strict=False,
       samples=(("BOOLEAN", "INTEGER", "INTEGER"), ("BOOLEAN", "VARCHAR", "BOOLEAN", "VARCHAR", "VARCHAR"))),
    Fn("COALESCE", _coalesce_type, _coalesce_python, lazy=True, strict=False,
       samples=(("INTEGER", "INTEGER"), ("VARCHAR", "VARCHAR", "VARCHAR"))),
    Fn("NULLIF", lambda ts, arg: ts[0].with_nullable(True) if ts[0].same_kind(ts[1]) else None, _nullif_python,
       strict=False, samples=(("INTEGER", "INTEGER"), ("VARCHAR", "VARCHAR"))),
    Fn("IN", lambda ts, arg: BOOLEAN.with_nullable(nullable(*ts)) if all(ts[0].same_kind(t) for t in ts[1:]) else None,
       _in_python, strict=False,
       samples=(("INTEGER", "INTEGER", "INTEGER"), ("VARCHAR", "VARCHAR"),
                (("DOUBLE", ("lit", "INTEGER", 7), ("lit", "DOUBLE", 1.5)), None),
                (("VARCHAR", ("lit", "VARCHAR", "x"), ("lit", "VARCHAR", "abc")), None)),
       arrow=_in_arrow),
]
