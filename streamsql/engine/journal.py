"""The journal: every event injected into a workspace, as it was given, with its outcome.

The stream log (:mod:`.log`) keeps what *left* each stream after the multi-producer merge; a
scenario needs what *entered* it: rows, bounds (strict included), producers attaching and
detaching, and the events that were late or refused, so that a replay reproduces their lines
(``Workbench.save_scenario``, :mod:`.recording`).

Where it lives, so that a one-event insert pays no extra file write or fsync:

- the newest entries (at most :data:`TAIL`) ride in the catalog snapshot (``catalog.json``,
  key ``journal``), which every commit rewrites anyway: they are committed with it;
- when the tail is full, the commit first writes it to ``journal/<first>-<last>.jsonl``
  (written, fsynced and renamed like a log segment) and the snapshot records the step up to
  which segment files hold the journal (``flushed``);
- ``Workbench.load`` journals column-wise: one Arrow IPC file per stream per load,
  ``journal/<first>-<last>-<uid>.arrow`` (columns ``step``, ``kind``, ``time``, ``status``,
  ``clock``, ``message`` and the stream's columns as ``v:<name>``), written before the commit.

On open, segment files past ``flushed`` (written by a commit that did not complete) are deleted,
as the log deletes its uncommitted segments. JSON entries look like
``{"step": 7, "uid": "0002_ORDERS", "stream": "ORDERS", "kind": "row", "time": 1160474400000,
"values": {"orderId": 1}}`` plus ``strict``, ``producer``, ``status`` (when not ``ok``),
``clock`` (late rows) and ``message`` (refused events); times are epoch milliseconds. Values
are kept as given (Decimals as text, datetimes as epoch milliseconds), never pickled. Segment
files of a version-1 workspace call the step ``seq`` (the key of a JSON entry, the column of an
Arrow file); they are read as ``step``.
"""
from __future__ import annotations

import datetime as dt
import decimal
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from . import time as sqltime
from .log import LEGACY_STEP, atomic_write, step_named
from .types import arrow_type

#: journal entries the catalog snapshot carries before they are written to a segment file
TAIL = 32

KINDS = ("row", "bound", "attach", "detach")
STATUSES = ("ok", "late", "error", "eclipsed")

_SEG_RE = re.compile(r"^(\d{20})-(\d{20})(?:-(.+))?\.(jsonl|arrow)$")


@dataclass
class JournalEvent:
    """One journaled event: what was injected (stream, kind, time, values, producer) and what
    happened to it (``status``, ``clock`` for late rows, ``message`` for refused events)."""
    step: int
    stream: str
    kind: str
    uid: str | None = None
    time: int | None = None
    strict: bool = False
    producer: str | None = None
    values: dict | None = None
    status: str = "ok"
    clock: int | None = None
    message: str | None = None


def plain(v):
    """A value as JSON can hold it and as the stream's coercion reads it back the same way."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, np.generic):
        return plain(v.item())
    if isinstance(v, decimal.Decimal):
        return int(v) if v.is_finite() and v == v.to_integral_value() else str(v)
    if isinstance(v, dt.datetime):
        return sqltime.parse_timestamp(v)
    if isinstance(v, dt.date):
        return sqltime.parse_timestamp(dt.datetime(v.year, v.month, v.day))
    return str(v)


class Journal:
    def __init__(self, root: str | Path, durable: bool = True):
        self.dir = Path(root) / "journal"
        self.durable = durable
        self.tail: list[dict] = []
        self.flushed = 0          # segment files hold every journaled event up to this step
        self.since = 0            # the journal holds every event after this step
        self.untracked: list[str] = []   # streams (uids) that had events before the journal began

    # ------------------------------------------------------------------ the catalog snapshot

    def to_json(self) -> dict:
        return {"since": self.since, "flushed": self.flushed, "untracked": self.untracked,
                "tail": list(self.tail)}

    def restore(self, j: dict | None, committed: int, active_uids: list[str], repair: bool = True) -> int:
        """State from the snapshot (``None``: a workspace older than the journal, which starts
        now); deletes segment files of an interrupted commit (not when ``repair`` is false: a
        read-only workbench, whose writer may be writing them). Returns how many."""
        if j is None:
            self.since = self.flushed = committed
            self.untracked = list(active_uids)
            self.tail = []
        else:
            self.since, self.flushed = j["since"], j["flushed"]
            self.untracked = list(j.get("untracked", []))
            self.tail = list(j.get("tail", []))
        n = 0
        if repair and self.dir.exists():
            for p in self.dir.iterdir():
                m = _SEG_RE.match(p.name)
                if p.name.endswith(".tmp") or (m and int(m.group(1)) > self.flushed):
                    p.unlink()
                    n += 1
        return n

    # ------------------------------------------------------------------ writing

    def record(self, outcomes, catalog) -> None:
        """Journal the outcomes of one ``inject`` (committed with the next snapshot)."""
        for o in outcomes:
            ev = o.event
            # a refused event may name its stream or producer with anything: kept as text
            stream = ev.stream if isinstance(ev.stream, str) else repr(ev.stream)
            e = {"step": o.step, "stream": stream, "kind": ev.kind}
            d = catalog.streams.get(ev.stream) if isinstance(ev.stream, str) else None
            if d is not None:
                e["uid"] = d.uid
            if ev.rowtime is not None:
                try:
                    e["time"] = int(ev.rowtime)
                except (TypeError, ValueError):   # refused by the catalog; no time to keep
                    pass
            if ev.strict:
                e["strict"] = True
            if ev.producer is not None and ev.producer != "default":
                e["producer"] = ev.producer if isinstance(ev.producer, str) else repr(ev.producer)
            if ev.values:
                e["values"] = {str(k): plain(v) for k, v in ev.values.items()}
            if o.status != "ok":
                e["status"] = o.status
                if o.status == "late":
                    e["clock"] = o.clock
                elif o.status == "error" and o.message:
                    e["message"] = o.message
            self.tail.append(e)

    def before_commit(self) -> None:
        """Called by every snapshot commit: a full tail goes to a segment file first."""
        if len(self.tail) >= TAIL:
            self.flush()

    def flush(self) -> None:
        batch = self.tail[:]          # a commit outside the workbench's lock may run meanwhile
        if not batch:
            return
        first, last = batch[0]["step"], batch[-1]["step"]
        self.dir.mkdir(parents=True, exist_ok=True)
        data = "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in batch).encode()
        atomic_write(self.dir / f"{first:020d}-{last:020d}.jsonl", data, self.durable)
        self.flushed = max(self.flushed, last)
        del self.tail[:len(batch)]

    def record_columns(self, d, steps: np.ndarray, bound: np.ndarray, times: np.ndarray, status: np.ndarray,
                       clock: np.ndarray, columns: list, messages: list | None = None) -> None:
        """Journal the events of one stream in a bulk load, column-wise (before its commit)."""
        n = len(steps)
        if n == 0:
            return
        self.flush()
        self.dir.mkdir(parents=True, exist_ok=True)
        fields = [pa.field("step", pa.int64()), pa.field("kind", pa.int8()), pa.field("time", pa.int64()),
                  pa.field("status", pa.int8()), pa.field("clock", pa.int64()), pa.field("message", pa.string())]
        fields += [pa.field(f"v:{f.name}", arrow_type(f.type)) for f in d.fields]
        schema = pa.schema(fields, metadata={"uid": d.uid, "stream": d.name})
        msgs = pa.array(messages, pa.string()) if messages is not None and any(m is not None for m in messages) \
            else pa.nulls(n, pa.string())
        arrays = [pa.array(np.asarray(steps, dtype=np.int64)), pa.array(np.where(bound, 1, 0).astype(np.int8)),
                  pa.array(np.asarray(times, dtype=np.int64)), pa.array(np.asarray(status, dtype=np.int8)),
                  pa.array(np.asarray(clock, dtype=np.int64)), msgs] + list(columns)
        table = pa.Table.from_arrays(arrays, schema=schema)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_file(sink, schema) as w:
            w.write_table(table, max_chunksize=1 << 20)
        first, last = int(steps.min()), int(steps.max())
        atomic_write(self.dir / f"{first:020d}-{last:020d}-{d.uid}.arrow", sink.getvalue().to_pybytes(),
                     self.durable)
        self.flushed = max(self.flushed, last)

    # ------------------------------------------------------------------ reading

    def events(self, uids: set[str] | None = None, after: int = 0, upto: int | None = None) -> list[JournalEvent]:
        """Journaled events of streams ``uids`` (all when None) with ``after < step <= upto``, in
        step order."""
        out: list[JournalEvent] = []

        def keep(step, uid):
            return step > after and (upto is None or step <= upto) and (uids is None or uid in uids)

        segs = []
        if self.dir.exists():
            for p in self.dir.iterdir():
                m = _SEG_RE.match(p.name)
                if m and int(m.group(1)) <= self.flushed:
                    segs.append((int(m.group(1)), int(m.group(2)), m.group(3), m.group(4), p))
        for first, last, uid, ext, p in sorted(segs, key=lambda s: (s[0], s[2] or "")):
            if last <= after or (upto is not None and first > upto):
                continue
            if ext == "jsonl":
                for line in p.read_text().splitlines():
                    e = json.loads(line)
                    if LEGACY_STEP in e:        # a segment of a version-1 workspace
                        e["step"] = e.pop(LEGACY_STEP)
                    if keep(e["step"], e.get("uid")):
                        out.append(_from_json(e))
            elif uids is None or uid in uids:
                out += _from_arrow(p, keep)
        out += [_from_json(e) for e in self.tail if keep(e["step"], e.get("uid"))]
        out.sort(key=lambda e: e.step)
        return out


def _from_json(e: dict) -> JournalEvent:
    return JournalEvent(e["step"], e["stream"], e["kind"], e.get("uid"), e.get("time"), bool(e.get("strict")),
                        e.get("producer"), e.get("values"), e.get("status", "ok"), e.get("clock"),
                        e.get("message"))


def _from_arrow(path: Path, keep) -> list[JournalEvent]:
    t = pa.ipc.open_file(pa.memory_map(str(path), "r")).read_all()
    meta = {k.decode(): v.decode() for k, v in (t.schema.metadata or {}).items()}
    uid, stream = meta["uid"], meta["stream"]
    cols = step_named(t).to_pydict()      # a load journaled by a version-1 workspace calls it seq
    names = [n for n in t.column_names if n.startswith("v:")]
    out = []
    for i, step in enumerate(cols["step"]):
        if not keep(step, uid):
            continue
        status = STATUSES[cols["status"][i]]
        if cols["kind"][i] == 1:
            out.append(JournalEvent(step, stream, "bound", uid, cols["time"][i], status=status))
            continue
        values = {n[2:]: plain(cols[n][i]) for n in names}
        out.append(JournalEvent(step, stream, "row", uid, cols["time"][i], values=values, status=status,
                                clock=cols["clock"][i] if status == "late" else None,
                                message=cols["message"][i]))
    return out
