#!/usr/bin/env bash
# slurm-up.sh: a real Slurm 22.05 (Debian bookworm packages) on this one host for hase's tests,
# as root and without systemd. Three nodes, each its own slurmd on a loopback port, with fake
# typed GPUs (character devices made with mknod; no GPU is touched):
#   a100-0: gpu:a100:2     t4-0: gpu:t4:4     mix-0: gpu:h100:1,gpu:l4:2
# Everything (config, state, logs, a private munged) lives under $HASE_SLURM_ROOT; afterwards
#   source "$HASE_SLURM_ROOT/env.sh"     # sets SLURM_CONF for sinfo/sbatch/squeue/scancel
# Stop with tools/ci/slurm-down.sh. Env knobs:
#   HASE_SLURM_ROOT=/var/tmp/hase-slurm   INSTALL=1 (apt-get install missing packages)
#   CTLD_PORT=6817  SLURMD_PORT=17000 (node i listens on SLURMD_PORT+1+i)  MIN_JOB_AGE=300
#   JOB_SUBMIT_LUA=FILE (load it as job_submit.lua; JobSubmitPlugins=lua)
#   INSTALL_ONLY=1 (install the packages, start nothing: what .ci/run does before the tests)
#   FIX_HOSTS=1 (put "127.0.0.1 $(hostname)" first in /etc/hosts when the name resolves elsewhere,
#   as in most containers; the e2e test sets it under CI=true only)
# Exit codes: 0 up; 2 Slurm cannot be installed/started here (tests skip on it outside CI); 1 other.
set -euo pipefail
unset SLURM_JWT   # would switch every Slurm client to JWT auth
R=${HASE_SLURM_ROOT:-/var/tmp/hase-slurm}
CTLD_PORT=${CTLD_PORT:-6817}
SLURMD_PORT=${SLURMD_PORT:-17000}
MIN_JOB_AGE=${MIN_JOB_AGE:-300}
t0=$(date +%s.%N)
log() { printf '[slurm-up %5.1fs] %s\n' "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{print b-a}')" "$*"; }
cannot() { echo "slurm-up: $*" >&2; exit 2; }
wait_until() {  # wait_until SECONDS WHAT CMD...: poll every 0.2 s
  local secs=$1 what=$2; shift 2
  local end=$(( $(date +%s) + secs ))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -lt "$end" ] || { echo "slurm-up: timed out waiting for $what" >&2; tail -n 20 "$R"/log/*.log >&2 || true; exit 1; }
    sleep 0.2
  done
}

[ "$(id -u)" = 0 ] || cannot "needs root (slurmd runs jobs as their user, mknod)"
# 1. Packages. Postinst scripts would start the daemons through invoke-rc.d: a policy-rc.d that
#    exits 101 stops that (Docker images ship one; add one for the install otherwise).
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null \
   || ! command -v munged >/dev/null || ! command -v curl >/dev/null; then
  [ "${INSTALL:-1}" = 1 ] || cannot "Slurm is not installed and INSTALL=0"
  command -v apt-get >/dev/null || cannot "no apt-get to install Slurm with"
  own_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; own_policy=1; fi
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      slurmctld slurmd slurm-client munge curl >/dev/null; } || { [ $own_policy = 0 ] || rm -f /usr/sbin/policy-rc.d; cannot "apt-get install failed"; }
  [ $own_policy = 0 ] || rm -f /usr/sbin/policy-rc.d
  log "packages installed"
fi
[ "${INSTALL_ONLY:-0}" = 0 ] || exit 0
# NoInAddrAny binds the first address the host name resolves to: it must be loopback.
HOST=$(hostname -s)
case "$(getent ahostsv4 "$(hostname)" | awk 'NR==1{print $1}')" in
  127.*) ;;
  *) if [ "${FIX_HOSTS:-0}" = 1 ]; then
       { echo "127.0.0.1 $(hostname) $HOST"; cat /etc/hosts; } >/etc/hosts.hase-new
       cat /etc/hosts.hase-new >/etc/hosts; rm -f /etc/hosts.hase-new   # same inode (bind mounts)
       log "/etc/hosts: $(hostname) → 127.0.0.1"
     else
       cannot "$(hostname) does not resolve to 127.x (add '127.0.0.1 $(hostname)' to /etc/hosts, or FIX_HOSTS=1)"
     fi;;
esac
if [ -s "$R/run/slurmctld.pid" ] && kill -0 "$(cat "$R/run/slurmctld.pid")" 2>/dev/null; then
  echo "slurm-up: already running under $R (tools/ci/slurm-down.sh first)" >&2; exit 1
fi
rm -rf "$R"; mkdir -p "$R"/{etc,state,log,run,dev}

# 2. A private munged: key dir 0700, socket dir 0755 (munged checks both).
install -d -o munge -g munge -m 0700 "$R/munge"
install -d -o munge -g munge -m 0755 "$R/munge-run"
runuser -u munge -- mungekey -c -k "$R/munge/munge.key"
runuser -u munge -- munged -S "$R/munge-run/munge.sock" --key-file="$R/munge/munge.key" \
  --pid-file="$R/munge-run/munged.pid" --log-file="$R/munge/munged.log" --seed-file="$R/munge/seed"
log "munged up"

# 3. Configuration. Debian's slurmd is built with multiple-slurmd support: one `slurmd -N node`
#    per node, each with its own Port and %n in its spool/pid/log paths.
NODES=(a100-0 t4-0 mix-0)
GRES=(gpu:a100:2 gpu:t4:4 gpu:h100:1,gpu:l4:2)
{
  cat <<CONF
ClusterName=hase
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$R/munge-run/munge.sock
StateSaveLocation=$R/state
SlurmdSpoolDir=$R/spool/%n
SlurmctldPidFile=$R/run/slurmctld.pid
SlurmdPidFile=$R/run/slurmd-%n.pid
SlurmctldLogFile=$R/log/slurmctld.log
SlurmdLogFile=$R/log/slurmd-%n.log
MailProg=/bin/true
# no cgroups here
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# no slurmdbd: finished jobs stay in scontrol/squeue for MinJobAge seconds
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$R/log/jobcomp.txt
MinJobAge=$MIN_JOB_AGE
SchedulerType=sched/backfill
# batch jobs otherwise wait up to 3 s for the next scheduling pass
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
Waittime=0
CONF
  [ -z "${JOB_SUBMIT_LUA:-}" ] || echo "JobSubmitPlugins=lua"
  for i in "${!NODES[@]}"; do
    echo "NodeName=${NODES[$i]} NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$((SLURMD_PORT + 1 + i)) CPUs=4 RealMemory=8000 Gres=${GRES[$i]} State=UNKNOWN"
  done
  echo "PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
} >"$R/etc/slurm.conf"
[ -z "${JOB_SUBMIT_LUA:-}" ] || cp "$JOB_SUBMIT_LUA" "$R/etc/job_submit.lua"
# gres/gpu drops a GPU without File=; the File's trailing digits become SLURM_JOB_GPUS.
for d in a100-0/nvidia0 a100-0/nvidia1 t4-0/nvidia0 t4-0/nvidia1 t4-0/nvidia2 t4-0/nvidia3 \
         mix-0/nvidia0 mix-0/nvidia1 mix-0/nvidia2; do
  # a plain file where mknod is not allowed: slurmd warns but still counts it
  mkdir -p "$R/dev/$(dirname "$d")"; mknod -m 0666 "$R/dev/$d" c 1 3 2>/dev/null || touch "$R/dev/$d"
done
cat >"$R/etc/gres.conf" <<CONF
AutoDetect=off
NodeName=a100-0 Name=gpu Type=a100 File=$R/dev/a100-0/nvidia[0-1]
NodeName=t4-0 Name=gpu Type=t4 File=$R/dev/t4-0/nvidia[0-3]
NodeName=mix-0 Name=gpu Type=h100 File=$R/dev/mix-0/nvidia0
NodeName=mix-0 Name=gpu Type=l4 File=$R/dev/mix-0/nvidia[1-2]
CONF
export SLURM_CONF=$R/etc/slurm.conf
echo "export SLURM_CONF=$SLURM_CONF" >"$R/env.sh"

# 4. Daemons (each daemonizes and writes its pid file).
slurmctld -c || cannot "slurmctld did not start (see $R/log/slurmctld.log)"
wait_until 20 slurmctld scontrol ping
for n in "${NODES[@]}"; do mkdir -p "$R/spool/$n"; slurmd -N "$n"; done   # slurmd does not create its spool
all_idle() { [ "$(sinfo -h -N -o '%N %T' | grep -cw idle)" = "${#NODES[@]}" ]; }
wait_until 30 "three idle nodes" all_idle
log "up: source $R/env.sh"
sinfo -N -o '%N %G %T'
