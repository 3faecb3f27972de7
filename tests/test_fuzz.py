"""The stream is the relation (docs/semantics.md, section 6): random (query, events) pairs from a
grammar (``fuzz_queries.py``) give, once a final bound has released everything, the rows of the
same query without STREAM over the rows the streams accepted, on the local runtime and on Spark;
and the local runtime and Spark release the same rows at the same steps (``fuzz_oracle.py``).

Each run draws a new seed and prints it; ``STREAMSQL_FUZZ_SEED`` replays one, and
``STREAMSQL_FUZZ_LOCAL`` / ``STREAMSQL_FUZZ_SPARK`` change the counts. A pair that disagrees is
saved as a scenario under ``test-output/fuzz/`` (its path is in the failure). More:
``scripts/fuzz.sh --relational N [--spark M] [--seed S]``."""
from __future__ import annotations

import os
import random

import pytest

import fuzz_oracle

SEED = int(os.environ.get("STREAMSQL_FUZZ_SEED") or random.SystemRandom().randrange(1, 2**31))
LOCAL = int(os.environ.get("STREAMSQL_FUZZ_LOCAL", "1000"))
SPARK = int(os.environ.get("STREAMSQL_FUZZ_SPARK", "50"))


def verdict(rep: fuzz_oracle.Report, runtime: str) -> str:
    lines = [f"seed {SEED} (STREAMSQL_FUZZ_SEED={SEED} replays it): {rep.line(runtime)}"]
    lines += [f"{name} ({where}): {what}\n  scenario: {path}" for _s, name, where, what, path in rep.failures[:5]]
    lines += [f"{name} rejected: {msg}\n  {sql}" for _s, name, sql, msg in rep.rejected[:5]]
    return "\n".join(lines)


def check(rep: fuzz_oracle.Report, runtime: str, count: int) -> None:
    print(verdict(rep, runtime))
    assert rep.pairs == count
    assert not rep.failures and not rep.rejected, verdict(rep, runtime)
    # the pairs do something: rows come out, and some queries refuse rows
    assert rep.stream_rows > rep.pairs
    assert rep.refused > 0


@pytest.mark.timeout(900)
def test_the_stream_is_the_relation_on_the_local_runtime():
    # two processes: the local pairs share nothing, and the suite's other tests run one at a time
    rep, _ = fuzzer_run(LOCAL, 0, jobs=2)
    check(rep, "local", LOCAL)


@pytest.mark.timeout(1800)
def test_the_stream_is_the_relation_on_spark_and_agrees_with_local(spark):
    _, rep = fuzzer_run(0, SPARK)
    check(rep, "spark", SPARK)


def fuzzer_run(local: int, spark: int, jobs: int = 1):
    return fuzz_oracle.run(SEED, local, spark=spark, jobs=jobs, log=print)
