"""The durable, append-only event log of a workspace.

What queries read is the *stream log*: per named stream, the rows as they leave the stream and
the stream's bound changes, each entry stamped with the step (the global sequence number) of
the injected event that caused it. It is stored as Arrow IPC segment files, one per stream per append, under
``log/<stream uid>/<first step>-<last step>.arrow``, and read memory-mapped.

Commit protocol (so that the log never changes below an offset a reader has seen):
1. segment files are written to a temporary name, fsynced and renamed into place;
2. the catalog snapshot (which records the committed step) is replaced;
3. ``log/HEAD`` is replaced with the committed step.
Readers only trust entries up to ``HEAD``. A HEAD may also *hold back* its last steps from every
query but one (``{"step": n, "first": "Q", "others": m}``: query Q reads up to n, the others up
to m): a click in a view's injector runs that view's query first, then everyone else's
(:mod:`~streamsql.engine.runtime.spark.holds`). The hold changes when queries see an event, never
what they see; :func:`visible_head` reads it, everything else reads the committed step, and the
writer's open rewrites HEAD without it. On open (:meth:`EventLog.recover`) the tail is checked:
a half-written segment (``*.tmp``), a segment past the catalog's committed step (a crash
between 1 and 2) and a segment that is not a whole Arrow IPC file (truncated, or not Arrow at all)
are moved to ``torn/`` beside ``log/`` with a warning naming the file, never read; HEAD is
rewritten from the catalog (a crash between 2 and 3, or a missing or damaged HEAD). A segment that
cannot be read later is a :class:`~streamsql.engine.errors.WorkspaceError` naming the file.

One exception: rows a query's operator refused after their event was committed (the Spark
runtime learns them from its stages) are appended to the error stream at the steps that refused
them, as *late segments* (``<first>-<last>.<n>.arrow``, n >= 1), in an error-only commit (steps 1
and 2). ``n`` numbers the late commits of the workspace, and the catalog keeps the last one it
committed (and the query's delivery number): a late segment numbered past it (a crash between the
two steps) is moved to ``torn/`` on open,
and the resumed query commits those rows again from its own saved output. Readers of the error
stream that are already past those steps do not see them; everything else (relational queries
over the error stream's history, a reopened workspace) does.

A workspace written before the step had its name everywhere (catalog version 1) calls the step
``seq``: its segments' first column and its HEAD (``{"seq": n}``). Both are read as ``step``;
segments are never rewritten, so the log of such a workspace holds both kinds of segment.
"""
from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .catalog import LogEntry
from .errors import WorkspaceError
from .locks import engine_lock
from .paths import under
from .plan import Field
from .types import arrow_type

log = logging.getLogger("streamsql")

ROW, BOUND = 0, 1
#: the first and last bytes of an Arrow IPC file
ARROW_MAGIC = b"ARROW1"

#: what a version-1 workspace (workspace.CATALOG_VERSION) called the step in its files
LEGACY_STEP = "seq"

_SEG_RE = re.compile(r"^(\d{20})-(\d{20})(?:\.(\d+))?\.arrow$")


def step_value(d: dict, name: str = "step"):
    """``d[name]``, or the value a version-1 workspace wrote under its old name (``step`` was
    ``seq``: ``processed_step`` was ``processed_seq``)."""
    return d[name] if name in d else d[name.replace("step", LEGACY_STEP)]


def step_named(t: pa.Table) -> pa.Table:
    """``t`` with its column ``seq`` (a version-1 workspace's name of the step) called ``step``."""
    if LEGACY_STEP not in t.schema.names:
        return t
    return t.rename_columns(["step" if n == LEGACY_STEP else n for n in t.schema.names])


def entry_schema(fields: list[Field]) -> pa.Schema:
    """Columns of a stream's log: step, kind (ROW/BOUND), rowtime, the stream's
    bound after the event, then the stream's own columns (positional names ``c0, c1, ...``
    so that renaming a column never rewrites the log)."""
    cols = [pa.field("step", pa.int64(), nullable=False), pa.field("kind", pa.int8(), nullable=False),
            pa.field("rowtime", pa.int64(), nullable=False), pa.field("clock", pa.int64(), nullable=False)]
    cols += [pa.field(f"c{i}", arrow_type(f.type)) for i, f in enumerate(fields)]
    return pa.schema(cols)


def entries_table(fields: list[Field], entries: list[LogEntry]) -> pa.Table:
    """Stream-log entries (of a stream with ``fields``) as one table of its log's schema."""
    schema = entry_schema(fields)
    cols = [[e.step for e in entries], [e.kind for e in entries], [e.rowtime for e in entries],
            [e.clock for e in entries]]
    for i in range(len(fields)):
        cols.append([None if e.values is None else e.values[i] for e in entries])
    return pa.Table.from_arrays([pa.array(col, type=f.type) for col, f in zip(cols, schema)], schema=schema)


def read_feeds(log: "EventLog", catalog, streams, start: int, end: int) -> list[tuple[int, dict[str, list[LogEntry]]]]:
    """The stream-log entries of ``streams`` with ``start < step <= end``, grouped by event:
    ``[(step, {stream: [LogEntry, ...]}), ...]`` in step order (what in-process queries read)."""
    by_step: dict[int, dict[str, list[LogEntry]]] = {}
    for s in streams:
        d = catalog.streams.get(s)
        if d is None:
            continue
        t = log.read(d.uid, entry_schema(d.fields), start, end)
        if t.num_rows == 0:
            continue
        cols = t.to_pydict()
        n = len(d.fields)
        vals = list(zip(*[cols[f"c{i}"] for i in range(n)])) if n else [()] * t.num_rows
        for i in range(t.num_rows):
            e = LogEntry(cols["step"][i], cols["kind"][i], cols["rowtime"][i], cols["clock"][i],
                         vals[i] if cols["kind"][i] == 0 else None)
            by_step.setdefault(e.step, {}).setdefault(s, []).append(e)
    return sorted(by_step.items())


def atomic_write(path: Path, data: bytes, durable: bool = True) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        if durable:
            f.flush()
            os.fsync(f.fileno())
    os.replace(tmp, path)
    if durable:
        _fsync_dir(path.parent)


def _fsync_dir(d: Path) -> None:
    fd = os.open(d, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_head(root: Path) -> int:
    """The committed step readers may see (0 before the first append); ``{"step": n}``, or
    ``{"seq": n}`` as a version-1 workspace wrote it."""
    return _read_head(root)[0]


def visible_head(root: Path, query: str | None) -> int:
    """The step the reader of query ``query`` may read up to: HEAD's step, or the step HEAD
    holds the other queries at while one query reads first (see the module doc)."""
    step, head = _read_head(root)
    others = head.get("others")
    if others is not None and head.get("first") != query and _is_step(others):
        return min(step, others)
    return step


def _is_step(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _read_head(root: Path) -> tuple[int, dict]:
    p = Path(root) / "log" / "HEAD"
    try:
        head = json.loads(p.read_bytes())
        step = step_value(head)
    except FileNotFoundError:
        return 0, {}
    except (ValueError, TypeError, KeyError) as e:
        raise WorkspaceError(f"{p}: not a log head ({type(e).__name__}: {str(e)[:100]}); reopen the "
                             f"workspace with its writer to rewrite it from catalog.json") from None
    if not _is_step(step):
        raise WorkspaceError(f"{p}: not a log head (step {step!r:.40})")
    return step, head


def segment_problem(path: Path) -> str | None:
    """What is wrong with a segment file, judged by its ends (cheap: two small reads), or None
    if it looks like a whole Arrow IPC file: magic at both ends and a footer that fits."""
    try:
        size = path.stat().st_size
        if size < 2 * len(ARROW_MAGIC) + 6:
            return f"it is {size} bytes long, too short for an Arrow file"
        with open(path, "rb") as f:
            head = f.read(len(ARROW_MAGIC))
            f.seek(size - len(ARROW_MAGIC) - 4)
            tail = f.read(len(ARROW_MAGIC) + 4)
    except OSError as e:
        return f"it cannot be read ({e})"
    if head != ARROW_MAGIC:
        return "it is not an Arrow IPC file"
    footer = int.from_bytes(tail[:4], "little", signed=True)
    if tail[4:] != ARROW_MAGIC or not 0 < footer <= size - 8 - len(ARROW_MAGIC) - 4:
        return "it is truncated (no Arrow footer at its end)"
    return None


@dataclass(eq=False)
class HeadHold:
    """HEAD holds the other queries at step ``others`` while query ``first`` reads first."""
    first: str
    others: int


def _head_json(step: int, hold: HeadHold | None) -> bytes:
    d = {"step": step} if hold is None else {"step": step, "first": hold.first, "others": hold.others}
    return json.dumps(d).encode()


@dataclass
class _Segment:
    first: int
    last: int
    path: Path
    late: int = 0           # 0, or the number of a late segment (appended after its steps)


class EventLog:
    """Writer (the workbench process) and reader (any process, e.g. Spark's source) of the log."""

    def __init__(self, root: str | Path, durable: bool = True, read_only: bool = False):
        self.root = Path(root)
        self.read_only = read_only
        self.dir = self.root / "log"
        self.durable = durable
        self._segments: dict[str, list[_Segment]] = {}
        #: per stream, a step through which ``_segments`` lists every segment (a listing made
        #: after HEAD reached it sees every segment committed through it): no listing per poll
        self._listed: dict[str, int] = {}
        self._bad: set[Path] = set()     # damaged segments a read-only opener skips
        #: what HEAD says, as this writer last wrote it (a commit and a hold's release take turns)
        self._head_lock = engine_lock("log-head")
        self._head: int | None = None
        self._hold: HeadHold | None = None
        #: ``_segments`` and ``_listed`` (a commit adds to them while views ask how far a stream
        #: goes); a stream's list is replaced, never changed, so a reader may go through it unlocked
        self._index_lock = engine_lock("log-index")

    def __getstate__(self):        # a reader goes to Spark's Python processes: without the locks
        return {k: v for k, v in self.__dict__.items() if k not in ("_head_lock", "_index_lock")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._head_lock = engine_lock("log-head")
        self._index_lock = engine_lock("log-index")

    # ------------------------------------------------------------------ writing

    def write_segments(self, tables: dict[str, pa.Table], late: int = 0) -> None:
        """Step 1 of a commit: one segment file per stream (entries of one append). ``late``:
        entries at steps already committed, in the workspace's late commit number ``late``
        (>= 1; a late segment, see the module doc)."""
        self._check_writable()
        for uid, table in tables.items():
            if table.num_rows == 0:
                continue
            d = under(self.dir, uid)
            d.mkdir(parents=True, exist_ok=True)
            steps = table.column("step")
            first, last = pc.min(steps).as_py(), pc.max(steps).as_py()
            n = int(late)
            path = d / (f"{first:020d}-{last:020d}.{n}.arrow" if n else f"{first:020d}-{last:020d}.arrow")
            if path.exists():  # a retried append after a crash: same content, keep one copy
                path.unlink()
            sink = pa.BufferOutputStream()
            with pa.ipc.new_file(sink, table.schema) as w:
                w.write_table(table)
            atomic_write(path, sink.getvalue().to_pybytes(), self.durable)
            with self._index_lock:
                segs = self._segments.get(uid, []) + [_Segment(first, last, path, n)]
                if late:
                    segs.sort(key=lambda x: (x.first, x.late))
                self._segments[uid] = segs

    def write_head(self, step: int, hold: "HeadHold | None" = None) -> None:
        """Step 3 of a commit: readers may now see entries up to ``step`` (with ``hold``: query
        ``hold.first`` up to ``step``, the others up to ``hold.others`` until
        :meth:`release_hold`)."""
        self._check_writable()
        self.dir.mkdir(parents=True, exist_ok=True)
        with self._head_lock:
            atomic_write(self.dir / "HEAD", _head_json(step, hold), self.durable)
            self._head, self._hold = step, hold          # what the file says (not if it failed)

    @property
    def hold(self) -> "HeadHold | None":
        """The hold in HEAD as this writer last wrote it (None: every query reads up to the step)."""
        return self._hold

    def release_hold(self, hold: "HeadHold") -> bool:
        """Let every query read up to the committed step, if ``hold`` is still the one in HEAD
        (a later commit replaced it otherwise). The step is the one already made durable, so
        the file is replaced without a sync. Returns whether it was."""
        with self._head_lock:
            if self._hold is not hold or self._head is None:
                return False
            atomic_write(self.dir / "HEAD", _head_json(self._head, None), False)
            self._hold = None
            return True

    def truncate_after(self, step: int) -> int:
        """Delete segments holding entries past ``step`` (an interrupted commit). Returns how many."""
        self._check_writable()
        n = 0
        if not self.dir.exists():
            return 0
        for d in self.dir.iterdir():
            if not d.is_dir():
                continue
            for p in d.iterdir():
                m = _SEG_RE.match(p.name)
                if p.name.endswith(".tmp") or (m and int(m.group(1)) > step):
                    p.unlink()
                    n += 1
                elif m and int(m.group(2)) > step:  # cannot happen with one append per file
                    raise RuntimeError(f"log segment {p} straddles the committed step {step}")
        self._forget_segments()
        return n

    def _forget_segments(self) -> None:
        with self._index_lock:
            self._segments.clear()
            self._listed.clear()

    def _check_writable(self) -> None:
        if self.read_only:
            raise WorkspaceError(f"the event log of {self.root} is open read-only")

    def last_late_number(self) -> int:
        """The highest late commit number on disk (0: none)."""
        if not self.dir.exists():
            return 0
        return max((int(m.group(3)) for d in self.dir.iterdir() if d.is_dir() for p in d.iterdir()
                    if (m := _SEG_RE.match(p.name)) is not None and m.group(3) is not None), default=0)

    def recover(self, committed: int, repair: bool = True, late_committed: int | None = None) -> list[str]:
        """Check the log's tail against the committed step (from the catalog): move
        half-written segments, segments past ``committed``, late segments numbered past
        ``late_committed`` (an error-only commit cut between its steps 1 and 2; ``None`` skips
        this check) and segments that are not whole Arrow files to ``torn/`` (with ``repair``; a
        read-only opener only skips them) and rewrite HEAD. Returns the warnings, each naming a
        file; they are also logged."""
        warnings: list[str] = []
        self._bad = set()
        if self.dir.exists():
            for d in sorted(self.dir.iterdir()):
                if not d.is_dir():
                    continue
                for p in sorted(d.iterdir()):
                    why = self._torn(p, committed)
                    if why is None and late_committed is not None and (m := _SEG_RE.match(p.name)) is not None \
                            and m.group(3) is not None and int(m.group(3)) > late_committed:
                        why = ("is a late error segment whose commit did not finish (the query that "
                               "refused its rows commits them again from its own state)")
                    if why is None:
                        continue
                    if repair:
                        dest = self.root / "torn" / d.name / p.name
                        dest.parent.mkdir(parents=True, exist_ok=True)
                        os.replace(p, dest)
                        warnings.append(f"log file {p} {why}: ignored (moved to {dest})")
                    else:
                        self._bad.add(p)
                        warnings.append(f"log file {p} {why}: ignored")
        head_path = self.dir / "HEAD"
        try:
            head = read_head(self.root)
            if not head_path.exists() and committed > 0:
                warnings.append(f"log head {head_path} is missing: rewritten from catalog.json (step {committed})")
            elif head > committed:
                warnings.append(f"log head {head_path} says step {head} but catalog.json committed step "
                                f"{committed}: entries after step {committed} are ignored")
        except WorkspaceError as e:
            warnings.append(f"{e}: rewritten from catalog.json (step {committed})")
        for w in warnings:
            log.warning("%s", w)
        self._forget_segments()
        if repair:
            self.write_head(committed)
        return warnings

    def _torn(self, p: Path, committed: int) -> str | None:
        """Why ``p`` (a file of a stream's folder) must not be read, or None."""
        if p.name.endswith(".tmp"):
            return "is a half-written segment"
        m = _SEG_RE.match(p.name)
        if m is None:
            return None          # not a segment: never listed, never read
        first, last = int(m.group(1)), int(m.group(2))
        if first > committed:
            return f"holds steps {first}-{last}, past the committed step {committed}"
        if last > committed:   # cannot happen with one append per file
            raise WorkspaceError(f"log segment {p} straddles the committed step {committed}; the workspace "
                                 f"cannot be opened safely")
        why = segment_problem(p)
        if why is not None:
            return f"(steps {first}-{last}): {why}; its entries are lost"
        return None

    def drop_stream(self, uid: str) -> None:
        self._check_writable()
        d = under(self.dir, uid)
        if d.exists():
            for p in d.iterdir():
                p.unlink()
            d.rmdir()
        with self._index_lock:
            self._segments.pop(uid, None)
            self._listed.pop(uid, None)

    # ------------------------------------------------------------------ reading

    def head(self) -> int:
        return read_head(self.root)

    def _list(self, uid: str, upto: int | None = None) -> list[_Segment]:
        with self._index_lock:
            return self._list_locked(uid, upto)

    def _list_locked(self, uid: str, upto: int | None) -> list[_Segment]:
        d = under(self.dir, uid)
        segs = []
        if d.exists():
            for p in d.iterdir():
                m = _SEG_RE.match(p.name)
                if m and p not in self._bad:
                    segs.append(_Segment(int(m.group(1)), int(m.group(2)), p, int(m.group(3) or 0)))
        segs.sort(key=lambda s: (s.first, s.late))
        self._segments[uid] = segs
        if upto is not None:
            self._listed[uid] = max(self._listed.get(uid, upto), upto)
        return segs

    def _segments_through(self, uid: str, end: int) -> list[_Segment]:
        """The stream's segments, listed again only when the cached ones may miss a step up to
        ``end`` (a committed step, at most HEAD)."""
        with self._index_lock:
            segs = self._segments.get(uid)
            if segs is None or ((not segs or segs[-1].last < end) and self._listed.get(uid, -1) < end):
                segs = self._list_locked(uid, end)
            return segs

    def has_entries(self, uid: str, start: int, end: int) -> bool:
        """Whether stream ``uid`` has an entry with ``start < step <= end`` (``end``: a committed
        step): a query's source runs a micro-batch only for events of its own streams."""
        return any(s.last > start and s.first <= end for s in self._segments_through(uid, end))

    def last_step(self, uid: str, end: int) -> int:
        """The last step up to ``end`` (a committed step) with an entry of stream ``uid`` (0: none)."""
        return max((min(s.last, end) for s in self._segments_through(uid, end) if s.first <= end), default=0)

    def read(self, uid: str, schema: pa.Schema, start: int, end: int) -> pa.Table:
        """Entries of stream ``uid`` with ``start < step <= end``, in step order."""
        segs = self._segments_through(uid, end)
        parts = []
        overlap = False
        prev_last = None
        for s in segs:
            if s.last <= start or s.first > end:
                continue
            overlap = overlap or (prev_last is not None and s.first <= prev_last)
            prev_last = s.last if prev_last is None else max(prev_last, s.last)
            t = _read_file(s.path, schema)
            if s.first <= start or s.last > end:
                step = t.column("step").to_numpy()
                lo = int(np.searchsorted(step, start, side="right"))
                hi = int(np.searchsorted(step, end, side="right"))
                t = t.slice(lo, hi - lo)
            parts.append(t)
        if not parts:
            return schema.empty_table()
        t = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        if overlap:   # late segments: entries back in step order (stable: appends keep their order)
            t = t.take(pc.sort_indices(t, [("step", "ascending")]))
        return t


def _read_file(path: Path, schema: pa.Schema | None = None) -> pa.Table:
    # the table keeps the mapping alive; closing it here would pull the pages from under it
    try:
        t = pa.ipc.open_file(pa.memory_map(str(path), "r")).read_all()
    except (pa.ArrowException, OSError) as e:
        raise WorkspaceError(f"log segment {path} cannot be read: {str(e)[:200]}") from None
    t = step_named(t)      # a segment of a version-1 workspace calls it seq
    if schema is not None and not t.schema.equals(schema):
        # a projection (e.g. the steps alone) reads the columns it names
        if all(t.schema.get_field_index(f.name) >= 0 and t.schema.field(f.name).type == f.type
               for f in schema) and len(schema) < len(t.schema):
            return t.select(schema.names)
        raise WorkspaceError(f"log segment {path} does not hold this stream's entries (its columns: "
                             f"{', '.join(f'{f.name} {f.type}' for f in t.schema)[:200]})")
    return t
