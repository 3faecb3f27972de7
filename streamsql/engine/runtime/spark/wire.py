"""Values in flight between the stages of one micro-batch (a stage's report, a pre-combined
group's partial state): Python objects pickled into a binary column, as Spark's own Python
workers carry every row. They live only in Spark's shuffle for the length of a batch; nothing
here is written to the workspace or read back from it (what persists goes through
:mod:`statecodec`, as JSON)."""
from __future__ import annotations

import pickle


def pack(value) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(blob: bytes):
    return pickle.loads(blob)
