"""The Spark runtime's state, as JSON: what its state store and its sink keep between
micro-batches (operators, held rows, clocks, frontiers), written so that reading a workspace
never runs code (no pickle in the workspace).

A value is plain JSON where JSON holds it exactly (None, bools, ints, floats, strings, lists);
everything else is a one-key object whose key says what it is (``{"t": [...]}`` a tuple,
``{"o": ["module:Class", state]}`` an object of this package, ...). Decoding is ``json.loads``
with an ``object_hook``: objects are built with ``cls.__new__`` and their saved state, and only
classes defined in this package can be named; anything else, or a file that is not what this
module wrote, is a :class:`StateFileError` naming the file.

Format 2 calls the step ``step`` everywhere; format 1 (a version-1 workspace) called it ``seq``:
its objects' attributes (``seq``, ``seqs``, ...) and frames' columns (``seq``) are read under
this version's names (:data:`_V1_NAMES`).
"""
from __future__ import annotations

import base64
import collections
import datetime as dt
import importlib
import json
from decimal import Decimal
from enum import Enum
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import WorkspaceError
from ...operators.gcpause import gc_paused

FORMAT = "streamsql-state/2"
#: the format of a version-1 workspace's state, read by renaming what it called ``seq``
FORMAT_V1 = "streamsql-state/1"
#: attribute names of format 1 and this version's (a frame's column ``seq`` is ``step`` too)
_V1_NAMES = {"seq": "step", "seqs": "steps", "next_seq": "next_step", "start_seq": "start_step",
             "processed_seq": "processed_step", "last_seq": "last_step", "_bound_seqs": "_bound_steps"}
_PACKAGE = "streamsql."
#: numpy kinds whose arrays are kept as raw bytes (bool, ints, floats, complex, times)
_RAW_KINDS = "biufcmM"
#: types JSON holds exactly (floats: NaN and infinities as json's NaN/Infinity)
_PLAIN = frozenset({type(None), bool, int, float, str})


class StateFileError(WorkspaceError):
    """A state file that this version cannot read (corrupt, foreign, or naming a class that is
    not this package's)."""


# --------------------------------------------------------------------------- encoding

class _Encoder:
    """One encoding: objects, dicts, sets and deques met twice are written once and then referred
    to (``{"r": n}``), so that what the operator shares stays shared (a join keeps one record of a
    row in several indexes); a list met twice is refused, as is a cycle."""

    def __init__(self):
        self.seen: dict[int, tuple] = {}     # id -> (number or None, the value, kept alive)
        self.open: set[int] = set()

    def shared(self, x, make):
        k = id(x)
        hit = self.seen.get(k)
        if hit is not None:
            if k in self.open:
                raise TypeError(f"the Spark state cannot hold a cycle (through a {type(x).__name__})")
            if hit[0] is None:
                raise TypeError(f"the Spark state cannot hold one {type(x).__name__} in two places")
            return {"r": hit[0]}
        n = len(self.seen)
        self.seen[k] = (n, x)
        self.open.add(k)
        try:
            return make(x, n)
        finally:
            self.open.discard(k)

    def enc(self, x):
        t = type(x)
        if t in _PLAIN:
            return x
        enc = self.enc
        if t is list:
            k = id(x)
            if k in self.seen:
                raise TypeError("the Spark state cannot hold one list in two places")
            self.seen[k] = (None, x)
            return [v if type(v) in _PLAIN else enc(v) for v in x]
        if t is tuple:
            return {"t": [v if type(v) in _PLAIN else enc(v) for v in x]}
        f = _ENCODERS.get(t)
        if f is not None:
            return f(self, x)
        if isinstance(x, np.generic):
            return {"n": [x.dtype.str, x.item() if x.dtype.kind in "biuf" else self.enc(x.item())]}
        return self.shared(x, self.object)

    def object(self, x, n):
        cls = type(x)
        if not cls.__module__.startswith(_PACKAGE):
            raise TypeError(f"the Spark state cannot hold a {cls.__module__}.{cls.__qualname__}")
        name = f"{cls.__module__}:{cls.__qualname__}"
        if isinstance(x, Enum):
            return {"e": [name, self.enc(x.value)]}
        if isinstance(x, tuple):                                  # a named tuple
            return {"o": [name, [self.enc(v) for v in x], n]}
        return {"o": [name, self.enc(x.__getstate__()), n]}

    def array(self, a: np.ndarray):
        if a.dtype.kind in _RAW_KINDS:
            return {"a": [a.dtype.str, list(a.shape),
                          base64.b64encode(np.ascontiguousarray(a).tobytes()).decode("ascii")]}
        return {"A": [list(a.shape), [self.enc(x) for x in a.reshape(-1).tolist()]]}

    def column(self, s: pd.Series):
        dtype = s.dtype
        if isinstance(dtype, np.dtype) and dtype.kind in _RAW_KINDS:
            return self.array(s.to_numpy())
        return {"c": [str(dtype), [self.enc(x) for x in s.astype(object).tolist()]]}

    def frame(self, df: pd.DataFrame):
        index = None if isinstance(df.index, pd.RangeIndex) and df.index.start == 0 and df.index.step == 1 \
            else self.column(df.index.to_series())
        return {"F": [[self.enc(c) for c in df.columns], [self.column(df[c]) for c in df.columns], len(df), index]}


_ENCODERS = {
    dict: lambda e, x: e.shared(x, lambda x, n: {"d": [[[k if type(k) in _PLAIN else e.enc(k),
                                                          v if type(v) in _PLAIN else e.enc(v)]
                                                         for k, v in x.items()], n]}),
    set: lambda e, x: e.shared(x, lambda x, n: {"s": [[e.enc(v) for v in x], n]}),
    frozenset: lambda e, x: {"fs": [e.enc(v) for v in x]},
    collections.deque: lambda e, x: e.shared(x, lambda x, n: {"q": [[e.enc(v) for v in x], x.maxlen, n]}),
    bytes: lambda e, x: {"b": base64.b64encode(x).decode("ascii")},
    bytearray: lambda e, x: {"ba": base64.b64encode(bytes(x)).decode("ascii")},
    Decimal: lambda e, x: {"D": str(x)},
    dt.datetime: lambda e, x: {"dt": x.isoformat()},
    dt.date: lambda e, x: {"da": x.isoformat()},
    dt.time: lambda e, x: {"ti": x.isoformat()},
    dt.timedelta: lambda e, x: {"td": [x.days, x.seconds, x.microseconds]},
    np.ndarray: lambda e, x: e.array(x),
    pd.DataFrame: lambda e, x: e.frame(x),
}


def dumps(value) -> bytes:
    """``value`` as JSON bytes (raises ``TypeError`` for what the state must not hold)."""
    with gc_paused():     # many small containers, none cyclic
        return json.dumps({"format": FORMAT, "value": _Encoder().enc(value)}, separators=(",", ":")).encode()


# --------------------------------------------------------------------------- decoding

def _class(name: str) -> type:
    module, _, qual = name.partition(":")
    if not module.startswith(_PACKAGE) or not qual:
        raise StateFileError(f"names {name!r}, which is not a class of streamsql")
    obj = importlib.import_module(module)
    for part in qual.split("."):
        obj = getattr(obj, part, None)
    if not isinstance(obj, type) or obj.__module__ != module:
        raise StateFileError(f"names {name!r}, which is not a class of streamsql")
    return obj


def _v1_renamed(d):
    """A format-1 object state (dict) in this version's attribute names."""
    if not isinstance(d, dict) or not any(k in _V1_NAMES for k in d):
        return d
    return {_V1_NAMES.get(k, k): v for k, v in d.items()}


def _new(name: str, state, v1: bool = False):
    cls = _class(name)
    if issubclass(cls, tuple):
        return cls(*state) if isinstance(state, (list, tuple)) else cls(**state)
    if v1:
        state = (_v1_renamed(state[0]), _v1_renamed(state[1])) if isinstance(state, tuple) and len(state) == 2 \
            else _v1_renamed(state)
    obj = cls.__new__(cls)
    if hasattr(cls, "__setstate__"):
        obj.__setstate__(state)
        return obj
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    for k, v in (state or {}).items():
        object.__setattr__(obj, k, v)
    for k, v in (slots or {}).items():
        object.__setattr__(obj, k, v)
    return obj


def _raw(spec):
    dtype, shape, data = spec
    return np.frombuffer(base64.b64decode(data), dtype=np.dtype(dtype)).reshape(shape).copy()


def _objects(spec):
    shape, values = spec
    a = np.empty(len(values), dtype=object)
    a[:] = values
    return a.reshape(shape)


def _typed(spec) -> pd.Series:
    dtype, values = spec
    s = pd.Series(values, dtype=object)
    return s if dtype == "object" else s.astype(dtype)


def _series(col) -> pd.Series:
    """A frame column as decoded (the hook has already made it a Series or an array)."""
    if isinstance(col, pd.Series):
        return col.reset_index(drop=True)
    if isinstance(col, np.ndarray) and col.ndim == 1:
        return pd.Series(col)
    raise StateFileError("holds a frame column that is not a column")


def _make_frame(spec):
    names, cols, n, index = spec
    if len(names) != len(cols):
        raise StateFileError("holds a frame whose columns and names disagree")
    df = pd.DataFrame(index=pd.RangeIndex(n))
    if names:
        df = pd.concat([_series(c) for c in cols], axis=1, ignore_index=True)
        df.columns = names
    if len(df) != n:
        raise StateFileError("holds a frame whose columns are not all of its length")
    if index is not None:
        df.index = pd.Index(_series(index))
    return df


def _enum(spec):
    cls = _class(spec[0])
    if not issubclass(cls, Enum):
        raise StateFileError(f"names {spec[0]!r} as an enumeration")
    return cls(spec[1])


_DECODERS = {
    "t": tuple,
    "fs": frozenset,
    "b": base64.b64decode,
    "ba": lambda v: bytearray(base64.b64decode(v)),
    "D": Decimal,
    "dt": dt.datetime.fromisoformat,
    "da": dt.date.fromisoformat,
    "ti": dt.time.fromisoformat,
    "td": lambda v: dt.timedelta(*v),
    "a": _raw,
    "A": _objects,
    "c": _typed,
    "F": _make_frame,
    "n": lambda v: np.dtype(v[0]).type(v[1]),
    "e": _enum,
}


def _v1_frame(spec):
    df = _make_frame(spec)
    return df.rename(columns={"seq": "step"}) if "seq" in df.columns else df


def _hook(table: dict, v1: bool = False):
    """The ``object_hook`` of one decoding; ``table`` holds what may be referred to again;
    ``v1``: a format-1 state (see the module doc)."""
    def keep(n, value):
        table[n] = value
        return value

    decoders = dict(_DECODERS, F=_v1_frame) if v1 else _DECODERS
    shared = {
        "o": lambda v: keep(v[2], _new(v[0], v[1], v1)) if len(v) == 3 else _new(v[0], v[1], v1),
        "d": lambda v: keep(v[1], {k: x for k, x in v[0]}),
        "s": lambda v: keep(v[1], set(v[0])),
        "q": lambda v: keep(v[2], collections.deque(v[0], v[1])),
        "r": lambda n: table[n],
    }

    def hook(d: dict):
        if len(d) == 1:
            (tag, v), = d.items()
            f = decoders.get(tag) or shared.get(tag)
            if f is not None:
                return f(v)
        if set(d) == {"format", "value"}:
            return d
        raise StateFileError(f"holds an object this version does not know ({sorted(d)[:3]})")
    return hook


def loads(data: bytes, where: str | Path = "state"):
    """The value :func:`dumps` wrote (or a version-1 workspace's, format 1); a
    :class:`StateFileError` naming ``where`` otherwise."""
    head = data[:64]
    v1 = f'"{FORMAT_V1}"'.encode() in (head.encode() if isinstance(head, str) else bytes(head))
    try:
        with gc_paused():     # many small containers, none cyclic
            doc = json.loads(data, object_hook=_hook({}, v1))
    except StateFileError as e:
        raise StateFileError(f"{where}: {e}") from None
    except (ValueError, TypeError, AttributeError, ImportError, KeyError, IndexError) as e:
        raise StateFileError(f"{where}: not a streamsql state file ({type(e).__name__}: {e})") from None
    if not isinstance(doc, dict) or doc.get("format") != (FORMAT_V1 if v1 else FORMAT):
        raise StateFileError(f"{where}: not a streamsql state file (format {FORMAT!r} expected)")
    return doc["value"]
