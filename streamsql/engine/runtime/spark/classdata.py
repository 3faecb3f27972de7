"""A class-data-sharing archive (AppCDS) of the classes Spark's driver JVM loads, so that each
start maps them from one file instead of loading and verifying them again (what that saves is
measured on the benchmarks page, docs/benchmarks.md, start-up).

The set-up builds it once (``python -m streamsql.engine.runtime.spark.classdata_build``; Java 17
can only dump an archive when a JVM exits, so a short Spark run does it). An archive is only valid for
the JVM and the class path that made it: its name holds a hash of both, and a stale or missing one
is simply not used (the JVM would ignore a mismatched one too). ``STREAMSQL_CDS=0`` turns it off.

Each archive is about 180 MB, and each Python environment (or Java, or PySpark) makes its own: a
start that uses one marks it used (its modification time), and a new build keeps only the
:data:`KEEP` most recently used ones in the cache.
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from ... import environment
from ...paths import cache_dir

#: archives kept in the cache (the most recently used ones; the others are removed by a build)
KEEP = 3


def archive_path(java_home: str) -> Path:
    """Where the archive for this JVM and this PySpark lives (it may not exist)."""
    import pyspark
    java = Path(java_home) / "bin" / "java"
    try:
        stamp = f"{java.resolve()}:{java.resolve().stat().st_mtime_ns}"
    except OSError:
        stamp = str(java)
    key = hashlib.sha256(f"{stamp}|{Path(pyspark.__file__).parent}|{pyspark.__version__}|{sys.version}"
                         .encode()).hexdigest()[:16]
    return cache_dir() / f"spark-classes-{key}.jsa"


def java_options(java_home: str) -> str:
    """The driver JVM options that use the archive, or ``""`` when there is none (or it is off)."""
    if not environment.class_data():
        return ""
    p = archive_path(java_home)
    if not p.is_file():
        return ""
    try:
        os.utime(p)           # used now: the pruning of a later build keeps it
    except OSError:           # a read-only cache
        pass
    return f"-XX:SharedArchiveFile={p} -Xshare:auto"


def prune(keep: int = KEEP) -> list[Path]:
    """Remove all but the ``keep`` most recently used archives from the cache; returns the removed.
    A JVM that maps a removed one keeps its mapping; a start that finds none runs without."""
    archives = sorted(cache_dir().glob("spark-classes-*.jsa"), key=_used, reverse=True)
    gone = []
    for p in archives[keep:]:
        try:
            p.unlink()
            gone.append(p)
        except OSError:
            pass
    return gone


def _used(p: Path) -> float:
    try:
        return p.stat().st_mtime
    except OSError:
        return 0.0
