"""Calculator errors (the semantics, section 1): the data exceptions an expression can raise.

An evaluator raises :class:`CalcError` with its kind; the compiled expression adds which call
failed, the text it was written as and its operand values, so that the message names them the
same way on both runtimes (the Spark runtime only flags a row, then re-evaluates it here).
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import time as sqltime
from ..types import SqlType, format_value


@dataclass(frozen=True)
class ErrorKind:
    name: str          # ERROR_NAME in the error stream
    sqlstate: str
    phrase: str        # the standard's wording of the condition


DIVISION_BY_ZERO = ErrorKind("DIVISION_BY_ZERO", "22012", "division by zero")
NUMERIC_OUT_OF_RANGE = ErrorKind("NUMERIC_OUT_OF_RANGE", "22003", "numeric value out of range")
INVALID_CAST = ErrorKind("INVALID_CAST", "22018", "invalid character value for cast")
# the three above are the ones the semantics names; these follow the SQL standard for the cases it
# leaves out (a timestamp outside years 1-9999, LN/POWER/SQRT outside their domain, SUBSTRING
# with a negative length), so that no expression ever yields a silent NULL
DATETIME_OVERFLOW = ErrorKind("DATETIME_FIELD_OVERFLOW", "22008", "datetime field overflow")
INVALID_LOG = ErrorKind("INVALID_ARGUMENT_FOR_LOGARITHM", "2201E", "invalid argument for natural logarithm")
INVALID_POWER = ErrorKind("INVALID_ARGUMENT_FOR_POWER_FUNCTION", "2201F", "invalid argument for power function")
SUBSTRING_ERROR = ErrorKind("SUBSTRING_ERROR", "22011", "substring error")

KINDS = {k.name: k for k in (DIVISION_BY_ZERO, NUMERIC_OUT_OF_RANGE, INVALID_CAST, DATETIME_OVERFLOW,
                             INVALID_LOG, INVALID_POWER, SUBSTRING_ERROR)}


class CalcError(Exception):
    """A value an expression cannot produce. ``detail`` completes the phrase (``for INTEGER``);
    ``call``, ``text`` and ``values`` are filled in by the compiled expression that failed."""

    def __init__(self, kind: ErrorKind, detail: str = ""):
        """``detail`` completes the phrase: ``for INTEGER``, ``to TIMESTAMP``."""
        super().__init__(kind.phrase)
        self.kind = kind
        self.detail = detail
        self.call = None
        self.text: str | None = None
        self.values: tuple = ()
        self.operand_text = ""      # operands described in words, where there is no call

    def attach(self, call, values: tuple, text: str | None) -> None:
        if self.call is None:
            self.call, self.values, self.text = call, tuple(values), text

    def describe(self) -> str:
        """``numeric value out of range for INTEGER in "a * 1000" with a = 3000000 (SQLSTATE 22003)``."""
        what = self.kind.phrase + (f" {self.detail}" if self.detail else "")
        where = f' in "{_one_line(self.text)}"' if self.text else ""
        ops = operands(self.call, self.values) if self.call is not None else self.operand_text
        return f"{what}{where}{' with ' + ops if ops else ''} (SQLSTATE {self.kind.sqlstate})"

    def __str__(self):
        return self.describe()


def _one_line(text: str) -> str:
    return " ".join(text.split())


def operand_name(e) -> str | None:
    text = getattr(e, "text", None)
    if text:
        return _one_line(text)
    name = getattr(e, "name", None)
    if isinstance(name, str) and type(e).__name__ == "Col":
        return name
    if type(e).__name__ == "Rowtime":
        return "ROWTIME"
    return None


def show_value(v, t: SqlType | None) -> str:
    """An operand as messages show it: strings quoted, timestamps as text, numbers plainly."""
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if t is not None and t.name == "TIMESTAMP" and isinstance(v, int):
        return "TIMESTAMP '" + (sqltime.format_timestamp(v) if sqltime.NO_TIME < v < sqltime.END_OF_TIME else str(v)) + "'"
    return format_value(v, t)


def operands(call, values: tuple) -> str:
    """``a = 7, b = 0``: the operands of ``call`` that are not literals, with their values."""
    out = []
    for i, (arg, v) in enumerate(zip(call.args, values)):
        if type(arg).__name__ == "Lit":
            continue
        name = operand_name(arg) or f"argument {i + 1}"
        out.append(f"{name} = {show_value(v, arg.type)}")
    return ", ".join(out)
