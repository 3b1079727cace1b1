#!/usr/bin/env bash
# Chaos test of `hase serve` (issue #26): two daemons (--standby) on one --state, a stream of
# submits and cancels, N random faults, then: every acknowledged task ran exactly once, was
# cancelled, or was failed by a fault that hit it. Prints
#   chaos: faults=…, tasks acknowledged=…, lost=…, duplicated=…, stuck=…
#   local (tests/service/chaos_test.cc): --executor; kill -9 of hase, handover, kill -9 of a
#     task, its dcgm-exporter down 3 s, full disk for 2 s (as root).
#   --slurm (tests/service/chaos_slurm_test.cc): --backend slurm against the Slurm of
#     tools/ci/slurm-up.sh (its own, on private ports, as root); kill -9 of hase, handover,
#     kill -9 of slurmctld (restarted 2-12 s later), scancel / kill -9 of a job, Prometheus down
#     4 s, full disk for 2 s. Runs under `flock /tmp/hase-slurm.lock` (Slurm helpers share it).
# Usage: tools/chaos.sh [--slurm] [FAULTS=50] [SEED=26] [INTERVAL_S=1.5, 3 with --slurm]
# (build dir: $BUILD or build/)
set -euo pipefail
cd "$(dirname "$0")/.."
b=${BUILD:-build}
slurm=0
if [ "${1:-}" = --slurm ]; then slurm=1; shift; fi
if [ $slurm = 1 ]; then
  cmake --build "$b" -j2 --target hase service_chaos_slurm_test >/dev/null
  # -o: the daemons Slurm's test starts (munged, slurmd) must not inherit the lock.
  HASE_BIN="$b/src/cli/hase" HASE_CHAOS_FAULTS=${1:-50} HASE_CHAOS_SEED=${2:-26} HASE_CHAOS_INTERVAL_S=${3:-3} \
    flock -o /tmp/hase-slurm.lock "$b/tests/service/service_chaos_slurm_test" --gtest_filter='ChaosSlurm.*'
else
  cmake --build "$b" -j2 --target hase service_chaos_test >/dev/null
  HASE_BIN="$b/src/cli/hase" HASE_CHAOS_FAULTS=${1:-50} HASE_CHAOS_SEED=${2:-26} HASE_CHAOS_INTERVAL_S=${3:-1.5} \
    "$b/tests/service/service_chaos_test" --gtest_filter='Chaos.*'
fi
