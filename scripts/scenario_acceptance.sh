#!/usr/bin/env bash
# The issues' scenario acceptance checks: replays the shared scenarios through `streamsql replay`
# with ../shared/tools/scenario_check.py, on both engines, default batching and one event per
# micro-batch, one and four key buckets. Needs ../shared beside the project and the set-up done.
set -uo pipefail
cd "$(dirname "$0")/.."
SHARED=${SHARED:-../shared}
[ -f "$SHARED/tools/scenario_check.py" ] || { echo "no $SHARED/tools/scenario_check.py: set SHARED=path/to/shared" >&2; exit 2; }
export PATH="$PWD/.venv/bin:$PATH"
S="$SHARED/scenarios"
CORE="$S/union_merge.sql $S/filter_trains.sql $S/calculator_errors.sql"
STATEFUL="$S/group_by_hours.sql $S/vwap_sliding.sql $S/join1_inner_following.sql $S/join2_inner_preceding.sql $S/join3_full_outer.sql"
failed=0
check() {
  echo "--- scenario_check.py $*"
  python "$SHARED/tools/scenario_check.py" "$@" || failed=1
}
for engine in spark local; do
  check --engine "$engine" $CORE
  check --engine "$engine" --cmd "streamsql replay --batch 1" $CORE
  for buckets in 1 4; do
    check --engine "$engine" --cmd "streamsql replay --buckets $buckets" $STATEFUL
    check --engine "$engine" --cmd "streamsql replay --batch 1 --buckets $buckets" $STATEFUL
  done
done
[ "$failed" = 0 ] && echo "all scenario checks passed" || echo "some scenario checks FAILED"
exit "$failed"
