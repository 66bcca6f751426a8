#!/usr/bin/env bash
# scripts/cluster/slurm_sweep.sh against a real Slurm: a one-node cluster started on this machine
# (scripts/cluster/local_slurm.sh), a sweep of a shipped scenario as an array of 4 tasks.
#
#   tests/cluster/slurm_sweep_test.sh RACESIM
#
# Checks that
#   1. the merged results, summary and report are byte for byte what one `racesim run` of the same
#      experiment writes, and the merge job's check passes;
#   2. a task cancelled mid-run (scancel of one array element) leaves a partial shard, the merge
#      job is cancelled with it, the merge script refuses naming the shard, and the same command
#      submitted again resumes that shard: the final bytes are again one run's;
#   3. a second submission into the directory with another task count is refused.
# The daemons are stopped and their state removed at the end, also when a check fails.
# Exit: 0 passed, 1 a check failed (what and why printed), 77 skipped: this machine cannot start
# Slurm (the reason printed).
set -uo pipefail

racesim=${1:?usage: slurm_sweep_test.sh RACESIM}
racesim=$(realpath "$racesim")
root="$(cd "$(dirname "$0")/../.." && pwd)"
work=$(mktemp -d "${TMPDIR:-/tmp}/racesim-slurm-test.XXXXXX")
state="$work/slurm"
scenario="$root/scenarios/om_read_while_write.yaml"
sweep=("$root/scripts/cluster/slurm_sweep.sh" --racesim "$racesim" --tasks 4)

cleanup() {
  "$root/scripts/cluster/local_slurm.sh" stop "$state" > /dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

started=$("$root/scripts/cluster/local_slurm.sh" start "$state")
code=$?
if [ "$code" = 77 ]; then
  echo "SKIPPED: no local Slurm (see above); install slurm-wlm and munge (scripts/setup.sh --with-slurm) and run as root" >&2
  exit 77
fi
[ "$code" = 0 ] || fail "local_slurm.sh start exited $code"
eval "$started"

# Waits until no job is pending or running (at most $1 seconds).
wait_jobs() {
  local limit=$(( $1 * 5 ))
  for ((i = 0; i < limit; ++i)); do
    [ -z "$(squeue -h -o %i)" ] && return 0
    sleep 0.2
  done
  squeue >&2
  fail "jobs still queued after $1 s"
}

# One run of the experiment, for the bytes the sweep must give.
opts=(--seeds 200 -s flock_as_in_pr -s tmp_rename)
"$racesim" run "$scenario" "${opts[@]}" --out "$work/one" > /dev/null || fail "racesim run of the reference failed"

echo "== 1. a sweep of 4 tasks merges into one run's bytes"
begin=$(date +%s.%N)
"${sweep[@]}" --out "$work/a" "$scenario" "${opts[@]}" || fail "slurm_sweep.sh did not submit"
wait_jobs 300
end=$(date +%s.%N)
awk -v b="$begin" -v e="$end" 'BEGIN { printf "sweep wall time: %.1f s\n", e - b }'
for f in results.jsonl summary.csv report.md; do
  cmp "$work/one/$f" "$work/a/merged/$f" || fail "merged $f differs from one run's"
done
grep -q "passed, 0 failed" "$work/a/slurm/merge.log" || { cat "$work/a/slurm/merge.log" >&2; fail "the merge job's check did not pass"; }
[ -f "$work/a/report/om_read_while_write.md" ] || fail "no report in $work/a/report"

echo "== 2. a task cancelled mid-run resumes when the sweep is submitted again"
# Tasks of a few seconds each (512 ranks), so that one can be cancelled while it runs.
long=(--seeds 2000 --set ranks=512 -s flock_as_in_pr -s tmp_rename)
"$racesim" run "$scenario" "${long[@]}" --out "$work/one_long" > /dev/null || fail "racesim run of the long reference failed"
out=$("${sweep[@]}" --out "$work/b" "$scenario" "${long[@]}" --jobs 1) || fail "slurm_sweep.sh did not submit"
array=$(sed -n 's/^array job \([0-9]*\):.*/\1/p' <<< "$out")
[ -n "$array" ] || fail "no array job id in: $out"
for ((i = 0; i < 600; ++i)); do
  lines=$({ wc -l < "$work/b/shard-1/results.jsonl"; } 2> /dev/null || echo 0)
  [ "$lines" -ge 3 ] && break
  sleep 0.05
done
[ "${lines:-0}" -ge 3 ] || fail "shard 1 wrote no records within 30 s"
scancel "${array}_1" || fail "scancel ${array}_1 failed"
wait_jobs 300
tail -1 "$work/b/shard-1/results.jsonl" | grep -q '"end"' && fail "shard 1 finished before it was cancelled; give it more seeds"
[ -d "$work/b/merged" ] && fail "the merge job ran although a task was cancelled"
"$work/b/slurm/merge.sh" > "$work/refused.txt" 2>&1
code=$?
[ "$code" = 2 ] || { cat "$work/refused.txt" >&2; fail "the merge script exited $code with shard 1 cut short (expected 2)"; }
grep -q "shard-1" "$work/refused.txt" || { cat "$work/refused.txt" >&2; fail "the merge refusal does not name shard-1"; }
"${sweep[@]}" --out "$work/b" "$scenario" "${long[@]}" --jobs 1 > /dev/null || fail "the second submission was refused"
wait_jobs 300
grep -q "resuming" "$work/b/slurm/task-1.log" || { cat "$work/b/slurm/task-1.log" >&2; fail "task 1 did not resume its shard"; }
for f in results.jsonl summary.csv report.md; do
  cmp "$work/one_long/$f" "$work/b/merged/$f" || fail "merged $f after the resume differs from one run's"
done

echo "== 3. another task count into the same directory is refused"
"${sweep[@]}" --out "$work/b" --tasks 3 "$scenario" "${long[@]}" --jobs 1 > "$work/other.txt" 2>&1
code=$?
[ "$code" = 2 ] || fail "a submission with --tasks 3 into a directory of 4 exited $code (expected 2)"
grep -q "holds another sweep" "$work/other.txt" || { cat "$work/other.txt" >&2; fail "the refusal does not say why"; }

echo "PASS: slurm_sweep.sh under a real Slurm"
