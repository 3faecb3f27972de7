"""Tutorial notebooks 05-07, checked from their stored outputs (what nbval compares a fresh run
against, in tests/test_notebooks.py): the step tables the engine printed for seed 002's join
queries equal the shared scenarios' expected files row for row and step for step, the seed's own
tables are shown beside them, Calcite's examples and validation errors are there, the big replay
was checked against Spark batch queries, and only timing cells escape the comparison. The
exercises' checkers are run against answers derived by hand (on the in-process engine)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT, SCENARIOS

NB05 = ROOT / "notebooks" / "05_streaming_joins.ipynb"
NB06 = ROOT / "notebooks" / "06_calcite_tour.ipynb"
NB07 = ROOT / "notebooks" / "07_real_data_at_scale.ipynb"
NOTEBOOKS = [NB05, NB06, NB07]
VEGALITE = "application/vnd.vegalite.v5+json"
QUERIES = {1: "join1_inner_following", 2: "join2_inner_preceding", 3: "join3_full_outer"}


def _code(path: Path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def _text(cell) -> str:
    out = []
    for o in cell.get("outputs", []):
        out.append(o.get("text", "") or o.get("data", {}).get("text/plain", ""))
    return "".join(out)


def _cells(path: Path, source: str) -> list:
    return [c for c in _code(path) if c.source.strip().startswith(source)]


def _hm(ts: str) -> str:
    """``2006-10-10 10:07:30`` -> ``10:07:30``; ``10:00:00`` -> ``10:00`` (the step tables' form)."""
    t = ts.split(" ")[1]
    return t[:5] if t.endswith(":00") else t


def _value(v) -> str:
    return "null" if v is None else str(v)


def _expected_table(name: str, upto: int | None = None) -> list[list[str]]:
    """The step table the scenario files define: ``[step, orders cell, trades cell, output]`` per
    event, built from NAME.events.jsonl and NAME.expected.jsonl (not from the engine)."""
    events = [json.loads(x) for x in (SCENARIOS / f"{name}.events.jsonl").read_text().splitlines() if x.strip()]
    expected = [json.loads(x) for x in (SCENARIOS / f"{name}.expected.jsonl").read_text().splitlines() if x.strip()]
    rows = []
    for k, ev in enumerate(events, 1):
        if upto is not None and k > upto:
            break
        if "bound" in ev:
            cell = f"{_hm(ev['bound'])} bound"
        else:
            cell = " ".join([_hm(ev["rowtime"])] + [_value(v) for v in ev["values"].values()])
        out = "; ".join(" ".join([_hm(e["rowtime"])] + [_value(v) for v in e["values"].values()])
                        for e in expected if e["step"] == k)
        rows.append([str(k), cell if ev["stream"] == "Orders" else "", cell if ev["stream"] == "Trades" else "", out])
    return rows


def _parse_table(lines: list[str]) -> list[list[str]]:
    """``a | b | c`` lines after a header and a rule line, as stripped cells."""
    assert lines[0].split("|")[0].strip() == "Step" and re.fullmatch(r"[-+]+", lines[1].strip()), lines[:2]
    rows = []
    for line in lines[2:]:
        if not line.strip():
            break
        rows.append([c.strip() for c in line.split("|")])
    return rows


def _steps_output(text: str) -> list[list[str]]:
    """The step table a ``%streamsql steps`` cell printed (held rows, if any, come after a blank line)."""
    return _parse_table(text.splitlines())


def _beside_halves(text: str) -> tuple[list[list[str]], list[list[str]]]:
    """The seed's table (left of ``║``) and the engine's (right) of a ``tj.beside`` output."""
    lines = [ln for ln in text.splitlines() if "║" in ln][1:]
    left = [ln.split("║")[0].rstrip() for ln in lines]
    right = [ln.split("║")[1].strip() for ln in lines if ln.split("║")[1].strip()]
    return _parse_table([x for x in left if x.strip()]), _parse_table(right)


# --------------------------------------------------------------------------- stored outputs

@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_was_run_and_has_no_errors(path):
    code = _code(path)
    assert all(c.execution_count for c in code), "run the notebook before committing it"
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    ends = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown" and "## Exercises" in c.source]
    assert ends, "the notebook ends with exercises"
    checks = [c for c in code if re.search(r"(tj|calcite|scale)\.check_\w+\(", c.source) and "scenario" not in c.source]
    assert 2 <= len(checks) <= 3
    for c in checks:
        assert re.match(r"(✓ correct|✗ not yet|Not answered yet\. Hint)", _text(c)), _text(c)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_engine_step_tables_match_the_scenarios_step_for_step(n):
    name = QUERIES[n]
    cells = _cells(NB05, f"%streamsql steps join{n}")
    assert len(cells) == 1
    got = _steps_output(_text(cells[0]))
    assert got == _expected_table(name)           # every event, every released row, at its step


@pytest.mark.parametrize("n", [1, 2, 3])
def test_the_seed_table_is_shown_beside_the_engine_table(n):
    cells = _cells(NB05, f"tj.beside({n}, join{n})")
    assert len(cells) == 1
    text = _text(cells[0])
    assert text.startswith(f"Seed 002, join query #{n}")
    seed, engine = _beside_halves(text)
    # the engine's half: the scenario's events so far, and exactly the expected rows released by then
    assert engine == _expected_table(QUERIES[n], upto=len(engine))
    assert len(engine) == (9 if n == 3 else 8)
    # the seed's half: its table, line for line as seed 002 prints it
    seed_lines = []
    for row in seed:
        seed_lines += [c for c in row if c]
    assert seed_lines == _seed_002_lines(n)


def _seed_002_lines(n: int) -> list[str]:
    """The step numbers and cells of seed 002's table for query #n, read from the seed itself."""
    files = sorted((ROOT / "tests" / "seeds").glob("002_*.txt"))
    assert files, "seed 002 not found"
    text = files[0].read_text()
    part = text.split(f"Join query #{n}")[1].split(f"Join query #{n + 1}")[0] if n < 3 else text.split("Join query #3")[1]
    part = part.split("Output", 1)[1]
    part = part.split("Let's look" if n < 3 else "The inputs are", 1)[0]
    return [ln.strip() for ln in part.splitlines() if re.fullmatch(r"\d|\d\d:\d\d:\d\d .*", ln.strip())]


def test_agreement_cells_assert_where_seed_and_engine_agree():
    for n in (1, 2):
        cells = _cells(NB05, f"a{n} = tj.agreement({n}, join{n})")
        assert len(cells) == 1 and "assert" in cells[0].source
        text = _text(cells[0])
        assert "✓ inputs: the seed's input lines are the engine's events 1-8 in the same order" in text
        assert "✓ 3 of 3 rows are released by the engine at the seed's step" in text
        assert f"✓ the engine's output equals streamsql/scenarios/{QUERIES[n]}.expected.jsonl: 3 rows" in text
    first, last = _cells(NB05, "a3 = tj.agreement(3, join3)")
    assert "assert" in first.source and "assert" in last.source
    assert "10:12:00 null null null 1 ORCL 10 | step 5 | not released yet" in _text(first)
    assert "up to step 9 of 11: 4 rows" in _text(first)
    assert "10:12:00 null null null 1 ORCL 10 | step 5 | event 11 = after the seed's table" in _text(last)
    assert "✓ the engine's output equals streamsql/scenarios/join3_full_outer.expected.jsonl: 5 rows" in _text(last)


def test_the_unmatched_trade_is_explained_with_the_trace():
    code = _code(NB05)
    whatif = [c for c in code if ".held[" in c.source and "waits_for" in c.source]
    assert len(whatif) == 1
    assert ("waits for: the ORDERS row at 2006-10-10 10:03:00 could still match a TRADES row until the TRADES "
            "clock passes 2006-10-10 10:13:00") in _text(whatif[0])
    texts = "\n".join(_text(c) for c in code)
    assert "after step 9:\n  join: input clocks ORDERS 10:10, TRADES 10:12; output bound 10:03" in texts
    assert "after step 10:\n  join: input clocks ORDERS 10:10, TRADES 10:14; output bound 10:10" in texts
    assert "✓ matches join3_full_outer.expected.jsonl up to step 11" in texts
    md = "\n".join(c.source for c in nbformat.read(NB05, as_version=4).cells if c.cell_type == "markdown")
    assert "Why the engine holds the unmatched 10:12 trade longer" in md


def test_calcite_tour_shows_every_example_beside_the_seed():
    code = _code(NB06)
    texts = [_text(c) for c in code if c.source.startswith("tour.")]
    titles = [t.splitlines()[0] for t in texts]
    for example in ("history", "stream", "filter", "projection", "tumbling", "having", "hopping", "sliding",
                    "m10 d7", "cascading", "order by", "union", "union ordered"):
        assert any(t.startswith(f"Seed 004, {example}") for t in titles), example
    assert sum(t.startswith("Seed 004, having") for t in titles) == 4      # HAVING, sub-query, view, WITH
    for t in texts:
        verdict = [ln for ln in t.splitlines() if ln.startswith(("✓", "✗"))]
        assert verdict and verdict[0].startswith("✓"), t
    tumbling = next(t for t in texts if t.startswith("Seed 004, tumbling"))
    assert "10:00:00 | 20        | 1 | 7" in tumbling          # the seed's table, as printed
    assert "5     | 10:00:00 | 20        | 1 | 2" in tumbling    # the engine's row, released by the 11:02 order
    assert "its only order of product 20 (10:18:05, order 7) is for 2 units" in tumbling


def test_calcite_validation_errors_print_as_one_line():
    texts = [_text(c) for c in _code(NB06) if c.source.startswith("%%streamsql\n")]
    for msg in ("Cannot convert stream 'SHIPMENTS' to a table", "Cannot convert table 'PRODUCTS' to a stream",
                "Cannot stream VALUES",
                "Streaming aggregation requires at least one monotonic expression in GROUP BY clause",
                "Streaming ORDER BY must start with monotonic expression"):
        hit = [t for t in texts if msg in t]
        assert len(hit) == 1, msg
        lines = hit[0].splitlines()
        assert lines[0].startswith("SQL error: line ") and lines[0].endswith(msg)
        assert len(lines) == 3 and lines[2].strip() == "^" and "Traceback" not in hit[0]


def test_the_replay_is_checked_against_spark_batch_queries():
    code = _code(NB07)
    texts = "\n".join(_text(c) for c in code)
    assert "1,000,000 trades in 10 files" in texts
    assert re.search(r"1,250,250 events replayed: hourly released 240 rows, matched [\d,]+ rows", texts)
    m = re.search(r"matched ([\d,]+) rows", texts)
    assert f"✓ equal: the stream's {m.group(1)} matches" in texts
    assert "✓ equal: the 240 hourly rows of the stream" in texts and "1,000,000 trades in all" in texts
    charts = [o["data"][VEGALITE] for c in code for o in c.outputs if VEGALITE in o.get("data", {})]
    assert len(charts) >= 3                                          # VWAP, matches per hour, the workbench
    assert any(c.get("title") == "Hourly volume-weighted average price, streamed" for c in charts)
    progress = [c for c in code if "scale.Progress(" in c.source]
    assert progress and any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in progress[0].outputs)


def test_nbval_ignore_output_only_on_timing_cells():
    for path in NOTEBOOKS:
        for c in _code(path):
            marked = "NBVAL" in c.source
            timing = "events/s" in _text(c) or re.search(r"\d \s?s\b|\d s \(", _text(c)) is not None
            if marked:
                assert c.source.lstrip().startswith("# NBVAL_IGNORE_OUTPUT"), c.source
                assert timing and "throughput" in c.source, c.source
            else:
                assert "events/s" not in _text(c), c.source
    assert sum("NBVAL_IGNORE_OUTPUT" in c.source for p in NOTEBOOKS for c in _code(p)) == 1



def test_calcite_tour_calculator_errors():
    """06: the invoices that cannot be computed (the semantics, section 1): one division by zero,
    one invalid cast, one out of range; each refused at its event, in ERRORS, and the query goes on."""
    code = _code(NB06)
    (cell,) = [c for c in code if "compare_calc_errors(" in c.source]
    text = _text(cell)
    for line in ("✓ released: the rows of events 1, 5",
                 "✓ ERRORS: event 2 DIVISION_BY_ZERO (22012), event 3 INVALID_CAST (22018), event 4 "
                 "NUMERIC_OUT_OF_RANGE (22003)",
                 "✓ bounds: the output bound reached 10:17:05 at event 2, 10:18:05 at event 3 and 10:18:07 at event 4",
                 "✓ the query goes on: unit_prices is still running"):
        assert line in text, line
    assert "Query unit_prices: invalid character value for cast to INTEGER" in text
    (show,) = [c for c in code if "%streamsql show unit_prices" in c.source]
    assert _text(show).count("| x ") == 3


# --------------------------------------------------------------------------- the exercises' checkers

def test_exercise_checkers_of_05():
    from streamsql._tutorial import joins as tj
    assert tj.check_join_bound_exercise(8).ok is True
    assert tj.check_join_bound_exercise(6).ok is False
    assert tj.check_join_bound_exercise(...).ok is None
    sql = tj.SEED_002[2].sql.replace("'10'", "'5'")
    assert tj.check_preceding_query(sql).ok is True
    assert tj.check_preceding_query(tj.SEED_002[2].sql).ok is False
    assert tj.check_outer_exercise(6).ok is True
    assert tj.check_outer_exercise(7).ok is False


def test_exercise_05_answers_are_what_the_engine_does():
    """The hand-derived answers, against the engine (in-process) on the modified events."""
    import dataclasses
    from streamsql.engine import time as T
    from streamsql._tutorial import joins as tj
    events = tj.scenario_events("join1_inner_following")
    events[5] = dataclasses.replace(events[5], rowtime=T.parse_timestamp("2006-10-10 10:10:00"))
    q = tj._run_local(tj.JOIN_DDL, tj.SEED_002[1].sql, events)
    assert [r.step for r in q.rows if r.values[1] == "YHOO"] == [8]              # exercise 05.1, by hand
    sql3 = (SCENARIOS / "join3_full_outer.sql").read_text().split(";")[-2].replace("'10'", "'5'")
    q = tj._run_local(tj.JOIN_DDL, sql3, tj.scenario_events("join3_full_outer"))
    assert [r.step for r in q.rows if r.values[1] == "IBM"] == [6]               # exercise 05.3, by hand


def test_exercise_checkers_of_06():
    from streamsql._tutorial import calcite
    from streamsql.engine.errors import SqlError
    from streamsql.engine.workbench import Workbench
    assert calcite.check_step_query("SELECT STREAM productId, SUM(units) AS units FROM Orders "
                               "GROUP BY STEP(rowtime BY INTERVAL '15' MINUTE), productId").ok is True
    assert calcite.check_step_query("SELECT STREAM productId, SUM(units) AS units FROM Orders "
                               "GROUP BY FLOOR(rowtime TO HOUR), productId").ok is False
    assert calcite.check_rejected({"B", "C", "E", "G"}).ok is True
    assert calcite.check_rejected({"B", "C"}).ok is False
    assert calcite.check_running_total("SELECT STREAM rowtime, productId, units, SUM(units) OVER "
                                  "(PARTITION BY productId, FLOOR(rowtime TO HOUR)) AS t FROM Orders").ok is True
    assert calcite.check_running_total("SELECT STREAM rowtime, productId, units, SUM(units) OVER "
                                  "(PARTITION BY FLOOR(rowtime TO HOUR)) AS t FROM Orders").ok is False
    with Workbench(None, engine="local") as wb:
        wb.execute(calcite.CALCITE_DDL)
        refused = set()
        for letter, sql in calcite.EX06_QUERIES.items():
            try:
                wb.execute(sql)
            except SqlError:
                refused.add(letter)
    assert refused == {"B", "C", "E", "G"}                                     # exercise 06.2, by hand


def test_exercise_checkers_of_07(tmp_path):
    from streamsql.engine.workbench import Workbench
    from streamsql._tutorial import scale
    scale.generate_trades(tmp_path, trades=30_000, orders=7_500, files=2)
    events = scale.events_table(tmp_path, bound_every=1_000)
    with Workbench(None, engine="local", trace=False) as wb:
        wb.execute(scale.SCALE_DDL)
        hourly = wb.query(scale.HOURLY_SQL)
        wb.load(None, events)
        hourly.wait()
        first = hourly.rows[0].step
    assert first == scale._first_release_step(events)     # the checker's oracle, from the data
    assert scale.check_first_release(first, events).ok is True
    assert scale.check_first_release(first - 1, events).ok is False
    sql = ("SELECT STREAM ticker, COUNT(*) AS fills, SUM(amount) AS filled FROM (SELECT ROWTIME, o.ticker, t.amount "
           "FROM Orders AS o JOIN Trades OVER (RANGE INTERVAL '10' MINUTE FOLLOWING) AS t ON o.orderId = t.orderId) "
           "AS m GROUP BY FLOOR(m.ROWTIME TO HOUR), ticker")
    assert scale.check_fills_query(sql, events).ok is True
    assert scale.check_fills_query(sql.replace("'10'", "'5'"), events).ok is False
