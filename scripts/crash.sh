#!/usr/bin/env bash
# Kill -9 test with N kills (default 20): ./scripts/crash.sh [N] [SEED]
# A child process appends to two streams read by a GROUP BY and a join on Spark and is killed at N
# random moments; the workspace must then hold every committed event once and the queries the rows
# of an uninterrupted run (tests/test_crash.py).
set -euo pipefail
cd "$(dirname "$0")/.."
STREAMSQL_CRASH_KILLS="${1:-20}" STREAMSQL_CRASH_SEED="${2:-${STREAMSQL_CRASH_SEED:-20261125}}" \
  .venv/bin/python -m pytest -q -p no:cacheprovider tests/test_crash.py
