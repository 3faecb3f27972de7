"""String functions. Only SUBSTRING can fail (a negative length is SQL's substring error). Their
Spark SQL is :mod:`streamsql.engine.runtime.spark.sqlfunctions.text`."""
from __future__ import annotations

import re

from ..types import BOOLEAN, INTEGER, SqlType
from .errors import SUBSTRING_ERROR, CalcError
from .spec import Fn, nullable


def _strings(*ts) -> bool:
    return all(t.is_string or t.name == "NULL" for t in ts)


def _ints(*ts) -> bool:
    return all(t.is_integer or t.name == "NULL" for t in ts)


def _concat_type(ts, arg):
    a, b = ts
    p = a.precision + b.precision if a.precision is not None and b.precision is not None else None
    return SqlType("VARCHAR", p, None, nullable(a, b))


def _same_string(ts, arg):
    return ts[0] if _strings(ts[0]) else None


def _length_type(ts, arg):
    return INTEGER.with_nullable(ts[0].nullable) if _strings(ts[0]) else None


def _substring_type(ts, arg):
    if not (_strings(ts[0]) and _ints(*ts[1:])):
        return None
    return SqlType("VARCHAR", ts[0].precision, None, nullable(*ts))


def _substring_python(e):
    def f(s, start, length=None):
        # SQL: 1-based; a start below 1 eats into the length
        begin = start - 1
        if length is None:
            return s[max(begin, 0):]
        if length < 0:
            raise CalcError(SUBSTRING_ERROR, "(a negative length)")
        end = begin + length
        return s[max(begin, 0):max(end, 0)]
    return f


def _trim_type(ts, arg):
    if not _strings(*ts):
        return None
    return SqlType("VARCHAR", ts[0].precision, None, nullable(*ts))


def _trim_python(e):
    mode = e.arg or "BOTH"

    def f(s, chars=" "):
        if mode == "LEADING":
            return s.lstrip(chars)
        if mode == "TRAILING":
            return s.rstrip(chars)
        return s.strip(chars)
    return f


def _position_type(ts, arg):
    return INTEGER.with_nullable(nullable(*ts)) if _strings(*ts) else None


def like_regex(pattern: str, escape: str | None):
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if escape and c == escape and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if c == "%" else "." if c == "_" else re.escape(c))
        i += 1
    return re.compile("".join(out), re.S)


def _like_python(e):
    esc = e.arg
    cache: dict = {}

    def like(v, pat):
        rx = cache.get(pat)
        if rx is None:
            rx = cache[pat] = like_regex(pat, esc)
        return rx.fullmatch(v) is not None
    return like


def _like_type(ts, arg):
    return BOOLEAN.with_nullable(nullable(*ts)) if _strings(*ts) else None


_S = (("VARCHAR",),)

TABLE = [
    Fn("||", _concat_type, lambda e: lambda a, b: a + b, samples=(("VARCHAR", "VARCHAR"),)),
    Fn("UPPER", _same_string, lambda e: str.upper, samples=_S),
    Fn("LOWER", _same_string, lambda e: str.lower, samples=_S),
    Fn("CHAR_LENGTH", _length_type, lambda e: len, samples=_S),
    Fn("SUBSTRING", _substring_type, _substring_python, errors=("SUBSTRING_ERROR",),
       samples=(("VARCHAR", "INTEGER"), ("VARCHAR", "INTEGER", "INTEGER"))),
    Fn("TRIM", _trim_type, _trim_python,
       samples=tuple((a, m) for a in (("VARCHAR",), ("VARCHAR", ("lit", "VARCHAR", "x")))
                     for m in ("BOTH", "LEADING", "TRAILING"))),
    Fn("POSITION", _position_type, lambda e: lambda sub, s: s.find(sub) + 1, samples=(("VARCHAR", "VARCHAR"),)),
    Fn("LIKE", _like_type, _like_python,
       samples=((("VARCHAR", ("lit", "VARCHAR", "a%")), None), (("VARCHAR", ("lit", "VARCHAR", "_b!%")), "!"))),
]
