#!/usr/bin/env bash
# The Kubernetes manifests' own shell (scripts/cluster/k8s/), run here as each pod would run it,
# without a cluster: the sweep Job's task for every completion index, a retried index resuming
# its partial shard, then the merge Job's script.
#
#   tests/cluster/k8s_manifests_test.sh RACESIM
#
# Checks that the shard count is the same in both manifests and the Job's completions, that the
# merged results are byte for byte one `racesim run`'s, that a pod retried over a shard cut short
# resumes it, and that the merge refuses while a shard is missing, naming it. What this cannot
# check is Kubernetes itself (scheduling, the volume, retries per index): no cluster runs here.
# Exit: 0 passed, 1 a check failed.
set -uo pipefail

racesim=${1:?usage: k8s_manifests_test.sh RACESIM}
racesim=$(realpath "$racesim")
root="$(cd "$(dirname "$0")/../.." && pwd)"
k8s="$root/scripts/cluster/k8s"
work=$(mktemp -d "${TMPDIR:-/tmp}/racesim-k8s-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# The block between "# NAME: begin" and "# NAME: end" of a manifest, unindented.
script_of() {
  sed -n "/# $2: begin/,/# $2: end/p" "$1" | sed 's/^ *//'
}
# The value of env NAME in a manifest.
env_of() {
  grep -A1 -- "- name: $2\$" "$1" | sed -n 's/^ *value: "\{0,1\}\([^"]*\)"\{0,1\}$/\1/p'
}

sweep="$k8s/sweep-job.yaml" merge="$k8s/merge-job.yaml"
count=$(env_of "$sweep" RACESIM_SHARD_COUNT)
completions=$(sed -n 's/^ *completions: \([0-9]*\).*/\1/p' "$sweep")
[ -n "$count" ] && [ "$count" = "$completions" ] || fail "sweep-job.yaml: RACESIM_SHARD_COUNT ($count) is not completions ($completions)"
[ "$(env_of "$merge" RACESIM_SHARD_COUNT)" = "$count" ] || fail "merge-job.yaml names another shard count than sweep-job.yaml"
[ "$(env_of "$merge" RACESIM_SCENARIO)" = "$(env_of "$sweep" RACESIM_SCENARIO)" ] || fail "the two manifests name different scenarios"
script_of "$sweep" task > "$work/task.sh"
script_of "$merge" merge > "$work/merge.sh"
grep -q -- "--shard auto" "$work/task.sh" || fail "no task script in sweep-job.yaml"
grep -q "racesim merge" "$work/merge.sh" || fail "no merge script in merge-job.yaml"

# As the pods run them: racesim on PATH, the image's scenario path replaced by the checkout's,
# fewer seeds so that the test is short.
mkdir -p "$work/bin"
ln -s "$racesim" "$work/bin/racesim"
scenario="$root/scenarios/$(basename "$(env_of "$sweep" RACESIM_SCENARIO)")"
[ -f "$scenario" ] || fail "the manifests' scenario $(env_of "$sweep" RACESIM_SCENARIO) is not a shipped one"
export PATH="$work/bin:$PATH" RACESIM_SHARD_COUNT="$count" RACESIM_RESULTS="$work/results" RACESIM_SCENARIO="$scenario"
export RACESIM_RUN_OPTIONS="--seeds 64 -s flock_as_in_pr -s tmp_rename"
mkdir -p "$RACESIM_RESULTS"
racesim run "$scenario" $RACESIM_RUN_OPTIONS --out "$work/one" > /dev/null || fail "racesim run of the reference failed"

for ((i = 0; i < count; ++i)); do
  [ "$i" = 3 ] && continue  # a pod that has not run yet
  JOB_COMPLETION_INDEX=$i bash "$work/task.sh" > "$work/task-$i.log" 2>&1 || { cat "$work/task-$i.log" >&2; fail "the task of index $i failed"; }
done
bash "$work/merge.sh" > "$work/refused.log" 2>&1
code=$?
[ "$code" = 2 ] || { cat "$work/refused.log" >&2; fail "the merge exited $code with shard 3 missing (expected 2)"; }
grep -q "shard-3" "$work/refused.log" || { cat "$work/refused.log" >&2; fail "the merge refusal does not name shard-3"; }

# Index 3's first pod is evicted after its header and one record: its retry resumes the shard.
JOB_COMPLETION_INDEX=3 bash "$work/task.sh" > /dev/null 2>&1 || fail "the task of index 3 failed"
head -2 "$RACESIM_RESULTS/shard-3/results.jsonl" > "$work/cut" && mv "$work/cut" "$RACESIM_RESULTS/shard-3/results.jsonl"
JOB_COMPLETION_INDEX=3 bash "$work/task.sh" > "$work/retry.log" 2>&1 || { cat "$work/retry.log" >&2; fail "the retried index 3 failed"; }
grep -q "resuming" "$work/retry.log" || { cat "$work/retry.log" >&2; fail "the retried index 3 did not resume its shard"; }

bash "$work/merge.sh" > "$work/merge.log" 2>&1 || { cat "$work/merge.log" >&2; fail "the merge Job's script failed"; }
for f in results.jsonl summary.csv report.md; do
  cmp "$work/one/$f" "$RACESIM_RESULTS/merged/$f" || fail "merged $f differs from one run's"
done
[ -f "$RACESIM_RESULTS/report/$(basename "$scenario" .yaml).md" ] || fail "no report written"

# Outside an Indexed Job's pod, or with its count unset, --shard auto refuses, naming the variables.
JOB_COMPLETION_INDEX=0 RACESIM_SHARD_COUNT= racesim run "$scenario" --seeds 4 --shard auto > "$work/nocount.log" 2>&1
[ $? = 2 ] && grep -q RACESIM_SHARD_COUNT "$work/nocount.log" || { cat "$work/nocount.log" >&2; fail "an index without a count was not refused"; }
echo "PASS: the Kubernetes manifests' scripts (index by index, $count shards)"
