"""The runtime port (docs/design.md, "The runtime seam"): a runtime is made with a host and its
declared options, never with the workbench; no setting reaches it by an attribute patched onto
the workbench; the options given to a workbench are the ones its runtime acts on."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import streamsql
from streamsql.engine.runtime.options import RuntimeOptions

RUNTIME = Path(streamsql.__file__).parent / "engine" / "runtime"
#: a build script that opens a workbench of its own (it is no part of a runtime's work)
SCRIPTS = {"classdata_build.py"}
#: what reaching the workbench looks like in the runtime's code: an undeclared setting read with
#: getattr, a kept workbench, or a function taking one
_REACH = re.compile(r"getattr\(\s*(self\.)?_?wb\b|\bself\.wb\b|def \w+\([^)]*\bwb\b")


def test_the_runtime_package_never_reaches_the_workbench():
    found = [f"{p.relative_to(RUNTIME.parent)}:{n}: {line.strip()}"
             for p in sorted(RUNTIME.rglob("*.py")) if p.name not in SCRIPTS
             for n, line in enumerate(p.read_text().splitlines(), 1) if _REACH.search(line)]
    assert found == []


def test_a_runtime_holds_the_host_and_the_options_not_the_workbench(tmp_path):
    with streamsql.Workbench(tmp_path / "ws", engine="local", trace_steps=7) as wb:
        rt = wb.runtime
        assert rt.options is wb.options and rt.options.trace_steps == 7
        assert all(v is not wb for v in vars(rt).values())
        assert rt.host.path == wb.path and rt.host.catalog is wb.catalog


def test_a_runtime_option_cannot_be_patched_onto_a_workbench(tmp_path):
    with streamsql.Workbench(tmp_path / "ws", engine="local") as wb:
        with pytest.raises(AttributeError, match=r"Workbench\.check_calc_errors is a runtime option.*"
                                                 r"Workbench\(\.\.\., check_calc_errors=\.\.\.\)"):
            wb.check_calc_errors = False
        assert wb.options.check_calc_errors is True


def test_options_and_keywords_build_the_same_options(tmp_path):
    opts = RuntimeOptions(buckets=3, trace=False, partition_events=5)
    with streamsql.Workbench(tmp_path / "a", engine="local", options=opts, batch_events=2) as wb:
        # a keyword given besides the options wins; the rest are the options'
        assert (wb.buckets, wb.trace, wb.trace_steps, wb.partition_events, wb.batch_events) == (3, False, 0, 5, 2)
        wb.execute("CREATE STREAM S (x INTEGER)")
        q = wb.query("SELECT STREAM ROWTIME, x FROM S")
        wb.insert("S", {"x": 1}, rowtime="2006-10-10 10:00:00")
        assert [r.values for r in q.rows] == [(1,)] and len(q.trace) == 0    # trace=False reached it
    with pytest.raises(TypeError, match="unexpected keyword argument 'bukets'"):
        streamsql.Workbench(tmp_path / "b", engine="local", bukets=2)
    with pytest.raises(ValueError, match="reader must be 'simple' or 'parallel', not 'fast'"):
        RuntimeOptions(reader="fast")


@pytest.mark.parametrize("checked", [True, False])
def test_check_calc_errors_given_as_an_option_reaches_the_spark_plan(spark, tmp_path, checked):
    """``a * 2000000000`` with ``a`` = 7 is an INTEGER out of range (docs/semantics.md, section 1):
    with the checks the row goes to the query's errors and releases nothing; without them (the
    benchmarks' baseline) Spark wraps it around in 32 bits: 7 * 2000000000 - 3 * 2**32 = 1115098112."""
    with streamsql.Workbench(tmp_path / "ws", engine="spark", check_calc_errors=checked) as wb:
        wb.execute("CREATE STREAM S (a INTEGER)")
        q = wb.query("SELECT STREAM ROWTIME, a * 2000000000 AS p FROM S")
        wb.insert("S", {"a": 7}, rowtime="2006-10-10 10:00:00")
        q.wait(300)
        if checked:
            assert [r.values for r in q.rows] == []
            assert [e.name for e in q.errors] == ["NUMERIC_OUT_OF_RANGE"]
        else:
            assert [r.values for r in q.rows] == [(1115098112,)]
            assert q.errors == []
