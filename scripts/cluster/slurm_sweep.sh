#!/usr/bin/env bash
# Runs a racesim sweep on a Slurm cluster: one job array of --tasks shards, then a job that merges
# them, checks the scenario's expectations and writes the report.
#
#   scripts/cluster/slurm_sweep.sh --out DIR [--tasks N] [--racesim PATH] [--sbatch OPT]... \
#       FILE [racesim run options: --seeds, -s, --point, --set, --set-file, --policy, ...]
#
#   --out DIR       where everything goes (on a file system every node sees):
#                     DIR/shard-I/    task I's results (racesim run --shard auto --out)
#                     DIR/merged/     the shards joined (racesim merge)
#                     DIR/report/     the report (racesim report --results)
#                     DIR/slurm/      the job scripts and their logs
#   --tasks N       array tasks, each running one Nth of the seeds (default 16)
#   --racesim PATH  the racesim binary the tasks run (default: racesim on PATH, else build/racesim)
#   --sbatch OPT    an sbatch option for both jobs, as one word (--sbatch --partition=gpu
#                   --sbatch --account=proj --sbatch --time=2:00:00); repeatable
#
# Retrying is running the same command again: a task whose shard holds a complete run finishes at
# once, one holding a partial run (a task killed, preempted or timed out) resumes it with
# --resume, and a new merge job follows the new array. The merge job is cancelled by Slurm when a
# task of its array fails (--kill-on-invalid-dep), so no job waits forever; merge itself refuses
# while a shard is missing or cut short, naming it. A second command into the same DIR with
# another task count, file or run options is refused: its shards would be of another experiment.
#
# Prints the two job ids and where the report will be. Exit: 0 submitted, 2 bad usage or sbatch
# failed (its message shown).
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}
die() {
  echo "slurm_sweep.sh: $*" >&2
  exit 2
}

out="" tasks=16 racesim_bin="" sbatch_opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --out) [ $# -ge 2 ] || die "--out takes a directory"; out="$2"; shift 2 ;;
    --out=*) out="${1#*=}"; shift ;;
    --tasks) [ $# -ge 2 ] || die "--tasks takes a number"; tasks="$2"; shift 2 ;;
    --tasks=*) tasks="${1#*=}"; shift ;;
    --racesim) [ $# -ge 2 ] || die "--racesim takes a path"; racesim_bin="$2"; shift 2 ;;
    --racesim=*) racesim_bin="${1#*=}"; shift ;;
    --sbatch) [ $# -ge 2 ] || die "--sbatch takes an sbatch option"; sbatch_opts+=("$2"); shift 2 ;;
    --sbatch=*) sbatch_opts+=("${1#*=}"); shift ;;
    -h|--help) usage ;;
    --) shift; break ;;
    -*) die "unknown option '$1' before the scenario file (expected --out, --tasks, --racesim, --sbatch; racesim's run options go after FILE)" ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || die "a scenario FILE is required (see --help)"
file="$1"
shift
run_opts=("$@")

[ -n "$out" ] || die "--out DIR is required (a directory every node of the cluster sees)"
[[ "$tasks" =~ ^[0-9]+$ ]] && [ "$tasks" -ge 1 ] && [ "$tasks" -le 10000 ] ||
  die "--tasks: expected a whole number from 1 to 10000, got '$tasks'"
[ -f "$file" ] || die "$file: no such scenario file"
for opt in "${run_opts[@]}"; do
  case "$opt" in
    --out|--out=*|--resume|--resume=*|--shard|--shard=*|--format|--format=*)
      die "$opt: the sweep chooses each task's shard, --out and --resume itself; give only the runs' options after FILE" ;;
  esac
done
if [ -z "$racesim_bin" ]; then
  racesim_bin=$(command -v racesim || true)
  [ -n "$racesim_bin" ] || racesim_bin="$(cd "$(dirname "$0")/../.." && pwd)/build/racesim"
fi
[ -x "$racesim_bin" ] || die "$racesim_bin: not an executable racesim (give --racesim PATH)"
command -v sbatch > /dev/null || die "sbatch not found: this submits to a Slurm cluster"

racesim_bin=$(realpath "$racesim_bin")
file=$(realpath "$file")
mkdir -p "$out/slurm" || die "cannot create $out/slurm"
out=$(realpath "$out")

# The experiment this directory holds, as submitted: a later submission must be the same one.
# Each word shell-quoted, followed by a space; nothing for no words.
q() {
  local w
  for w in "$@"; do printf '%q ' "$w"; done
}
# One word shell-quoted, alone.
q1() { printf '%q' "$1"; }
sweep_text="file: $file
tasks: $tasks
options: $(q "${run_opts[@]+"${run_opts[@]}"}")"
if [ -f "$out/slurm/sweep.txt" ]; then
  if [ "$(cat "$out/slurm/sweep.txt")" != "$sweep_text" ]; then
    die "$out holds another sweep (see $out/slurm/sweep.txt: $(tr '\n' ' ' < "$out/slurm/sweep.txt")); use another --out, or the same file, --tasks and options to retry it"
  fi
else
  printf '%s\n' "$sweep_text" > "$out/slurm/sweep.txt" || die "cannot write $out/slurm/sweep.txt"
fi

# A task: its shard of the seeds, resumed where a previous attempt left results.
cat > "$out/slurm/task.sh" << EOF
#!/usr/bin/env bash
# One task of the array: shard \$SLURM_ARRAY_TASK_ID of $tasks (written by slurm_sweep.sh).
set -euo pipefail
dir=$(q1 "$out")/shard-\$SLURM_ARRAY_TASK_ID
if [ -s "\$dir/results.jsonl" ]; then
  exec $(q "$racesim_bin") run $(q "$file") $(q "${run_opts[@]+"${run_opts[@]}"}")--shard auto --resume "\$dir"
fi
rm -rf "\$dir"
exec $(q "$racesim_bin") run $(q "$file") $(q "${run_opts[@]+"${run_opts[@]}"}")--shard auto --out "\$dir"
EOF

# The end: every shard by name (so a missing one is named), merged, reported, then checked.
shards=""
for ((i = 0; i < tasks; ++i)); do shards+="$(q "$out/shard-$i")"; done
cat > "$out/slurm/merge.sh" << EOF
#!/usr/bin/env bash
# Joins the $tasks shards, writes the report and checks the expectations (written by
# slurm_sweep.sh). Exit: check's (0 every expectation met, 1 one failed, 2 the results are not whole).
set -uo pipefail
rm -rf $(q "$out/merged") $(q "$out/report")
$(q "$racesim_bin") merge $shards--out $(q "$out/merged") || exit 2
$(q "$racesim_bin") report $(q "$file") --results $(q "$out/merged") --out $(q "$out/report") || exit 2
exec $(q "$racesim_bin") check $(q "$file") --results $(q "$out/merged")
EOF
chmod +x "$out/slurm/task.sh" "$out/slurm/merge.sh"

name="racesim-$(basename "$file" .yaml)"
array_id=$(sbatch --parsable "${sbatch_opts[@]+"${sbatch_opts[@]}"}" --job-name="$name" --array="0-$((tasks - 1))" \
  --output="$out/slurm/task-%a.log" "$out/slurm/task.sh") || die "sbatch of the array failed"
array_id=${array_id%%;*}
merge_id=$(sbatch --parsable "${sbatch_opts[@]+"${sbatch_opts[@]}"}" --job-name="$name-merge" \
  --dependency="afterok:$array_id" --kill-on-invalid-dep=yes \
  --output="$out/slurm/merge.log" "$out/slurm/merge.sh") || die "sbatch of the merge job failed"
merge_id=${merge_id%%;*}

echo "array job $array_id: $tasks tasks, results in $out/shard-0 .. shard-$((tasks - 1))"
echo "merge job $merge_id: after every task succeeds; log $out/slurm/merge.log"
echo "report: $out/report (merged results in $out/merged)"
