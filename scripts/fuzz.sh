#!/usr/bin/env bash
# Differential fuzz: ./scripts/fuzz.sh N [SEED]  runs N rounds (default 10) of 10 random queries
# over ~30 random events, local runtime vs Spark (random batch size and buckets), and prints each
# round and every disagreement with the SQL, the configuration and the events (tests/test_fuzz.py).
set -euo pipefail
cd "$(dirname "$0")/.."
STREAMSQL_FUZZ_ROUNDS="${1:-10}" STREAMSQL_FUZZ_SEED="${2:-${STREAMSQL_FUZZ_SEED:-1125}}" \
  .venv/bin/python -m pytest -q -s -p no:cacheprovider tests/test_fuzz.py
