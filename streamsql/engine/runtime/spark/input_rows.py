"""The rows a stage input holds, read the same way by an operator's buckets (a pandas frame, in
``transformWithStateInPandas``) and by the sink (an Arrow table, in ``foreachBatch``): the
leaves' failing rows resolved (:func:`failing`), and the values the trace shows of a row
(:func:`raw_of`, :func:`merged_of`)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from ...plan import Field
from .failures import Failing, Failures, take_failures
from .framecode import FrameCode
from .frames import named_values, value_col


def _names(rows) -> list[str]:
    return list(rows.columns) if isinstance(rows, pd.DataFrame) else rows.column_names


def _column(rows, name: str) -> list:
    return rows[name].tolist() if isinstance(rows, pd.DataFrame) else rows.column(name).to_pylist()


def _take(rows, idx):
    return rows.iloc[idx] if isinstance(rows, pd.DataFrame) else rows.take(pa.array(idx, type=pa.int64()))


def raw_of(rows, upstream_fields: dict[int, list[Field]]):
    """``get(idx, y)``: values of rows from upstream stage ``y`` as that stage's operator produced them."""
    def get(idx, y):
        fields = upstream_fields[y]
        return named_values(_take(rows, idx), [f"u{y}_{c}" for c in range(len(fields))], fields)
    return get


def merged_of(rows, i: int, fields: list[Field], fails: Failing | None = None):
    """``get(idx)``: values of input ``i``'s rows as its merge holds them (before the post-merge
    chain; a failing row as the failing node received it)."""
    names = ([f"m{i}_{c}" for c in range(len(fields))] if f"m{i}_0" in _names(rows)
             else [value_col(i, c) for c in range(len(fields))])

    def get(idx):
        vals = named_values(_take(rows, idx), names, fields)
        return vals if fails is None else fails.values(idx, vals)
    return get


def failing(failures: Failures | None, rows):
    """``(rows, failing rows)``: the leaves' failures resolved (``failures.take_failures``), their
    stamps (``T``, ``ort``) set to the rowtime their failing node received; rows Python finds
    nothing wrong with are left out. ``rows``: a pandas frame or an Arrow table, returned as such."""
    ev = np.asarray(_column(rows, "ev")) if not isinstance(rows, pd.DataFrame) else rows["ev"].to_numpy()
    if not (ev == FrameCode.ERROR).any():
        return rows, None
    fails = take_failures(failures, ev, _column(rows, "blob"))
    if isinstance(rows, pd.DataFrame):
        return _failing_frame(rows, fails)
    return _failing_table(rows, fails)


def _failing_frame(rows: pd.DataFrame, fails: Failing):
    if fails.bad:
        rows = rows.drop(index=fails.bad).reset_index(drop=True)
        fails = fails.without_bad()
    rows = rows.copy()
    rows["blob"] = fails.blobs
    for c in ("T", "ort"):
        col = rows[c].astype(object).where(~rows[c].isna(), 0).tolist()
        for k, rt in fails.rts.items():
            col[k] = rt
        rows[c] = np.asarray(col, dtype=np.int64)
    return rows, fails


def _failing_table(rows: pa.Table, fails: Failing):
    if fails.bad:
        keep = np.ones(rows.num_rows, dtype=bool)
        keep[fails.bad] = False
        rows = rows.filter(pa.array(keep))
        fails = fails.without_bad()
    rows = rows.set_column(rows.schema.get_field_index("blob"), rows.schema.field("blob"),
                           pa.array(fails.blobs, rows.schema.field("blob").type))
    for c in ("T", "ort"):
        col = rows.column(c).to_pylist()
        for k, rt in fails.rts.items():
            col[k] = rt
        i = rows.schema.get_field_index(c)
        rows = rows.set_column(i, rows.schema.field(i), pa.array(col, rows.schema.field(i).type))
    return rows, fails
