"""The function table: every SQL function is one entry of the engine's table
(``streamsql.engine.functions``) and one of the Spark runtime's SQL table
(``runtime/spark/sqlfunctions``), and its Python evaluator and Spark SQL agree on sample values
(NULLs, extremes, bad strings included): the same value, and a calculator error (Spark's flag)
exactly where Python raises one.

"They cover the same set" is checked by: the dialect only builds calls the engine's table holds,
the Spark table has exactly the same names, and every entry compiles and renders for every sample
signature it lists.
"""
from __future__ import annotations

import decimal
import itertools
import math
import random
from collections import defaultdict

import pyarrow as pa
import pytest

from streamsql.engine import functions as F
from streamsql.engine import time as T
from streamsql.engine.expr import FUNCTIONS, CalcError, Call, Col, Lit, compile_expr
from streamsql.engine.functions.spec import TS_MAX, TS_MIN, to_real
from streamsql.engine.runtime.spark import sqlfunctions
from streamsql.engine.runtime.spark.sqltext import spark_type_ddl
from streamsql.engine.types import INTERVAL, arrow_type, parse_type_name

D = decimal.Decimal
TS = T.parse_timestamp

SAMPLES = {
    "TINYINT": [None, 0, 1, -1, 2, 127, -128, 100],
    "SMALLINT": [None, 0, 1, -1, 32767, -32768, 300],
    "INTEGER": [None, 0, 1, -1, 7, 2147483647, -2147483648, 3000000, 1000, 46341, -46341],
    "BIGINT": [None, 0, 1, -1, 2**63 - 1, -2**63, 3037000500, 10**12],
    "DECIMAL(5,2)": [None, D("0.00"), D("1.50"), D("-1.50"), D("999.99"), D("-999.99"), D("0.01"), D("2.50")],
    "DECIMAL(38,0)": [None, D(0), D(1), D(-1), D(10**37), D(10**38 - 1), D(-(10**38 - 1)), D(2)],
    "REAL": [None] + [to_real(v) for v in (0.0, 1.5, -2.5, 3e38, -3e38, 1e-3, 16777217.0, 0.1)],
    "DOUBLE": [None, 0.0, -0.0, 1.5, -2.25, 1e308, -1e308, 0.1, 2.0, 1e-300, 9.223372036854775807e18],
    "VARCHAR": [None, "", "12", " 7 ", "x", "1.5", "-3", "1e3", "2006-10-10 10:00:00", "2006-10-10", "true", "NO",
                "99999999999", "abc", "2006-02-30", "NaN", "Infinity", ".5", "1.", "0001-01-01",
                "9999-12-31 23:59:59.999", "2006-10-10T10:00:00Z", "\t12\n", "1_0", "+5", "2006-1-5 1:00",
                "2006-10-10 10:00:00.1234", "2006-10-10 10:00:00.5", "1e400", "0000-01-01", "ab%", "_b%", "xbx"],
    "TIMESTAMP": [None, 0, TS("2006-10-10 10:00:00"), TS("2006-10-10 10:59:59.999"), TS_MIN, TS_MAX, TS_MAX - 1000,
                  -1, TS("9999-12-31 00:00:00"), TS("0001-01-01 00:00:00.001")],
    "BOOLEAN": [None, True, False],
}
#: transcendental functions: Java's and C's math libraries may differ in the last bit
APPROX = {"LN", "EXP", "POWER"}
MAX_ROWS = 400


def sql_type(name: str):
    if name == "INTERVAL":
        return INTERVAL
    base, _, rest = name.partition("(")
    params = [int(x) for x in rest.rstrip(")").split(",")] if rest else []
    return parse_type_name(base, params)


def signatures():
    """(fn, [arg specs], arg) for every sample the table lists."""
    for name, fn in sorted(F.TABLE.items()):
        assert fn.samples, f"{name} lists no samples"
        for s in fn.samples:
            if len(s) == 2 and isinstance(s[0], tuple) and not (s[0] and s[0][0] == "lit"):
                yield name, list(s[0]), s[1]
            else:
                yield name, list(s), None


def build(name: str, specs: list, arg) -> tuple[Call, list]:
    """The call ``name(c0, c1, ...)`` over columns of the sample types (literals where given)."""
    args, cols = [], []
    for s in specs:
        if isinstance(s, tuple):
            _lit, tname, v = s
            args.append(Lit(v, sql_type(tname).with_nullable(False)))
        else:
            t = sql_type(s)
            args.append(Col(len(cols), f"c{len(cols)}", t))
            cols.append(s)
    if name == "CAST":
        arg = sql_type(arg)
    t = F.get(name).type([a.type for a in args], arg)
    assert t is not None, (name, specs, arg)
    return Call(name, tuple(args), t, arg, text=name), cols


def rows_for(cols: list[str], seed: int) -> list[tuple]:
    combos = list(itertools.product(*[SAMPLES[c] for c in cols]))
    if len(combos) > MAX_ROWS:
        combos = random.Random(seed).sample(combos, MAX_ROWS)
    return combos


def python_result(f, row):
    try:
        return "ok", f(row, (0,))
    except CalcError as e:
        return "error", e.kind.name
    except Exception as e:   # a bug: reported with the rest
        return "crash", repr(e)


def test_the_dialect_builds_only_table_calls_and_every_entry_compiles_and_renders():
    from streamsql.engine.runtime.spark.sqlgen import SparkSql
    assert FUNCTIONS == frozenset(F.TABLE) == frozenset(sqlfunctions.table())
    for name, specs, arg in signatures():
        e, _cols = build(name, specs, arg)
        compile_expr(e)
        r = SparkSql(lambda i: f"c{i}", lambda k: "rt")
        assert r.render(e) and r.flag(e)
        assert SparkSql(lambda i: f"c{i}", lambda k: "rt", checked=False).render(e)
        spec, sql = F.get(name), sqlfunctions.get(name)
        assert bool(spec.errors) == (sql.fails is not None), f"{name}: errors and their Spark condition go together"
        assert spec.lazy == (sql.flag is not None), f"{name}: a function that stops early combines its flags itself"


def same(a, b, t, approx: bool) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or t.is_approx:
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        if approx:
            return math.isclose(a, b, rel_tol=1e-15, abs_tol=0.0)
        return a == b
    if isinstance(a, D) or isinstance(b, D):
        return D(a) == D(b)
    return a == b


def test_python_and_spark_agree_on_every_function(spark):
    from streamsql.engine.runtime.spark.sqlgen import SparkSql
    # one Spark job per argument-type list: every call over those columns in one select
    groups: dict[tuple, list] = defaultdict(list)
    for name, specs, arg in signatures():
        e, cols = build(name, specs, arg)
        groups[tuple(cols)].append((name, specs, arg, e))
    problems = []
    for gi, (cols, calls) in enumerate(sorted(groups.items())):
        rows = rows_for(list(cols), gi)
        types = [sql_type(c) for c in cols]
        arrays = [pa.array([r[j] for r in rows], type=arrow_type(t)) for j, t in enumerate(types)]
        arrays.append(pa.array(range(len(rows)), type=pa.int64()))
        df = spark.createDataFrame(pa.Table.from_arrays(arrays, names=[f"c{j}" for j in range(len(cols))] + ["ix"]))
        sel = ["ix"]
        for k, (_name, _specs, _arg, e) in enumerate(calls):
            r = SparkSql(lambda i: f"c{i}", lambda k: "rt")
            sel += [f"CAST({r.render(e)} AS {spark_type_ddl(e.type) if e.type.name != 'NULL' else 'STRING'}) AS v{k}",
                    f"{r.flag(e)} AS f{k}"]
        try:
            got = df.selectExpr(*sel).orderBy("ix").toArrow().to_pydict()
        except Exception as exc:   # name the call Spark could not evaluate
            for k, (name, specs, arg, _e) in enumerate(calls):
                try:
                    df.selectExpr(sel[1 + 2 * k], sel[2 + 2 * k]).collect()
                except Exception:
                    problems.append(f"{name}{specs}[{arg}]: Spark fails: {str(exc).splitlines()[0][:300]}")
            continue
        for k, (name, specs, arg, e) in enumerate(calls):
            f = compile_expr(e)
            for i, row in enumerate(rows):
                kind, want = python_result(f, row)
                flag, value = got[f"f{k}"][i], got[f"v{k}"][i]
                if kind == "crash":
                    problems.append(f"{name}{specs}[{arg}] {row!r}: Python crashes: {want}")
                elif kind == "error":
                    if not flag:
                        problems.append(f"{name}{specs}[{arg}] {row!r}: Python raises {want}, Spark gives {value!r}")
                elif flag:
                    problems.append(f"{name}{specs}[{arg}] {row!r}: Spark flags an error, Python gives {want!r}")
                elif not same(want, value, e.type, name in APPROX):
                    problems.append(f"{name}{specs}[{arg}] {row!r}: Python {want!r}, Spark {value!r}")
    assert not problems, f"{len(problems)} disagreements:\n" + "\n".join(problems[:60])


def test_arrow_forms_equal_the_python_evaluator_on_every_sample():
    """The Arrow forms the Spark log source filters with (``Fn.arrow``, ``expr.arrow_expr``) give
    the Python value on every sample row, NULLs included; a call whose types Arrow would compare
    differently (a BIGINT against a DOUBLE, DECIMALs) has no Arrow form; a call that can fail has
    none either."""
    from streamsql.engine.expr import arrow_expr
    covered, refused, problems = set(), set(), []
    for gi, (name, specs, arg) in enumerate(signatures()):
        e, cols = build(name, specs, arg)
        g = arrow_expr(e)
        if g is None:
            refused.add((name, tuple(map(str, specs))))
            continue
        assert not F.can_fail(e) and F.get(name).arrow is not None
        covered.add(name)
        rows = rows_for(cols, gi)
        arrays = [pa.array([r[j] for r in rows], type=arrow_type(sql_type(c))) for j, c in enumerate(cols)]
        got = g(arrays, pa.array([0] * len(rows), pa.int64()))
        got = got.to_pylist() if isinstance(got, pa.Array) else [got.as_py()] * len(rows)
        f = compile_expr(e)
        for row, v in zip(rows, got):
            kind, want = python_result(f, row)
            if kind != "ok" or not same(want, v, e.type, False):
                problems.append(f"{name}{specs} {row!r}: Python {kind} {want!r}, Arrow {v!r}")
    assert not problems, "\n".join(problems[:40])
    assert {"=", "<", ">=", "AND", "OR", "NOT", "IS_NULL", "IS_NOT_TRUE", "IN"} <= covered
    assert (">", ("BIGINT", "DOUBLE")) in refused and ("=", ("DECIMAL(5,2)", "DOUBLE")) in refused
    assert ("<", ("INTEGER", "DOUBLE")) not in refused
