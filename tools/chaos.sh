#!/usr/bin/env bash
# Chaos test of `hase serve` (issue #26; tests/service/chaos_test.cc): two daemons (--executor,
# --standby) on one --state, a stream of submits and cancels, N random faults (kill -9 of hase,
# handover, kill -9 of a task, full disk for 2 s when run as root). Prints
#   chaos: faults=…, tasks acknowledged=…, lost=…, duplicated=…, stuck=…
# Usage: tools/chaos.sh [FAULTS=50] [SEED=26] [INTERVAL_S=1.5]   (build dir: $BUILD or build/)
set -euo pipefail
cd "$(dirname "$0")/.."
b=${BUILD:-build}
cmake --build "$b" -j2 --target hase service_chaos_test >/dev/null
HASE_BIN="$b/src/cli/hase" HASE_CHAOS_FAULTS=${1:-50} HASE_CHAOS_SEED=${2:-26} HASE_CHAOS_INTERVAL_S=${3:-1.5} \
  "$b/tests/service/service_chaos_test" --gtest_filter='Chaos.*'
