"""Spark SQL of every function of the engine's function table (:mod:`streamsql.engine.functions`),
kept with the Spark runtime as a backend keeps its compiler. One :class:`SparkFn` per function,
by name; ``tests/test_functions.py`` checks that this table covers the engine's exactly and,
row by row on sample values, that Spark gives the Python evaluator's value, and flags a
calculator error exactly where Python raises one."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class SparkFn:
    """How Spark SQL computes one function:

    - ``value(call, xs)``: Spark SQL for the value, ``xs`` the arguments' SQL;
    - ``fails(call, xs, v)``: Spark SQL that is TRUE exactly where the Python evaluator raises a
      calculator error, given that no argument is NULL (``v`` is the value's SQL); None when it
      never raises;
    - ``flag(call, xs, flags)``: for the functions that stop early (AND, OR, CASE, COALESCE), the
      arguments' flags combined in their order of evaluation;
    - ``plain(call, xs)``: the unchecked rendering (wrap-around, NULLs), for the benchmark only.
    """
    name: str
    value: Callable[[object, list], str]
    fails: Callable | None = None
    flag: Callable | None = None
    plain: Callable | None = None


def _table() -> dict[str, SparkFn]:
    from . import cast, logic, numeric, temporal, text
    return {f.name: f for mod in (numeric, temporal, cast, text, logic) for f in mod.TABLE}


_TABLE: dict[str, SparkFn] | None = None


def table() -> dict[str, SparkFn]:
    """name -> :class:`SparkFn`, every function of the engine's table."""
    global _TABLE
    if _TABLE is None:
        _TABLE = _table()
    return _TABLE


def get(name: str) -> SparkFn:
    try:
        return table()[name]
    except KeyError:
        raise ValueError(f"function {name} has no Spark SQL") from None
