"""``{{name}}`` in a cell: Python values written into the SQL as literals.

Outside quotes a value becomes a SQL literal (``'it''s'``, ``42``, ``NULL``, ``TRUE``,
``TIMESTAMP '2006-10-10 10:00:00'``, ``INTERVAL '90' SECOND``, ``(1, 2, 3)`` for IN lists).
Inside a quoted string or identifier its text is spliced in with the quote doubled, so
``INTERVAL '{{n}}' MINUTE`` works too. Only names and expressions the user wrote are evaluated,
in the user's namespace.
"""
from __future__ import annotations

import datetime as dt
import decimal
import math
import re

_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.S)


class InterpolationError(ValueError):
    """A ``{{...}}`` that names nothing, fails to evaluate, or holds a value with no SQL literal."""


def sql_literal(v) -> str:
    """The SQL literal for a Python value."""
    if hasattr(v, "item") and type(v).__module__ == "numpy":   # numpy scalars
        v = v.item()
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise InterpolationError(f"{v!r} has no SQL literal")
        return repr(v)
    if isinstance(v, decimal.Decimal):
        if not v.is_finite():
            raise InterpolationError(f"{v!r} has no SQL literal")
        return str(v)
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        text = v.strftime("%Y-%m-%d %H:%M:%S")
        if v.microsecond:
            text += f".{v.microsecond // 1000:03d}"
        return f"TIMESTAMP '{text}'"
    if isinstance(v, dt.date):
        return f"TIMESTAMP '{v.isoformat()} 00:00:00'"
    if isinstance(v, dt.time):
        return "'" + v.isoformat(timespec="milliseconds" if v.microsecond else "seconds") + "'"
    if isinstance(v, dt.timedelta):
        ms = round(v.total_seconds() * 1000)
        sign, ms = ("-" if ms < 0 else ""), abs(ms)
        secs = f"{ms // 1000}.{ms % 1000:03d}" if ms % 1000 else str(ms // 1000)
        return f"INTERVAL '{sign}{secs}' SECOND"
    if isinstance(v, (list, tuple, set, frozenset)):
        items = sorted(v, key=repr) if isinstance(v, (set, frozenset)) else list(v)
        if not items:
            raise InterpolationError("an empty collection has no SQL literal")
        return "(" + ", ".join(sql_literal(x) for x in items) + ")"
    raise InterpolationError(f"a {type(v).__name__} has no SQL literal")


def _text(v) -> str:
    if hasattr(v, "item") and type(v).__module__ == "numpy":
        v = v.item()
    if isinstance(v, dt.datetime):
        return sql_literal(v)[len("TIMESTAMP '"):-1]
    return "" if v is None else str(v)


def _quote_state(text: str, end: int) -> str | None:
    """The quote character open at ``end`` (``'`` or ``"``), or None; skips ``--`` comments."""
    q = None
    i = 0
    while i < end:
        c = text[i]
        if q:
            if c == q:
                if i + 1 < end and text[i + 1] == q:
                    i += 1
                else:
                    q = None
        elif c in "'\"":
            q = c
        elif c == "-" and text.startswith("--", i):
            j = text.find("\n", i)
            if j < 0 or j >= end:
                return None
            i = j
        i += 1
    return q


def interpolate(sql: str, namespace: dict) -> str:
    """Replace every ``{{expr}}`` of ``sql`` by its value in ``namespace`` (see the module doc)."""
    if "{{" not in sql:
        return sql
    out = []
    last = 0
    for m in _PLACEHOLDER.finditer(sql):
        expr = m.group(1).strip()
        if not expr:
            raise InterpolationError("empty {{ }} in the statement")
        if expr.isidentifier():
            if expr not in namespace:
                raise InterpolationError(f"{{{{{expr}}}}}: name '{expr}' is not defined")
            value = namespace[expr]
        else:
            try:
                value = eval(expr, dict(namespace))   # the user's own expression in their namespace
            except Exception as e:
                raise InterpolationError(f"{{{{{expr}}}}}: {type(e).__name__}: {e}") from None
        quote = _quote_state(sql, m.start())
        try:
            rendered = sql_literal(value) if quote is None else _text(value).replace(quote, quote * 2)
        except InterpolationError as e:
            raise InterpolationError(f"{{{{{expr}}}}}: {e}") from None
        out.append(sql[last:m.start()])
        out.append(rendered)
        last = m.end()
    out.append(sql[last:])
    return "".join(out)
