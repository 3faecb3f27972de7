"""SQL types and how values of each type are held in Python, Arrow and Spark.

One representation per type, used everywhere (event log, operators, Spark): TIMESTAMP is an
``int`` of epoch milliseconds, DECIMAL a :class:`decimal.Decimal`, INTERVAL an
:class:`~streamsql.engine.time.Interval`. Keeping one representation is what lets the local
runtime and Spark produce byte-identical rows.
"""
from __future__ import annotations

import decimal
import json
import math
from dataclasses import dataclass, replace

import pyarrow as pa

from . import time as sqltime

INTEGER_TYPES = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT")
APPROX_TYPES = ("REAL", "DOUBLE")
NUMERIC_ORDER = INTEGER_TYPES + ("DECIMAL",) + APPROX_TYPES
STRING_TYPES = ("VARCHAR", "CHAR")
INT_BITS = {"TINYINT": 8, "SMALLINT": 16, "INTEGER": 32, "BIGINT": 64}

_ALIASES = {
    "INT": "INTEGER", "INT4": "INTEGER", "INT8": "BIGINT", "INT2": "SMALLINT", "LONG": "BIGINT",
    "FLOAT": "DOUBLE", "FLOAT8": "DOUBLE", "DOUBLE PRECISION": "DOUBLE", "FLOAT4": "REAL",
    "NUMERIC": "DECIMAL", "DEC": "DECIMAL", "STRING": "VARCHAR", "TEXT": "VARCHAR",
    "CHARACTER VARYING": "VARCHAR", "CHARACTER": "CHAR", "BOOL": "BOOLEAN",
    "TIMESTAMP(3)": "TIMESTAMP", "DATETIME": "TIMESTAMP",
}


@dataclass(frozen=True)
class SqlType:
    name: str
    precision: int | None = None  # DECIMAL precision, VARCHAR/CHAR length
    scale: int | None = None
    nullable: bool = True

    def __str__(self) -> str:
        if self.name == "DECIMAL":
            s = f"DECIMAL({self.precision},{self.scale})"
        elif self.name in STRING_TYPES and self.precision is not None:
            s = f"{self.name}({self.precision})"
        else:
            s = self.name
        return s if self.nullable else s + " NOT NULL"

    # classification -------------------------------------------------------------------
    @property
    def is_numeric(self) -> bool:
        return self.name in NUMERIC_ORDER

    @property
    def is_integer(self) -> bool:
        return self.name in INTEGER_TYPES

    @property
    def is_approx(self) -> bool:
        return self.name in APPROX_TYPES

    @property
    def is_string(self) -> bool:
        return self.name in STRING_TYPES

    @property
    def is_temporal(self) -> bool:
        return self.name == "TIMESTAMP"

    def with_nullable(self, nullable: bool) -> "SqlType":
        return self if self.nullable == nullable else replace(self, nullable=nullable)

    def same_kind(self, other: "SqlType") -> bool:
        """Comparable/assignable without an explicit CAST (SQL's type families)."""
        if self.name == "NULL" or other.name == "NULL":
            return True
        if self.is_numeric and other.is_numeric:
            return True
        if self.is_string and other.is_string:
            return True
        return self.name == other.name

    # serialisation ----------------------------------------------------------------------
    def to_json(self) -> dict:
        d = {"name": self.name}
        if self.precision is not None:
            d["precision"] = self.precision
        if self.scale is not None:
            d["scale"] = self.scale
        if not self.nullable:
            d["nullable"] = False
        return d

    @staticmethod
    def from_json(d: dict) -> "SqlType":
        return SqlType(d["name"], d.get("precision"), d.get("scale"), d.get("nullable", True))


BOOLEAN = SqlType("BOOLEAN")
TINYINT = SqlType("TINYINT")
SMALLINT = SqlType("SMALLINT")
INTEGER = SqlType("INTEGER")
BIGINT = SqlType("BIGINT")
REAL = SqlType("REAL")
DOUBLE = SqlType("DOUBLE")
VARCHAR = SqlType("VARCHAR")
TIMESTAMP = SqlType("TIMESTAMP")
INTERVAL = SqlType("INTERVAL")
NULLTYPE = SqlType("NULL")
ROWTIME_TYPE = SqlType("TIMESTAMP", nullable=False)


def decimal_type(precision: int = 19, scale: int = 0, nullable: bool = True) -> SqlType:
    return SqlType("DECIMAL", min(38, max(1, precision)), max(0, min(scale, 38)), nullable)


def parse_type_name(name: str, args: list[int] | None = None, nullable: bool = True) -> SqlType:
    """The type named in DDL (``VARCHAR(10)``, ``DECIMAL(6,2)``, ``DOUBLE PRECISION``)."""
    n = " ".join(name.upper().split())
    n = _ALIASES.get(n, n)
    args = args or []
    known = INTEGER_TYPES + APPROX_TYPES + STRING_TYPES + ("DECIMAL", "BOOLEAN", "TIMESTAMP")
    if n not in known:
        raise ValueError(f"unsupported type {name}; supported: {', '.join(known)}")
    if n == "DECIMAL":
        p = args[0] if args else 19
        s = args[1] if len(args) > 1 else 0
        if not 1 <= p <= 38 or not 0 <= s <= p:
            raise ValueError(f"invalid DECIMAL({p},{s}): need 1 <= precision <= 38, 0 <= scale <= precision")
        return SqlType("DECIMAL", p, s, nullable)
    if n in STRING_TYPES:
        return SqlType(n, args[0] if args else None, None, nullable)
    return SqlType(n, None, None, nullable)


# --------------------------------------------------------------------------- type rules

def _int_rank(t: SqlType) -> int:
    return INTEGER_TYPES.index(t.name)


def decimal_of(t: SqlType) -> SqlType:
    """The DECIMAL that holds every value of an exact numeric type."""
    if t.name == "DECIMAL":
        return t
    digits = {"TINYINT": 3, "SMALLINT": 5, "INTEGER": 10, "BIGINT": 19}[t.name]
    return decimal_type(digits, 0)


def common_type(a: SqlType, b: SqlType) -> SqlType | None:
    """The least type both convert to (CASE branches, UNION columns, comparisons)."""
    nullable = a.nullable or b.nullable
    if a.name == "NULL":
        return b.with_nullable(True)
    if b.name == "NULL":
        return a.with_nullable(True)
    if a.is_numeric and b.is_numeric:
        if a.is_approx or b.is_approx:
            return (DOUBLE if "DOUBLE" in (a.name, b.name) or a.is_integer or b.is_integer
                    or "DECIMAL" in (a.name, b.name) else REAL).with_nullable(nullable)
        if a.is_integer and b.is_integer:
            return (a if _int_rank(a) >= _int_rank(b) else b).with_nullable(nullable)
        da, db = decimal_of(a), decimal_of(b)
        scale = max(da.scale, db.scale)
        whole = max(da.precision - da.scale, db.precision - db.scale)
        return decimal_type(whole + scale, scale, nullable)
    if a.is_string and b.is_string:
        if a.precision is None or b.precision is None:
            return SqlType("VARCHAR", None, None, nullable)
        return SqlType("VARCHAR", max(a.precision, b.precision), None, nullable)
    if a.name == b.name:
        return a.with_nullable(nullable)
    return None


def arithmetic_type(op: str, a: SqlType, b: SqlType) -> SqlType | None:
    """Result type of ``a op b`` for op in + - * / %; None when the operands do not fit."""
    nullable = a.nullable or b.nullable
    if a.name == "NULL" and b.name == "NULL":
        return NULLTYPE
    if a.name == "NULL":
        a = b
    if b.name == "NULL":
        b = a
    if a.is_temporal and b.name == "INTERVAL" and op in "+-":
        return TIMESTAMP.with_nullable(nullable)
    if a.name == "INTERVAL" and b.is_temporal and op == "+":
        return TIMESTAMP.with_nullable(nullable)
    if a.is_temporal and b.is_temporal and op == "-":
        return INTERVAL.with_nullable(nullable)
    if a.name == "INTERVAL" and b.name == "INTERVAL" and op in "+-":
        return INTERVAL.with_nullable(nullable)
    if a.name == "INTERVAL" and b.is_numeric and op in "*/":
        return INTERVAL.with_nullable(nullable)
    if a.is_numeric and b.name == "INTERVAL" and op == "*":
        return INTERVAL.with_nullable(nullable)
    if not (a.is_numeric and b.is_numeric):
        return None
    if a.is_approx or b.is_approx:
        return common_type(a, b).with_nullable(nullable)
    if a.is_integer and b.is_integer:
        return common_type(a, b).with_nullable(nullable)
    da, db = decimal_of(a), decimal_of(b)
    p1, s1, p2, s2 = da.precision, da.scale, db.precision, db.scale
    if op in "+-":
        s = max(s1, s2)
        p = max(p1 - s1, p2 - s2) + s + 1
    elif op == "*":
        p, s = p1 + p2 + 1, s1 + s2
    elif op == "/":
        s = max(6, s1 + p2 + 1)
        p = p1 - s1 + s2 + s
    else:  # %
        s = max(s1, s2)
        p = min(p1 - s1, p2 - s2) + s
    if p > 38:  # keep at least 6 fractional digits, as Spark does when precision overflows
        s = max(min(s, 6), s - (p - 38))
        p = 38
    return decimal_type(p, s, nullable)


# --------------------------------------------------------------------------- values

def quantize(v: decimal.Decimal, t: SqlType) -> decimal.Decimal | None:
    """Round half up to the type's scale; None (NULL) when it does not fit the precision."""
    q = v.quantize(decimal.Decimal(1).scaleb(-t.scale), rounding=decimal.ROUND_HALF_UP,
                   context=decimal.Context(prec=80))
    if q.adjusted() >= t.precision - t.scale and q != 0:
        return None
    return q


def to_json_value(v, t: SqlType | None = None):
    """A JSON-friendly rendering (timestamps as text, decimals as numbers)."""
    if v is None:
        return None
    if t is not None and t.name == "TIMESTAMP":
        return sqltime.format_timestamp(v)
    if isinstance(v, decimal.Decimal):
        return int(v) if v == v.to_integral_value() and t is not None and t.scale == 0 else float(v)
    if isinstance(v, sqltime.Interval):
        return str(v)
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return str(v)
    return v


def format_value(v, t: SqlType | None = None) -> str:
    """How a value prints in step tables: NULL, timestamps as text, numbers plainly."""
    if v is None:
        return "null"
    if t is not None and t.name == "TIMESTAMP":
        return sqltime.format_timestamp(v)
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, float):
        return repr(v) if not v.is_integer() or abs(v) >= 1e16 else f"{v:.1f}"
    return str(v)


def dumps_row(values: dict) -> str:
    return json.dumps(values, separators=(",", ":"), default=str)


# --------------------------------------------------------------------------- Arrow / Spark

def arrow_type(t: SqlType) -> pa.DataType:
    n = t.name
    if n == "BOOLEAN":
        return pa.bool_()
    if n == "TINYINT":
        return pa.int8()
    if n == "SMALLINT":
        return pa.int16()
    if n == "INTEGER":
        return pa.int32()
    if n in ("BIGINT", "TIMESTAMP"):
        return pa.int64()
    if n == "REAL":
        return pa.float32()
    if n == "DOUBLE":
        return pa.float64()
    if n == "DECIMAL":
        return pa.decimal128(t.precision, t.scale)
    if n in STRING_TYPES or n == "INTERVAL" or n == "NULL":
        return pa.string()
    raise ValueError(f"no Arrow type for {t}")
