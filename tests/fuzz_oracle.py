"""The stream is the relation: an oracle no one can tune to.

Every streaming query is a relational query turned into a stream (Calcite's streaming SQL,
SQLstream's model). So once a final bound has released everything, the rows a ``SELECT STREAM``
query released equal, as a multiset of (rowtime, values), the rows of the same query without
STREAM over the rows its streams accepted (their retained history). The fuzzer draws random
(query, events) pairs (``fuzz_queries.py``) and checks that identity on the local runtime and on
Spark, and the local runtime against Spark (released rows with their steps, output-bound changes,
refused rows), as the semantics page says in section 6.

Where the rules differ on purpose, :data:`EXCEPTIONS` names the difference, and the comparison
takes it into account in one place each (:func:`mask_peers`, :func:`without_refused`).

Run more than CI does::

    .venv/bin/python tests/fuzz_oracle.py --count 20000 [--seed S] [--spark 300]

A pair that disagrees is written as a scenario (docs/semantics.md, section 5) under
``test-output/fuzz/`` and its path printed: ``NAME.sql`` (the tables, views and the query),
``NAME.events.jsonl``, ``NAME.expected.jsonl`` (what the local runtime released, as
``streamsql replay --bounds`` prints it), ``NAME.relation.jsonl`` (the relational answer) and
``NAME.txt`` (the seed and what differed)."""
from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import streamsql  # noqa: E402
from streamsql.engine import time as T  # noqa: E402
from streamsql.engine.errors import StreamSqlError, one_line  # noqa: E402
from streamsql.engine.functions import CalcError  # noqa: E402
from streamsql.engine.sql import analyze  # noqa: E402

from fuzz_queries import DDL, END, STREAMS, Case, cases, events  # noqa: E402

OUT = HERE.parent / "test-output" / "fuzz"

#: Where a stream and its relation differ on purpose (docs/semantics.md, section 6); the
#: fuzzer takes each into account in the one function named.
EXCEPTIONS = {
    "over-peers": "A streaming OVER frame that ends at the current row in RANGE mode holds the row's peers "
                  "(same order value) that arrived before it, the relation's holds all of them (section 3.4): "
                  "those rows' window values are compared only for the last peer to arrive, where both frames "
                  "hold every peer (mask_peers).",
    "arrival-order": "FIRST_VALUE, LAST_VALUE and ROWS frames take rows in arrival order in a stream and in the "
                     "relation's order in a relation (docs/sql-reference.md: a UNION ALL input after input, a join "
                     "left row by left row); the two orders are the same only for one stream's history, so above a "
                     "UNION ALL, a join or a GROUP BY those values are not compared (mask_peers).",
    "calculator-errors": "A streaming query refuses the row an expression fails on and goes on; a relational "
                         "query fails on its first calculator error (section 1). The relational query over all "
                         "the rows must fail with one of the errors the stream reported, and the stream must equal "
                         "the relation over the rows it did not refuse: a refused row is as if it had never come, "
                         "but for its bound (without_refused).",
}

HOUR = 3_600_000
UNIT = {"MINUTE": 60_000, "HOUR": HOUR}


# --------------------------------------------------------------------------- the exceptions


def mask_peers(case: Case, rows: list[tuple]) -> list[tuple]:
    """``rows`` (rowtime, values...) with the RANGE OVER values of a row that has a later peer
    replaced by a mark (where the relation does not list rows in arrival order: of every row
    with a peer), exception "over-peers"; and the values that depend on the order of rows the
    relation does not list in arrival order, exception "arrival-order"."""
    if not case.peers and not case.unordered:
        return rows
    out = [list(r) for r in rows]
    for r in out:
        for j in case.unordered:
            r[1 + j] = "<order>"
    for p in case.peers:
        groups: dict[tuple, list[int]] = {}
        for i, r in enumerate(rows):
            rt, vals = r[0], r[1:]
            key = (vals[p.partition] if p.partition is not None else None,
                   rt // UNIT[p.cascade] if p.cascade else None,
                   rt // UNIT[p.order] if p.order else rt)
            groups.setdefault(key, []).append(i)
        for members in groups.values():
            if len(members) > 1:
                for i in (members[:-1] if p.arrival else members):
                    out[i][1 + p.column] = "<peer>"
    return [tuple(r) for r in out]


def without_refused(case: Case, evs: list, outcomes: list) -> list:
    """The events with every accepted row a failing expression of the query refuses (where it
    reaches it) replaced by a bound at its rowtime from its producer. Exception
    "calculator-errors"."""
    out = []
    for ev, o in zip(evs, outcomes):
        if ev.kind == "row" and o.status == "ok" and any(f.stream == ev.stream and f.pred(ev.values)
                                                         for f in case.fails):
            out.append(dataclasses.replace(ev, kind="bound", values=None, strict=False))
        else:
            out.append(dataclasses.replace(ev))
    return out


# --------------------------------------------------------------------------- running a round


@dataclasses.dataclass
class Side:
    """One query's result on one runtime: the stream's released rows (step, rowtime, values...),
    output-bound changes and refused rows; the relation's rows (rowtime, values...) or the
    calculator error it failed with."""
    rows: list = dataclasses.field(default_factory=list)
    bounds: dict = dataclasses.field(default_factory=dict)
    errors: list = dataclasses.field(default_factory=list)
    relation: list | None = None
    relation_error: str | None = None
    reduced: list | None = None           # the relation without the refused rows
    reduced_stream: list | None = None    # the stream over the events without them (local only)
    failed: str | None = None             # a query that failed as a whole (never expected)


def open_workbench(engine: str, tmp: Path | None, **kw):
    if engine == "local":
        wb = streamsql.Workbench(None, engine="local", durable=False, trace=False)
    else:
        wb = streamsql.Workbench(tmp, engine="spark", trace=False, **kw)
    wb.execute(DDL)
    for s in STREAMS:
        wb.set_history(s)
    return wb


def relation(wb, sql: str) -> tuple[list | None, str | None]:
    """The relational query's rows (rowtime, values...), or the calculator error it failed with."""
    stmt = analyze(sql, wb.catalog)
    try:
        rows = wb.runtime.relational(stmt.query.root)
    except CalcError as e:
        return None, e.kind.name
    return [(rt,) + tuple(vals) for rt, vals in rows], None


def stream_result(q, s: Side) -> None:
    s.rows = [(o.step - q.start_step, o.rowtime) + tuple(o.values) for o in q.rows]
    s.bounds = {st - q.start_step: b for st, b in q.bounds.items()}
    s.errors = [(e.step - q.start_step, e.name, e.stream) for e in q.errors]


def run_local(cs: dict[str, Case], evs: list) -> tuple[dict[str, Side], dict[str, str], list]:
    """Every query on one local workbench: streaming (started before the events), then
    relational over the history; for a query that refused rows, both again over the events
    without them. Returns (sides, rejected queries' messages, the events' outcomes)."""
    wb = open_workbench("local", None)
    out, rejected, started = {}, {}, {}
    try:
        for name, c in cs.items():
            try:
                wb.execute(c.script())
                started[name] = wb.query(c.sql, name=name)
            except StreamSqlError as e:
                rejected[name] = str(e)
        outcomes = wb.inject([dataclasses.replace(e) for e in evs])
        for name, q in started.items():
            s = out[name] = Side()
            try:
                q.wait(timeout=300)
                stream_result(q, s)
            except StreamSqlError as e:
                s.failed = f"the streaming query failed: {e}"
            try:
                s.relation, s.relation_error = relation(wb, cs[name].relational)
            except StreamSqlError as e:
                s.failed = s.failed or f"the relational query failed: {e}"
    finally:
        wb.close()
    for name, s in out.items():
        c = cs[name]
        if c.fails and (s.errors or s.relation_error) and not s.failed:
            wb = open_workbench("local", None)
            try:
                wb.execute(c.script())
                q = wb.query(c.sql, name=name)
                wb.inject(without_refused(c, evs, outcomes))
                q.wait(timeout=300)
                again = Side()
                stream_result(q, again)
                s.reduced_stream = again.rows
                s.reduced, err = relation(wb, c.relational)
                if err:
                    s.reduced, s.relation_error = None, f"{s.relation_error} / without refused rows: {err}"
            finally:
                wb.close()
    return out, rejected, outcomes


def run_spark(cs: dict[str, Case], evs: list, outcomes: list, tmp: Path, *, batch=None, buckets=1) -> dict[str, Side]:
    """The queries on one Spark workbench, one after the other, each reading the log from step 0
    (as a query started before the events does: with no batch size, all in one micro-batch),
    then each relational query; for a query that refused rows, the relational query again on a
    workbench without them."""
    wb = open_workbench("spark", tmp / "ws", batch_events=batch, buckets=buckets)
    out = {}
    try:
        for c in cs.values():
            wb.execute(c.script())
        wb.inject([dataclasses.replace(e) for e in evs])
        # all at once: Spark overlaps one query's planning with another's batch
        started = {name: wb.lifecycle.start(analyze(c.sql, wb.catalog).query, name, start_step=0)
                   for name, c in cs.items()}
        try:
            for name, q in started.items():
                s = out[name] = Side()
                try:
                    q.wait(timeout=600)
                    stream_result(q, s)
                except StreamSqlError as e:
                    s.failed = f"the streaming query failed: {e}"
        finally:
            for q in started.values():
                q.stop()
        for name, c in cs.items():
            s = out[name]
            try:
                s.relation, s.relation_error = relation(wb, c.relational)
            except StreamSqlError as e:
                s.failed = s.failed or f"the relational query failed: {e}"
    finally:
        wb.close()
    for i, (name, c) in enumerate(cs.items()):
        s = out[name]
        if c.fails and (s.errors or s.relation_error) and not s.failed:
            wb = open_workbench("spark", tmp / f"reduced{i}")
            try:
                wb.execute(c.script())
                wb.inject(without_refused(c, evs, outcomes))
                s.reduced, err = relation(wb, c.relational)
                if err:
                    s.reduced, s.relation_error = None, f"{s.relation_error} / without refused rows: {err}"
            finally:
                wb.close()
    return out


# --------------------------------------------------------------------------- comparing


def table(rows) -> Counter:
    return Counter(rows)


def differences(a: Counter, b: Counter, names=("stream", "relation")) -> str:
    only_a, only_b = a - b, b - a
    lines = [f"only in the {names[0]}: {fmt(r)} x{n}" for r, n in sorted(only_a.items(), key=repr)[:8]]
    lines += [f"only in the {names[1]}: {fmt(r)} x{n}" for r, n in sorted(only_b.items(), key=repr)[:8]]
    return "\n".join(lines)


def fmt(r: tuple) -> str:
    rt = r[0]
    return f"({T.format_timestamp(rt) if isinstance(rt, int) else rt}, {', '.join(map(repr, r[1:]))})"


def check_identity(c: Case, s: Side) -> str | None:
    """What breaks the stream-relation identity for one query on one runtime, or None."""
    if s.failed:
        return s.failed
    stream = [r[1:] for r in s.rows]
    times = [r[0] for r in stream]
    if any(a > b for a, b in zip(times, times[1:])):
        return "the stream's rows go backwards in rowtime"
    if s.errors or s.relation_error:
        # exception "calculator-errors"
        if not c.fails:
            return f"calculator errors from a query with no failing expression: {s.errors[:3]} {s.relation_error}"
        names = {e[1] for e in s.errors}
        if s.relation_error is None:
            return f"the stream refused rows ({sorted(names)}) but the relational query did not fail"
        if "without refused rows" in s.relation_error:
            return f"the relational query still fails without the refused rows: {s.relation_error}"
        if s.relation_error not in names:
            return f"the relational query failed with {s.relation_error}, the stream refused rows with {sorted(names)}"
        want = s.reduced
        if s.reduced_stream is not None:
            again = table(mask_peers(c, [r[1:] for r in s.reduced_stream]))
            if again != table(mask_peers(c, stream)):
                return ("the stream over the events without the refused rows differs:\n" +
                        differences(table(mask_peers(c, stream)), again, ("stream", "stream without them")))
    else:
        want = s.relation
    a, b = table(mask_peers(c, stream)), table(mask_peers(c, want))
    if a != b:
        return "stream and relation differ:\n" + differences(a, b)
    return None


def check_runtimes(local: Side, spark: Side) -> str | None:
    for what, x, y in (("released rows", local.rows, spark.rows), ("output bound changes", local.bounds, spark.bounds),
                       ("refused rows", local.errors, spark.errors)):
        if x != y:
            return f"local and Spark differ in {what}:\nlocal {repr(x)[:1500]}\nspark {repr(y)[:1500]}"
    return None


# --------------------------------------------------------------------------- failing pairs


def event_json(e) -> dict:
    d = {"stream": e.stream}
    if e.producer:
        d["producer"] = e.producer
    if e.kind == "bound":
        d["bound"] = T.format_timestamp(e.rowtime)
        if e.strict:
            d["strict"] = True
    else:
        d["rowtime"] = T.format_timestamp(e.rowtime)
        d["values"] = e.values
    return d


def save_pair(seed: int, name: str, c: Case, evs: list, side: Side | None, what: str, runtime: str) -> Path:
    """The pair as a scenario under test-output/fuzz/; returns the path of its .sql file."""
    from streamsql.engine.replay import replay_into
    OUT.mkdir(parents=True, exist_ok=True)
    base = OUT / f"s{seed}_{name}"
    script = f"{DDL}\n{c.script()}\n{c.sql};\n"
    base.with_suffix(".sql").write_text(script)
    base.with_suffix(".events.jsonl").write_text("".join(json.dumps(event_json(e)) + "\n" for e in evs))
    buf = io.StringIO()
    wb = streamsql.Workbench(None, engine="local", durable=False, trace=False)
    try:
        replay_into(wb, script, [dataclasses.replace(e) for e in evs], bounds=True, out=buf)
    except Exception as e:      # the scenario is still worth having
        buf.write(json.dumps({"error": f"replay failed: {e}"}) + "\n")
    finally:
        wb.close()
    Path(str(base) + ".expected.jsonl").write_text(buf.getvalue())
    rel = [] if side is None or side.relation is None else side.relation
    Path(str(base) + ".relation.jsonl").write_text("".join(
        json.dumps({"rowtime": T.format_timestamp(r[0]) if isinstance(r[0], int) else r[0], "values": list(r[1:])},
                   default=str) + "\n" for r in sorted(rel, key=repr)))
    Path(str(base) + ".txt").write_text(
        f"seed {seed}, query {name} ({c.kind}), {runtime} runtime\nrelational query: {c.relational}\n\n{what}\n")
    return base.with_suffix(".sql")


# --------------------------------------------------------------------------- rounds


def draw(seed: int, n_queries: int, n_events: int) -> tuple[dict[str, Case], list]:
    rng = random.Random(seed)
    return cases(rng, n_queries, prefix=f"r{seed % 100000}_"), events(rng, n_events)


@dataclasses.dataclass
class Report:
    pairs: int = 0
    rows: int = 0
    stream_rows: int = 0
    refused: int = 0
    seconds: float = 0.0
    failures: list = dataclasses.field(default_factory=list)     # (seed, name, runtime, what, path)
    rejected: list = dataclasses.field(default_factory=list)

    def line(self, runtime: str) -> str:
        rate = self.pairs / self.seconds if self.seconds else 0.0
        return (f"{runtime}: {self.pairs} pairs in {self.seconds:.1f} s ({rate:.1f} pairs/s), {self.stream_rows} rows "
                f"released, {self.refused} pairs with refused rows, {len(self.failures)} disagreements, "
                f"{len(self.rejected)} queries rejected")


def local_round(seed: int, n_queries: int, n_events: int, report: Report) -> tuple[dict, dict, list, list]:
    cs, evs = draw(seed, n_queries, n_events)
    t0 = time.perf_counter()
    try:
        sides, rejected, outcomes = run_local(cs, evs)
    except Exception as e:          # the engine failed as a whole: every query of the round
        report.seconds += time.perf_counter() - t0
        report.pairs += len(cs)
        what = f"the round failed: {type(e).__name__}: {one_line(str(e))}"
        report.failures += [(seed, name, "local", what, str(save_pair(seed, name, c, evs, None, what, "local")))
                            for name, c in cs.items()]
        return cs, {}, evs, []
    report.seconds += time.perf_counter() - t0
    for name, msg in rejected.items():
        report.rejected.append((seed, name, cs[name].sql, msg))
    for name, s in sides.items():
        report.pairs += 1
        report.stream_rows += len(s.rows)
        report.refused += bool(s.errors)
        bad = check_identity(cs[name], s)
        if bad:
            path = save_pair(seed, name, cs[name], evs, s, bad, "local")
            report.failures.append((seed, name, "local", bad, str(path)))
    return cs, sides, evs, outcomes


def spark_round(seed: int, n_queries: int, n_events: int, report: Report, tmp: Path, *, batch=None,
                buckets=1) -> None:
    lrep = Report()
    cs, local, evs, outcomes = local_round(seed, n_queries, n_events, lrep)
    report.failures += lrep.failures
    report.rejected += lrep.rejected
    cs = {n: c for n, c in cs.items() if n in local and not local[n].failed}
    t0 = time.perf_counter()
    sides = run_spark(cs, evs, outcomes, tmp, batch=batch, buckets=buckets)
    report.seconds += time.perf_counter() - t0
    for name, s in sides.items():
        report.pairs += 1
        report.stream_rows += len(s.rows)
        report.refused += bool(s.errors)
        bad = check_identity(cs[name], s) or check_runtimes(local[name], s)
        if bad:
            path = save_pair(seed, name, cs[name], evs, s, bad + f"\n(batch {batch}, buckets {buckets})", "spark")
            report.failures.append((seed, name, "spark", bad, str(path)))


def local_rounds(seeds: list[int], sizes: list[int], n_events: int) -> Report:
    """Local rounds (a worker process's share when the rounds run in several)."""
    import logging
    logging.getLogger("streamsql").setLevel(logging.ERROR)     # late rows and refused rows are the point
    rep = Report()
    for seed, size in zip(seeds, sizes):
        local_round(seed, size, n_events, rep)
    return rep


def merge(reports: list[Report]) -> Report:
    out = Report()
    for r in reports:
        out.pairs += r.pairs
        out.stream_rows += r.stream_rows
        out.refused += r.refused
        out.seconds += r.seconds
        out.failures += r.failures
        out.rejected += r.rejected
    return out


def run(seed: int, count: int, *, spark: int = 0, queries: int = 10, n_events: int = 30, batch=None, buckets=1,
        random_config: bool = False, jobs: int = 1, log=print) -> tuple[Report, Report]:
    """``count`` local pairs (over ``jobs`` processes) and ``spark`` Spark pairs, rounds of
    ``queries`` queries over ``n_events`` events from seeds ``seed``, ``seed + 1``, ... (Spark
    rounds from ``seed + 1000000``); ``random_config`` draws each Spark round's micro-batch size
    and buckets. A report's ``seconds`` is the time its pairs took (in every process)."""
    sizes = [queries] * (count // queries) + ([count % queries] if count % queries else [])
    seeds = [seed + r for r in range(len(sizes))]
    t0 = time.perf_counter()
    if jobs > 1 and len(sizes) > 1:
        import concurrent.futures
        import multiprocessing
        with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as ex:
            parts = [ex.submit(local_rounds, seeds[j::jobs], sizes[j::jobs], n_events) for j in range(jobs)]
            loc = merge([p.result() for p in parts])
    else:
        loc = local_rounds(seeds, sizes, n_events)
    wall = time.perf_counter() - t0
    spk = Report()
    if count:
        log(loc.line("local") + (f"; {wall:.1f} s wall-clock over {jobs} processes" if jobs > 1 else ""))
    if spark:
        from streamsql.engine.runtime.spark.session import get_session
        get_session("local[2]")
        with tempfile.TemporaryDirectory(prefix="fuzz-spark-") as d:
            r = 0
            while spk.pairs < spark:
                b, k = batch, buckets
                if random_config:
                    cfg = random.Random(seed + 7919 * r)
                    b, k = cfg.choice([None, None, 1, 4]), cfg.choice([1, 2, 4])
                spark_round(seed + 1_000_000 + r, min(queries, spark - spk.pairs), n_events, spk,
                            Path(d) / f"r{r}", batch=b, buckets=k)
                r += 1
        log(spk.line("spark"))
    for rep in (loc, spk):
        for seed_, name, runtime, what, path in rep.failures[:20]:
            log(f"DISAGREEMENT seed {seed_} {name} ({runtime}): {what.splitlines()[0]}\n  scenario: {path}")
        for seed_, name, sql, msg in rep.rejected[:20]:
            log(f"REJECTED seed {seed_} {name}: {msg}\n  {sql}")
    return loc, spk


def main(argv=None) -> int:
    import logging
    logging.getLogger("streamsql").setLevel(logging.ERROR)     # late rows and refused rows are the point
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=None, help="first seed (default: a random one, printed)")
    ap.add_argument("--count", type=int, default=1000, help="local (query, events) pairs")
    ap.add_argument("--spark", type=int, default=0, help="Spark pairs")
    ap.add_argument("--queries", type=int, default=10, help="queries per round (they share its events)")
    ap.add_argument("--events", type=int, default=30, help="events per round")
    ap.add_argument("--batch", type=int, default=None, help="events per Spark micro-batch (default: all)")
    ap.add_argument("--buckets", type=int, default=1, help="Spark key buckets")
    ap.add_argument("--random-config", action="store_true", help="draw each Spark round's batch size and buckets")
    ap.add_argument("--jobs", type=int, default=1, help="processes for the local pairs")
    a = ap.parse_args(argv)
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1, 2**31)
    print(f"fuzz seed {seed}: {a.count} local pairs, {a.spark} Spark pairs", flush=True)
    loc, spk = run(seed, a.count, spark=a.spark, queries=a.queries, n_events=a.events, batch=a.batch,
                   buckets=a.buckets, random_config=a.random_config, jobs=a.jobs,
                   log=lambda s: print(s, flush=True))
    return 1 if loc.failures or spk.failures or loc.rejected or spk.rejected else 0


if __name__ == "__main__":
    sys.exit(main())
