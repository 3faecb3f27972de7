"""Values in flight between the stages of one micro-batch (a stage's report, a pre-combined
group's partial state): Python objects pickled into a binary column, as Spark's own Python
workers carry every row; and a column value as Spark hands it back, made the engine's value
(:func:`restore_value`). They live only in Spark's shuffle for the length of a batch; nothing
here is written to the workspace or read back from it (what persists goes through
:mod:`statecodec`, as JSON)."""
from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd


def pack(value) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(blob: bytes):
    return pickle.loads(blob)


def restore_value(v, t):
    """A value from Spark/Arrow as the engine's rows hold it (a NaN double is NULL)."""
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, float) and math.isnan(v) and not t.is_approx:
        return None
    if t.is_integer or t.name == "TIMESTAMP":
        return int(v)
    if t.is_approx:
        return None if math.isnan(v) else float(v)
    if t.name == "BOOLEAN":
        return bool(v)
    if isinstance(v, (np.generic,)):
        return v.item()
    return v
