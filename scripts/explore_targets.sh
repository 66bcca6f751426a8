#!/usr/bin/env bash
# Measures how many runs `racesim explore` needs to find each failure, per mode: for each
# (scenario, strategy) below and each mode, 20 searches from different explorer seeds
# (--seed-start 0, 1000000, ...), and prints the median runs to the first failure as a Markdown
# table (the one in scenarios/README.md, "Searching for a failure"). A search that finds nothing
# within its budget counts as "> BUDGET"; the median is then reported as such when half or more did.
# An exhaustive search that runs its whole bounded space without a failure counts as "none": when
# half or more did, the cell says "none within the bound".
#
#   scripts/explore_targets.sh [BUILD_DIR] [SEARCHES]     (defaults: build, 20)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
searches=${2:-20}
racesim="$build_dir/racesim"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# scenario file | strategy | budget per search
targets=(
  "scenarios/om_read_while_write.yaml|exists_check|2000"
  "scenarios/om_read_while_write.yaml|flock_as_in_pr|2000"
  "scenarios/om_read_while_write.yaml|size_stable|2000"
  "scenarios/om_read_while_write.yaml|done_marker|2000"
  "scenarios/dtensor_implicit_redistribute.yaml|implicit_redistribute|2000"
  "scenarios/device_guard_recompile.yaml|as_in_issue|2000"
  "scenarios/examples/stale_checkpoint_view.yaml|look_then_open|300000"
)
modes=(random pct:2 pct:3 swarm exhaustive:2)
median() { sort -n | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; print m}'; }
printf '| scenario / strategy |'
for m in "${modes[@]}"; do printf ' %s |' "$m"; done
printf '\n|---|'
for _ in "${modes[@]}"; do printf -- '---:|'; done
printf '\n'
for t in "${targets[@]}"; do
  IFS='|' read -r file strategy budget <<<"$t"
  printf '| %s / %s |' "$(basename "$file" .yaml)" "$strategy"
  for m in "${modes[@]}"; do
    : >"$scratch/runs"
    for ((k = 0; k < searches; k++)); do
      status=0
      out=$("$racesim" explore "$file" -s "$strategy" --mode "$m" --budget "$budget" \
        --seed-start $((k * 1000000)) --out "$scratch/c.jsonl") || status=$?
      if [ "$status" = 1 ]; then
        sed -n 's/^FAILED at run \([0-9]*\) .*/\1/p' <<<"$out" >>"$scratch/runs"
      elif [ "$status" = 0 ] && grep -q '^exhaustive: all ' <<<"$out"; then
        echo $((budget + 2)) >>"$scratch/runs"
      elif [ "$status" = 0 ]; then
        echo $((budget + 1)) >>"$scratch/runs"
      else
        echo "racesim explore $file -s $strategy --mode $m failed (exit $status):" >&2
        echo "$out" >&2
        exit 1
      fi
    done
    med=$(median <"$scratch/runs")
    if [ "$med" -gt $((budget + 1)) ]; then
      printf ' none within the bound |'
    elif [ "$med" -gt "$budget" ]; then
      printf ' > %s |' "$budget"
    else
      printf ' %s |' "$med"
    fi
  done
  printf '\n'
done
