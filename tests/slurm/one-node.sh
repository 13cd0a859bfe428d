#!/usr/bin/env bash
# tests/slurm/one-node.sh: the Slurm recipe of docs/scale.md on a real
# one-node cluster (Debian's slurm-wlm and munge), run by CI (.ci/run) as
# root. It installs slurm-wlm and munge when missing (./bootstrap deps
# slurm), writes a one-node slurm.conf and a munge key under a temp dir,
# starts munged, slurmctld and slurmd there (no systemd), waits for the node
# to be idle, submits share/slurm/vramreport-array.sbatch as a real
# `sbatch --array=0-5` job over 6 generated rank traces, then its
# --dependency=afterok merge job, polls scontrol show job (no accounting) with
# a timeout, and checks the job's report as tests/scale.sh does: ranks 0..5,
# each at its own report's peak.
#
# When the cluster cannot start (not root, apt-get fails, a daemon refuses
# in a container, the node never gets idle), it prints one line saying
# which step failed and why, then runs the stand-in, tests/scale.sh (the
# same script, SLURM_ARRAY_TASK_ID set by a loop): exit 0 only when that
# passes. Its first line says which of the two ran. Every daemon it started
# is stopped and its temp dir removed, whatever happens.
#
#   VR_BUILDDIR=build bash tests/slurm/one-node.sh
#   VR_SLURM_TIMEOUT=SECS   the longest wait for the node or a job [180]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
SCRIPT=$VR_SRCDIR/share/slurm/vramreport-array.sbatch
WAIT=${VR_SLURM_TIMEOUT:-180}
pids=""

# Stop what this script started (its jobs, then slurmd, slurmctld, munged),
# by the ids it recorded.
stop_daemons() {
    if [ -n "$pids" ]; then
        scancel --quiet --user=root 2>/dev/null || true
        for p in $pids; do kill "$p" 2>/dev/null || true; done
        for p in $pids; do wait "$p" 2>/dev/null || true; done
    fi
    pids=""
}
cleanup() {
    stop_daemons
    rm -rf "$TMP"
}
trap cleanup EXIT

# stand_in STEP WHY: the cluster did not start; say so, run tests/scale.sh.
stand_in() {
    printf 'slurm one-node: no cluster: %s: %s\n' "$1" "$2"
    stop_daemons
    printf 'slurm one-node: ran: the stand-in (tests/scale.sh, SLURM_ARRAY_TASK_ID set by a loop)\n'
    rc=0
    bash "$VR_SRCDIR/tests/scale.sh" || rc=$?
    exit "$rc"
}

# start NAME LOG CMD...: run a daemon in the foreground, in the background;
# record its id.
start() {
    name=$1 log=$2
    shift 2
    "$@" >"$log" 2>&1 &
    pids="$! $pids"
    sleep 1
    kill -0 "$!" 2>/dev/null || stand_in "starting $name" "it exited at once: $(tail -3 "$log" | tr '\n' ' ')"
}

# poll SECS CMD...: until CMD succeeds, at most SECS seconds.
poll() {
    t=$1
    shift
    while [ "$t" -gt 0 ]; do
        "$@" && return 0
        sleep 1
        t=$((t - 1))
    done
    return 1
}

munge_ok() { munge -S "$sock" -n 2>/dev/null | unmunge -S "$sock" >/dev/null 2>&1; }
node_idle() { [ "$(sinfo -h -n "$host" -o %t 2>/dev/null)" = idle ]; }
# job_done JID: no task of JID is pending, running or completing (or it
# waits on a dependency that failed: it never will run).
job_done() {
    scontrol -o show job "$1" >"$TMP/job.$1" 2>/dev/null || return 1
    grep -q 'Reason=DependencyNeverSatisfied' "$TMP/job.$1" ||
        ! grep -qE 'JobState=(PENDING|RUNNING|CONFIGURING|COMPLETING)' "$TMP/job.$1"
}
# job_states JID: one word a task, its final state ("COMPLETED" when it ran well).
job_states() { scontrol -o show job "$1" | sed -E 's/.*JobState=([A-Z_]+).*/\1/'; }

# 1. the packages, as root
t0=$SECONDS
[ "$(id -u)" -eq 0 ] || stand_in "root" "not root (uid $(id -u)): slurmd must run as root to start jobs"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null ||
    ! command -v munged >/dev/null || ! command -v sbatch >/dev/null; then
    "$VR_SRCDIR/bootstrap" deps slurm >"$TMP/apt.log" 2>&1 ||
        stand_in "./bootstrap deps slurm" "apt-get could not install slurm-wlm munge: $(tail -1 "$TMP/apt.log")"
    pkgs="installed by ./bootstrap deps slurm"
fi
installed="$((SECONDS - t0)) s (${pkgs:-already installed})"

# 2. munge: a key and a daemon of our own, on our own socket
host=$(hostname -s)
C=$TMP/cluster
mkdir -p "$C/state" "$C/spool" "$C/munge" "$TMP/work"
chmod 700 "$C/munge"
dd if=/dev/urandom of="$C/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$C/munge/munge.key"
sock=$C/munge/munge.socket
start munged "$C/munged.out" munged -F -f --key-file="$C/munge/munge.key" --socket="$sock" \
    --pid-file="$C/munge/munged.pid" --seed-file="$C/munge/munged.seed" --log-file="$C/munged.log"
poll 10 munge_ok ||
    stand_in "munged" "no credential through its socket: $(tail -2 "$C/munged.log" "$C/munged.out" 2>&1 | tr '\n' ' ')"

# 3. slurm.conf: one node as slurmd sees it (slurmd -C: CPUs, memory), one
# partition, no accounting, state under the temp dir.
nodeline=$(slurmd -C 2>/dev/null | grep '^NodeName=') ||
    stand_in "slurmd -C" "slurmd cannot read this machine's configuration"
mem=$(printf '%s\n' "$nodeline" | sed -nE 's/.*RealMemory=([0-9]+).*/\1/p')
cat >"$C/slurm.conf" <<EOF
ClusterName=vrci
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
StateSaveLocation=$C/state
SlurmdSpoolDir=$C/spool
SlurmctldPidFile=$C/slurmctld.pid
SlurmdPidFile=$C/slurmd.pid
SlurmctldLogFile=$C/slurmctld.log
SlurmdLogFile=$C/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmctldTimeout=30
SlurmdTimeout=30
$nodeline State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$C/slurm.conf

# 4. the daemons, in the foreground (-D), and the node idle
start slurmctld "$C/slurmctld.out" slurmctld -D -i -f "$SLURM_CONF"
start slurmd "$C/slurmd.out" slurmd -D -f "$SLURM_CONF"
poll "$WAIT" node_idle ||
    stand_in "slurmd" "node $host not idle after ${WAIT} s ($(sinfo -h -o '%t %E' 2>&1 | head -1)): $(tail -2 "$C/slurmd.log" 2>/dev/null | tr '\n' ' ')"
started=$((SECONDS - t0))
echo "slurm one-node: ran: a real one-node cluster ($(slurmctld -V), munge $(munged -V 2>&1 | sed -E 's/munge-([^ ]+).*/\1/'), node $host: $(sinfo -h -o '%c CPUs, %m MB'))"
echo "# packages: ${installed}; cluster up at ${started} s"

# 5. the recipe: traces, the array, then the merge job after it
cd "$TMP/work"
mkdir traces
"$PYTHON" "$VR_SRCDIR/tests/gen-scenarios.py" training base.json truth.json
"$PYTHON" "$VR_SRCDIR/tests/py/merge/gen_ranks.py" base.json traces 6
# The script asks for 2 GB a task; a smaller node gets half its memory.
memopt=""
[ "${mem:-0}" -ge 2048 ] || memopt=--mem=$((${mem:-2} / 2))M
# shellcheck disable=SC2086 # memopt is one option or none
jid=$(sbatch --parsable $memopt --array=0-5 "$SCRIPT" traces out 2>sbatch.err) &&
    pass "sbatch --array=0-5 vramreport-array.sbatch traces out: job $jid" ||
    fail "sbatch --array=0-5 accepts the script" "$(cat sbatch.err)"
if [ -n "${jid:-}" ]; then
    # shellcheck disable=SC2086
    mid=$(sbatch --parsable $memopt --dependency=afterok:"$jid" "$SCRIPT" --merge out 2>merge.err) ||
        fail "sbatch --dependency=afterok:$jid the merge step" "$(cat merge.err)"
    poll "$WAIT" job_done "$jid" && states=$(job_states "$jid" | sort | uniq -c | tr -s ' \n' ' ') ||
        states="still running after ${WAIT} s"
    [ "$states" = " 6 COMPLETED " ] && pass "the 6 array tasks completed" ||
        fail "the 6 array tasks completed" "states:$states" "$(cat vramreport-*_*.out 2>/dev/null | tail -20)"
    if [ -n "${mid:-}" ]; then
        poll "$WAIT" job_done "$mid" && mstate=$(job_states "$mid") || mstate="still running after ${WAIT} s"
        [ "$mstate" = COMPLETED ] && pass "the merge job ran after them and completed" ||
            fail "the merge job completed" "state: $mstate" "$(cat vramreport-"$mid"_*.out vramreport-"$mid".out 2>/dev/null | tail -20)"
    fi
fi
echo "# jobs done at $((SECONDS - t0)) s"
n=$(ls out/rank*.db 2>/dev/null | wc -l)
[ "$n" -eq 6 ] && [ -s out/job.db ] && [ -s out/job.html ] && [ -s out/job.json ] &&
    pass "out/ holds rank0.db .. rank5.db, job.db, job.html, job.json" || fail "out/ holds the databases and reports" "out/: $(ls out 2>&1 | tr '\n' ' ')"

# 6. the job's report against each rank's own, as tests/scale.sh checks
if [ -s out/job.json ]; then
    for i in 0 1 2 3 4 5; do
        "$VRAMREPORT" report --db "out/rank$i.db" -o "own$i.json" -q || true
    done
    "$PYTHON" "$VR_SRCDIR/tests/py/merge/own_peaks.py" out/job.json own*.json >cmp.tap
    tap_lines cmp.tap
fi
cd "$VR_SRCDIR"
echo "# took $((SECONDS - t0)) s in all"
finish
