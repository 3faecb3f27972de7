"""Shared fixtures. Spark starts once per test session (it takes seconds); every test gets its
own workspace directory."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from hypothesis import Phase, settings

ROOT = Path(__file__).resolve().parent.parent
#: the seeds' scenarios, shipped with the package (the demo, the tutorials and `%streamsql load` play them)
SCENARIOS = ROOT / "streamsql" / "scenarios"
#: the project's own scenarios (calculator errors, producers, ORDER BY, pumps, ...)
PROJECT_SCENARIOS = ROOT / "tests" / "scenarios"
#: every scenario of the project, one copy each: the stems (``.../union_merge``) of both folders
ALL_SCENARIOS = sorted({p.with_suffix("") for d in (SCENARIOS, PROJECT_SCENARIOS) for p in d.glob("*.sql")})

# No shrinking by default: a failing example of a Spark property test costs a minute, and
# hypothesis would rerun it for many minutes (once past CI's budget) to shrink a random seed.
# The failing example is printed either way; STREAMSQL_HYPOTHESIS_SHRINK=1 shrinks when debugging.
settings.register_profile("streamsql", print_blob=True, phases=[
    Phase.explicit, Phase.reuse, Phase.generate, Phase.target,
    *([Phase.shrink] if os.environ.get("STREAMSQL_HYPOTHESIS_SHRINK") == "1" else [])])
settings.load_profile("streamsql")


# The shared engine (docs/engine.md): this test session's own engine directory, so that it never
# reaches a user's engine (or another checkout's) by accident; in-process Spark unless a test asks
# for the engine (tests/engine_support.py). Kernels and subprocesses inherit both.
import atexit  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
os.environ.setdefault("STREAMSQL_ENGINE", "process")
if "STREAMSQL_ENGINE_DIR" not in os.environ:
    os.environ["STREAMSQL_ENGINE_DIR"] = tempfile.mkdtemp(prefix="streamsql-test-engine-")
    atexit.register(shutil.rmtree, os.environ["STREAMSQL_ENGINE_DIR"], True)

# Lock order (docs/design.md, "Threads and locks"): every lock streamsql takes in this session, in
# its kernels and in its subprocesses is recorded (streamsql/engine/lockdep.py, as the Linux
# kernel's lockdep does). A test during which this process broke the order fails with both stacks
# (``_lock_order`` below); an order broken in another process (a kernel, a notebook) is written to
# STREAMSQL_LOCKDEP_DIR and fails the session at its end. Set before streamsql is imported.
os.environ["STREAMSQL_LOCKDEP"] = "1"
if "STREAMSQL_LOCKDEP_DIR" not in os.environ:
    os.environ["STREAMSQL_LOCKDEP_DIR"] = tempfile.mkdtemp(prefix="streamsql-test-lockdep-")
    atexit.register(shutil.rmtree, os.environ["STREAMSQL_LOCKDEP_DIR"], True)
LOCKDEP_DIR = Path(os.environ["STREAMSQL_LOCKDEP_DIR"])

# This process starts Spark once, by the fixture below (local[2]); a workbench opened before it
# must not start another in the background. Kernels and subprocesses keep the default
# (tests/test_startup.py tests it).
from streamsql.engine.runtime.spark import prestart as _spark_prestart  # noqa: E402
_spark_prestart.PRESTART = False


@pytest.fixture(scope="session")
def spark():
    from streamsql.engine.runtime.spark.session import get_session
    return get_session("local[2]", log_dir=ROOT / "test-output" / "spark-logs")


#: the test session's shared engine, started in the background as soon as the tests are collected
#: when any of them uses it (its JVM starts beside the first tests instead of in front of one)
_session_engine = None
#: the selected notebooks' nbval runs, started beside the first tests (tests/nbval_pool.py)
_nbval_pool = None


#: modules that keep both cores busy on their own (a standalone cluster; twenty children with a
#: Spark each): they run last, once the notebooks' background runs (tests/nbval_pool.py), which
#: fill the cores the lighter modules leave idle, are done
LAST = ("test_cluster.py", "test_crash.py")


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: Path(str(item.fspath)).name in LAST)      # stable: the rest keep their order


def pytest_collection_finish(session):
    global _session_engine, _nbval_pool
    notebooks = [item.callspec.params["path"] for item in session.items
                 if getattr(item, "originalname", "") == "test_notebook_passes_nbval_strict"]
    if notebooks or any("engine" in getattr(item, "fixturenames", ()) for item in session.items):
        from engine_support import SessionEngine
        _session_engine = SessionEngine()
    if notebooks:
        from engine_support import env_for
        from nbval_pool import NbvalPool
        _nbval_pool = NbvalPool(notebooks, _session_engine.info, env_for)


def pytest_sessionfinish(session, exitstatus):
    if _nbval_pool is not None:
        _nbval_pool.stop()
    if _session_engine is not None:
        _session_engine.stop()
    others = _lock_reports_of_other_processes()
    if others:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
        session.config._streamsql_lock_reports = others


def _lock_reports_of_other_processes() -> list[str]:
    """What kernels and subprocesses of this session reported of the lock order (lockdep files)."""
    me = f"{os.getpid()}-"
    return [p.read_text() for p in sorted(LOCKDEP_DIR.glob("*.txt")) if not p.name.startswith(me)]


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    reports = getattr(config, "_streamsql_lock_reports", None)
    if reports:
        terminalreporter.section("lock order broken in a kernel or subprocess", sep="!", red=True)
        for r in reports:
            terminalreporter.write_line(r)


@pytest.fixture(autouse=True)
def _lock_order(request):
    """Fails the test during which this process broke the package's lock order (a cycle, the
    written order, or a view under an engine lock), with the stacks of both acquisitions, whether
    or not the threads happened to deadlock this time."""
    from streamsql.engine import lockdep
    earlier = lockdep.take_violations()        # from threads that outlived an earlier test
    yield
    found = earlier + lockdep.take_violations()
    if found:
        pytest.fail("the lock order was broken (docs/design.md, \"Threads and locks\"):\n\n"
                    + "\n\n".join(v.text for v in found), pytrace=False)


@pytest.fixture(scope="session")
def nbval_pool():
    """The notebooks' nbval runs (tests/nbval_pool.py), going since the tests were collected."""
    assert _nbval_pool is not None, "no notebook test was collected"
    return _nbval_pool


@pytest.fixture(scope="session")
def engine():
    """The test session's shared engine (a Spark Connect server on 127.0.0.1), stopped at the end
    of the session (even when a test fails). The notebooks' kernels, the JupyterLab kernels of the
    browser tests and the command lines that need Spark run on it (``engine_support.env_for``)."""
    global _session_engine
    if _session_engine is None:
        from engine_support import SessionEngine
        _session_engine = SessionEngine()
    return _session_engine.info()


@pytest.fixture
def wb_local(tmp_path):
    from streamsql.engine.workbench import Workbench
    wb = Workbench(tmp_path / "ws", engine="local")
    yield wb
    wb.close()


@pytest.fixture
def wb_spark(tmp_path, spark):
    from streamsql.engine.workbench import Workbench
    wb = Workbench(tmp_path / "ws", engine="spark")
    yield wb
    wb.close()


@pytest.fixture(params=["local", "spark"])
def wb(request, tmp_path):
    from streamsql.engine.workbench import Workbench
    if request.param == "spark":
        request.getfixturevalue("spark")
    w = Workbench(tmp_path / "ws", engine=request.param)
    yield w
    w.close()


@pytest.fixture(autouse=True)
def _classic_spark_after_a_connect_test():
    """A Spark Connect session marks the whole process as Connect (PySpark sets
    ``SPARK_CONNECT_MODE_ENABLED``), after which no in-process Spark can start in it: a test that
    opened one (tests/test_engine.py) leaves the process as it found it."""
    before = "SPARK_CONNECT_MODE_ENABLED" in os.environ
    yield
    if not before:
        os.environ.pop("SPARK_CONNECT_MODE_ENABLED", None)


@pytest.fixture(autouse=True)
def _no_spark_query_outlives_its_test(request):
    """A streaming query left running by a test polls its source for the rest of the session:
    dozens of them load a 2-core machine until Spark's Python workers miss their 10 s connect-back.
    Workbenches opened by ``test_aggregate_support.run`` are closed here; queries still running
    after that are stopped, with a warning naming the test."""
    yield
    support = sys.modules.get("test_aggregate_support")
    if support is not None:
        support.close_owned()
    from streamsql.engine.runtime.spark import session
    spark = session._session
    if spark is None:
        return
    left = list(spark.streams.active)
    for sq in left:
        try:
            sq.stop()
        except Exception:   # noqa: BLE001 - a query that failed while stopping is stopped
            pass
    if left:
        import warnings
        warnings.warn(f"{request.node.nodeid} left {len(left)} Spark queries running (stopped now)")
