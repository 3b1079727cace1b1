#!/usr/bin/env bash
# slurm-down.sh: stop what tools/ci/slurm-up.sh started (by pid file only) and remove its root.
# Jobs are cancelled first: their slurmstepd processes outlive a stopped slurmd.
# KEEP=1 keeps $HASE_SLURM_ROOT (logs, job completion file).
set -uo pipefail
R=${HASE_SLURM_ROOT:-/var/tmp/hase-slurm}
export SLURM_CONF=$R/etc/slurm.conf
unset SLURM_JWT
if [ -s "$R/run/slurmctld.pid" ] && kill -0 "$(cat "$R/run/slurmctld.pid")" 2>/dev/null; then
  jobs=$(squeue -h -o %i 2>/dev/null | tr '\n' ' ')
  if [ -n "${jobs// /}" ]; then
    # shellcheck disable=SC2086
    scancel $jobs
    for _ in $(seq 50); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.2; done
  fi
fi
stop() {  # stop PIDFILE...: SIGTERM together, wait up to 10 s, then SIGKILL
  local f pids=()
  for f in "$@"; do [ -s "$f" ] && pids+=("$(cat "$f")") && kill "$(cat "$f")" 2>/dev/null; rm -f "$f"; done
  for _ in $(seq 50); do
    local alive=0 p
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && return 0; sleep 0.2
  done
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; return 0
}
stop "$R"/run/slurmd-*.pid "$R/run/slurmctld.pid"
stop "$R/munge-run/munged.pid"
[ "${KEEP:-0}" = 1 ] || rm -rf "$R"
echo "slurm-down: stopped"
