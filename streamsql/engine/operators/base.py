"""The contract every stateful operator keeps, so that both runtimes can host it.

An operator is a pure state machine over its inputs (channels). It never decides *when* a row
leaves; it only says what it produced and what it could still produce:

- :meth:`Operator.on_row` takes an input row; :meth:`Operator.on_clocks` learns that input clocks
  advanced. Both may produce *candidates*: output rows with their stamp ``T`` and a tie key.
- :meth:`Operator.bound_params` summarises the state that limits future output as a few ints;
  :meth:`Operator.bound_eval` turns them and the input clocks into ``F``, the earliest stamp the
  operator can still produce. It is vectorised (one row per step) so the Spark runtime
  can evaluate it over a whole micro-batch.
- :meth:`Operator.wakeups` says, per input, the clock value at which :meth:`on_clocks` would change
  anything; below those thresholds calling it must be a no-op.

The host applies the release rule (the semantics, section 3) through :mod:`.release`: a candidate stamped ``T`` is
released when ``T <= present`` (the minimum input clock) and ``T <= F``; rows released together
go in ``(T, tie)`` order; the output bound is ``min(F, held stamps)``.
"""
from __future__ import annotations

import decimal
import math
import struct
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .. import time as sqltime
from ..functions import CalcError
from ..types import dumps_row, to_json_value

INF = sqltime.END_OF_TIME


@dataclass
class Candidate:
    stamp: int
    tie: bytes
    row: tuple


@dataclass
class OperatorError:
    """A row an operator refused (a T-sort's late row, a calculator error), for the error stream.
    Operators cannot write to the catalog: the runtime hands these over with the step that
    refused them, and the workbench writes them to ``ERRORS``."""
    step: int               # the event whose processing refused it
    name: str               # ERROR_NAME (LATE_ROW, DIVISION_BY_ZERO, ...)
    message: str
    bound: int              # the time it is stamped with in the error stream (the clock it violated)
    data_rowtime: int       # the row's rowtime
    data_row: str           # the row as JSON, by column name
    level: str = "WARNING"  # ERROR_LEVEL
    sqlstate: str | None = None
    channel: int = 0        # the operator input the row came on
    stream: str | None = None   # STREAM_NAME: the named stream the row came from (set by the host)

    def error_values(self, stream_name: str, error_time: int, producer: str | None = None) -> tuple:
        """The row for the error stream, in ``catalog.ERROR_FIELDS`` order."""
        return (error_time, self.level, self.name, self.message, self.data_rowtime, self.data_row,
                stream_name, producer, self.step)

    def to_json(self) -> dict:
        """The record as JSON fields (how the Spark runtime carries it from a stage to the sink)."""
        return {"step": self.step, "name": self.name, "message": self.message, "bound": self.bound,
                "data_rowtime": self.data_rowtime, "data_row": self.data_row, "level": self.level,
                "sqlstate": self.sqlstate, "channel": self.channel, "stream": self.stream}

    @staticmethod
    def from_json(d: dict) -> "OperatorError":
        return OperatorError(int(d["step"]), d["name"], d["message"], int(d["bound"]), int(d["data_rowtime"]),
                             d["data_row"], d.get("level") or "WARNING", d.get("sqlstate"),
                             int(d.get("channel") or 0), d.get("stream"))

    @property
    def is_calc(self) -> bool:
        """A calculator error (a data exception, with its SQLSTATE), not a late row."""
        return self.sqlstate is not None


def row_json(fields, row) -> str:
    """A row as the error stream's DATA_ROW: JSON by column name."""
    return dumps_row({f.name: to_json_value(v, f.type) for f, v in zip(fields, row)})


def calc_error(err: CalcError, step: int, rowtime: int, fields, row, channel: int = 0) -> OperatorError:
    """The error-stream record of a row refused because ``err`` was raised evaluating it."""
    return OperatorError(step, err.kind.name, err.describe(), rowtime, rowtime, row_json(fields, row),
                         level="ERROR", sqlstate=err.kind.sqlstate, channel=channel)


#: refused rows an operator keeps until its host takes them (older ones are dropped)
MAX_PENDING_ERRORS = 1000


class Refusing:
    """An operator that refuses rows (calculator errors): it keeps their records until the host
    takes them after each event (``take_errors``)."""

    def refuse(self, record: OperatorError) -> list:
        errors = self.__dict__.setdefault("errors", [])
        errors.append(record)
        if len(errors) > MAX_PENDING_ERRORS:
            del errors[0]
        return []

    def take_errors(self) -> list:
        out = self.__dict__.get("errors") or []
        self.errors = []
        return out


class Rejected(tuple):
    """A row that failed in a WHERE or projection moved below a UNION ALL (``defer_errors``):
    it goes through the merge like a row and becomes its ``error`` where the merge releases it."""
    error: OperatorError

    @staticmethod
    def of(row: tuple, error: OperatorError) -> "Rejected":
        r = Rejected(row)
        r.error = error
        return r



class Operator:
    n_inputs: int = 1
    #: Number of ints in :meth:`bound_params`.
    n_params: int = 0
    #: Attributes rebuilt by :meth:`_compile` instead of being pickled (compiled closures): the
    #: Spark runtime keeps operators in the state store.
    _transient: tuple = ()

    def _compile(self) -> None:
        pass

    def __getstate__(self):
        d = dict(self.__dict__)
        for k in self._transient:
            d.pop(k, None)
        return d

    def __setstate__(self, d):
        self.__dict__.update(d)
        self._compile()

    def on_row(self, ch: int, step: int, rowtime: int, row: tuple, clocks: Sequence[int],
               arrival: bytes) -> list[Candidate]:
        """``clocks`` are the input clocks after the whole event ``step``; ``arrival`` is a key
        that orders rows of one input by arrival (the same in every runtime)."""
        raise NotImplementedError

    def on_clocks(self, step: int, clocks: Sequence[int]) -> list[Candidate]:
        return []

    def wakeups(self) -> Sequence[int]:
        """Per input: ``on_clocks`` needs calling once that input's clock reaches this value."""
        return (INF,) * self.n_inputs

    def bound_params(self) -> tuple[int, ...]:
        return ()

    def bound_eval(self, params: np.ndarray, clocks: np.ndarray) -> np.ndarray:
        """``F`` for each row: ``params`` is (k, n_params), ``clocks`` is (k, n_inputs)."""
        return clocks.min(axis=1)

    def future_bound(self, clocks: Sequence[int]) -> int:
        p = np.asarray([self.bound_params()], dtype=np.int64).reshape(1, self.n_params)
        c = np.asarray([clocks], dtype=np.int64)
        return int(self.bound_eval(p, c)[0])

    # what the trace shows (operators/describe.py); optional
    def state_view(self) -> tuple[dict, dict]:
        """This operator's part of its trace state as ``(items, totals)`` (one key bucket's, on
        Spark): entries keyed in the trace's order, at most the trace's limit of them, and totals."""
        return {}, {}

    def trace_state(self, views: list):
        """The trace's typed state (a record of ``describe.py``) from the views of every bucket
        (one view in the local runtime); None when there is nothing to show."""
        return None

    def frontier_reason(self, state, clocks: Sequence[int], names: Sequence[str]):
        """Why ``F`` is where it is (a reason record of ``describe.py``), from the trace state and
        the input clocks; None when ``F`` needs no explanation beyond its value."""
        return None

    def state_size(self) -> int:
        """Rows (or groups) held in state, for the state-bound checks."""
        return 0


# --------------------------------------------------------------------------- tie keys

def _enc_int(v: int) -> bytes:
    # order-preserving for any Python int: sign byte, length, big-endian magnitude
    if v >= 0:
        b = v.to_bytes(max(1, (v.bit_length() + 7) // 8), "big")
        return b"\x02" + bytes([len(b)]) + b
    m = -v
    b = m.to_bytes(max(1, (m.bit_length() + 7) // 8), "big")
    return b"\x01" + bytes([255 - len(b)]) + bytes(255 - x for x in b)


def _enc_float(v: float) -> bytes:
    if math.isnan(v):
        return b"\x03" + b"\xff" * 8
    (bits,) = struct.unpack(">Q", struct.pack(">d", v + 0.0))
    bits = bits ^ 0xFFFFFFFFFFFFFFFF if bits >> 63 else bits | (1 << 63)
    return b"\x03" + struct.pack(">Q", bits)


def encode_value(v: Any, descending: bool = False, nulls_first: bool = True) -> bytes:
    """Bytes that sort like SQL values: NULLs first (unless told otherwise), numbers by value,
    strings by code point. Numbers of different kinds compare by value within one key."""
    if v is None:
        out = b"\x00" if nulls_first else b"\xfe"
    elif isinstance(v, bool):
        out = b"\x01" + (b"\x01" if v else b"\x00")
    elif isinstance(v, int):
        out = b"\x02" + _enc_float(float(v))[1:] + _enc_int(v)
    elif isinstance(v, float):
        out = b"\x02" + _enc_float(v)[1:] + b"\x00"
    elif isinstance(v, decimal.Decimal):
        out = b"\x02" + _enc_float(float(v))[1:] + _enc_decimal(v)
    elif isinstance(v, str):
        out = b"\x04" + v.encode("utf-8").replace(b"\x00", b"\x00\xff") + b"\x00\x00"
    elif isinstance(v, bytes):
        out = b"\x05" + v.replace(b"\x00", b"\x00\xff") + b"\x00\x00"
    else:
        out = b"\x06" + str(v).encode().replace(b"\x00", b"\x00\xff") + b"\x00\x00"
    if descending:
        out = bytes(255 - x for x in out) + b"\xff"
    return out


def _enc_decimal(v: decimal.Decimal) -> bytes:
    # exact tie-break after the float prefix: scale to 38 fractional digits
    return _enc_int(int(v.scaleb(38).to_integral_value()))


def encode_key(values: Sequence[Any]) -> bytes:
    return b"".join(encode_value(v) for v in values)


def encode_ints(*xs: int) -> bytes:
    """Tie key from ints in [-2**63, 2**63) (steps, input numbers, times)."""
    return b"".join((x + (1 << 63)).to_bytes(8, "big") for x in xs)

