"""A session recorded as a scenario (SEMANTICS.md section 5): ``Workbench.save_scenario``.

``NAME.sql`` holds what the query needs, in the order it was made: the streams it reads (and
those that feed them through pumps), the tables (with their rows as INSERTs), views and pumps,
then the query. ``NAME.events.jsonl`` holds the events injected into those streams, from the
event journal (:mod:`.journal`): rows, bounds (strict included), producers attaching and
detaching, late and refused events too, since a replay must print their lines.
``NAME.expected.jsonl`` holds what the query released, its late rows, refused events, the rows
it refused for calculator errors (``calc_error``) and output bounds, as ``streamsql replay
--bounds`` prints them, numbered by the events file's lines.

A query started after events had already flowed into its streams (a *late start*) saw only part
of their history. Its scenario starts with a few events that put the streams in the state the
query found them in (each producer's clock as a bound, rows held for a slower producer), then
the events since the query started: replayed from scratch it gives the lines the query gave,
after those first steps (``SavedScenario.prefix`` says how many; their lines are the output
bound those clocks imply). A stream fed by a pump cannot be put in such a state by events (the
pump's own windows would be missing), so a late start over pumps is refused unless
``from_start=True``: then every event since the streams were created is saved and the expected
lines are those of a query started before the first of them (computed on the local runtime),
which the running query did not see in full.
"""
from __future__ import annotations

import bisect
import io
import json
import logging
import math
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path

from . import time as T
from .catalog import DEFAULT_PRODUCER, ERROR_STREAM, Catalog, Event, Outcome
from .errors import StreamSqlError
from .journal import JournalEvent
from .runtime.records import OutputRow
from .trace import replay_lines
from .types import to_json_value
from .values import coerce


class SaveError(StreamSqlError):
    """The query cannot be written as a scenario (the message says why and what to do)."""


@dataclass
class SavedScenario:
    query: str
    sql: Path
    events: Path
    expected: Path
    event_count: int
    line_count: int
    prefix: int = 0               # first events that restore the streams' state (late start)
    from_start: bool = False
    notes: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        stem = str(self.sql)[:-len(".sql")]
        s = (f"Saved query {self.query} as {stem}.sql, .events.jsonl ({self.event_count} event"
             f"{'s' if self.event_count != 1 else ''}) and .expected.jsonl ({self.line_count} line"
             f"{'s' if self.line_count != 1 else ''})")
        return "\n".join([s] + self.notes)


# --------------------------------------------------------------------------- names as written

def _words(sql: str) -> dict[str, str]:
    """Unquoted identifiers of a statement, by canonical (upper-case) form, as first written."""
    from .sql.dialect import _DIALECT
    out: dict[str, str] = {}
    try:
        tokens = _DIALECT.tokenize(sql)
    except Exception:   # an odd statement text: names stay canonical
        return out
    for t in tokens:
        if t.text.isidentifier() and t.token_type.name not in ("STRING", "IDENTIFIER"):
            out.setdefault(t.text.upper(), t.text)
    return out


def sql_name(name: str, spelled: dict[str, str] | None = None) -> str:
    """``name`` (canonical) as SQL text: as first written when unquoted, else in double quotes."""
    if name.isidentifier() and name == name.upper():
        return (spelled or {}).get(name, name)
    return '"' + name.replace('"', '""') + '"'


def json_name(name: str, spelled: dict[str, str]) -> str:
    """``name`` as a JSON key or stream name of an events file (resolved like an identifier)."""
    return spelled.get(name, name) if name == name.upper() else name


# --------------------------------------------------------------------------- what the query needs

@dataclass
class _Closure:
    streams: list[str]
    tables: list[str]
    views: list[str]
    pumps: list[str]


def _names_in(sql: str) -> set[str]:
    from .sql.dialect import _DIALECT
    try:
        tokens = _DIALECT.tokenize(sql)
    except Exception:
        return set()
    return {t.text if t.token_type.name == "IDENTIFIER" else t.text.upper() for t in tokens}


def closure(wb, q) -> _Closure:
    """Streams, tables, views and pumps the query depends on, in the catalog's order."""
    from .sql import analyze
    c = wb.catalog
    streams, tables, views, pumps = set(q.plan.streams), set(q.plan.tables), set(), set()
    texts = [q.sql]
    while texts:
        while texts:                      # views named in the query, the pumps and other views
            names = _names_in(texts.pop())
            for v, d in c.views.items():
                if v in names and v not in views:
                    views.add(v)
                    texts.append(d.body_sql)
        for p, d in c.pumps.items():      # pumps into the streams found so far, and what they read
            if d["target"] in streams and p not in pumps:
                pumps.add(p)
                pq = analyze(d["sql"], c).query
                streams |= set(pq.streams)
                tables |= set(pq.tables)
                texts.append(d["sql"])
    order = list(c.streams)
    return _Closure([s for s in order if s in streams], [t for t in c.tables if t in tables],
                    [v for v in c.views if v in views], wb.pumps.order(sorted(pumps)))


# --------------------------------------------------------------------------- SQL text

def _literal(v, t) -> str:
    if v is None:
        return "NULL"
    if t.name == "TIMESTAMP":
        return f"TIMESTAMP '{T.format_timestamp(v)}'"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, float) and not math.isfinite(v):
        return f"CAST('{v}' AS DOUBLE)"
    return str(v)


def ddl(wb, cl: _Closure) -> list[str]:
    c = wb.catalog
    out = []
    for s in cl.streams:
        d = c.streams[s]
        sp = _words(d.sql)
        cols = ", ".join(f"{sql_name(f.name, sp)} {f.type}" for f in d.fields)
        out.append(d.sql or f"CREATE STREAM {sql_name(s)} ({cols})")
    for t in cl.tables:
        d = c.tables[t]
        sp = _words(d.sql)
        out.append(d.sql or f"CREATE TABLE {sql_name(t)} ("
                   + ", ".join(f"{sql_name(f.name, sp)} {f.type}" for f in d.fields) + ")")
        if d.rows:
            cols = ", ".join(sql_name(f.name, sp) for f in d.fields)
            rows = ",\n  ".join("(" + ", ".join(_literal(v, f.type) for v, f in zip(r, d.fields)) + ")"
                                for r in d.rows)
            out.append(f"INSERT INTO {sql_name(t, sp)} ({cols}) VALUES\n  {rows}")
    for v in cl.views:
        out.append(c.views[v].sql)
    for p in cl.pumps:
        d = c.pumps[p]
        sp = _words(c.streams[d["target"]].sql)
        cols = ", ".join(sql_name(x, sp) for x in d["columns"])
        out.append(f"CREATE PUMP {sql_name(p)} AS INSERT INTO {sql_name(d['target'], sp)} ({cols})\n{d['sql']}")
    return out


# --------------------------------------------------------------------------- events

class _Events:
    """Events as lines of an events file, with their outcomes for the expected lines."""

    def __init__(self, wb, streams: list[str]):
        c = wb.catalog
        self.defs = {s: c.streams[s] for s in streams}
        self.spelled = {s: _words(d.sql) for s, d in self.defs.items()}
        self.lines: list[dict] = []
        self.outcomes: list[Outcome] = []
        self.seqs: list[int | None] = []      # the workspace step of each line (None: made up)
        self._coerce = Catalog().coerce_values

    def name(self, stream: str) -> str:
        return json_name(stream, self.spelled.get(stream, {})) if stream in self.defs else stream

    def values(self, stream: str, values) -> dict:
        """Values as the stream's columns read them back: typed and named as in its DDL when
        they fit, as given otherwise (a refused row must be refused again)."""
        d = self.defs.get(stream)
        if d is None:
            return dict(values)
        try:
            tup = self._coerce(d, values)
        except StreamSqlError:
            return dict(values)
        sp = self.spelled[stream]
        out = {}
        for f, v in zip(d.fields, tup):
            if f.type.name == "DECIMAL" and v is not None:
                x = float(v)
                try:
                    same = coerce(x, f.type) == v
                except (StreamSqlError, ValueError):     # the float does not say it exactly
                    same = False
                out[json_name(f.name, sp)] = x if same else str(v)
            else:
                out[json_name(f.name, sp)] = to_json_value(v, f.type)
        return out

    def add(self, seq: int | None, stream: str, kind: str, time=None, *, strict=False, producer=None,
            values=None, status="ok", clock=None, message=None) -> bool:
        """Append one event; False (nothing added) when the events format cannot hold it."""
        line: dict = {"stream": self.name(stream)}
        if producer is not None and (producer != DEFAULT_PRODUCER or kind in ("attach", "detach")):
            line["producer"] = producer
        if kind == "row":
            if time is None:
                return False
            line["rowtime"] = T.format_timestamp(time)
            line["values"] = self.values(stream, values or {})
        elif kind == "bound":
            if time is None:
                return False
            line["bound"] = T.format_timestamp(time)
            if strict:
                line["strict"] = True
        else:
            line["producer"] = producer or DEFAULT_PRODUCER
            line[kind] = True
        self.lines.append(line)
        self.seqs.append(seq)
        ev = Event(self.name(stream), kind, time, values, strict, producer)
        self.outcomes.append(Outcome(len(self.lines), ev, status, message, clock=clock))
        return True

    def add_journaled(self, e: JournalEvent) -> bool:
        return self.add(e.seq, e.stream, e.kind, e.time, strict=e.strict, producer=e.producer, values=e.values,
                        status=e.status, clock=e.clock, message=e.message)

    def add_state(self, stream: str, st) -> None:
        """Events that put an empty stream in state ``st``: its bound, each attached producer
        and its clock, and the rows it holds for a slower producer (in their order), such that
        no row leaves and the bound moves once (module doc)."""
        d = self.defs[stream]
        attached = [(p, pr) for p, pr in st.producers.items() if pr.attached]
        held: dict[str, list] = {}
        for rt, _seq, p, vals in st.pending:
            held.setdefault(p, []).append(rt)
        b = st.bound
        setter = None
        if b > T.NO_TIME:
            fast = [p for p, pr in attached if pr.clock >= b and p not in held]
            setter = fast[0] if fast else "_clock"
            self.add(None, stream, "bound", b, producer=setter)
            if not fast:
                self.add(None, stream, "detach", producer=setter)
        for p, pr in attached:
            if p in held:
                self.add(None, stream, "attach", producer=p)
            elif p == setter:
                if pr.clock > b:
                    self.add(None, stream, "bound", pr.clock, producer=p)
            elif pr.clock > T.NO_TIME:
                self.add(None, stream, "bound", pr.clock, producer=p)
            else:
                self.add(None, stream, "attach", producer=p)
        for rt, _seq, p, vals in st.pending:
            self.add(None, stream, "row", rt, producer=p, values={f.name: v for f, v in zip(d.fields, vals)})
        for p, pr in attached:
            if p in held and pr.clock > max(held[p]):
                self.add(None, stream, "bound", pr.clock, producer=p)


def _state_at(wb, streams: list[str], events: list[JournalEvent], q) -> dict:
    """Each stream's state after ``events`` (the journal up to the query's start), rebuilt by a
    catalog of its own and checked against the clocks the query started with."""
    c = Catalog()
    for s in streams:
        c.create_stream(s, wb.catalog.streams[s].fields)
    for e in events:
        if e.status in ("ok", "eclipsed"):
            c.apply(Event(e.stream, e.kind, e.time, e.values, e.strict, e.producer), e.seq, {})
    for s in streams:
        want = q.start_clocks.get(s)
        if want is not None and c.state[s].bound != want:
            raise SaveError(f"cannot save query {q.name}: the journal of stream {s} does not give the clock "
                            f"{T.format_timestamp(want)} it had when the query started")
    return {s: c.state[s] for s in streams}


# --------------------------------------------------------------------------- expected lines

#: the name ``streamsql replay`` gives the one query of a saved scenario (the first unnamed query
#: of a fresh workbench), which its calculator error messages start with
REPLAY_QUERY = "q1"


class _Released:
    """What a query released and refused, renumbered by the events file's lines
    (``replay_lines`` reads it like a query)."""

    def __init__(self, fields, rows, bounds: dict[int, int], errors: list | None = None):
        self.fields, self.rows, self.bounds = fields, rows, bounds
        self.errors = errors or []
        self._steps = sorted(bounds)

    def output_bound_at(self, step: int):
        i = bisect.bisect_right(self._steps, step)
        return self.bounds[self._steps[i - 1]] if i else None


class _ThisThread(logging.Filter):
    """Drops the log records of the thread that made it."""

    def __init__(self):
        super().__init__()
        self.thread = threading.get_ident()

    def filter(self, record) -> bool:
        return record.thread != self.thread


def _replay(wb, sql: str, lines: list[dict]) -> list[dict]:
    """Lines ``streamsql replay --bounds --engine local`` prints for these events (on a fresh
    temporary workbench of ``wb``'s class)."""
    from .events import event_from_json
    from .replay import replay_into
    out = io.StringIO()
    quiet = _ThisThread()                  # the session already reported these late rows
    late = logging.getLogger("streamsql.late")
    late.addFilter(quiet)
    try:
        with type(wb)(None, engine="local", trace=False) as tmp:
            replay_into(tmp, sql, [event_from_json(dict(x)) for x in lines], bounds=True, out=out)
    finally:
        late.removeFilter(quiet)
    return [json.loads(x) for x in out.getvalue().splitlines() if x.strip()]


# --------------------------------------------------------------------------- saving

def pick_query(wb, query):
    """The query named ``query`` (case-insensitively; a ContinuousQuery passes), else the last one started."""
    if query is not None and not isinstance(query, str):
        return query
    if not wb.queries:
        raise SaveError("no continuous query to save: run a SELECT STREAM first")
    if query is None:
        return list(wb.queries.values())[-1]
    for n, q in wb.queries.items():
        if n == query or n.lower() == query.lower():
            return q
    raise SaveError(f"no query named {query}; queries: {', '.join(wb.queries)}")


def save_scenario(wb, prefix: str | Path, query=None, *, from_start: bool = False,
                  end: int | None = None) -> SavedScenario:
    """Write ``prefix.sql``, ``prefix.events.jsonl`` and ``prefix.expected.jsonl`` (module doc)
    with the events up to step ``end`` (default: the last one the query processed)."""
    q = pick_query(wb, query)
    if end is None:
        if q.running:
            end = wb.last_seq
            q.wait()
        else:   # a Spark query's sink knows the last step it read; the query, the last with output
            sink = getattr(getattr(q.handle, "sink", None), "processed_seq", None)
            end = max(q.processed_seq, sink or 0)
    cl = closure(wb, q)
    c = wb.catalog
    for s in cl.streams:
        if s == ERROR_STREAM:
            raise SaveError(f"cannot save query {q.name}: it reads the error stream {ERROR_STREAM}, whose rows "
                            "come from every stream of the workspace")
        if c.streams[s].foreign is not None:
            raise SaveError(f"cannot save query {q.name}: stream {s} is read from files (a foreign stream); "
                            "a scenario holds streams fed by events")
    for p in cl.pumps:
        if not c.pumps[p]["started"]:
            raise SaveError(f"cannot save query {q.name}: pump {p}, which feeds it, is stopped")
    uids = {c.streams[s].uid: s for s in cl.streams}
    j = wb.journal
    old = [uids[u] for u in j.untracked if u in uids]
    start = 0 if from_start else q.start_seq
    pump_producers = {(c.pumps[p]["target"], p) for p in cl.pumps}
    events = [e for e in j.events(set(uids), 0, end)
              if not (e.kind in ("attach", "detach") and (e.stream, e.producer) in pump_producers)]
    before = [e for e in events if e.seq <= q.start_seq]     # the query did not see these
    events = [e for e in events if e.seq > start]
    if old:   # their history, hence their state when the query started, is partly unknown
        raise SaveError(f"cannot save query {q.name}: stream{'s' if len(old) > 1 else ''} {', '.join(old)} had "
                        f"events before the workspace's event journal began (step {j.since})")
    if j.since > start:
        raise SaveError(f"cannot save query {q.name}: it needs the events after step {start}, and the "
                        f"workspace's event journal began at step {j.since}")
    for p in cl.pumps:
        early = [e.seq for e in before + events if e.seq <= c.pumps[p]["start_seq"]]
        if early:
            raise SaveError(f"cannot save query {q.name}: pump {p} started at step {c.pumps[p]['start_seq']}, after "
                            f"events had entered the streams it reads or feeds (step {early[0]})")
    if before and cl.pumps and not from_start:
        raise SaveError(f"cannot save query {q.name} as it ran: it started at step {start}, after events had "
                        f"entered its streams, and pump{'s' if len(cl.pumps) > 1 else ''} {', '.join(cl.pumps)} "
                        f"hold{'' if len(cl.pumps) > 1 else 's'} state no events can restore; save with from_start=True (%streamsql save NAME "
                        "--from-start) to save every event and what a query started before them releases")

    out = _Events(wb, cl.streams)
    notes = []
    if before and not from_start:
        states = _state_at(wb, cl.streams, before, q)
        for s in cl.streams:
            out.add_state(s, states[s])
    n_prefix = len(out.lines)
    skipped = [e.seq for e in events if not out.add_journaled(e)]
    if skipped:
        notes.append(f"left out {len(skipped)} refused event{'s' if len(skipped) > 1 else ''} with no time "
                     f"(step {', '.join(map(str, skipped[:5]))}{', ...' if len(skipped) > 5 else ''})")
    statements = ddl(wb, cl) + [q.sql]
    head = [f"-- Query {q.name}, saved from a streamsql workbench after step {end}."]
    if from_start and before:
        head.append(f"-- The query started at step {q.start_seq}; these are every event since its streams were created, "
                    "and the expected output is what a query started before them releases.")
    elif before:
        head.append(f"-- The query started at step {start}, after {len(before)} event"
                    f"{'s' if len(before) > 1 else ''} on its streams: the first {n_prefix} event"
                    f"{'s' if n_prefix != 1 else ''} of the events file put the streams in the state the query "
                    "found them in; its own output follows.")
    sql = "\n".join(head) + "\n" + ";\n\n".join(statements) + ";\n"

    if from_start and before:
        expected = _replay(wb, sql, out.lines)
        notes.append(f"query {q.name} started at step {q.start_seq}, after {len(before)} event"
                     f"{'s' if len(before) > 1 else ''} on its streams: saved from their creation; the expected "
                     "output is that of a query started before them")
    else:
        step_of = {s: i + 1 for i, s in enumerate(out.seqs) if s is not None}
        bounds = {}
        if n_prefix:
            pre = _replay(wb, sql, out.lines[:n_prefix])
            bounds = {x["step"]: T.parse_timestamp(x["bound"]) for x in pre if "bound" in x}
            notes.append(f"query {q.name} started at step {start}, after {len(before)} event"
                         f"{'s' if len(before) > 1 else ''} on its streams: the first {n_prefix} event"
                         f"{'s' if n_prefix != 1 else ''} restore their state then")
        for s, b in q.bounds.items():
            if s in step_of:
                bounds[step_of[s]] = b
        rows = []
        for r in q.rows:
            if r.step not in step_of:
                raise SaveError(f"cannot save query {q.name}: it released a row at step {r.step}, which is not an "
                                "event of its streams")
            rows.append(OutputRow(step_of[r.step], r.rowtime, r.values))
        errors = []
        own = f"Query {q.name}: "
        for e in q.errors:
            if not e.is_calc:
                continue
            if e.step not in step_of:
                raise SaveError(f"cannot save query {q.name}: it refused a row at step {e.step}, which is not an "
                                "event of its streams")
            # the message names the query as the replay names it
            msg = f"Query {REPLAY_QUERY}: {e.message[len(own):]}" if e.message.startswith(own) else e.message
            errors.append(replace(e, step=step_of[e.step], message=msg))
        expected = replay_lines(_Released(q.fields, rows, bounds, errors), out.outcomes, 0, bounds=True,
                                stream_names={s: out.name(s) for s in cl.streams})

    stem = Path(prefix).expanduser()
    paths = [stem.with_name(stem.name + ext) for ext in (".sql", ".events.jsonl", ".expected.jsonl")]
    texts = [sql, "".join(json.dumps(x) + "\n" for x in out.lines), "".join(json.dumps(x) + "\n" for x in expected)]
    try:
        stem.parent.mkdir(parents=True, exist_ok=True)
        for p, text in zip(paths, texts):
            p.write_text(text)
    except OSError as e:
        raise SaveError(f"cannot write the scenario {stem}: {e.strerror or e}") from None
    return SavedScenario(q.name, *paths, len(out.lines), len(expected), n_prefix, from_start, notes)
