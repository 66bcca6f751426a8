#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for trying slurm_sweep.sh and for racesim's test of it:
# munged, slurmctld and slurmd run as plain daemons (no systemd) with their configuration, keys,
# state and logs in STATE_DIR.
#
#   scripts/cluster/local_slurm.sh start STATE_DIR   starts the daemons, waits until the node is
#                                                     idle, prints "export SLURM_CONF=..." to use it
#   scripts/cluster/local_slurm.sh stop STATE_DIR    cancels its jobs, stops the daemons, removes
#                                                     STATE_DIR
#
# Needs Debian's slurm-wlm and munge (scripts/setup.sh --with-slurm) and root (the daemons run
# as root: SlurmUser=root). The configuration is the least that runs jobs: proctrack/linuxproc,
# task/none, select/cons_tres over this machine's CPUs, no accounting, two free ports from 16817.
# Exit: 0 done; 77 the machine cannot run it (a package missing, not root, a daemon that did not
# come up: the reason and the daemon's log are printed); 2 bad usage.
set -euo pipefail

cannot() {
  echo "local_slurm.sh: cannot start a local Slurm here: $*" >&2
  exit 77
}

[ $# -eq 2 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
action="$1"
state="$2"

stop() {
  if [ -f "$state/slurm.conf" ]; then
    SLURM_CONF="$state/slurm.conf" scancel --quiet --user="$(id -un)" 2> /dev/null || true
  fi
  for pidfile in ctld.pid d.pid munged.pid; do
    if [ -s "$state/$pidfile" ]; then
      pid=$(cat "$state/$pidfile")
      kill "$pid" 2> /dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2> /dev/null || true
    fi
  done
  rm -rf "$state"
}

case "$action" in
  stop)
    stop
    exit 0
    ;;
  start) ;;
  *) echo "local_slurm.sh: expected start or stop, got '$action'" >&2; exit 2 ;;
esac

for tool in munged slurmctld slurmd sbatch squeue scancel sinfo; do
  command -v "$tool" > /dev/null || cannot "$tool not found (install slurm-wlm and munge: scripts/setup.sh --with-slurm)"
done
[ "$(id -u)" = 0 ] || cannot "the daemons run as root here, and this is $(id -un)"
[ ! -e "$state" ] || { echo "local_slurm.sh: $state exists; stop it first, or give a new directory" >&2; exit 2; }
mkdir -p "$state/ctld" "$state/spool" "$state/munge"
state=$(realpath "$state")

# Two free ports (nothing accepts a connection on them).
free_port() {
  local p=$1
  while (exec 3<> "/dev/tcp/127.0.0.1/$p") 2> /dev/null; do p=$((p + 2)); done
  echo "$p"
}
ctld_port=$(free_port 16817)
d_port=$(free_port $((ctld_port + 1)))
host=$(hostname -s)

head -c 1024 /dev/urandom > "$state/munge/munge.key"
chmod 400 "$state/munge/munge.key"
cat > "$state/slurm.conf" << EOF
ClusterName=racesim-local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$state/munge.sock
CredType=cred/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/ctld.pid
SlurmdPidFile=$state/d.pid
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmctldLogFile=$state/ctld.log
SlurmdLogFile=$state/d.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=600
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$state/slurm.conf"

munged --force --key-file="$state/munge/munge.key" --socket="$state/munge.sock" \
  --pid-file="$state/munged.pid" --log-file="$state/munge/munged.log" --seed-file="$state/munge/seed" ||
  { tail -5 "$state/munge/munged.log" >&2 || true; stop; cannot "munged did not start"; }
slurmctld -f "$SLURM_CONF" || { tail -5 "$state/ctld.log" >&2 || true; stop; cannot "slurmctld did not start"; }
slurmd -f "$SLURM_CONF" || { tail -5 "$state/d.log" >&2 || true; stop; cannot "slurmd did not start"; }
for _ in $(seq 150); do
  if [ "$(sinfo -h -o %t 2> /dev/null)" = idle ]; then
    echo "export SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.2
done
tail -5 "$state/ctld.log" "$state/d.log" >&2 || true
stop
cannot "the node did not become idle within 30 s"
